"""What a metric declares one case's value can be (``MetricSpec.value_type``), and how the
default paired test reads it in ``evalkit.compare`` and the gate.

The declarations are checked against the values themselves: every binary measure scores
only 0 or 1 and P@10 only multiples of 0.1 on the Vaswani run (as trec_eval's
definitions say), so a declaration cannot drift from what the measure computes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import evalkit
from evalkit.core.registry import Registry, RegistryError
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.data.metric_info import declared_bounds, value_type
from evalkit.data.results import QueryResult, RunResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani" / "data"


def _never(response: Any, case: Any) -> float:
    raise AssertionError("not scored here")


@pytest.mark.parametrize(("name", "declared"), [
    ("P@1", "binary"), ("precision@10", "discrete"), ("success@5", "binary"),
    ("hit_rate@3", "binary"), ("rr@1", "binary"), ("rr", "continuous"),
    ("recip_rank", "continuous"), ("ap", "continuous"), ("ndcg@10", "continuous"),
    ("judged@1", "binary"), ("relative_P@1", "binary"), ("P(rel=2)@1", "binary"),
    ("ap(rel=2)", "continuous"), ("num_rel", None),
    ("exact_match", "binary"), ("em", "binary"), ("f1", "continuous"),
    ("rouge_l", "continuous"), ("json_valid", "binary"), ("contains(text=refund)", "binary"),
    ("regex(pattern=^[0-9]+$)", "binary"),
])
def test_built_in_declarations(name: str, declared: str | None) -> None:
    assert value_type(name) == declared


def test_unknown_metric_has_no_value_type() -> None:
    assert value_type("no_such_metric_anywhere") is None


def test_declared_types_agree_with_the_values_on_vaswani() -> None:
    run = evalkit.evaluate_run(VASWANI / "runs" / "run.vaswani.bm25.txt", VASWANI / "qrels",
                               ["P@1", "P@10", "success@10", "rr@1", "judged@1"])
    binary = ["precision@1", "success@10", "rr@1", "judged@1"]
    for name in binary:
        values = set(run.scores(name).values())
        assert values <= {0.0, 1.0} and len(values) == 2, name
        assert value_type(name) == "binary"
    tenths = np.array(list(run.scores("precision@10").values())) * 10
    assert np.allclose(tenths, np.round(tenths)) and len(set(np.round(tenths))) > 2


def test_register_metric_takes_a_value_type() -> None:
    with use_registry(plugins=False) as reg:
        reg.register_metric("passed", higher_is_better=True, value_type="binary")(_never)
        assert reg.resolve("passed").value_type == "binary"  # type: ignore[union-attr]
        with pytest.raises(RegistryError, match="value_type must be one of binary, "
                                                "discrete, continuous"):
            reg.register_metric("graded", higher_is_better=True,
                                value_type="ordinal")(_never)  # type: ignore[arg-type]


def test_a_familys_value_type_holds_for_members_that_declare_none() -> None:
    def factory(k: int) -> MetricSpec:
        return MetricSpec(f"hit@{k}", _never, True)

    def own(k: int) -> MetricSpec:
        return MetricSpec(f"share@{k}", _never, True,
                          value_type="binary" if k == 1 else "discrete")

    with use_registry(plugins=False) as reg:
        reg.add(MetricFamily("hit", factory, True, value_type="binary"), reg_provider())
        reg.add(MetricFamily("share", own, True, value_type="continuous"), reg_provider())
        assert reg.resolve("hit@5").value_type == "binary"  # type: ignore[union-attr]
        assert reg.resolve("share@1").value_type == "binary"  # type: ignore[union-attr]
        assert reg.resolve("share@4").value_type == "discrete"  # type: ignore[union-attr]


def reg_provider() -> Any:
    from evalkit.core.providers import client_provider

    return client_provider(_never)


# ------------------------------------------------------------------ compare and gate
def _trec_pair(tmp: Path) -> tuple[Path, Path, Path]:
    """Two TREC runs over 30 queries whose P@10 differ by exactly one relevant document
    in the top 10 on 20 queries (+0.1 on 14, -0.1 on 6), and whose P@1 differ on 14 (the
    first document is relevant in one run only; the other has it second)."""
    qrels: list[str] = []
    run_a: list[str] = []
    run_b: list[str] = []
    for q in range(30):
        rel = [f"d{q}_{i}" for i in range(3)]
        qrels += [f"{q} 0 {d} 1" for d in rel]
        other = [f"x{q}_{i}" for i in range(12)]
        a_top, b_top = other[:9], other[:9]
        if q < 14:  # a has one relevant document more in its top 10
            a_top = [*other[:5], rel[0], *other[5:8]]
        elif q < 20:
            b_top = [*other[:5], rel[0], *other[5:8]]
        if q >= 20:  # both have rel[1]; a ranks it first
            a_top, b_top = [rel[1], *a_top[:8]], [b_top[0], rel[1], *b_top[1:8]]
        elif q < 4:  # both have rel[2]; b ranks it first
            a_top, b_top = [a_top[0], rel[2], *a_top[1:8]], [rel[2], *b_top[:8]]
        for lines, top, tag in ((run_a, a_top, "a"), (run_b, b_top, "b")):
            lines += [f"{q} Q0 {d} {r} {100 - r} {tag}" for r, d in enumerate(top, start=1)]
    paths = []
    for name, lines in (("qrels", qrels), ("a.txt", run_a), ("b.txt", run_b)):
        (tmp / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(tmp / name)
    return paths[0], paths[1], paths[2]


def test_compare_chooses_the_test_from_the_metric_not_from_its_values(tmp_path: Path) -> None:
    qrels, a, b = _trec_pair(tmp_path)
    c = evalkit.compare(b, a, qrels=qrels, metrics=["P@10", "P@1"], n_resamples=2000)
    p10, p1 = c.get("precision@10"), c.get("precision@1")
    # P@10's differences are all +-0.1 or 0 here, yet P@10 is not a 0/1 metric
    assert sorted(np.round(np.array(p10.differences), 12)) == [-0.1] * 6 + [0.0] * 10 + \
        [0.1] * 14
    assert p10.method == "randomization"
    assert sorted(p1.differences) == [-1.0] * 4 + [0.0] * 16 + [1.0] * 10
    assert p1.method == "t-test"


@pytest.fixture
def gate_registry() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        r.register_metric("passed", higher_is_better=True, value_type="binary")(_never)
        r.register_metric("quality", higher_is_better=True)(_never)
        yield r


def test_the_gate_passes_the_declared_value_type(gate_registry: Registry) -> None:
    ids = [f"c{i}" for i in range(30)]
    base = RunResult("base", [QueryResult(q, [], {"passed": 1.0, "quality": 0.5})
                              for q in ids])
    cand = RunResult("cand", [QueryResult(q, [], {"passed": float(i % 3 != 0),
                                                  "quality": 0.5 - 0.01 * (i % 4)})
                              for i, q in enumerate(ids)])
    checks = [CheckSpec("p", "passed", vs_baseline="no_significant_regression"),
              CheckSpec("q", "quality", vs_baseline="no_significant_regression")]
    report = evaluate_gate(checks, cand, base, n_resamples=999)
    methods = [r.comparison.method for r in report.results]  # type: ignore[union-attr]
    assert methods == ["t-test", "randomization"]


@pytest.mark.parametrize(("name", "bounds"), [
    ("ap", (0.0, 1.0)), ("ndcg@10", (0.0, 1.0)), ("P@1", (0.0, 1.0)), ("rr", (0.0, 1.0)),
    ("ap(rel=2)", (0.0, 1.0)), ("recall@100", (0.0, 1.0)), ("num_rel", None),
    ("utility", None), ("f1", (0.0, 1.0)), ("exact_match", (0.0, 1.0)),
    ("contains(text=refund)", (0.0, 1.0)), ("no_such_metric_anywhere", None),
])
def test_declared_bounds(name: str, bounds: tuple[float, float] | None) -> None:
    assert declared_bounds(name) == bounds


def test_register_metric_takes_bounds_and_a_binary_metric_is_in_0_1() -> None:
    with use_registry(plugins=False) as reg:
        reg.register_metric("stars", higher_is_better=True, bounds=(1, 5))(_never)
        reg.register_metric("passed", higher_is_better=True, value_type="binary")(_never)
        reg.register_metric("free", higher_is_better=True)(_never)
        assert declared_bounds("stars") == (1.0, 5.0)
        assert declared_bounds("passed") == (0.0, 1.0)
        assert declared_bounds("free") is None
        with pytest.raises(RegistryError, match=r"bounds must be \(lo, hi\)"):
            reg.register_metric("upside_down", higher_is_better=True,
                                bounds=(1.0, 0.0))(_never)


def test_the_public_register_metric_takes_bounds_for_until_decided(tmp_path: Path) -> None:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.sequential_run import UntilDecided
    from evalkit.execute.target_runner import evaluate

    cases = [GoldenCase(id=f"c{i:02d}", query=f"q{i}") for i in range(40)]
    with use_registry(plugins=False):
        evalkit.register_metric("stars", higher_is_better=True, bounds=(1, 5))(
            lambda response, case: float(response.text))
        assert declared_bounds("stars") == (1.0, 5.0)
        base = evaluate(CallableTarget(lambda case: "1", name="base"), cases, ["stars"],
                        artifact=tmp_path / "base.jsonl", progress=False)
        cand = evaluate(CallableTarget(lambda case: "5", name="cand"), cases, ["stars"],
                        progress=False, until_decided=UntilDecided(base))
        with pytest.raises(RegistryError, match=r"bounds must be \(lo, hi\)"):
            evalkit.register_metric("upside_down", higher_is_better=True,
                                    bounds=(5, 1))(_never)
    record = cand.header["sequential"]
    assert record["bounds"] == [1.0, 5.0] and record["radius"] == 4.0
    assert record["decision"] == "differs" and record["stopped_early"] is True

