"""A judge metric that failed on labelled cases: the gate's agreement aggregates
(krippendorff_alpha(correctness), cohen_kappa(...), every aggregate over the labelled
cases) are errors naming those cases, as a per-case check is; `evalkit agreement`
reports on the labelled cases the judge scored with a warning naming the failed ones, and
exits 4 unless --allow-metric-errors.
Reference values: sklearn, krippendorff, ppi_py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
WHY = "judge 'j', case {}: the score 9 is outside the scale 1-5"


def evalkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def _write(folder: Path, failed: set[str]) -> tuple[dict[str, float], dict[str, float]]:
    """40 cases, 14 labelled (c00, c03, ..., c39); the judge failed on ``failed``.
    Returns ``(judge, human)``."""
    rng = np.random.default_rng(11)
    ids = [f"c{i:02d}" for i in range(40)]
    human_all = rng.integers(1, 6, size=40)
    judge_all = np.clip(human_all + rng.integers(-1, 2, size=40), 1, 5)
    rows = [CaseResult(c, TargetResponse(text="x"), {"exact": 1.0}
                       | ({} if c in failed else {"correctness": float(j)}),
                       metric_errors={"correctness": WHY.format(c)} if c in failed else {})
            for c, j in zip(ids, judge_all, strict=True)]
    RunResult("sys", rows, {"kind": "target"}).save(folder / "run.jsonl")
    human = {ids[i]: float(human_all[i]) for i in range(0, 40, 3)}
    with (folder / "labels.jsonl").open("w") as fh:
        fh.write('{"selection": "random", "seed": 5}\n')
        for cid, value in human.items():
            fh.write(json.dumps({"id": cid, "labels": {"correctness": value}}) + "\n")
    judge = {c: float(j) for c, j in zip(ids, judge_all, strict=True) if c not in failed}
    return judge, human


AGGREGATES = ["krippendorff_alpha", "krippendorff_alpha_nominal", "cohen_kappa",
              "cohen_kappa_quadratic", "spearman_rho", "judge_abs_bias", "labelled_cases"]


def _checks(folder: Path, scope: list[str] | None = None) -> None:
    where = "" if scope is None else f", scope: [{', '.join(scope)}]"
    (folder / "checks.yaml").write_text("checks:\n" + "".join(
        f"  - {{id: {a}, metric: '{a}(correctness)', op: '>=', threshold: -100{where}}}\n"
        for a in AGGREGATES))


def test_the_gate_errs_naming_the_failed_labelled_cases(tmp_path: Path) -> None:
    _, human = _write(tmp_path, {"c00", "c06", "c01", "c02"})  # c00, c06 labelled
    assert {"c00", "c06"} <= human.keys() and not {"c01", "c02"} & human.keys()
    _checks(tmp_path)
    proc = evalkit("gate", "-c", "checks.yaml", "-r", "run.jsonl", "--labels",
                   "labels.jsonl", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    for name in AGGREGATES:
        assert any(ln.startswith(f"{name}: error") for ln in lines), proc.stdout
    details = [ln for ln in lines if "failed on 2 labelled case(s): c00, c06 (the first: "
               "judge 'j', case c00: the score 9" in ln]
    assert len(details) == len(AGGREGATES)
    assert "c01" not in proc.stdout  # an unlabelled case is not what the aggregate reads
    assert " pass " not in proc.stdout


def test_failures_outside_the_labelled_cases_or_the_scope_do_not_count(
        tmp_path: Path) -> None:
    sk = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    judge, human = _write(tmp_path, {"c01", "c02"})  # unlabelled only
    ids = list(human)
    j, h = [judge[c] for c in ids], [human[c] for c in ids]
    alpha = krippendorff.alpha(reliability_data=[j, h], level_of_measurement="interval")
    kappa = sk.cohen_kappa_score(j, h)
    (tmp_path / "checks.yaml").write_text(
        f"checks:\n  - {{id: a, metric: 'krippendorff_alpha(correctness)', op: '>=', "
        f"threshold: {alpha - 1e-9}}}\n"
        f"  - {{id: k, metric: 'cohen_kappa(correctness)', op: '<=', "
        f"threshold: {kappa + 1e-9}}}\n")
    proc = evalkit("gate", "-c", "checks.yaml", "-r", "run.jsonl", "--labels",
                   "labels.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "a: pass (14 labelled of" in proc.stdout and f"{alpha:.4f}" in proc.stdout
    # a labelled case that failed outside a check's scope is not in its rows
    _write(tmp_path, {"c00"})
    scope = [c for c in ids if c != "c00"]
    _checks(tmp_path, scope)
    proc = evalkit("gate", "-c", "checks.yaml", "-r", "run.jsonl", "--labels",
                   "labels.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "labelled_cases: pass (13 labelled of 13 cases)" in proc.stdout


def test_agreement_reports_on_the_scored_labelled_cases_and_warns(tmp_path: Path) -> None:
    sk = pytest.importorskip("sklearn.metrics")
    ppi_py = pytest.importorskip("ppi_py")
    judge, human = _write(tmp_path, {"c00", "c06", "c01", "c02", "c04"})
    proc = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--json",
                   cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr  # the judge did not grade every case
    assert "error: metric correctness has no grade on 2 labelled and 3 unlabelled " \
        "case(s)" in proc.stderr
    [m] = json.loads(proc.stdout)["metrics"]
    scored = [c for c in human if c in judge]
    assert len(scored) == 12 and m["n"] == 12
    assert m["failed"] == ["c00", "c06"] and m["failed_unlabelled"] == 3
    j, h = [judge[c] for c in scored], [human[c] for c in scored]
    assert m["cohen_kappa"]["linear"] == pytest.approx(
        sk.cohen_kappa_score(j, h, weights="linear"), abs=1e-12)
    u = [v for c, v in judge.items() if c not in human]
    assert len(u) == 40 - 14 - 3
    lo, hi = ppi_py.ppi_mean_ci(np.array(h), np.array(j), np.array(u), alpha=0.05)
    assert (m["ppi"]["ci_low"], m["ppi"]["ci_high"]) == pytest.approx(
        (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-9)
    assert proc.stderr.startswith("warning: metric 'correctness' failed on 2 labelled "
                                  "case(s): c00, c06 (the first: judge 'j', case c00")
    assert "the agreement is over the 12 labelled cases it scored" in proc.stderr
    assert "3 unlabelled case(s), left out of the PPI++ mean" in proc.stderr
    assert m["warning"] in proc.stderr
    text = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl",
                   "--allow-metric-errors", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "correctness: 12 labelled cases" in text.stdout
    assert "warning: metric 'correctness' failed on 2 labelled case(s): c00, c06" in text.stdout


def test_agreement_on_a_metric_the_run_does_not_have(tmp_path: Path) -> None:
    _write(tmp_path, set())
    (tmp_path / "l2.jsonl").write_text('{"id": "c00", "labels": {"helpful": 3}}\n'
                                       '{"id": "c03", "labels": {"helpful": 4}}\n')
    proc = evalkit("agreement", "run.jsonl", "--labels", "l2.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert "metric 'helpful' is labelled but run 'sys' has no such metric" in proc.stderr
