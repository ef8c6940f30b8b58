"""Multiple-testing adjustments (:mod:`evalkit.stats.multiple`) refuse what is no p-value.

A p-value is a probability: NaN (often a test upstream that failed), a negative value or
one above 1 is refused with a ValueError naming its position and value, as a string or
a bool is; Holm, Benjamini-Hochberg, Westfall-Young and Holm's smallest attainable
adjusted p alike. On valid input the adjustments keep the values statsmodels'
``multipletests`` gives (stored below).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from evalkit.stats import benjamini_hochberg, holm, westfall_young
from evalkit.stats.multiple import holm_smallest_adjusted

BAD = [(math.nan, "nan"), (-0.5, "-0.5"), (1.5, "1.5"), (math.inf, "inf")]


@pytest.mark.parametrize("adjust", [holm, benjamini_hochberg, holm_smallest_adjusted])
@pytest.mark.parametrize(("bad", "text"), BAD)
def test_a_p_value_outside_0_1_is_refused(adjust: Callable[[list[float]], list[float]],
                                          bad: float, text: str) -> None:
    with pytest.raises(ValueError, match=rf" 1 \(of 3\) must be in \[0, 1\], got {text}"):
        adjust([0.01, bad, 0.2])


def test_nan_message_says_what_it_usually_means() -> None:
    with pytest.raises(ValueError, match=r"p-value 1 \(of 2\).*nan.*test that produced it"):
        holm([0.01, math.nan])


def test_the_ends_0_and_1_are_p_values() -> None:
    # statsmodels multipletests([0, 1, 0.01], method="holm")[1] = [0, 1, 0.02];
    # method="fdr_bh" gives [0, 1, 0.015]
    assert holm([0.0, 1.0, 0.01]) == pytest.approx([0.0, 1.0, 0.02])
    assert benjamini_hochberg([0.0, 1.0, 0.01]) == pytest.approx([0.0, 1.0, 0.015])


def test_bh_never_returns_a_negative_adjusted_p() -> None:
    with pytest.raises(ValueError, match=r"p-value 1 \(of 2\) must be in \[0, 1\], got -0.5"):
        benjamini_hochberg([0.01, -0.5])


def test_westfall_young_refuses_bad_observed_and_resampled_p() -> None:
    null = np.array([[0.5, 0.2], [0.1, 0.9]])
    with pytest.raises(ValueError, match=r"observed p-value 0 \(of 2\).*got nan"):
        westfall_young(np.array([math.nan, 0.1]), null)
    bad = null.copy()
    bad[1, 0] = 1.2
    with pytest.raises(ValueError, match=r"row 1, hypothesis 0.*got 1.2"):
        westfall_young(np.array([0.05, 0.1]), bad)
    with pytest.raises(ValueError, match=r"shape \(R, 2\)"):
        westfall_young(np.array([0.05, 0.1]), np.array([0.5, 0.2]))
    # valid: counts by hand. Sorted obs 0.05 (col 0), 0.1 (col 1); row minima over both
    # columns 0.2, 0.1 -> rows <= 0.05: none -> (0 + 1) / 3; over col 1: 0.2, 0.9 -> <= 0.1:
    # none -> 1/3, running max 1/3
    assert westfall_young(np.array([0.05, 0.1]), null) == pytest.approx([1 / 3, 1 / 3])


@pytest.mark.parametrize("bad", [math.nan, -0.1, 1.5])
def test_format_p_value_refuses_what_is_no_p_value(bad: float) -> None:
    from evalkit.stats import format_p_value

    with pytest.raises(ValueError, match=r"p-value must be in \[0, 1\]"):
        format_p_value(bad)
    assert format_p_value(1.0) == "p = 1.0000" and format_p_value(0.0) == "p < 0.0001"
