"""``evalkit run`` with a judged metric: --dry-run, --max-calls, --max-cost, --resume.

The judge uses the real ``anthropic`` SDK against a local imitation of the Messages API
on 127.0.0.1; the CLI runs in a subprocess, as a user would run it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from evalkit_judge import GradeCache
from evalkit_judge.testing import MessagesAPIServer, error_body, text_reply, tool_reply

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

N_CASES = 6
# each reply: 100 input and 20 output tokens at $1 / $5 per million = $0.0002
COST_PER_GRADE = (100 * 1.0 + 20 * 5.0) / 1e6

PLUGIN = '''
import os
import re
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit.data.targets import CallableTarget
from evalkit_judge import LLMJudge

judge = LLMJudge(
    "Does the answer address the query?", model="claude-test", max_tokens=100,
    base_url=os.environ["JUDGE_URL"], max_retries=0, timeout=5.0,
    cache_path=os.environ["JUDGE_CACHE"], prices={"claude-test": (1.0, 5.0)},
)


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("helpfulness", judge, higher_is_better=True)]


def make_target():
    return CallableTarget(lambda case: "an answer to " + case.query, name="echo")
'''

PYPROJECT = '''
[tool.evalkit]
local_plugins = ["judged_project"]
goldens = "cases.jsonl"
target = {factory = "judged_project:make_target"}
metrics = ["helpfulness"]
output = "runs/judged.jsonl"
max_concurrency = 3
'''


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, MessagesAPIServer, dict[str, str]]]:
    (tmp_path / "judged_project.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    (tmp_path / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": f"question {i}"}) + "\n" for i in range(N_CASES)))
    with MessagesAPIServer(lambda req: tool_reply(3, model="claude-test")) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update({"JUDGE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key",
                    "JUDGE_CACHE": str(tmp_path / "judge.sqlite"),
                    "PYTHONPATH": str(tmp_path), "COLUMNS": "200"})
        yield tmp_path, server, env


def evalkit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           "run", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_dry_run_limits_and_resume_through_evalkit_run(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    artifact = root / "runs" / "judged.jsonl"

    dry = evalkit(root, env, "--dry-run", "--no-progress")
    assert dry.returncode == 0, dry.stderr
    assert f"0 grade(s) cached, {N_CASES} would be requested" in dry.stdout
    assert "estimated cost $" in dry.stdout
    assert server.requests == [] and not artifact.exists()

    stopped = evalkit(root, env, "--max-calls", "4", "--no-progress")
    assert stopped.returncode == 3, stopped.stderr
    assert "--max-calls 4 reached" in stopped.stderr and "--resume" in stopped.stderr
    assert len(server.requests) == 4
    assert len(GradeCache(root / "judge.sqlite")) == 4  # every grade received is kept
    # every row graded before the stop is kept, and so is every case whose target had
    # answered (up to max_concurrency), its grade failed "not graded" for --resume
    kept = [json.loads(x) for x in artifact.read_text().splitlines()[1:]]
    graded = [x for x in kept if x["metrics"] == {"helpfulness": 3.0}]
    assert len(graded) == 4 and 4 <= len(kept) <= 4 + 3
    assert all("not graded" in x["metric_errors"]["helpfulness"]
               for x in kept if x not in graded)

    resumed = evalkit(root, env, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == N_CASES  # the 4 paid grades were not bought again
    lines = [json.loads(x) for x in artifact.read_text().splitlines()]
    header, rows, trailer = lines[0], lines[1:-1], lines[-1]
    assert trailer["type"] == "trailer" and trailer["rows"] == N_CASES
    assert header["status"] == "complete" and len(rows) == N_CASES
    for row in rows:
        assert row["metrics"] == {"helpfulness": 3.0}
        details = row["details"]["helpfulness"]
        assert (details["score"], details["model"]) == (3, "claude-test")
        assert (details["input_tokens"], details["output_tokens"]) == (100, 20)
        assert details["cost_usd"] == pytest.approx(COST_PER_GRADE)
    totals = header["details"]["helpfulness"]
    assert totals["grades"] == N_CASES
    # the 4 rows graded before the stop were kept, so only 2 grades were requested later
    assert (totals["requested"], totals["cached"]) == (N_CASES, 0)
    assert sum(r["details"]["helpfulness"]["cached"] for r in rows) == 0
    assert totals["input_tokens"] == 100 * N_CASES and totals["output_tokens"] == 20 * N_CASES
    assert totals["cost_usd"] == pytest.approx(N_CASES * COST_PER_GRADE)

    again = evalkit(root, env, "--dry-run", "--json", "--no-progress")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["cached"], report["would_request"]) == (N_CASES, 0)

    # with every grade cached, even a zero budget completes a new run
    free = evalkit(root, env, "--max-cost", "0", "--overwrite", "--no-progress")
    assert free.returncode == 0, free.stderr
    assert len(server.requests) == N_CASES


def test_max_cost_sends_exactly_the_grades_that_fit(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    # Each grade costs $0.0002 and $0.0005 fits two. The judge counts each request's input
    # (100 tokens, $0.0001) with the token counting endpoint, and expects the output of
    # its longest grade so far; its worst case (100 output tokens more) is held while it
    # is in flight, so the 3 workers cannot overspend together.
    out = evalkit(root, env, "--max-cost", "0.0005", "--no-progress")
    assert out.returncode == 3, out.stderr
    assert "--max-cost $0.000500 reached: $0.000400 spent" in out.stderr
    assert len(server.requests) == 2 and len(GradeCache(root / "judge.sqlite")) == 2
    # every request sent was counted first (the refused ones too), without max_tokens
    sent = [r["messages"] for r in server.requests]
    counted = [r["messages"] for r in server.count_requests]
    assert all(m in counted for m in sent) and len(counted) >= 3
    assert all(set(r) == {"model", "messages", "tools", "tool_choice"}
               for r in server.count_requests)


def test_max_cost_stops_before_the_first_unaffordable_request(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    # the input of a request alone, 100 counted tokens, costs $0.0001
    out = evalkit(root, env, "--max-cost", "0.00005", "--no-progress")
    assert out.returncode == 3, out.stderr
    assert "--max-cost $0.000050 reached" in out.stderr
    assert server.requests == []


def without_credentials(root: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` with no Anthropic credential: no ``ANTHROPIC_*`` variable, and an empty
    ``HOME`` (so no credentials profile under ``~/.config/anthropic`` either)."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    return {**{k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")},
            "HOME": str(home)}


@pytest.mark.parametrize("limits", [["--max-calls", "2"], ["--max-cost", "0.001"], []])
def test_without_credentials_evalkit_run_stops_once_before_any_request(
        project: tuple[Path, MessagesAPIServer, dict[str, str]], limits: list[str]) -> None:
    root, server, env = project
    bare = without_credentials(root, env)
    out = evalkit(root, bare, *limits, "--no-progress")
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no Anthropic API credentials" in errors[0]
    assert "set ANTHROPIC_API_KEY" in errors[0] and "client=" in errors[0]
    # one message for the run, not one per case, and no request reported as sent
    assert "failed on case" not in out.stdout + out.stderr
    assert "request(s) sent" not in out.stderr
    assert server.requests == [] and server.count_requests == []
    # a dry run needs no credentials
    dry = evalkit(root, bare, "--dry-run", "--no-progress")
    assert dry.returncode == 0, dry.stderr
    assert f"0 grade(s) cached, {N_CASES} would be requested" in dry.stdout
    # the stopped run resumes once a key is set
    resumed = evalkit(root, env, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == N_CASES


def test_a_refused_api_key_stops_evalkit_run_after_one_request(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    server.answer = lambda req: (401, error_body("authentication_error", "invalid x-api-key"),
                                 {})
    out = evalkit(root, env, "--max-calls", "4", "-j", "1", "--no-progress")
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "refused the credentials (401" in errors[0]
    assert "failed on case" not in out.stdout + out.stderr
    assert len(server.requests) == 1


def test_a_judge_that_refused_every_reply_exits_4_even_with_allow_metric_errors(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, server, env = project
    server.answer = lambda req: text_reply("I will not grade this.", model="claude-test")
    out = evalkit(root, env, "--allow-metric-errors", "--no-progress")
    assert out.returncode == 4, out.stderr
    assert len(server.requests) == N_CASES
    lines = out.stdout.splitlines()
    assert f"helpfulness       n/a  (scored on 0 of {N_CASES} cases; {N_CASES} errors)" in lines
    assert f"helpfulness: scored on 0 of {N_CASES} cases; {N_CASES} errors:" in lines
    assert "the reply has no record_grade tool call (stop_reason='end_turn')" in out.stdout
    assert out.stderr.splitlines()[-1] == (
        f"error: metric helpfulness scored no case: it failed on all {N_CASES} it was "
        "given; a metric that measured nothing exits 4 even with --allow-metric-errors")
def test_the_first_example_of_the_judge_docs_runs_as_a_local_plugin(tmp_path: Path) -> None:
    # The example registers with evalkit.register_metric when the module is imported,
    # during plugin discovery; the run must not wait for the discovery it is part of.
    docs = Path(__file__).resolve().parents[3] / "docs" / "judge.md"
    example = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), re.S)[0]
    (tmp_path / "judge_example.py").write_text(example, encoding="utf-8")
    (tmp_path / "echo_target.py").write_text(
        "from evalkit.data.targets import CallableTarget\n\n\ndef make():\n"
        "    return CallableTarget(lambda case: 'an answer', name='echo')\n")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''
        [tool.evalkit]
        local_plugins = ["judge_example"]
        goldens = "cases.jsonl"
        target = {factory = "echo_target:make"}
        metrics = ["correctness"]
        output = "runs/judged.jsonl"
        '''))
    (tmp_path / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": f"question {i}"}) + "\n" for i in range(3)))
    with MessagesAPIServer(lambda req: tool_reply(4, model="claude-haiku-4-5")) as server:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "EVALKIT_PLUGINS"))}
        env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key"})
        out = evalkit(tmp_path, env, "--no-progress")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(x) for x in (tmp_path / "runs" / "judged.jsonl").read_text().splitlines()
            if json.loads(x)["type"] == "row"]
    assert [r["metrics"] for r in rows] == [{"correctness": 4.0}] * 3
    assert len(server.requests) == 3 and (tmp_path / ".evalkit" / "judge-cache.sqlite").exists()


def test_max_cost_holds_against_a_judge_reporting_zero_usage(
        project: tuple[Path, MessagesAPIServer, dict[str, str]]) -> None:
    root, _, env = project
    (root / "pyproject.toml").write_text(
        textwrap.dedent(PYPROJECT).replace("max_concurrency = 3", "max_concurrency = 1"))
    # every reply reports 0 input and 0 output tokens: not a cost, so each is charged its
    # worst case (over $0.0005 of output alone); the first request's counted worst case
    # (100 input and 100 output tokens, $0.0006) fits $0.0009, a second cannot
    zero = tool_reply(3, model="claude-test", input_tokens=0, output_tokens=0)
    with MessagesAPIServer(lambda req: zero) as server:
        out = evalkit(root, {**env, "JUDGE_URL": server.base_url},
                      "--max-cost", "0.0009", "--no-progress")
    assert out.returncode == 3, out.stderr
    assert "--max-cost $0.000900 reached" in out.stderr
    assert len(server.requests) == 1
