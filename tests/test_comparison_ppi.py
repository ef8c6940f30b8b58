"""`evalkit.compare(..., ppi=True)` and `evalkit compare --ppi`: the PPI++ interval of the
human difference, checked against ppi_py on the rows and labels the test wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalkit.comparison import ComparisonError, compare
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
N, K = 60, 20


def _write_run(path: Path, name: str, judge: dict[str, float]) -> None:
    rows = [CaseResult(c, TargetResponse(text="x"), {"correctness": v, "length": 1.0})
            for c, v in judge.items()]
    RunResult(name, rows, {"kind": "target"}).save(path)


def _write_labels(path: Path, human: dict[str, float], header: str | None) -> None:
    with path.open("w") as fh:
        if header:
            fh.write(header + "\n")
        for cid, value in human.items():
            fh.write(json.dumps({"id": cid, "labels": {"correctness": value}}) + "\n")


@pytest.fixture
def two_runs(tmp_path: Path) -> dict[str, object]:
    rng = np.random.default_rng(11)
    ids = [f"q{i:03d}" for i in range(N)]
    human_b = rng.normal(3.0, 1.0, N)
    human_a = human_b + 0.3 + rng.normal(0, 0.4, N)
    judge_b = human_b + 0.5 + rng.normal(0, 0.5, N)
    judge_a = human_a + 0.5 + rng.normal(0, 0.5, N)
    chosen = sorted(int(i) for i in rng.choice(N, size=K, replace=False))
    jb = {c: float(v) for c, v in zip(ids, judge_b, strict=True)}
    ja = {c: float(v) for c, v in zip(ids, judge_a, strict=True)}
    hb = {ids[i]: float(human_b[i]) for i in chosen}
    ha = {ids[i]: float(human_a[i]) for i in chosen}
    _write_run(tmp_path / "base.jsonl", "base", jb)
    _write_run(tmp_path / "cand.jsonl", "cand", ja)
    header = '{"selection": "random", "seed": 11}'
    _write_labels(tmp_path / "base-labels.jsonl", hb, header)
    _write_labels(tmp_path / "cand-labels.jsonl", ha, header)
    _write_labels(tmp_path / "cand-unsaid.jsonl", ha, None)
    return {"dir": tmp_path, "ids": ids, "chosen": [ids[i] for i in chosen],
            "ja": ja, "jb": jb, "ha": ha, "hb": hb}


def _reference(d: dict[str, object], alpha: float = 0.05) -> tuple[float, float, float]:
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
    low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=alpha)
    point = ppi_py.ppi_mean_pointestimate(y, f, u)
    return (float(np.ravel(point)[0]), float(np.ravel(low)[0]), float(np.ravel(high)[0]))


def test_compare_ppi_interval_is_ppi_py_on_the_shared_labels(
        two_runs: dict[str, object]) -> None:
    folder = two_runs["dir"]
    assert isinstance(folder, Path)
    c = compare(folder / "base.jsonl", folder / "cand.jsonl", metrics=["correctness"],
                ppi=True, labels=[folder / "base-labels.jsonl",
                                  folder / "cand-labels.jsonl"], alpha=0.1)
    row = c.get("correctness")
    estimate, low, high = _reference(two_runs, alpha=0.1)
    assert row.ci_method == "ppi++"
    assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert row.ppi is not None
    assert row.ppi["estimate"] == pytest.approx(estimate, abs=1e-9)
    assert row.ppi["n_labels"] == K and row.ppi["n_unlabelled"] == N - K
    ja, jb = two_runs["ja"], two_runs["jb"]
    assert isinstance(ja, dict) and isinstance(jb, dict)
    assert row.ppi["judge_difference"] == pytest.approx(
        float(np.mean([ja[q] - jb[q] for q in ja])), abs=1e-12)
    assert row.diff == pytest.approx(row.ppi["judge_difference"], abs=1e-12)
    assert not c.warnings  # declared random: no warning
    report = c.to_report()
    assert any(f"PPI++ on {K} human labels" in n for n in report.notes)
    assert c.to_json()["comparisons"][0]["ppi"]["n_labels"] == K


def test_compare_ppi_by_run_name_and_undeclared_selection_warns(
        two_runs: dict[str, object]) -> None:
    folder = two_runs["dir"]
    assert isinstance(folder, Path)
    c = compare(folder / "base.jsonl", folder / "cand.jsonl", metrics=["correctness",
                                                                        "length"],
                ppi=True, labels={"base": folder / "base-labels.jsonl",
                                  "cand": folder / "cand-unsaid.jsonl"})
    _, low, high = _reference(two_runs)
    row = c.get("correctness")
    assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert c.get("length").ppi is None and c.get("length").ci_method != "ppi++"
    assert any("not declared a random sample" in w for w in c.warnings)


def test_compare_ppi_refusals(two_runs: dict[str, object]) -> None:
    folder = two_runs["dir"]
    assert isinstance(folder, Path)
    runs = (folder / "base.jsonl", folder / "cand.jsonl")
    with pytest.raises(ComparisonError, match="one labels file per run"):
        compare(*runs, ppi=True, labels=[folder / "base-labels.jsonl"])
    with pytest.raises(ComparisonError, match="add ppi=True"):
        compare(*runs, labels=[folder / "base-labels.jsonl"] * 2)
    with pytest.raises(ComparisonError, match="no compared metric has human labels"):
        compare(*runs, metrics=["length"], ppi=True,
                labels=[folder / "base-labels.jsonl", folder / "cand-labels.jsonl"])
    with pytest.raises(ComparisonError, match="two-sided"):
        compare(*runs, ppi=True, alternative="greater",
                labels=[folder / "base-labels.jsonl", folder / "cand-labels.jsonl"])


def test_cli_compare_ppi(two_runs: dict[str, object]) -> None:
    folder = two_runs["dir"]
    assert isinstance(folder, Path)
    proc = subprocess.run(
        [*EVALKIT, "compare", "base.jsonl", "cand.jsonl", "-m", "correctness", "--ppi",
         "--labels", "base-labels.jsonl", "--labels", "cand-labels.jsonl", "--json",
         "--report", "markdown:report.md"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    [row] = json.loads(proc.stdout)["comparisons"]
    _, low, high = _reference(two_runs)
    assert row["ci_method"] == "ppi++"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    # listed as the command line takes them: the baseline's first
    assert [Path(p).name for p in row["ppi"]["labels"]] == ["base-labels.jsonl",
                                                           "cand-labels.jsonl"]
    assert f"PPI++ on {K} human labels" in (folder / "report.md").read_text()
    table = subprocess.run(
        [*EVALKIT, "compare", "base.jsonl", "cand.jsonl", "-m", "correctness", "--ppi",
         "--labels", "base-labels.jsonl", "--labels", "cand-unsaid.jsonl"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert table.returncode == 0, table.stderr
    assert f"PPI++ on {K} human labels" in table.stdout
    assert "not declared a random sample" in table.stderr
    bad = subprocess.run(
        [*EVALKIT, "compare", "base.jsonl", "cand.jsonl", "--labels", "base-labels.jsonl"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "--ppi" in bad.stderr and "Traceback" not in bad.stderr


def test_compare_ppi_on_fewer_than_ten_shared_labels_warns(
        two_runs: dict[str, object], tmp_path: Path) -> None:
    folder = two_runs["dir"]
    ha, hb = two_runs["ha"], two_runs["hb"]
    assert isinstance(folder, Path) and isinstance(ha, dict) and isinstance(hb, dict)
    few = sorted(ha)[:4]
    header = '{"selection": "random", "seed": 11}'
    _write_labels(tmp_path / "b4.jsonl", {c: hb[c] for c in few}, header)
    _write_labels(tmp_path / "c4.jsonl", {c: ha[c] for c in few}, header)
    c = compare(folder / "base.jsonl", folder / "cand.jsonl", metrics=["correctness"],
                ppi=True, labels=[tmp_path / "b4.jsonl", tmp_path / "c4.jsonl"])
    ppi = c.get("correctness").ppi
    assert ppi is not None and ppi["n_labels"] == 4
    assert any("only 4 human labels" in w and "label more cases" in w for w in c.warnings)


def test_compare_ppi_labels_that_do_not_vary(two_runs: dict[str, object]) -> None:
    # people grade every shared case 3 in both runs: no PPI interval for the row, which
    # keeps its paired test's interval and says why
    folder = two_runs["dir"]
    assert isinstance(folder, Path)
    chosen = two_runs["chosen"]
    assert isinstance(chosen, list)
    _write_labels(folder / "flat.jsonl", dict.fromkeys(chosen, 3.0),
                  '{"selection": "random", "seed": 11}')
    flat = [folder / "flat.jsonl", folder / "flat.jsonl"]
    runs = (folder / "base.jsonl", folder / "cand.jsonl")
    with pytest.raises(ValueError, match="labelled differences a - b are all 0: the PPI"):
        compare(*runs, metrics=["correctness"], ppi=True, labels=flat)
    for name, first in (("mixed-b.jsonl", 1.0), ("mixed-a.jsonl", 2.0)):
        # length labels 1, 2, 1, ... against 2, 1, 2, ...: differences that vary
        (folder / name).write_text('{"selection": "random", "seed": 11}\n' + "".join(
            json.dumps({"id": cid, "labels": {"correctness": 3.0,
                                              "length": first if i % 2 else 3 - first}})
            + "\n" for i, cid in enumerate(chosen)))
    c = compare(*runs, metrics=["correctness", "length"], ppi=True,
                labels=[folder / "mixed-b.jsonl", folder / "mixed-a.jsonl"])
    row = c.get("correctness")
    assert row.ppi is None and row.ci_method != "ppi++"
    assert any("correctness: no PPI interval" in w and "paired test's" in w
               for w in c.warnings)
    assert c.get("length").ci_method == "ppi++"
