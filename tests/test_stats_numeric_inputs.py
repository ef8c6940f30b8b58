"""The public statistics entry points refuse scores that are not numbers: a string such
as ``"0.5"`` (which ``float()`` would quietly parse), a bool, None; the ValueError names
the run and the case id (or the position of a p-value / pilot difference)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from evalkit.stats import (
    aggregate_bootstrap,
    benjamini_hochberg,
    compare_runs,
    holm,
    paired_bootstrap,
    paired_test,
    simulate_power,
)

GOOD = {"q1": 0.1, "q2": 0.3, "q3": 0.2}


@pytest.mark.parametrize("bad", ["0.5", b"0.5", True, np.bool_(False), None, [0.5]])
@pytest.mark.parametrize("call", [
    lambda a, b: paired_test(a, b, "ap"),
    lambda a, b: paired_test(a, b, "ap", method="t-test"),
    lambda a, b: paired_bootstrap(a, b, "ap", n_resamples=100),
    lambda a, b: compare_runs(b, [a], ["ap"], n_resamples=100),
])
def test_non_numeric_scores_are_refused_naming_the_case(
        call: Callable[[Any, Any], Any], bad: Any) -> None:
    a = {"q1": 0.5, "q2": bad, "q3": 0.4}
    with pytest.raises(ValueError, match=r"case 'q2'.*must be a number") as err:
        call(a, GOOD)
    assert type(bad).__name__ in str(err.value)


def test_numbers_of_every_real_kind_are_accepted() -> None:
    a: dict[str, Any] = {"q1": 1, "q2": np.float32(0.5), "q3": Fraction(1, 4)}
    b: dict[str, Any] = {"q1": np.int64(0), "q2": 0.25, "q3": 0.0}
    res = paired_test(a, b, "ap", method="t-test")
    assert res.observed == pytest.approx((1 + 0.25 + 0.25) / 3)  # by hand


def test_p_values_and_pilot_differences_must_be_numbers() -> None:
    with pytest.raises(ValueError, match=r"p-value 1 \(of 2\) must be a number"):
        holm([0.01, "0.02"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"p-value 0 \(of 2\).*bool"):
        benjamini_hochberg([True, 0.02])
    with pytest.raises(ValueError, match=r"pilot difference 1 \(of 3\)"):
        simulate_power([0.1, "0.2", 0.3], 0.1, 10)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"pilot difference 0 \(of 2\)"):
        simulate_power(np.array(["0.1", "0.2"]), 0.1, 10)
    assert holm([0.01, 0.04]) == pytest.approx([0.02, 0.04])  # Holm by hand


def test_an_aggregate_returning_a_string_is_refused() -> None:
    class Row:
        def __init__(self, i: str) -> None:
            self.query_id = i

    class Run:
        def __init__(self, name: str) -> None:
            self.name, self.per_query = name, [Row("q1"), Row("q2")]

    with pytest.raises(ValueError, match=r"aggregate 'agg': its value must be a number"):
        aggregate_bootstrap(Run("a"), Run("b"), lambda rows: "0.5",  # type: ignore[arg-type,return-value]
                            name="agg",
                            n_resamples=10)


def test_the_first_bad_score_in_the_runs_order_is_named() -> None:
    # a non-finite value before a string: the non-finite one is reported, as a check of
    # each value in turn would; and the other way round
    nan_first: dict[str, Any] = {"q1": 0.5, "q2": float("nan"), "q3": "0.4"}
    with pytest.raises(ValueError, match=r"query 'q2' has a non-finite 'ap' \(nan\)"):
        paired_test(nan_first, GOOD, "ap")
    text_first: dict[str, Any] = {"q1": "0.5", "q2": float("inf"), "q3": 0.4}
    with pytest.raises(ValueError, match=r"case 'q1'.*must be a number"):
        paired_test(text_first, GOOD, "ap")
    plain = {"q3": 0.4, "q1": float("-inf"), "q2": float("nan")}  # all floats: one pass
    with pytest.raises(ValueError, match=r"query 'q1' has a non-finite 'ap' \(-inf\)"):
        paired_test(plain, GOOD, "ap")


def test_pairing_is_by_id_whatever_order_the_runs_hold() -> None:
    from evalkit.stats.pairing import align, run_scores

    a = {"q3": 3.0, "q1": 1.0, "q2": 2}  # int: read as 2.0
    b = {"q2": 20.0, "q3": 30.0, "q1": 10.0}
    p = align(a, b, "ap")
    assert p.ids == ("q1", "q2", "q3")
    assert p.a.tolist() == [1.0, 2.0, 3.0] and p.b.tolist() == [10.0, 20.0, 30.0]
    first = run_scores(b, "ap", "b")
    same = run_scores({"q1": 5.0, "q3": 7.0, "q2": 6.0}, "ap", "c", like=first)
    assert same.ids is first.ids and same.values.tolist() == [5.0, 6.0, 7.0]
    other = run_scores({"q9": 1.0, "q1": 2.0}, "ap", "d", like=first)
    assert other.ids == ("q1", "q9") and other.values.tolist() == [2.0, 1.0]
    with pytest.raises(ValueError, match=r"1 only in 'a' \('q9'\)"):
        align({**a, "q9": 0.0}, b, "ap")
