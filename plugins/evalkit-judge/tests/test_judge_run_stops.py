"""``evalkit run`` with a declared judge that cannot go on: an unset variable found when
the config is read (before the target is called), and a run stopped mid-way (a spending
limit, a 401) that keeps the rows of the cases whose target answered, so that
``--resume`` grades them without calling the target again; and what the judge's
billed replies add up to (``judge_cost_total``, the header's totals).

The target appends one line to a file per call and the judge is a Chat Completions server
on 127.0.0.1 that counts its requests: the counts asserted are theirs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge.testing import ChatCompletionsServer, chat_tool_reply, openai_error_body

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

N_CASES = 30
# every reply: 1000 input and 100 output tokens at $1 / $5 per million tokens
COST = (1000 * 1.0 + 100 * 5.0) / 1e6

TARGETS = '''
import os
from evalkit.data.targets import CallableTarget


def answer(case):
    with open(os.environ["TARGET_CALLS"], "a") as fh:
        fh.write(case.id + "\\n")
    return "answer " + case.id


def make_target():
    return CallableTarget(answer, name="counted")
'''

CONFIG = '''
goldens: cases.jsonl
target: {factory: "counted_target:make_target"}
judges:
  - name: correctness
    provider: openai
    model: judge-x
    base_url: ${JUDGE_URL}
    api_key_env: JUDGE_KEY
    rubric: "Is it right?"
    higher_is_better: true
    cache: cache.sqlite
    prices: {judge-x: [1.0, 5.0]}
    retries: 0
metrics: [correctness]
aggregates: [judge_cost_total]
output: out/run.jsonl
max_concurrency: 6
'''


def reply(score: int) -> dict[str, Any]:
    body = chat_tool_reply(score, model="judge-x")
    body["usage"] = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    return body


class Judge:
    """What the judge server answers: a grade (``3``, or ``9``, off the 1-5 scale, for the
    case ids in ``off_scale``), or 401 from request ``refuse_after`` on."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen = 0
        self.refuse_after: int | None = None
        self.refused = 0
        self.off_scale: set[str] = set()
        self.fail_status: int | None = None  # every request answered with it
        self.bad_request: set[str] = set()  # the cases whose request gets a 400

    def __call__(self, request: dict[str, Any]) -> Any:
        with self.lock:
            self.seen += 1
            n = self.seen
            if self.refuse_after is not None and n > self.refuse_after:
                self.refused += 1
                return 401, openai_error_body("bad key", "invalid_api_key"), {}
            if self.fail_status is not None:
                return self.fail_status, openai_error_body("no such model", "not_found"), {}
        text = request["messages"][-1]["content"]
        if any(f"answer {c}" in text for c in self.bad_request):
            return 400, openai_error_body("bad request", "invalid_request_error"), {}
        off = any(f"answer {c}" in text for c in self.off_scale)
        return reply(9 if off else 3)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ChatCompletionsServer, Judge,
                                              dict[str, str]]]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "counted_target.py").write_text(textwrap.dedent(TARGETS))
    (root / "evalkit.yaml").write_text(textwrap.dedent(CONFIG))
    (root / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:02d}", "query": f"question {i}"}) + "\n"
        for i in range(N_CASES)))
    judge = Judge()
    with ChatCompletionsServer(judge) as server:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update({"JUDGE_URL": server.api_base, "JUDGE_KEY": "sk-test-key",
                    "TARGET_CALLS": str(root / "calls.txt"),
                    "PYTHONPATH": str(root), "COLUMNS": "200"})
        yield root, server, judge, env


def evalkit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def target_calls(root: Path) -> list[str]:
    path = root / "calls.txt"
    return path.read_text().split() if path.exists() else []


def rows(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [line for line in lines if line.get("type") == "row"]


def header(path: Path) -> dict[str, Any]:
    with path.open() as fh:
        first: dict[str, Any] = json.loads(fh.readline())
    return first


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("variable", "key", "needle"), [
    ("JUDGE_KEY", "judges[0].api_key_env", "api_key_env:"),
    ("JUDGE_URL", "judges[0].base_url", "base_url:"),
])
def test_an_unset_judge_variable_is_refused_before_the_target_is_called(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]],
        variable: str, key: str, needle: str) -> None:
    root, server, _, env = project
    bare = {k: v for k, v in env.items() if k != variable}
    out = evalkit(root, bare, "run", "--no-progress")
    assert out.returncode == 2, out.stderr
    line = line_of((root / "evalkit.yaml").read_text(), needle)
    assert out.stderr.startswith(f"error: {root / 'evalkit.yaml'}:{line}: key {key!r}: "), \
        out.stderr
    assert variable in out.stderr and "not set" in out.stderr
    assert "Traceback" not in out.stderr
    assert target_calls(root) == [] and server.requests == []
    assert not (root / "out" / "run.jsonl").exists()
    # a dry run sends no judge request and needs no key
    if variable == "JUDGE_KEY":
        dry = evalkit(root, bare, "run", "--dry-run", "--no-progress")
        assert dry.returncode == 0, dry.stderr
        assert server.requests == []


@pytest.mark.parametrize("stop", [["--max-calls", "3"], ["--max-cost", "0.0045"], "401"])
def test_a_stopped_run_keeps_the_answered_cases_and_resume_never_calls_them_again(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]],
        stop: list[str] | str) -> None:
    root, server, judge, env = project
    if stop == "401":
        judge.refuse_after = 3
        first = evalkit(root, env, "run", "--no-progress")
        assert first.returncode == 2, first.stderr
        assert "refused the credentials (401" in first.stderr
    else:
        first = evalkit(root, env, "run", "--no-progress", *stop)
        assert first.returncode == 3, first.stderr
    called = target_calls(root)
    written = rows(root / "out" / "run.jsonl")
    # every case whose target answered has its row; the ungraded ones say why
    assert sorted(r["id"] for r in written) == sorted(called)
    assert len(called) > 3  # up to max_concurrency cases were in flight
    graded = [r for r in written if "correctness" in r["metrics"]]
    assert len(graded) == 3
    for r in written:
        if "correctness" not in r["metrics"]:
            assert "not graded" in r["metric_errors"]["correctness"]
    judge.refuse_after = None
    again = evalkit(root, env, "run", "--resume", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert len(target_calls(root)) == N_CASES  # each case called exactly once
    assert sorted(target_calls(root)) == sorted(f"c{i:02d}" for i in range(N_CASES))
    # every case graded once; the requests refused with 401 were answered by no grade
    assert len(server.requests) == N_CASES + judge.refused
    assert (judge.refused > 0) == (stop == "401")
    done = header(root / "out" / "run.jsonl")
    assert done["aggregates"]["judge_cost_total"] == pytest.approx(N_CASES * COST)
    assert done["details"]["correctness"]["requested"] == N_CASES
    kept = len(written)
    assert f"resume: {kept} row(s) kept from the earlier run, {N_CASES - kept} case(s) " \
        "called now" in again.stdout


def test_judge_cost_total_counts_every_billed_reply_once(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    root, server, judge, env = project
    judge.off_scale = {f"c{i:02d}" for i in range(0, N_CASES, 3)}  # 10 replies rejected
    out = evalkit(root, env, "run", "--no-progress", "--allow-metric-errors", "--json")
    assert out.returncode == 0, out.stderr
    sent = len(server.requests)
    assert sent == N_CASES
    done = header(root / "out" / "run.jsonl")
    totals = done["details"]["correctness"]
    assert done["aggregates"]["judge_cost_total"] == pytest.approx(sent * COST)
    assert totals["cost_usd"] == pytest.approx(sent * COST)
    assert (totals["requested"], totals["rejected"], totals["grades"]) == (sent, 10, 20)
    assert (totals["input_tokens"], totals["output_tokens"]) == (sent * 1000, sent * 100)
    # again from the cache: the 20 grades cost nothing now; the 10 rejected are asked again
    again = evalkit(root, env, "run", "--no-progress", "--allow-metric-errors",
                    "--overwrite", "--max-calls", "100")
    assert again.returncode == 0, again.stderr
    now = len(server.requests) - sent
    assert now == 10
    done = header(root / "out" / "run.jsonl")
    totals = done["details"]["correctness"]
    assert done["aggregates"]["judge_cost_total"] == pytest.approx(now * COST)
    assert totals["cost_usd"] == pytest.approx(now * COST)
    assert (totals["requested"], totals["cached"]) == (now, 20)
    assert totals["cached_cost_usd"] == pytest.approx(20 * COST)
    assert f"judge: {now} request(s) sent (0 failed), 20 grade(s) from the cache, " \
        f"${now * COST:.4f} spent" in again.stderr


def test_rescore_takes_the_spending_options_of_run(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    root, server, judge, env = project
    judge.off_scale = {f"c{i:02d}" for i in range(10)}  # 10 grades rejected, not cached
    out = evalkit(root, env, "run", "--no-progress", "--allow-metric-errors")
    assert out.returncode == 0, out.stderr
    sent = len(server.requests)
    assert f"judge: {sent} request(s) sent (0 failed), 0 grade(s) from the cache, " \
        f"${sent * COST:.4f} spent" in out.stderr  # printed without limits too
    judge.off_scale = set()
    run = root / "out" / "run.jsonl"
    before = run.read_bytes()
    dry = evalkit(root, env, "rescore", str(run), "-m", "correctness", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert (report["cached"], report["would_request"]) == (20, 10)
    assert len(server.requests) == sent and run.read_bytes() == before
    stopped = evalkit(root, env, "rescore", str(run), "-m", "correctness",
                      "--max-calls", "4", "-o", str(root / "rs.jsonl"))
    assert stopped.returncode == 3, stopped.stderr
    assert len(server.requests) == sent + 4
    assert "judge: 4 request(s) sent (0 failed)" in stopped.stderr
    assert "stopped: --max-calls 4 reached" in stopped.stderr
    assert not (root / "rs.jsonl").exists() and run.read_bytes() == before
    cost = evalkit(root, env, "rescore", str(run), "-m", "correctness",
                   "--max-cost", str(3 * COST), "-o", str(root / "rs.jsonl"))
    assert cost.returncode == 3, cost.stderr
    assert "--max-cost" in cost.stderr and len(server.requests) == sent + 4 + 3
    done = evalkit(root, env, "rescore", str(run), "-m", "correctness",
                   "-o", str(root / "rs.jsonl"))
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == sent + 10  # the 7 graded before were cached
    assert "judge: 3 request(s) sent (0 failed), 27 grade(s) from the cache, " \
        f"${3 * COST:.4f} spent" in done.stderr
    totals = header(root / "rs.jsonl")["details"]["correctness"]
    assert (totals["requested"], totals["cached"]) == (3, 27)
    assert header(root / "rs.jsonl")["aggregates"]["judge_cost_total"] == \
        pytest.approx(3 * COST)


@pytest.mark.parametrize(("cache", "args", "what"), [
    ("cases.jsonl", [], "the golden file"),
    ("evalkit.yaml", [], "the eval config"),
    ("out/run.jsonl", ["--resume"], "the run artifact"),
    ("other.jsonl", ["-o", "other.jsonl"], "the run artifact"),
])
def test_a_judge_cache_that_is_a_file_of_the_run_is_refused_before_it_is_opened(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]],
        cache: str, args: list[str], what: str) -> None:
    root, _, _, env = project
    first = evalkit(root, env, "run", "--no-progress")
    assert first.returncode == 0, first.stderr
    (root / "other.jsonl").write_bytes((root / "out" / "run.jsonl").read_bytes())
    config = (root / "evalkit.yaml").read_text().replace("cache: cache.sqlite",
                                                         f"cache: {cache}")
    (root / "evalkit.yaml").write_text(config)
    before = {p.name: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    calls = len(target_calls(root))
    out = evalkit(root, env, "run", "--no-progress", *args)
    assert out.returncode == 2, out.stderr
    line = line_of(config, "cache:")
    assert out.stderr.startswith(f"error: {root / 'evalkit.yaml'}:{line}: key "
                                 f"'judges[0].cache': judge 'correctness': the cache "
                                 f"{cache} is {what}"), out.stderr
    after = {p.name: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before  # nothing renamed, created or rewritten
    assert len(target_calls(root)) == calls
    if cache == "other.jsonl":  # the gate's --run too
        (root / "checks.yaml").write_text("checks:\n  - {id: n, metric: correctness, "
                                          "op: '>=', threshold: 1}\n")
        gate = evalkit(root, env, "gate", "-c", "checks.yaml", "-r", "other.jsonl",
                       "--config", "evalkit.yaml")
        assert gate.returncode == 2, gate.stderr
        assert "key 'judges[0].cache': judge 'correctness': the cache other.jsonl is the " \
            "run artifact" in gate.stderr
        assert {p.name: p.read_bytes() for p in root.rglob("*") if p.is_file()
                if p.name != "checks.yaml"} == before


def test_a_cache_file_set_aside_is_reported_once_on_one_line(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    root, _, _, env = project
    (root / "notes.txt").write_text("not a cache\n")
    config = (root / "evalkit.yaml").read_text().replace("cache: cache.sqlite",
                                                         "cache: notes.txt")
    (root / "evalkit.yaml").write_text(config)
    out = evalkit(root, env, "run", "--no-progress")
    assert out.returncode == 0, out.stderr
    told = [x for x in out.stderr.splitlines() if "notes.txt" in x]
    assert len(told) == 1 and told[0].startswith("warning: judge cache "), out.stderr
    assert "renamed to" in told[0] and "JudgeCacheWarning" not in out.stderr


def test_grades_shared_in_flight_are_counted_once(tmp_path: Path) -> None:
    import time

    from evalkit_judge import LLMJudge
    from evalkit_judge.cost_aggregates import judge_cost_total

    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.target_runner import evaluate
    from evalkit.plugins.default import use_registry

    def slow(request: dict[str, Any]) -> Any:
        time.sleep(0.3)  # the other cases ask while this one is in flight
        return reply(4)

    cases = [GoldenCase(id=f"c{i:02d}", query="the same question") for i in range(12)]
    with ChatCompletionsServer(slow) as server:
        judge = LLMJudge("Is it right?", model="judge-x", provider="openai",
                         base_url=server.api_base, cache_path=tmp_path / "cache.sqlite",
                         prices={"judge-x": (1.0, 5.0)}, retries=0)
        with use_registry(plugins=False) as reg:
            reg.register_metric("correctness", higher_is_better=True)(judge)
            reg.register_aggregate("judge_cost_total", higher_is_better=False)(
                judge_cost_total)
            run = evaluate(CallableTarget(lambda case: "the same answer", name="same"),
                           cases, ["correctness"], ["judge_cost_total"], max_concurrency=6,
                           progress=False, artifact=tmp_path / "run.jsonl")
        assert len(server.requests) == 1
    totals = run.header["details"]["correctness"]
    assert (totals["requested"], totals["cached"], totals["grades"]) == (1, 11, 12)
    assert totals["cost_usd"] == pytest.approx(COST)
    assert (totals["input_tokens"], totals["output_tokens"]) == (1000, 100)
    assert totals["cached_cost_usd"] == pytest.approx(11 * COST)
    assert run.header["aggregates"]["judge_cost_total"] == pytest.approx(COST)


# ------------------------------------------------------------------ systemic failures
def test_a_judge_failing_every_request_the_same_way_stops_the_run_after_three(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    root, server, judge, env = project
    judge.fail_status = 404
    out = evalkit(root, env, "run", "--no-progress")
    assert out.returncode == 2, out.stderr
    assert "the first 3 requests failed the same way" in out.stderr
    assert "HTTP 404: no such model" in out.stderr
    assert "no more requests are sent" in out.stderr and "Traceback" not in out.stderr
    # the two failed before, and the third with the five in flight beside it
    # (max_concurrency 6); none is sent after the stop
    assert 3 <= len(server.requests) <= 2 + 6
    called = len(target_calls(root))
    assert called < N_CASES
    judge.fail_status = None
    resumed = evalkit(root, env, "run", "--no-progress", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(target_calls(root)) == [f"c{i:02d}" for i in range(N_CASES)]
    assert all("correctness" in r["metrics"] for r in rows(root / "out" / "run.jsonl"))


def test_a_judge_that_cannot_be_reached_stops_at_once(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    import socket

    root, _, _, env = project
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = evalkit(root, {**env, "JUDGE_URL": f"http://127.0.0.1:{port}/v1"},
                  "run", "--no-progress")
    assert out.returncode == 2, out.stderr
    assert "ConnectError" in out.stderr and "no more requests are sent" in out.stderr
    assert len(target_calls(root)) < N_CASES


def test_one_case_failing_does_not_stop_the_judge(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    root, server, judge, env = project
    judge.bad_request = {"c27", "c28", "c29"}  # three in a row, after grades: not systemic
    out = evalkit(root, env, "run", "--no-progress", "--json")
    assert out.returncode == 4, out.stderr
    assert len(server.requests) == N_CASES  # every grade was asked
    summary = json.loads(out.stdout)
    assert summary["status"] == "complete" and summary["exit_status"] == 4
    assert summary["metric_counts"]["correctness"]["errored"] == 3


# ------------------------------------------------------------------ rescore keeps grades
def test_rescore_of_other_metrics_keeps_the_paid_grades(
        project: tuple[Path, ChatCompletionsServer, Judge, dict[str, str]]) -> None:
    root, server, _, env = project
    first = evalkit(root, env, "run", "--no-progress")
    assert first.returncode == 0, first.stderr
    run = root / "out" / "run.jsonl"
    graded = {r["id"]: (r["metrics"]["correctness"], r["details"]["correctness"])
              for r in rows(run)}
    before = header(run)
    sent = len(server.requests)
    regex = "regex(pattern=^answer)"
    elsewhere = evalkit(root, env, "rescore", str(run), "-m", regex, "-o", "rs.jsonl",
                        "--json")
    assert elsewhere.returncode == 0, elsewhere.stderr
    summary = json.loads(elsewhere.stdout)
    assert (summary["status"], summary["exit_status"]) == ("complete", 0)
    inplace = evalkit(root, env, "rescore", str(run), "-m", regex)
    assert inplace.returncode == 0, inplace.stderr
    assert len(server.requests) == sent  # no grade asked again
    for path in (root / "rs.jsonl", run):
        after = rows(path)
        assert {r["id"]: (r["metrics"]["correctness"], r["details"]["correctness"])
                for r in after} == graded
        assert all(r["metrics"][regex] == 1.0 for r in after)
        head = header(path)
        assert head["config"]["metrics"] == ["correctness", regex]
        assert head["metrics"]["correctness"] == before["metrics"]["correctness"]
        assert head["details"]["correctness"] == before["details"]["correctness"]
        assert head["aggregates"]["judge_cost_total"] == pytest.approx(N_CASES * COST)
        assert head["rescored"]["kept_metrics"] == ["correctness"]
    # the judge renamed in the config: its grades are kept as recorded, not dropped
    config = (root / "evalkit.yaml").read_text()
    (root / "evalkit.yaml").write_text(config.replace("name: correctness",
                                                      "name: correctness2"))
    renamed = evalkit(root, env, "rescore", str(run), "-m", regex, "-o", "rs2.jsonl",
                      "--progress")
    assert renamed.returncode == 0, renamed.stderr
    bar = renamed.stderr.split()  # the progress bar, asked for outside a terminal
    assert bar[0] == "rescore" and f"{N_CASES}/{N_CASES}" in bar
    assert {r["id"]: r["metrics"]["correctness"] for r in rows(root / "rs2.jsonl")} == \
        {k: v[0] for k, v in graded.items()}
    assert len(server.requests) == sent
