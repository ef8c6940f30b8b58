"""``evalkit pairwise`` in a subprocess, as a user runs it: the judge plugin's command,
the real ``anthropic`` SDK against a local imitation of the Messages API on 127.0.0.1,
reports, errors, and a comparison stopped by a signal that continues without paying any
verdict twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import GradeCache
from evalkit_judge.testing import MessagesAPIServer, verdict_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import load_goldens
from evalkit.data.targets import TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

N_CASES = 5
VERDICTS = N_CASES * 2  # two systems: one pair, two orders

PLUGIN = '''
import os
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit_judge import LLMJudge

judge = LLMJudge(
    "The more complete answer is better.", model="claude-test", max_tokens=100,
    base_url=os.environ["JUDGE_URL"], max_retries=0, timeout=20.0,
    cache_path=os.environ["JUDGE_CACHE"], prices={"claude-test": (1.0, 5.0)},
)


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("preference", judge, higher_is_better=True)]
'''


class Text:
    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse(text=f"{self.text} ({case.query})")


def prefer_long(request: dict[str, Any]) -> dict[str, Any]:
    content = request["messages"][0]["content"]
    return verdict_reply("B" if "<answer_b>\nlonger" in content else "A", model="claude-test")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, MessagesAPIServer, dict[str, str]]]:
    (tmp_path / "judged_project.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "pyproject.toml").write_text('[tool.evalkit]\nlocal_plugins = '
                                             '["judged_project"]\n')
    goldens = tmp_path / "cases.jsonl"
    goldens.write_text("".join(json.dumps({"id": f"c{i}", "query": f"question {i}"}) + "\n"
                               for i in range(N_CASES)))
    gset = load_goldens(goldens)
    with use_registry(plugins=False):
        evaluate(Text("short", "short"), gset, [], progress=False, name="short",
                 artifact=tmp_path / "short.jsonl")
        evaluate(Text("long", "longer answer"), gset, [], progress=False, name="long",
                 artifact=tmp_path / "long.jsonl")
    with MessagesAPIServer(prefer_long) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update({"JUDGE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key",
                    "JUDGE_CACHE": str(tmp_path / "judge.sqlite"),
                    "PYTHONPATH": str(tmp_path), "COLUMNS": "200"})
        yield tmp_path, server, env


COMMAND = [sys.executable, "-c", "from evalkit.cli import main; main()", "pairwise",
           "short.jsonl", "long.jsonl", "--judge", "preference", "--max-concurrency", "1"]


def evalkit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_command_prints_writes_the_artifact_and_the_reports(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    out = evalkit(root, env, "-o", "out/pairwise.jsonl", "--report", "html:out/p.html",
                  "--report", "markdown:out/p.md")
    assert out.returncode == 0, out.stderr
    assert len(server.requests) == VERDICTS
    assert "short vs long    0.0000" in out.stdout  # short never wins
    assert "artifact: out/pairwise.jsonl" in out.stdout
    assert "0/0/5" in out.stdout and "0.0%" in out.stdout  # W/T/L, no flips
    assert 'class="matrix"' in (root / "out" / "p.html").read_text()
    assert "| short vs long | 0.0000 |" in (root / "out" / "p.md").read_text()
    again = evalkit(root, env, "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["totals"]["cached"] == VERDICTS and len(server.requests) == VERDICTS
    assert summary["pairs"][0]["win_rate"] == 0.0


def test_user_errors_are_one_line_and_exit_2(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, _, env = project
    out = evalkit(root, env, "--judge", "nosuch")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "unknown metric 'nosuch'" in out.stderr
    assert "The judges registered: preference." in out.stderr
    assert "recall" not in out.stderr  # the other metrics are not listed
    plain = evalkit(root, env, "--judge", "latency_mean")
    assert plain.returncode == 2
    assert "'latency_mean' is a whole-run aggregate" in plain.stderr
    assert "The judges registered: preference." in plain.stderr
    (root / "run.trec").write_text("q1 Q0 d1 1 2.5 bm25\n")
    trec = subprocess.run([*COMMAND[:4], "short.jsonl", "run.trec", "--judge", "preference"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert trec.returncode == 2 and "Traceback" not in trec.stderr
    assert "run.trec:1: not a run artifact" in trec.stderr and "TREC run" in trec.stderr
    bad = subprocess.run([*COMMAND[:4], "short.jsonl", "cases.jsonl", "--judge", "preference"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "cases.jsonl" in bad.stderr
    dry = evalkit(root, env, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"0 verdict(s) cached, {VERDICTS} would be requested" in dry.stdout


def test_an_output_over_an_input_is_refused_before_any_request(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    before = (root / "short.jsonl").read_bytes()
    for option in (["-o", "short.jsonl"], ["--report", "html:short.jsonl"],
                   ["--report", "html:cases.jsonl", "--goldens", "cases.jsonl"]):
        out = evalkit(root, env, *option)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "is also an input of this command" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
    assert (root / "short.jsonl").read_bytes() == before
    assert server.requests == []


DECLARED = """\
goldens: cases.jsonl
target: {factory: "nowhere:make"}
metrics: [completeness]
output: declared.jsonl
judges:
  - name: completeness
    model: claude-test
    base_url: ${JUDGE_URL}
    rubric: The more complete answer is better.
    higher_is_better: true
    max_tokens: 100
    retries: 0
    cache: declared.sqlite
"""


def test_a_judge_declared_in_a_config_judges_runs_made_without_it(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    (root / "judges.yaml").write_text(DECLARED)
    # the runs were made with no metric: their headers declare no judge
    unknown = evalkit(root, env, "--judge", "completeness")
    assert unknown.returncode == 2 and "completeness" in unknown.stderr
    out = evalkit(root, env, "--judge", "completeness", "--config", "judges.yaml", "--json")
    assert out.returncode == 0, out.stderr
    assert len(server.requests) == VERDICTS
    assert json.loads(out.stdout)["pairs"][0]["win_rate"] == 0.0  # short never wins
    assert len(GradeCache(root / "declared.sqlite")) == VERDICTS  # the config's cache
    assert len(GradeCache(root / "judge.sqlite")) == 0  # not the plugin's judge


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_a_judge_whose_url_variable_is_unset_is_one_line_and_exit_2(
        project: tuple[Path, MessagesAPIServer, dict[str, str]], dry_run: list[str]) -> None:
    root, server, env = project
    (root / "judges.yaml").write_text(DECLARED)
    unset = {k: v for k, v in env.items() if k != "JUDGE_URL"}
    out = evalkit(root, unset, "--judge", "completeness", "--config", "judges.yaml", *dry_run)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "RunAborted" not in out.stderr
    # (the fixture's own plugin reads JUDGE_URL too: its warning comes first); found
    # when the config is read, at its line, unless a dry run (which needs no key) finds
    # it when the first verdict's key is made
    last = out.stderr.splitlines()[-1]
    if dry_run:
        assert last.startswith("error: judge 'claude-test': base_url refers to "
                               "${JUDGE_URL}, which is not set"), out.stderr
    else:
        assert last.startswith(f"error: {root / 'judges.yaml'}:"), out.stderr
        assert "key 'judges[0].base_url': judge 'completeness': refers to ${JUDGE_URL}, " \
            "which is not set" in last
    assert server.requests == []


@pytest.mark.parametrize(("text", "message"), [
    (DECLARED.replace("    higher_is_better: true\n", ""),
     "judges.yaml:6: key 'judges[0].higher_is_better': missing (required)"),
    (DECLARED.split("judges:")[0], "judges.yaml: no judges: section"),
    (DECLARED.replace("name: completeness", "name: preference"),
     "metric name 'preference' is already provided by"),
])
def test_a_config_whose_judges_cannot_be_read_is_one_line_and_exit_2(
        project: tuple[Path, MessagesAPIServer, dict[str, str]], text: str,
        message: str) -> None:
    root, server, env = project
    (root / "judges.yaml").write_text(text)
    out = evalkit(root, env, "--judge", "completeness", "--config", "judges.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert message in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert server.requests == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_signal_stops_it_and_a_rerun_pays_no_verdict_twice(
        project: tuple[Path, MessagesAPIServer, dict[str, str]], sig: int) -> None:
    root, server, env = project
    release = threading.Event()

    def held_at_the_fourth(request: dict[str, Any]) -> dict[str, Any]:
        if len(server.requests) == 4:
            release.wait(30)
        return prefer_long(request)

    server.answer = held_at_the_fourth
    proc = subprocess.Popen([*COMMAND, "-o", "p.jsonl"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(server.requests) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert len(server.requests) == 4, proc.communicate()
    proc.send_signal(sig)
    if sig == signal.SIGKILL:
        proc.wait(30)
    release.set()
    _, stderr = proc.communicate(timeout=60)
    answered = 3 if sig == signal.SIGKILL else 4  # SIGINT lets the 4th reply be stored
    if sig == signal.SIGINT:
        assert proc.returncode == 130, stderr
        assert "run the same command again to continue" in stderr
    else:
        assert proc.returncode == -signal.SIGKILL
    assert not (root / "p.jsonl").exists()
    assert len(GradeCache(root / "judge.sqlite")) == answered
    paid = {json.dumps(r, sort_keys=True) for r in server.requests[:answered]}
    server.answer = prefer_long
    done = evalkit(root, env, "-o", "p.jsonl")
    assert done.returncode == 0, done.stderr
    again = [json.dumps(r, sort_keys=True) for r in server.requests[4:]]
    assert len(again) == VERDICTS - answered and not paid & set(again)
    header = json.loads((root / "p.jsonl").read_text().splitlines()[0])
    assert header["totals"]["cached"] == answered
    assert header["totals"]["requested"] == VERDICTS - answered


class FailsOnOne(Text):
    def invoke(self, case: GoldenCase) -> TargetResponse:
        if case.id == "c3":
            raise RuntimeError("the service was down")
        return super().invoke(case)


def test_a_case_one_run_did_not_answer_is_refused_unless_allowed(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    gset = load_goldens(root / "cases.jsonl")
    with use_registry(plugins=False):
        evaluate(FailsOnOne("long", "longer answer"), gset, [], progress=False, name="long",
                 artifact=root / "long.jsonl", overwrite=True)
    out = evalkit(root, env)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    (error,) = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert "short vs long: 1 (case, sample) pair(s) lack a response" in error
    assert "'c3'" in error and "--allow-incomplete" in error and "--resume" in error
    assert server.requests == []  # refused before any verdict is paid for
    allowed = evalkit(root, env, "--allow-incomplete", "--json")
    assert allowed.returncode == 0, allowed.stderr
    summary = json.loads(allowed.stdout)
    assert len(server.requests) == VERDICTS - 2  # c3 left out, both orders
    assert any("without a response from both, left out (case 'c3')" in n
               for n in summary["notes"])


def test_the_totals_charge_the_requests_of_this_invocation_once(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    cost = (1000 * 1.0 + 20 * 5.0) / 1e6  # each reply: 1000 in, 20 out at $1 / $5 per M

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        content = request["messages"][0]["content"]
        verdict = "B" if "<answer_b>\nlonger" in content else "A"
        if "question 4" in content and verdict == "B":  # a billed reply with no verdict
            verdict = "maybe"
        return verdict_reply(verdict, model="claude-test", input_tokens=1000)

    server.answer = answer
    first = evalkit(root, env, "--max-calls", "4")
    assert first.returncode == 3, first.stderr
    assert len(server.requests) == 4
    assert first.stderr.count("--max-calls 4 reached") == 1, first.stderr
    second = evalkit(root, env, "--json")
    assert second.returncode == 4, second.stderr  # a reply without a verdict
    now = len(server.requests) - 4
    assert now == VERDICTS - 4
    assert json.loads(second.stdout)["status"] == "incomplete"
    totals = json.loads(second.stdout)["totals"]
    assert (totals["requested"], totals["cached"], totals["errors"]) == (now, 4, 1)
    assert totals["verdicts"] == VERDICTS - 1
    assert totals["cost_usd"] == pytest.approx(now * cost)
    assert totals["cached_cost_usd"] == pytest.approx(4 * cost)
    assert (totals["input_tokens"], totals["output_tokens"]) == (now * 1000, now * 20)


def test_a_judge_failing_every_request_the_same_way_stops_after_three(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    server.answer = lambda request: (404, {"type": "error", "error": {
        "type": "not_found_error", "message": "model: claude-test"}}, {})
    out = evalkit(root, env, "--json", "-o", "out/pairwise.jsonl")
    assert out.returncode == 2, out.stderr
    assert len(server.requests) == 3  # one in flight at a time: none after the third
    assert "the first 3 requests failed the same way" in out.stderr
    assert "no more requests are sent" in out.stderr and "Traceback" not in out.stderr
    assert not (root / "out" / "pairwise.jsonl").exists()
    status = json.loads(out.stdout)  # --json: a status document on every exit
    assert (status["status"], status["exit_code"]) == ("error", 2)
    assert "the first 3 requests failed the same way" in status["messages"][-1]


def test_verdicts_that_could_not_be_had_exit_4(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project

    def answer(request: dict[str, Any]) -> Any:
        if "question 4" in request["messages"][0]["content"]:  # the last case: both orders
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": "bad request"}}, {}
        return prefer_long(request)

    server.answer = answer
    out = evalkit(root, env, "--json", "-o", "out/pairwise.jsonl")
    assert out.returncode == 4, out.stderr
    assert len(server.requests) == VERDICTS  # every verdict was asked
    summary = json.loads(out.stdout)
    assert summary["status"] == "incomplete"
    assert (summary["totals"]["verdicts"], summary["totals"]["errors"]) == (VERDICTS - 2, 2)
    assert f"error: 2 of {VERDICTS} verdict(s) could not be had" in out.stderr
    artifact = [json.loads(line) for line in
                (root / "out" / "pairwise.jsonl").read_text().splitlines()]
    assert artifact[0]["status"] == "incomplete"
    assert sum("error" in row for row in artifact[1:] if row.get("type") == "row") == 2
    # once the judge answers, the same command asks only the two missing verdicts
    server.answer = prefer_long
    again = evalkit(root, env, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["status"] == "complete"
    assert len(server.requests) == VERDICTS + 2


def test_progress_goes_to_stderr_when_asked(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, _, env = project
    out = evalkit(root, env, "--progress")
    assert out.returncode == 0, out.stderr
    bar = out.stderr.split()
    assert bar[0] == "verdicts" and f"{VERDICTS}/{VERDICTS}" in bar
    quiet = evalkit(root, env, "--no-progress")  # not a terminal: no bar either way
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_flips_drop_that_drops_every_comparison_is_no_evidence_and_exit_4(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    # a fully position-biased judge: A whatever is shown first, so every verdict flips
    server.answer = lambda request: verdict_reply("A", model="claude-test")
    out = evalkit(root, env, "--flips", "drop", "--json")
    assert out.returncode == 4, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "incomplete"
    assert summary["no_evidence"] == ["short vs long"]
    pair = summary["pairs"][0]
    assert (pair["comparisons"], pair["flipped"], pair["n_cases"]) == (N_CASES, N_CASES, 0)
    assert pair["win_rate"] is None and pair["significant"] is False
    assert any(f"all {N_CASES} comparison(s) were dropped by --flips drop" in note
               for note in summary["notes"])
    assert "error: short vs long: every comparison was dropped" in out.stderr
    # counted as ties instead, the same verdicts (from the cache) are evidence: exit 0
    tie = evalkit(root, env, "--flips", "tie", "--json")
    assert tie.returncode == 0, tie.stderr
    assert json.loads(tie.stdout)["pairs"][0]["win_rate"] == 0.5
    assert len(server.requests) == VERDICTS
