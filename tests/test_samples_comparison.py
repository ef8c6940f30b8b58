"""Comparisons of runs with repeated samples: tests on reduced values, pairing with
unequal K, and the within-case spread on constructed data with a known answer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evalkit.comparison import Comparison, compare
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.samples import reduce_samples
from evalkit.data.targets import TargetResponse
from evalkit.report import render_report
from evalkit.stats.spread import within_case_spread


def run_of(name: str, values: dict[str, list[float]], metric: str = "m") -> RunResult:
    """A run whose case ``q`` has one sample row per value (one row, no samples, for a
    single value)."""
    if all(len(v) == 1 for v in values.values()):
        rows = [CaseResult(q, TargetResponse([]), {metric: v[0]}) for q, v in values.items()]
        return RunResult(name, rows, {"kind": "target"})
    samples = [CaseResult(q, TargetResponse([]), {metric: x}, sample=i)
               for q, v in values.items() for i, x in enumerate(v)]
    header = {"kind": "target", "samples": {"epochs": max(map(len, values.values())),
                                            "reduce": "mean"}}
    return RunResult(name, reduce_samples(samples), header, samples=samples)


# Constructed: the baseline's samples agree (no within-case variance); the candidate's
# two samples of case i are c_i + 0.1 and c_i - 0.1, so each has sample variance
# (0.1^2 + 0.1^2) / 1 = 0.02 and its mean of 2 samples carries 0.02 / 2 = 0.01. The
# per-case differences d = (0.3, 0.1, -0.1, -0.3) have variance 0.2 / 3. Share:
# 0.01 / (0.2 / 3) = 0.15; between-case part 0.2/3 - 0.01; SE now sqrt(0.2/3 / 4); with
# K' samples in both runs sqrt((0.2/3 - 0.01 + 0.02 / K') / 4).
BASE = {"a": [0.5, 0.5], "b": [0.4, 0.4], "c": [0.6, 0.6], "d": [0.7, 0.7]}
DIFFS = {"a": 0.3, "b": 0.1, "c": -0.1, "d": -0.3}
CAND = {q: [BASE[q][0] + DIFFS[q] + 0.1, BASE[q][0] + DIFFS[q] - 0.1] for q in BASE}


def test_variance_share_on_constructed_data_has_the_known_answer() -> None:
    c = compare(run_of("base", BASE), run_of("cand", CAND), metrics=["m"])
    s = c.get("m").spread
    assert s is not None
    var_d = 0.2 / 3
    assert s.var_diff == pytest.approx(var_d)
    assert s.within_var == pytest.approx(0.01)
    assert s.within_share == pytest.approx(0.15)
    assert s.between_var == pytest.approx(var_d - 0.01)
    assert s.se == pytest.approx(math.sqrt(var_d / 4))
    assert dict(s.se_by_k)[10] == pytest.approx(math.sqrt((var_d - 0.01 + 0.02 / 10) / 4))
    assert s.se_limit == pytest.approx(math.sqrt((var_d - 0.01) / 4))
    assert (s.k_baseline, s.k_candidate, s.n) == (2, 2, 4)
    # the test is on the reduced values: the same as comparing the per-case means
    means = compare(run_of("base", {q: [v[0]] for q, v in BASE.items()}),
                    run_of("cand", {q: [BASE[q][0] + DIFFS[q]] for q in BASE}), metrics=["m"])
    assert c.get("m").p_value == pytest.approx(means.get("m").p_value)
    assert c.get("m").n_queries == 4


def test_variance_share_matches_the_true_share_in_a_large_simulation() -> None:
    # between-case sd 0.1, within-case sd 0.3 in each run, K = 4 in both: the true share
    # of Var(d) from resampling is (2 * 0.09 / 4) / (0.01 + 2 * 0.09 / 4) = 0.818...
    rng = np.random.default_rng(7)
    n, k = 4000, 4
    case = rng.normal(0, 0.1, n)
    a = case[:, None] + rng.normal(0, 0.3, (n, k))
    b = rng.normal(0, 0.3, (n, k))
    s = within_case_spread({str(i): list(b[i]) for i in range(n)},
                           {str(i): list(a[i]) for i in range(n)})
    truth = (2 * 0.09 / k) / (0.01 + 2 * 0.09 / k)
    assert s.within_share == pytest.approx(truth, abs=0.02)
    assert s.se_at(k) == pytest.approx(math.sqrt((0.01 + 2 * 0.09 / k) / n), rel=0.05)


def test_runs_with_different_k_are_paired_after_reduction_and_say_so() -> None:
    base = run_of("base", {q: [v[0]] for q, v in BASE.items()})  # K = 1
    cand = run_of("cand", {q: [*v, BASE[q][0] + DIFFS[q]] for q, v in CAND.items()})  # K = 3
    c = compare(base, cand, metrics=["m"])
    r = c.get("m")
    assert r.spread is None  # K = 1 has no within-case variance to estimate
    assert r.n_queries == 4
    # the per-case differences are the candidate's sample means minus the baseline
    assert r.per_query() == pytest.approx(DIFFS)
    assert r.diff == pytest.approx(float(np.mean(list(DIFFS.values()))), abs=1e-12)
    # the same test as on a K = 1 candidate holding those means
    means = run_of("cand", {q: [BASE[q][0] + DIFFS[q]] for q in BASE})
    assert r.p_value == compare(base, means, metrics=["m"]).get("m").p_value
    note = next(w for w in c.warnings if w.startswith("samples per case"))
    assert "base K = 1" in note and "cand K = 3 (mean)" in note
    assert "paired after reduction" in note


def test_every_output_shows_k_and_the_spread() -> None:
    c = compare(run_of("base", BASE), run_of("cand", CAND), metrics=["m"])
    md = render_report(c, "markdown")
    assert "base K = 2 (mean), cand K = 2 (mean)" in md
    assert "15.0% of the variance of the per-case differences" in md
    doc = c.to_json()
    assert doc["comparisons"][0]["spread"]["within_share"] == pytest.approx(0.15)
    assert doc["baseline"]["provenance"]["samples"] == {"epochs": 2, "reduce": "mean"}
    back = Comparison.from_json(json.dumps(doc))
    assert back.get("m").spread == c.get("m").spread
    report_json = json.loads(render_report(c, "json"))
    assert report_json["rows"][0]["spread"]["within_share"] == pytest.approx(0.15)
    pytest.importorskip("pandas")
    df = c.to_pandas()
    assert list(df[["k_baseline", "k_candidate"]].iloc[0]) == [2, 2]
    assert df["within_share"].iloc[0] == pytest.approx(0.15)
    assert df["se_limit"].iloc[0] == pytest.approx(math.sqrt((0.2 / 3 - 0.01) / 4))


def test_the_html_report_shows_k_and_the_spread(tmp_path: Path) -> None:
    c = compare(run_of("base", BASE), run_of("cand", CAND), metrics=["m"])
    html = c.to_html(tmp_path / "r.html").read_text()
    assert "cand K = 2 (mean)" in html
    assert "15.0% of the variance of the per-case differences" in html


# The columns, by hand from the constructed data above: share 0.01 / (0.2 / 3) = 15.0%,
# SE now sqrt((0.2 / 3) / 4) = 0.12910, SE limit sqrt((0.2 / 3 - 0.01) / 4) = 0.11902.
SAMPLES_CELLS = ["2 / 2", "15.0%", "0.1291", "0.1190"]
SAMPLES_HEADS = ["K (baseline / candidate)", "within-case share", "SE now", "SE limit"]


def markdown_table(md: str) -> tuple[list[str], list[list[str]]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in md.splitlines() if line.startswith("|")]
    return rows[0], [r for r in rows[2:]]


def test_markdown_and_console_tables_have_k_and_spread_columns_only_with_k_above_1() -> None:
    assert f"{math.sqrt(0.2 / 3 / 4):.4f}" == "0.1291"
    assert f"{math.sqrt((0.2 / 3 - 0.01) / 4):.4f}" == "0.1190"
    c = compare(run_of("base", BASE), run_of("cand", CAND), metrics=["m"])
    heads, rows = markdown_table(render_report(c, "markdown"))
    assert heads[-4:] == SAMPLES_HEADS and rows[0][-4:] == SAMPLES_CELLS
    console = render_report(c, "console")
    assert all(h in console for h in SAMPLES_HEADS)
    line = next(x for x in console.splitlines() if x.startswith("│ m "))
    assert [x.strip() for x in line.strip("│").split("│")][-4:] == SAMPLES_CELLS
    # K = 1 against K = 3: K is shown, the spread is not (no within-case variance in K = 1)
    base = run_of("base", {q: [v[0]] for q, v in BASE.items()})
    cand = run_of("cand", {q: [*v, BASE[q][0] + DIFFS[q]] for q, v in CAND.items()})
    heads, rows = markdown_table(render_report(compare(base, cand, metrics=["m"]),
                                               "markdown"))
    assert heads[-4:] == SAMPLES_HEADS and rows[0][-4:] == ["1 / 3", "", "", ""]
    # K = 1 in both: no such column at all
    plain = compare(base, run_of("cand", {q: [BASE[q][0] + DIFFS[q]] for q in BASE}),
                    metrics=["m"])
    for fmt in ("markdown", "console"):
        text = render_report(plain, fmt)
        assert not any(h in text for h in SAMPLES_HEADS), fmt
