"""A gate's baseline check decided by the PPI++ interval of the human difference
(`evaluate_gate(..., ppi=True)`, `evalkit gate --ppi`), and the checks file's `labels` and
`baseline_labels` keys; values checked against ppi_py on the rows and labels written here."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evalkit.core.registry import Registry
from evalkit.data.labels import load_labels
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckError, load_checks, load_checks_file
from evalkit.plugins.default import use_registry

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
N, K = 60, 20

PLUGIN = """\
import evalkit
from evalkit.core.specs import MetricSpec


def correctness(response, case):
    raise AssertionError("the gate reads stored values")


@evalkit.hookimpl
def evalkit_register_metrics():
    return [MetricSpec("correctness", correctness, True)]
"""

CHECKS = """\
checks:
  - id: correctness_holds
    metric: correctness
    vs_baseline: no_significant_regression
"""


def _run(path: Path, name: str, values: dict[str, float]) -> None:
    rows = [CaseResult(c, TargetResponse(text="x"), {"correctness": v})
            for c, v in values.items()]
    RunResult(name, rows, {"kind": "target"}).save(path)


def _labels(path: Path, human: dict[str, float]) -> None:
    with path.open("w") as fh:
        fh.write('{"selection": "random", "seed": 3}\n')
        for cid, value in human.items():
            fh.write(json.dumps({"id": cid, "labels": {"correctness": value}}) + "\n")


def _never(response: object, case: object) -> float:
    raise AssertionError("the gate reads stored values")


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        r.register_metric("correctness", higher_is_better=True)(_never)
        yield r


@pytest.fixture
def judged(tmp_path: Path) -> dict[str, object]:
    """The judge sees no difference (the candidate's grades are the baseline's -+ 0.01,
    alternating), while people grade the candidate about one point lower."""
    rng = np.random.default_rng(3)
    ids = [f"c{i:03d}" for i in range(N)]
    human_b = rng.normal(3.0, 1.0, N)
    human_a = human_b - 1.0 + rng.normal(0.0, 0.3, N)
    judge_b = human_b + rng.normal(0.0, 0.5, N)
    judge_a = judge_b + np.where(np.arange(N) % 2 == 0, 0.01, -0.01)
    chosen = [ids[i] for i in sorted(int(i) for i in rng.choice(N, size=K, replace=False))]
    jb = dict(zip(ids, map(float, judge_b), strict=True))
    ja = dict(zip(ids, map(float, judge_a), strict=True))
    hb = {c: float(human_b[ids.index(c)]) for c in chosen}
    ha = {c: float(human_a[ids.index(c)]) for c in chosen}
    _run(tmp_path / "base.jsonl", "base", jb)
    _run(tmp_path / "cand.jsonl", "cand", ja)
    (tmp_path / "lab").mkdir()
    _labels(tmp_path / "lab" / "base.jsonl", hb)
    _labels(tmp_path / "lab" / "cand.jsonl", ha)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "ppi_metric.py").write_text(PLUGIN)
    (tmp_path / "pyproject.toml").write_text('[tool.evalkit]\nlocal_plugins = ["ppi_metric"]\n')
    (tmp_path / "checks-labelled.yaml").write_text(
        "labels: lab/cand.jsonl\nbaseline_labels: lab/base.jsonl\n" + CHECKS)
    return {"dir": tmp_path, "ids": ids, "chosen": chosen, "ja": ja, "jb": jb, "ha": ha,
            "hb": hb}


def _reference(d: dict[str, object]) -> tuple[float, float, float, float]:
    """(estimate, low, high, p) of ppi_py on the human and judge differences."""
    ppi_py = pytest.importorskip("ppi_py")
    ids, chosen = d["ids"], d["chosen"]
    ja, jb, ha, hb = d["ja"], d["jb"], d["ha"], d["hb"]
    assert isinstance(ids, list) and isinstance(chosen, list)
    assert isinstance(ja, dict) and isinstance(jb, dict)
    assert isinstance(ha, dict) and isinstance(hb, dict)
    rest = [c for c in ids if c not in chosen]
    y = np.array([ha[c] - hb[c] for c in chosen])
    f = np.array([ja[c] - jb[c] for c in chosen])
    u = np.array([ja[c] - jb[c] for c in rest])
    point = ppi_py.ppi_mean_pointestimate(y, f, u)
    low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05)
    p = ppi_py.ppi_mean_pval(y, f, u, null=0.0)
    return tuple(float(np.ravel(x)[0]) for x in (point, low, high, p))  # type: ignore[return-value]


def test_ppi_decides_the_baseline_check(judged: dict[str, object], reg: Registry) -> None:
    folder = judged["dir"]
    assert isinstance(folder, Path)
    run, base = RunResult.load(folder / "cand.jsonl"), RunResult.load(folder / "base.jsonl")
    checks = load_checks(folder / "checks.yaml")
    plain = evaluate_gate(checks, run, base)
    [r] = plain.results
    assert r.verdict == "pass" and r.comparison is not None and r.comparison.ppi is None
    gated = evaluate_gate(checks, run, base, ppi=True,
                          labels=load_labels(folder / "lab" / "cand.jsonl"),
                          baseline_labels=load_labels(folder / "lab" / "base.jsonl"))
    [r] = gated.results
    c = r.comparison
    assert c is not None and c.ppi is not None
    estimate, low, high, p = _reference(judged)
    assert c.method == "ppi++"
    assert (c.difference, c.ci_low, c.ci_high) == pytest.approx((estimate, low, high),
                                                                abs=1e-9)
    assert c.p_value == pytest.approx(p, abs=1e-9)
    assert c.p_adjusted == pytest.approx(p, abs=1e-9)  # one blocking check: Holm is p
    assert high < 0  # the interval excludes 0 on the worse side: regressed
    assert r.verdict == "fail" and c.outcome == "regressed"
    assert c.ppi["n_labels"] == K and c.ppi["n_unlabelled"] == N - K
    assert f"PPI++ on {K} human labels" in r.detail()
    assert gated.exit_code == 1


def test_ppi_without_baseline_labels_keeps_the_test(judged: dict[str, object],
                                                    reg: Registry) -> None:
    folder = judged["dir"]
    assert isinstance(folder, Path)
    run, base = RunResult.load(folder / "cand.jsonl"), RunResult.load(folder / "base.jsonl")
    gated = evaluate_gate(load_checks(folder / "checks.yaml"), run, base, ppi=True,
                          labels=load_labels(folder / "lab" / "cand.jsonl"))
    assert gated.results[0].verdict == "pass"
    assert any("the baseline has no human labels" in n for n in gated.notes)


def test_checks_file_labels_are_relative_to_it(judged: dict[str, object]) -> None:
    folder = judged["dir"]
    assert isinstance(folder, Path)
    doc = load_checks_file(folder / "checks-labelled.yaml")
    assert doc.labels == folder / "lab" / "cand.jsonl"
    assert doc.baseline_labels == folder / "lab" / "base.jsonl"
    assert [c.id for c in doc.checks] == ["correctness_holds"]
    bad = folder / "bad.yaml"
    bad.write_text("labels: [a]\n" + CHECKS)
    with pytest.raises(CheckError,
                       match=r"bad.yaml: 'labels' must be the path .* got \['a'\] \(line 1\)"):
        load_checks(bad)
    bad.write_text("label: a.jsonl\n" + CHECKS)
    with pytest.raises(CheckError, match="did you mean 'labels'"):
        load_checks(bad)


def test_cli_gate_ppi_from_the_checks_file(judged: dict[str, object]) -> None:
    folder = judged["dir"]
    assert isinstance(folder, Path)
    estimate, low, high, _ = _reference(judged)
    proc = subprocess.run(
        [*EVALKIT, "gate", "-c", "checks-labelled.yaml", "--run", "cand.jsonl",
         "--baseline", "base.jsonl", "--ppi", "--json"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    [check] = json.loads(proc.stdout)["data"]["checks"]
    comp = check["comparison"]
    assert comp["method"] == "ppi++" and comp["outcome"] == "regressed"
    assert (comp["difference"], comp["ci_low"], comp["ci_high"]) == pytest.approx(
        (estimate, low, high), abs=1e-9)
    assert comp["ppi"]["n_labels"] == K
    assert f"PPI++ on {K} human labels" in proc.stderr
    plain = subprocess.run(
        [*EVALKIT, "gate", "-c", "checks-labelled.yaml", "--run", "cand.jsonl",
         "--baseline", "base.jsonl"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert plain.returncode == 0, plain.stdout + plain.stderr


def _constant_labels(folder: Path, value_a: float, value_b: float, judge_binary: bool
                     ) -> tuple[RunResult, RunResult, Path, Path]:
    ids = [f"c{i:03d}" for i in range(N)]
    rng = np.random.default_rng(8)
    if judge_binary:
        jb = {c: float(rng.random() < 0.85) for c in ids}
        ja = {c: float(rng.random() < 0.95) for c in ids}
    else:
        jb = {c: float(v) for c, v in zip(ids, rng.normal(3.0, 1.0, N), strict=True)}
        ja = {c: v + 0.01 for c, v in jb.items()}
    _run(folder / "b.jsonl", "base", jb)
    _run(folder / "a.jsonl", "cand", ja)
    _labels(folder / "la.jsonl", dict.fromkeys(ids[:K], value_a))
    _labels(folder / "lb.jsonl", dict.fromkeys(ids[:K], value_b))
    return (RunResult.load(folder / "a.jsonl"), RunResult.load(folder / "b.jsonl"),
            folder / "la.jsonl", folder / "lb.jsonl")


def test_labels_that_do_not_vary_make_the_check_an_error(tmp_path: Path, reg: Registry
                                                         ) -> None:
    # people grade every labelled case 3 in both runs: the differences do not vary, so
    # the interval cannot be estimated; the check is an error, never a certain pass
    (tmp_path / "checks.yaml").write_text(CHECKS)
    run, base, la, lb = _constant_labels(tmp_path, 3.0, 3.0, judge_binary=False)
    gated = evaluate_gate(load_checks(tmp_path / "checks.yaml"), run, base, ppi=True,
                          labels=load_labels(la), baseline_labels=load_labels(lb))
    [r] = gated.results
    assert r.verdict == "error" and gated.exit_code != 0
    assert "the PPI interval (--ppi) failed" in r.message
    assert "labelled differences a - b are all 0" in r.message


def test_all_pass_labels_give_an_adjusted_interval(tmp_path: Path, reg: Registry) -> None:
    # pass/fail labels, every labelled case passed in both runs: the Agresti-Min interval
    # (half a pseudo-case per cell, 22 in all), not [0, 0]
    (tmp_path / "checks.yaml").write_text(CHECKS)
    run, base, la, lb = _constant_labels(tmp_path, 1.0, 1.0, judge_binary=True)
    gated = evaluate_gate(load_checks(tmp_path / "checks.yaml"), run, base, ppi=True,
                          labels=load_labels(la), baseline_labels=load_labels(lb))
    [r] = gated.results
    c = r.comparison
    assert c is not None and c.ppi is not None
    assert c.ppi["adjustment"] == "agresti-min" and c.ppi["events"] == 0
    assert c.ci_high - c.ci_low > 0.1
    assert any(f"only 0 of the {K} labelled cases" in n for n in c.ppi["notes"])
    assert "Agresti-Min-adjusted for pass/fail labels" in r.detail()
