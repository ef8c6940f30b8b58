"""`evalkit agreement` and a gate on krippendorff_alpha(correctness), in real
subprocesses, checked against scikit-learn, the krippendorff package and ppi_py."""

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


def evalkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture
def labelled(tmp_path: Path) -> tuple[Path, dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(5)
    ids = [f"c{i:02d}" for i in range(40)]
    human_all = rng.integers(1, 6, size=40)
    judge = np.clip(human_all + rng.integers(-1, 2, size=40), 1, 5)
    rows = [CaseResult(c, TargetResponse(text="x"), {"correctness": float(j)})
            for c, j in zip(ids, judge, strict=True)]
    RunResult("sys", rows, {"kind": "target"}).save(tmp_path / "run.jsonl")
    chosen = sorted(rng.choice(40, size=15, replace=False))
    human = {ids[i]: float(human_all[i]) for i in chosen}
    with (tmp_path / "labels.jsonl").open("w") as fh:
        fh.write('{"selection": "random", "seed": 5}\n')
        for cid, value in human.items():
            fh.write(json.dumps({"id": cid, "labels": {"correctness": value}}) + "\n")
    return tmp_path, {c: float(j) for c, j in zip(ids, judge, strict=True)}, human


def test_agreement_json_is_the_reference_packages(labelled: tuple[Path, dict[str, float],
                                                                  dict[str, float]]) -> None:
    sk = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    ppi_py = pytest.importorskip("ppi_py")
    folder, judge, human = labelled
    proc = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--json", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    [m] = json.loads(proc.stdout)["metrics"]
    ids = list(human)
    j, h = [judge[c] for c in ids], [human[c] for c in ids]
    assert m["n"] == 15
    assert m["cohen_kappa"]["linear"] == pytest.approx(
        sk.cohen_kappa_score(j, h, weights="linear"), abs=1e-12)
    assert m["krippendorff_alpha"]["interval"] == pytest.approx(
        krippendorff.alpha(reliability_data=[j, h], level_of_measurement="interval"),
        abs=1e-12)
    u = [v for c, v in judge.items() if c not in human]
    lo, hi = ppi_py.ppi_mean_ci(np.array(h), np.array(j), np.array(u), alpha=0.05)
    assert m["ppi"]["n_labels"] == 15 and m["ppi"]["interval"] == "ppi++"
    assert (m["ppi"]["ci_low"], m["ppi"]["ci_high"]) == pytest.approx(
        (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-9)
    assert proc.stderr == ""  # declared random: no warning


def test_the_confusion_table_lines_up_with_fractional_grades(tmp_path: Path) -> None:
    judge = {"a": 3.0, "b": 4.0, "c": 13 / 3, "d": 5.0}
    human = {"a": 3.0, "b": 4.0, "c": 4.0, "d": 5.0}
    rows = [CaseResult(c, TargetResponse(text="x"), {"correctness": v})
            for c, v in judge.items()]
    RunResult("sys", rows, {"kind": "target"}).save(tmp_path / "run.jsonl")
    (tmp_path / "labels.jsonl").write_text("".join(
        json.dumps({"id": c, "labels": {"correctness": v}}) + "\n" for c, v in human.items()))
    proc = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("  confusion (rows judge, columns human):") + 1
    table = lines[start:start + 5]
    assert len({ln.index("|") for ln in table}) == 1  # the row labels line up
    assert table[0].split() == ["|", "3", "4", "4.33333", "5"]
    assert table[3].split() == ["4.33333", "|", "0", "1", "0", "0"]  # judge 4.33, human 4
    assert len({len(ln) for ln in table}) == 1  # and so do the columns


def test_gate_holds_the_judge_to_a_floor(labelled: tuple[Path, dict[str, float],
                                                         dict[str, float]]) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    folder, judge, human = labelled
    ids = list(human)
    alpha = krippendorff.alpha(reliability_data=[[judge[c] for c in ids],
                                                 [human[c] for c in ids]],
                               level_of_measurement="interval")
    for threshold, code in ((alpha - 0.01, 0), (alpha + 0.01, 1)):
        (folder / "checks.yaml").write_text(
            "checks:\n  - id: judge_agrees\n    metric: krippendorff_alpha(correctness)\n"
            f"    op: \">=\"\n    threshold: {threshold}\n")
        proc = evalkit("gate", "-c", "checks.yaml", "-r", "run.jsonl", "--labels",
                       "labels.jsonl", cwd=folder)
        assert proc.returncode == code, proc.stdout + proc.stderr
        assert f"{alpha:.4f}" in proc.stdout
    proc = evalkit("gate", "-c", "checks.yaml", "-r", "run.jsonl", cwd=folder)
    assert proc.returncode == 2 and "no human labels" in proc.stdout


def test_a_gate_says_how_many_labelled_cases_the_agreement_rests_on(
        labelled: tuple[Path, dict[str, float], dict[str, float]]) -> None:
    folder, _, human = labelled  # 15 of the run's 40 cases are labelled
    assert len(human) == 15
    (folder / "checks.yaml").write_text(
        "checks:\n  - id: judge_agrees\n    metric: krippendorff_alpha(correctness)\n"
        "    op: \">=\"\n    threshold: -1\n"
        "  - id: mean_ok\n    metric: correctness\n    op: \">=\"\n    threshold: 1\n")
    proc = evalkit("gate", "-c", "checks.yaml", "-r", "run.jsonl", "--labels",
                   "labels.jsonl", "--report", "markdown:g.md", "--report", "junit:g.xml",
                   "--report", "json:g.json", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "judge_agrees: pass (15 labelled of 40 cases)" in proc.stdout
    assert "mean_ok: pass (40/40 cases)" in proc.stdout  # a per-case metric: unchanged
    assert "| 15 labelled of 40 cases |" in (folder / "g.md").read_text()
    assert "judge_agrees: pass (15 labelled of 40 cases)" in (folder / "g.xml").read_text()
    found = json.loads((folder / "g.json").read_text())
    coverages = {c["name"]: c["coverage"] for c in found["rows"]}
    assert coverages == {"judge_agrees": "15 labelled of 40 cases",
                         "mean_ok": "40/40 cases"}


def test_errors_name_the_file_and_line(labelled: tuple[Path, dict[str, float],
                                                      dict[str, float]]) -> None:
    folder, _, _ = labelled
    (folder / "bad.jsonl").write_text('{"id": "c00", "labels": {"correctness": 3}}\n'
                                      '{"id": "nope", "labels": {"correctness": 3}}\n')
    proc = evalkit("agreement", "run.jsonl", "--labels", "bad.jsonl", cwd=folder)
    assert proc.returncode == 2
    assert "bad.jsonl:2: case 'nope' is not a case of run 'sys'" in proc.stderr
    assert "Traceback" not in proc.stderr
    (folder / "few.jsonl").write_text('{"id": "c00", "labels": {"correctness": 3}}\n'
                                      '{"id": "c01", "labels": {"correctness": 3}}\n')
    proc = evalkit("agreement", "run.jsonl", "--labels", "few.jsonl", cwd=folder)
    assert proc.returncode == 0
    assert "not declared a random sample" in proc.stdout
    # two labels, both 3: no variance to estimate, so no interval (not a zero-width one)
    assert "human mean (PPI++)   none: the 2 human labels are all 3: the PPI++ interval's " \
        "variance cannot be estimated" in proc.stdout


def _planned_width(y: np.ndarray, f: np.ndarray, every: np.ndarray, n: int) -> float:
    """PPI++'s width with n labels, derived here: 2 z sqrt(lam^2 var_f / N + (var_y -
    2 lam cov + lam^2 var_f) / n), lam = cov / ((1 + n/N) var_f) clipped to [0, 1]."""
    from statistics import NormalDist

    big_n = every.size - n
    var_y, var_f = float(np.var(y)), float(np.var(every, ddof=1))
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * var_f)))
    var = lam ** 2 * var_f / big_n + (var_y - 2 * lam * cov + lam ** 2 * var_f) / n
    return 2 * NormalDist().inv_cdf(0.975) * float(np.sqrt(var))


def test_plan_and_html_report(labelled: tuple[Path, dict[str, float],
                                              dict[str, float]]) -> None:
    sk = pytest.importorskip("sklearn.metrics")
    pytest.importorskip("evalkit_report_html")
    folder, judge, human = labelled
    proc = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--plan", "1.0",
                   "--json", "--report", "html:out/agreement.html", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    [m] = json.loads(proc.stdout)["metrics"]
    ids = list(human)
    y = np.array([human[c] for c in ids])
    f = np.array([judge[c] for c in ids])
    every = np.array(list(judge.values()))
    n = m["plan"]["n_labels"]
    assert n is not None and m["plan"]["target_width"] == 1.0
    assert _planned_width(y, f, every, n) <= 1.0 < _planned_width(y, f, every, n - 1)
    page = (folder / "out" / "agreement.html").read_text()
    kappa = sk.cohen_kappa_score(f, y, weights="quadratic")
    assert f"{kappa:.4f}" in page
    assert f"on {m['ppi']['n_labels']} human labels" in page
    assert f"needs {n} of 40 cases labelled" in page
    text = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--plan", "1.0",
                   cwd=folder)
    assert f"needs {n} of 40 cases labelled" in text.stdout
    bad = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--report",
                  "junit:x.xml", cwd=folder)
    assert bad.returncode == 2 and "html or json" in bad.stderr


def test_a_report_over_an_input_is_refused_and_folders_are_created(
        labelled: tuple[Path, dict[str, float], dict[str, float]]) -> None:
    root, _, _ = labelled
    labels = (root / "labels.jsonl").read_bytes()
    for target in ("json:labels.jsonl", "json:run.jsonl"):
        done = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--report",
                       target, cwd=root)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "is also an input of this command" in done.stderr
    assert (root / "labels.jsonl").read_bytes() == labels
    made = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--report",
                   "json:new/folder/a.json", cwd=root)
    assert made.returncode == 0, made.stderr
    assert json.loads((root / "new" / "folder" / "a.json").read_text())


def test_agreement_treats_a_judge_mean_over_epochs_as_the_label_it_rounds_to(
        tmp_path: Path) -> None:
    # a judge with epochs 3 grading 0.1 three times has the case mean 0.10000000000000002;
    # against human labels 0.1 on every such case the agreement is perfect (by hand: 1)
    epoch_mean = sum([0.1] * 3) / 3
    judge = {"a": epoch_mean, "b": epoch_mean, "c": 0.5, "d": 0.9, "e": epoch_mean,
             "f": 0.5}
    human = {"a": 0.1, "b": 0.1, "c": 0.5, "d": 0.9, "e": 0.1, "f": 0.5}
    rows = [CaseResult(c, TargetResponse(text="x"), {"correctness": v})
            for c, v in judge.items()]
    RunResult("sys", rows, {"kind": "target"}).save(tmp_path / "run.jsonl")
    (tmp_path / "labels.jsonl").write_text("".join(
        json.dumps({"id": c, "labels": {"correctness": v}}) + "\n" for c, v in human.items()))
    proc = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", "--json",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [m] = json.loads(proc.stdout)["metrics"]
    assert m["cohen_kappa"]["none"] == 1.0
    assert m["krippendorff_alpha"]["nominal"] == 1.0
    assert m["krippendorff_alpha"]["ordinal"] == pytest.approx(1.0, abs=1e-12)
