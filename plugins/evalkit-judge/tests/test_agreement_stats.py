"""Agreement statistics against scikit-learn, the krippendorff package and
Krippendorff's own worked example (2011)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from evalkit_judge.agreement_stats import (
    AgreementError,
    agreement_table,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
    mean_bias,
    spearman_rho,
)

nan = math.nan

#: "Computing Krippendorff's Alpha-Reliability" (K. Krippendorff, 2011), section C:
#: four observers A-D, twelve units, values 1-5, "." missing. The paper's values:
#: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(("level", "published"), [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011_worked_example(level: str, published: float) -> None:
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == published  # type: ignore[arg-type]


def test_missing_values_as_none_equal_nan() -> None:
    with_none = [[None if math.isnan(v) else v for v in row] for row in KRIPPENDORFF_2011]
    assert krippendorff_alpha(with_none, "ordinal") == krippendorff_alpha(
        KRIPPENDORFF_2011, "ordinal")


def _random_pairs(seed: int, n: int, k: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, k + 1, size=n)
    noise = rng.integers(-1, 2, size=n)
    judge = np.clip(human + noise, 1, k)
    judge[rng.random(n) < 0.2] = rng.integers(1, k + 1)  # some unrelated grades
    return judge.astype(float).tolist(), human.astype(float).tolist()


@pytest.mark.parametrize("seed", range(8))
def test_cohen_kappa_matches_scikit_learn(seed: int) -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    judge, human = _random_pairs(seed, 40 + 13 * seed, 3 + seed % 4)
    for weights, sk in (("none", None), ("linear", "linear"), ("quadratic", "quadratic")):
        expected = sklearn_metrics.cohen_kappa_score(judge, human, weights=sk)
        assert cohen_kappa(judge, human, weights) == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(8))
def test_krippendorff_alpha_matches_the_package(seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(100 + seed)
    coders, units = 2 + seed % 3, 30 + 7 * seed
    truth = rng.integers(1, 6, size=units)
    data = np.clip(truth + rng.integers(-1, 2, size=(coders, units)), 1, 5).astype(float)
    data[rng.random((coders, units)) < 0.15] = np.nan
    for level in ("nominal", "ordinal", "interval", "ratio"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)


def test_two_coder_table_matches_references() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    from scipy import stats

    judge, human = _random_pairs(42, 60, 5)
    t = agreement_table("correctness", judge, human)
    assert t.n == 60
    assert t.kappa["quadratic"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score(judge, human, weights="quadratic"), abs=1e-12)
    assert t.alpha["ordinal"] == pytest.approx(krippendorff.alpha(
        reliability_data=[judge, human], level_of_measurement="ordinal"), abs=1e-12)
    assert t.spearman == pytest.approx(stats.spearmanr(judge, human).statistic, abs=1e-12)
    ci = stats.ttest_1samp(np.subtract(judge, human), 0).confidence_interval(0.95)
    assert (t.bias.ci_low, t.bias.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    _values, counts = confusion_matrix(judge, human)
    assert t.confusion == counts
    assert sum(map(sum, counts)) == 60


def test_by_hand() -> None:
    # judge 1,2,2,3 vs human 1,2,3,3: observed agreement 3/4; margins judge (1,2,1),
    # human (1,1,2): chance agreement (1*1 + 2*1 + 1*2)/16 = 5/16; kappa = (12/16 - 5/16)
    # / (1 - 5/16) = 7/11
    assert cohen_kappa([1, 2, 2, 3], [1, 2, 3, 3]) == pytest.approx(7 / 11, abs=1e-15)
    assert confusion_matrix([1, 2, 2, 3], [1, 2, 3, 3]) == (
        [1.0, 2.0, 3.0], [[1, 0, 0], [0, 1, 1], [0, 0, 1]])
    b = mean_bias([2, 3, 4], [1, 3, 3])  # differences 1, 0, 1
    assert b.mean == pytest.approx(2 / 3)
    assert spearman_rho([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_degenerate_inputs() -> None:
    assert math.isnan(cohen_kappa([2, 2], [2, 2]))
    assert math.isnan(krippendorff_alpha([[3, 3], [3, 3]], "interval"))
    assert math.isnan(spearman_rho([1, 1, 1], [1, 2, 3]))
    with pytest.raises(AgreementError, match="one length"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(AgreementError, match="no labelled cases"):
        agreement_table("m", [], [])
    with pytest.raises(AgreementError, match="two values or more"):
        krippendorff_alpha([[1, nan], [nan, 2]], "nominal")
    with pytest.raises(AgreementError, match="weights"):
        cohen_kappa([1], [1], "cubic")  # type: ignore[arg-type]


# a judge run with epochs 3 that grades 0.1 three times has the case mean below, and
# 0.1 + 0.2 is 0.30000000000000004: grades equal up to rounding are one category
EPOCH_MEAN = sum([0.1] * 3) / 3


def test_grades_equal_up_to_rounding_are_one_category() -> None:
    assert EPOCH_MEAN != 0.1 and 0.1 + 0.2 != 0.3  # the premise
    judge = [EPOCH_MEAN] * 3 + [0.5, 0.9, 0.5]
    human = [0.1] * 3 + [0.5, 0.9, 0.5]
    # perfect agreement by hand: kappa, alpha and rho are 1 (the former 0.769, 0.784)
    for w in ("none", "linear", "quadratic"):
        assert cohen_kappa(judge, human, weights=w) == 1.0
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha([judge, human], level=level) == pytest.approx(1.0, abs=1e-12)
    assert spearman_rho(judge, human) == pytest.approx(1.0, abs=1e-12)
    values, counts = confusion_matrix(judge, human)
    assert len(values) == 3 and counts == [[3, 0, 0], [0, 2, 0], [0, 0, 1]]
    j = [0.1 + 0.2, 0.6, 0.9, 0.3, 0.6]
    h = [0.3, 0.6, 0.9, 0.1 + 0.2, 0.6]
    assert cohen_kappa(j, h) == 1.0  # the former 0.444
    table: list[list[float | None]] = [list(j), list(h), [None, 0.6, 0.9, 0.3, None]]
    assert krippendorff_alpha(table, level="nominal") == 1.0


def test_snapped_grades_give_the_references_values_on_the_decimals() -> None:
    # with some disagreement, the statistics on rounded grades equal scikit-learn's and
    # the krippendorff package's on the decimals the grades stand for
    sk = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    judge = [EPOCH_MEAN, 0.1 + 0.2, 0.3, 0.7, EPOCH_MEAN, 0.5, 0.7, 0.3]
    decimals = [0.1, 0.3, 0.3, 0.7, 0.1, 0.5, 0.7, 0.3]
    human = [0.1, 0.3, 0.5, 0.7, 0.3, 0.5, 0.5, 0.1]
    tenths_j = [round(10 * v) for v in decimals]  # scikit-learn wants class labels
    tenths_h = [round(10 * v) for v in human]
    for w in ("none", "linear", "quadratic"):
        assert cohen_kappa(judge, human, weights=w) == pytest.approx(
            sk.cohen_kappa_score(tenths_j, tenths_h, weights=None if w == "none" else w),
            abs=1e-12)
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha([judge, human], level=level) == pytest.approx(
            krippendorff.alpha(reliability_data=[decimals, human],
                               level_of_measurement=level), abs=1e-9)


def test_values_apart_by_more_than_rounding_stay_apart() -> None:
    a = [0.1, 0.1 + 1e-9, 0.2, 0.3]
    b = [0.1, 0.1 + 1e-9, 0.2, 0.3]
    values, _ = confusion_matrix(a, b)
    assert len(values) == 4


def test_rank_weights_noted_when_categories_are_not_equally_spaced() -> None:
    from evalkit_judge.agreement_stats import agreement_table, rank_weight_note

    # a judge's mean over three samples: 3, 4, 13/3, 14/3, 5
    judge = [3.0, 4.0, 13 / 3, 14 / 3, 5.0, 4.0]
    human = [3.0, 4.0, 4.0, 5.0, 5.0, 4.0]
    table = agreement_table("correctness", judge, human)
    assert len(table.notes) == 1
    assert "not equally spaced" in table.notes[0] and "4.33333" in table.notes[0]
    assert table.to_dict()["notes"] == table.notes
    # the weights stay scikit-learn's (by rank): 4 against 13/3 weighs as 3 against 4
    assert rank_weight_note([1.0, 2.0, 3.0, 4.0, 5.0]) is None
    assert rank_weight_note([0.0, 0.5]) is None
    assert rank_weight_note([0.1, 0.2, 0.30000000000000004]) is None
    assert rank_weight_note([1.0, 2.0, 4.0]) is not None
