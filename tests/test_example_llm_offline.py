"""examples/llm_offline end to end, as its README runs it: run_offline.py on a copy of the
folder, in a real subprocess (the fake model on 127.0.0.1, six `evalkit` commands), then
every figure checked against what the fake model and the fake judge were told to do.

Independently of evalkit: sample k of each case is the fake model's draw k of that
question; the costs and tokens are the model's price table applied to
those answers; exact match is recomputed with the normalisation written out here; the
judge's spend is the sum, over the distinct grades of both runs, of input tokens x $1 +
25 output tokens x $5 per million.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from evalkit.data.goldens import load_goldens
from evalkit.data.results import RunResult

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llm_offline"
EPOCHS = 3


def fake_model() -> ModuleType:
    spec = importlib.util.spec_from_file_location("llm_offline_fake_model",
                                                  EXAMPLE / "fake_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def squad_normal(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def run_example(folder: Path) -> str:
    proc = subprocess.run([sys.executable, str(folder / "run_offline.py")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("llm") / "llm_offline"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return folder, run_example(folder)


def test_a_second_run_prints_the_same_but_the_measured_latency(
        ran: tuple[Path, str]) -> None:
    """The example is deterministic: a second run in the same folder prints the same
    text, but for the latency aggregate (wall-clock time measured on this machine, which
    the README names as the one figure that varies)."""
    folder, first = ran
    second = run_example(folder)

    def masked(text: str) -> str:
        return re.sub(r"^latency_p95: .*$", "latency_p95: <measured>", text,
                      flags=re.MULTILINE)

    assert first.count("latency_p95: ") == 2
    assert masked(second) == masked(first)
    readme = " ".join((EXAMPLE / "README.md").read_text().split())
    assert "What it prints is the same on every run: only `latency_p95` varies" in readme


def test_the_fake_model_answers_a_sample_whatever_order_the_calls_arrive_in() -> None:
    """The draw is fixed by the sample number the request carries, not by how many
    calls came before: samples asked in reverse order get the draws of their numbers."""
    model = fake_model()
    question = "Which planet is known as the Red Planet?"
    with model.FakeModel() as service:
        got = [service.answer({"system": "v1", "question": question, "sample": k})["text"]
               for k in reversed(range(EPOCHS))]
        with pytest.raises(ValueError, match="sample must be an integer >= 0"):
            service.answer({"system": "v1", "question": question, "sample": "2"})
    assert got == [model.draw("v1", question, k) for k in reversed(range(EPOCHS))]
    assert len(set(got)) > 1  # the three samples differ, so the order matters


def test_the_answers_are_the_fake_models_draws_and_the_costs_its_prices(
        ran: tuple[Path, str]) -> None:
    folder, _ = ran
    model = fake_model()
    goldens = load_goldens(folder / "goldens.yaml")
    for version in ("v1", "v2"):
        run = RunResult.load(folder / "out" / f"{version}.jsonl")
        assert run.header["status"] == "complete"
        assert len(run.per_query) == len(goldens) and len(run.samples) == EPOCHS * len(goldens)
        cost = tokens_in = tokens_out = 0.0
        per_case_cost = []
        for case in goldens:
            rows = [r for r in run.samples if r.case_id == case.id]
            assert sorted(r.sample for r in rows) == list(range(EPOCHS))
            texts = {r.sample: r.response.text for r in rows if r.response}
            drawn = [model.draw(version, case.query, k) for k in range(EPOCHS)]
            assert [texts[k] for k in range(EPOCHS)] == drawn, case.id  # sample k: draw k
            used = [model.usage(version, case.query, t) for t in drawn]
            cost += math.fsum(u["cost_usd"] for u in used)
            tokens_in += sum(u["tokens_in"] for u in used)
            tokens_out += sum(u["tokens_out"] for u in used)
            per_case_cost.append(math.fsum(u["cost_usd"] for u in used) / EPOCHS)
            # exact match by hand, the mean of the three samples
            answers = {squad_normal(a) for a in case.answers}
            em = sum(squad_normal(t) in answers for t in drawn) / EPOCHS
            assert run.scores("exact_match")[case.id] == pytest.approx(em), case.id
        aggregates = run.header["aggregates"]
        assert aggregates["cost_total"] == pytest.approx(cost, rel=1e-12)
        assert aggregates["cost_per_case"] == pytest.approx(
            math.fsum(per_case_cost) / len(goldens), rel=1e-12)
        assert (aggregates["tokens_in_total"], aggregates["tokens_out_total"]) == (
            tokens_in, tokens_out)


def test_the_judge_is_paid_once_per_distinct_grade(ran: tuple[Path, str]) -> None:
    folder, _ = ran
    runs = [RunResult.load(folder / "out" / f"{v}.jsonl") for v in ("v1", "v2")]
    grades: dict[str, int] = {}
    for run in runs:
        for r in run.samples:
            detail = r.details["correctness"]
            grades.setdefault(detail["key"], detail["input_tokens"])
    paid = math.fsum((tokens * 1.0 + 25 * 5.0) / 1e6 for tokens in grades.values())
    spent = math.fsum(run.header["aggregates"]["judge_cost_total"] for run in runs)
    assert spent == pytest.approx(paid, rel=1e-9)
    # identical answers of v2 reuse v1's grades: v2 paid for fewer grades than it has rows
    assert runs[1].header["aggregates"]["judge_cost_total"] < \
        runs[0].header["aggregates"]["judge_cost_total"]


def test_the_comparison_and_the_gate_verdict_are_printed(ran: tuple[Path, str]) -> None:
    folder, out = ran
    assert "$ evalkit compare out/v1.jsonl out/v2.jsonl" in out
    assert re.search(r"^f1\s+0\.\d{4}\s+0\.\d{4}\s+\+0\.\d{4}", out, re.MULTILINE)
    assert "within-case spread (K = 3 baseline, 3 candidate samples per case)" in out
    assert "exact_match_floor: pass" in out and "judge_holds: pass" in out
    assert "cost_ceiling: warn" in out
    assert "judge_agrees_with_people: pass" in out
    assert "gate passed: 5 passed, 0 failed, 1 warned, 0 errors (exit 0)" in out
    assert (folder / "out" / "gate.md").read_text().strip()


def hand_grade(response: str, answers: list[str]) -> int:
    """The fake judge's rule (fake_judge.py), written out again."""
    said = squad_normal(response)
    normal = [squad_normal(a) for a in answers]
    if said in normal:
        return 5
    if any(a and f" {a} " in f" {said} " for a in normal):
        return 4
    if any(set(said.split()) & set(a.split()) for a in normal):
        return 2
    return 1


def test_the_pairwise_win_rate_follows_the_judges_grades(ran: tuple[Path, str]) -> None:
    """Sample i of v1 against sample i of v2: v1 scores 1, 1/2 or 0 as its answer's grade
    is above, equal to or below v2's; a case scores the mean of its three samples."""
    folder, out = ran
    model = fake_model()
    goldens = load_goldens(folder / "goldens.yaml")
    runs = {v: RunResult.load(folder / "out" / f"{v}.jsonl") for v in ("v1", "v2")}
    case_scores = []
    wins = ties = losses = 0
    for case in goldens:
        texts = {v: {r.sample: r.response.text for r in run.samples if r.case_id == case.id
                     and r.response is not None} for v, run in runs.items()}
        for v in ("v1", "v2"):
            assert [texts[v][k] for k in range(EPOCHS)] == [
                model.draw(v, case.query, k) for k in range(EPOCHS)]
        scores = []
        for k in range(EPOCHS):
            g1 = hand_grade(texts["v1"][k] or "", list(case.answers))
            g2 = hand_grade(texts["v2"][k] or "", list(case.answers))
            scores.append(1.0 if g1 > g2 else 0.5 if g1 == g2 else 0.0)
            wins, ties, losses = wins + (g1 > g2), ties + (g1 == g2), losses + (g1 < g2)
        case_scores.append(math.fsum(scores) / EPOCHS)
    (pair,) = json.loads((folder / "out" / "pairwise.jsonl").read_text()
                         .splitlines()[0])["pairs"]
    assert (pair["a"], pair["b"]) == ("assistant-v1", "assistant-v2")
    assert pair["win_rate"] == pytest.approx(math.fsum(case_scores) / len(goldens), abs=1e-12)
    assert (pair["wins"], pair["ties"], pair["losses"]) == (wins, ties, losses)
    assert pair["flip_rate"] == 0.0  # the fake judge ignores the order
    assert f"{wins}/{ties}/{losses}" in out and "$ evalkit pairwise out/v1.jsonl" in out
    # the interval printed is the test's own: it holds 1/2 exactly when p >= alpha
    inside = pair["ci_low"] <= 0.5 <= pair["ci_high"]
    assert pair["significant"] == (pair["p_value"] < 0.05) == (not inside)
    assert "interval: the 95% interval of the same test (inversion)" in out
    assert 'class="matrix"' in (folder / "out" / "pairwise.html").read_text()


def test_agreement_and_ppi_are_the_reference_packages_numbers(ran: tuple[Path, str]) -> None:
    import json

    import numpy as np

    krippendorff = pytest.importorskip("krippendorff")
    ppi_py = pytest.importorskip("ppi_py")
    folder, out = ran
    lines = (folder / "labels.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"selection": "random", "seed": 2024}
    human = {d["id"]: d["labels"]["correctness"] for d in map(json.loads, lines[1:])}
    judge = RunResult.load(folder / "out" / "v2.jsonl").scores("correctness")
    ids = [c for c in judge if c in human]
    alpha = krippendorff.alpha(reliability_data=[[judge[c] for c in ids],
                                                 [human[c] for c in ids]],
                               level_of_measurement="interval")
    assert f"interval {alpha:.4f}" in out
    y = np.array([human[c] for c in ids], dtype=float)
    f = np.array([judge[c] for c in ids])
    u = np.array([v for c, v in judge.items() if c not in human])
    lo, hi = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05)
    point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, u))[0])
    assert (f"human mean (PPI++)   {point:.4f}  95% CI [{float(np.ravel(lo)[0]):.4f}, "
            f"{float(np.ravel(hi)[0]):.4f}]  on 12 human labels and 12 judge-only cases") in out


def test_the_readme_runs_the_one_command() -> None:
    readme = (EXAMPLE / "README.md").read_text()
    assert ".venv/bin/python examples/llm_offline/run_offline.py" in readme
