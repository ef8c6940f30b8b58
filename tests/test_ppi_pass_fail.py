"""PPI++ of pass/fail (0/1) labels: the Agresti-Coull / Agresti-Min adjusted interval
(by hand and against statsmodels' stored Agresti-Coull interval), labels that do not vary
refused, and the few-labels note counting events."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evalkit.stats.ppi import (
    AGRESTI_COULL,
    AGRESTI_MIN,
    MIN_LABELS,
    DegenerateLabelsError,
    PPIError,
    ppi_mean,
    ppi_paired_difference,
)

Z = 1.959963984540054
REFERENCE = Path(__file__).parent / "data" / "ppi" / "agresti_coull_reference.json"


def test_adjusted_interval_by_hand() -> None:
    # 4 labels, the judge right on 3 of them; 6 judge-only cases, 4 of them passed
    y, f, u = [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    r = ppi_mean(y, f, u)
    # lambda: cov_n(Y, f) = (.125 + .125 - .125 + .375) / 4 = 1/8; the 10 judge grades
    # hold 6 passes, sample variance 6 * 4 / (10 * 9) = 4/15; (1 + 4/6) * 4/15 = 4/9
    lam = (1 / 8) / (4 / 9)
    assert lam == 0.28125 and r.lam == pytest.approx(lam, abs=1e-15)
    # the estimate is plain PPI++: lam * 4/6 + mean(1 - lam, 1 - lam, 1, 0)
    assert r.estimate == pytest.approx(lam * 4 / 6 + (3 - 2 * lam) / 4, abs=1e-15)
    assert r.estimate == pytest.approx(0.796875, abs=1e-15)
    # pseudo-labels: z^2/2 of 0 and of 1, each graded by the labelled judge mean 1/2
    w = Z * Z / 2
    rect = [1 - lam, 1 - lam, 1.0, 0.0]
    pseudo = [0 - lam / 2, 1 - lam / 2]
    total = 4 + 2 * w
    rbar = (sum(rect) + w * sum(pseudo)) / total
    var_w = (sum((x - rbar) ** 2 for x in rect) + w * sum((x - rbar) ** 2 for x in pseudo)) \
        / total
    se = math.sqrt(lam ** 2 * (4 / 6) * (2 / 6) / 6 + var_w / total)
    center = lam * 4 / 6 + rbar
    assert (r.se, r.center) == pytest.approx((se, center), abs=1e-14)
    assert (r.se, r.center) == pytest.approx((0.17160980346426566, 0.6744022908863507),
                                             abs=1e-12)
    assert r.ci_low == pytest.approx(center - Z * se, abs=1e-14)
    assert r.ci_high == 1.0  # center + z se = 1.0108, clipped to the labels' range
    assert r.adjustment == AGRESTI_COULL and r.events == 1
    d = r.to_dict()
    assert (d["adjustment"], d["events"], d["center"]) == (AGRESTI_COULL, 1, r.center)
    # the p-value is the interval's own test (about its centre)
    assert r.p_value(center) == 1.0
    assert r.p_value(r.ci_low) == pytest.approx(0.05, abs=1e-12)


def test_judge_unused_is_agresti_coull() -> None:
    # a constant judge: lambda 0, and the interval is Agresti & Coull's (statsmodels)
    for ref in json.loads(REFERENCE.read_text()):
        k, n = ref["passes"], ref["n"]
        y = np.r_[np.ones(k), np.zeros(n - k)]
        r = ppi_mean(y, np.full(n, 0.5), [0.2, 0.7, 0.9], alpha=ref["alpha"])
        assert r.lam == 0.0
        assert (r.ci_low, r.ci_high) == pytest.approx(ref["interval"], abs=1e-12)
        assert r.estimate == k / n  # the estimate stays the labels' mean


def test_all_pass_labels_give_no_zero_width_interval() -> None:
    # the outside statistician's case: 20 labels all pass, the judge passes them too and
    # fails 9.4% of the 480 others; plain PPI++ gave [1, 1], se 0, p(0.95) = 0
    rng = np.random.default_rng(0)
    y, f = np.ones(20), np.ones(20)
    u = (rng.random(480) > 0.1).astype(float)
    r = ppi_mean(y, f, u)
    assert r.lam == 0.0 and r.estimate == 1.0
    # Agresti-Coull of 20/20 by hand: (20 + z^2/2) / (20 + z^2) -+ z sqrt(p(1-p)/(20+z^2))
    nt = 20 + Z * Z
    p = (20 + Z * Z / 2) / nt
    assert (r.ci_low, r.ci_high) == pytest.approx((p - Z * math.sqrt(p * (1 - p) / nt), 1.0),
                                                  abs=1e-12)
    assert r.ci_low == pytest.approx(0.8101904394575112, abs=1e-12)
    assert r.se > 0 and r.p_value(0.95) > 0.5
    assert r.note is not None and "only 0 of the 20 pass/fail human labels" in r.note


def test_paired_all_pass_is_agresti_min() -> None:
    # both systems pass every labelled case, the judge 95% against 85% on the others:
    # plain PPI++ gave [0, 0], se 0; Agresti & Min (half a case per cell, n + 2):
    # difference 0, variance (1/22 - 0) / 22
    rng = np.random.default_rng(0)
    ones = np.ones(20)
    ua = (rng.random(480) > 0.05).astype(float)
    ub = (rng.random(480) > 0.15).astype(float)
    r = ppi_paired_difference(ones, ones, ones, ones, ua, ub)
    half = Z * math.sqrt(1 / 22 / 22)
    assert (r.ci_low, r.ci_high) == pytest.approx((-half, half), abs=1e-12)
    assert half == pytest.approx(0.0891, abs=1e-4)
    assert r.adjustment == AGRESTI_MIN and r.events == 0 and r.p_value() == 1.0
    assert r.note is not None and "only 0 of the 20 labelled cases" in r.note


def test_paired_agresti_min_by_hand() -> None:
    # 5 shared labels: a passes and b fails on 2 cases, the reverse on 1; a constant judge
    ya, yb = [1.0, 1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0, 1.0]
    judge = [0.5] * 5
    r = ppi_paired_difference(ya, yb, judge, judge, [0.4, 0.6], [0.5, 0.5])
    n2 = 5 + 2
    p12, p21 = 2.5 / n2, 1.5 / n2
    se = math.sqrt(((p12 + p21) - (p12 - p21) ** 2) / n2)
    assert se == pytest.approx(math.sqrt(27 / 343), abs=1e-15)
    assert (r.ci_low, r.ci_high) == pytest.approx((1 / 7 - Z * se, 1 / 7 + Z * se),
                                                  abs=1e-12)
    assert r.estimate == pytest.approx(1 / 5, abs=1e-15) and r.events == 3


def test_continuous_labels_that_do_not_vary_are_refused() -> None:
    with pytest.raises(DegenerateLabelsError, match=r"the 12 human labels are all 3: .*"
                       "cannot be estimated"):
        ppi_mean([3.0] * 12, np.linspace(2, 4, 12), [2.5, 3.5])
    # every labelled difference equal (0.5) on a 1-5 scale
    with pytest.raises(DegenerateLabelsError, match=r"labelled differences a - b are all 0\.5"):
        ppi_paired_difference([4.0, 3.5, 2.5], [3.5, 3.0, 2.0], [4, 3, 2], [3, 3, 2],
                              [4.0, 5.0], [3.0, 2.0])
    # a fixed lambda 1 with a judge exactly 0.25 above every label: the rectifier is
    # constant though the labels vary
    with pytest.raises(DegenerateLabelsError, match="minus lambda"):
        ppi_mean([1.5, 2.5, 3.5], [1.75, 2.75, 3.75], [2.0, 3.0], lam=1.0)
    assert issubclass(DegenerateLabelsError, PPIError)


def test_binary_is_inferred_and_can_be_forced() -> None:
    y, f = [1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0]
    assert ppi_mean(y, f, [1.0, 0.0]).adjustment == AGRESTI_COULL
    # a judge graded on another scale: not pass/fail unless said so
    assert ppi_mean(y, [4.0, 1.0, 2.0, 5.0], [3.0, 1.0]).adjustment is None
    assert ppi_mean(y, [4.0, 1.0, 2.0, 5.0], [3.0, 1.0], binary=True).adjustment \
        == AGRESTI_COULL
    assert ppi_mean(y, f, [1.0, 0.0], binary=False).adjustment is None
    with pytest.raises(PPIError, match="neither 0 nor 1"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [1.0], binary=True)


def test_the_note_counts_events_of_pass_fail_labels() -> None:
    rng = np.random.default_rng(5)
    f = rng.random(100)
    y = np.r_[np.ones(91), np.zeros(9)]  # 100 labels, 9 fails
    r = ppi_mean(y, f, rng.random(50))
    assert r.note is not None and "only 9 of the 100 pass/fail" in r.note
    y = np.r_[np.ones(90), np.zeros(10)]
    assert ppi_mean(y, f, rng.random(50)).note is None
    assert ppi_mean(y[:MIN_LABELS - 1], f[:MIN_LABELS - 1], [0.5]).note is not None
    # continuous labels: the count of labels alone decides
    assert ppi_mean(rng.normal(size=MIN_LABELS), f[:MIN_LABELS], [0.5]).note is None


def test_run_header_means_say_adjusted_or_refused(tmp_path: Path) -> None:
    from evalkit.data.labels import load_labels
    from evalkit.data.ppi_labels import ppi_mean_line, ppi_means
    from evalkit.data.results import RunResult
    from evalkit.data.rows import CaseResult
    from evalkit.data.targets import TargetResponse

    ids = [f"c{i:02d}" for i in range(30)]
    rows = [CaseResult(c, TargetResponse(text="x"),
                       {"passed": float(i % 7 != 0), "grade": 1.0 + i % 5})
            for i, c in enumerate(ids)]
    run = RunResult("sys", rows, {"kind": "target"})
    path = tmp_path / "labels.jsonl"
    path.write_text('{"selection": "random", "seed": 1}\n' + "".join(
        json.dumps({"id": c, "labels": {"passed": 1.0, "grade": 4.0}}) + "\n"
        for c in ids[:12]))
    found = ppi_means(run, load_labels(path))["metrics"]
    # pass/fail: 12 labels all pass, an Agresti-Coull interval and the events note
    passed = found["passed"]
    assert passed["adjustment"] == AGRESTI_COULL and passed["events"] == 0
    assert passed["ci_high"] - passed["ci_low"] > 0.1
    line = ppi_mean_line("passed", passed)
    assert "Agresti-Coull-adjusted for pass/fail labels; only 0 of the 12" in line
    # a 1-5 grade, every label 4: refused, said in the line
    assert "estimate" not in found["grade"]
    assert ppi_mean_line("grade", found["grade"]).startswith(
        "grade: human mean (PPI++) none: the 12 human labels are all 4: the PPI++ interval's")
