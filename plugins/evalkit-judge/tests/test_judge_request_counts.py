"""Every HTTP attempt of a judge request is counted, retries included: ``--max-calls``
admits no retry past the limit, and the printed summary and the run header count what
the server received.

``evalkit run`` runs in a subprocess, as a user would run it, with a judge on the
``openai`` provider against :class:`~evalkit_judge.testing.ChatCompletionsServer` on
127.0.0.1, which counts every request it receives (a connection reset too).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge.testing import ChatCompletionsServer, Drip, Reset, openai_error_body

N_CASES = 3

PLUGIN = '''
import os
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit.data.targets import CallableTarget
from evalkit_judge import LLMJudge

judge = LLMJudge(
    "Grade the answer.", model="judge-small", provider="openai", max_tokens=100,
    base_url=os.environ["JUDGE_URL"], retries=2, timeout=float(os.environ["JUDGE_TIMEOUT"]),
    prices={"judge-small": (1.0, 5.0)},
)


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("correctness", judge, higher_is_better=True)]


def make_target():
    return CallableTarget(lambda case: "an answer to " + case.query, name="echo")
'''

PYPROJECT = '''
[tool.evalkit]
local_plugins = ["counted_project"]
goldens = "cases.jsonl"
target = {factory = "counted_project:make_target"}
metrics = ["correctness"]
output = "runs/counted.jsonl"
max_concurrency = 2
'''

# each failure mode answers every request; a 429/5xx asks for a 10 ms wait
MODES: dict[str, Any] = {
    "reset": Reset(),
    "500": (500, openai_error_body("boom", "server_error"), {"retry-after-ms": "10"}),
    "429": (429, openai_error_body("slow down"), {"retry-after-ms": "10"}),
    "drip": Drip(declared=1000, interval_s=0.1),
}


def run(root: Path, server: ChatCompletionsServer, *args: str, timeout_s: str = "5",
        n_cases: int = N_CASES) -> subprocess.CompletedProcess[str]:
    (root / "counted_project.py").write_text(textwrap.dedent(PLUGIN))
    (root / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    (root / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": f"question {i}"}) + "\n" for i in range(n_cases)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update({"JUDGE_URL": server.api_base, "JUDGE_TIMEOUT": timeout_s,
                "PYTHONPATH": str(root), "COLUMNS": "200"})
    return subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           "run", "--no-progress", "--overwrite", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def header(root: Path) -> dict[str, Any]:
    first = (root / "runs" / "counted.jsonl").read_text().splitlines()[0]
    return dict(json.loads(first))


def printed(out: str) -> tuple[int, int]:
    found = re.search(r"judge: (\d+) request\(s\) sent \((\d+) failed\)", out)
    assert found, out
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_every_attempt_is_counted_where_the_server_counted_it(tmp_path: Path,
                                                                mode: str) -> None:
    answer = MODES[mode]
    # two cases: a third failing the same way would stop the judge (evalkit_judge.systemic)
    cases = 2
    with ChatCompletionsServer(lambda req: answer) as server:
        done = run(tmp_path, server, timeout_s="0.5" if mode == "drip" else "5",
                   n_cases=cases)
        received = len(server.requests)
    out = done.stdout + done.stderr
    assert received == cases * 3, out  # each case: the request and its 2 retries
    assert printed(out) == (received, received)
    totals = header(tmp_path)["details"]["correctness"]
    assert (totals["requests"], totals["failed"], totals["retried"]) == (received, cases,
                                                                       received - cases)
    assert totals["requested"] == 0  # no reply was billed
    assert f"{received - cases} by metric 'correctness'" in out  # the retried: line


@pytest.mark.parametrize("mode", ["reset", "500"])
def test_max_calls_counts_retries_and_sends_none_past_the_limit(tmp_path: Path,
                                                                 mode: str) -> None:
    answer = MODES[mode]
    with ChatCompletionsServer(lambda req: answer) as server:
        done = run(tmp_path, server, "--max-calls", "2")
        received = len(server.requests)
    assert done.returncode == 3, done.stderr
    assert received == 2
    assert printed(done.stdout + done.stderr) == (2, 2)
    assert "--max-calls 2 reached" in done.stderr


def test_retries_then_a_grade_count_every_attempt(tmp_path: Path) -> None:
    failure = MODES["500"]
    with ChatCompletionsServer(script=[failure, failure]) as server:
        done = run(tmp_path, server)
        received = len(server.requests)
    assert done.returncode == 0, done.stderr
    assert received == N_CASES + 2
    assert printed(done.stdout + done.stderr) == (received, 2)
    totals = header(tmp_path)["details"]["correctness"]
    assert (totals["requests"], totals["retried"], totals["requested"]) == (received, 2,
                                                                          N_CASES)


def test_run_json_stopped_by_max_calls_prints_its_status_and_why(tmp_path: Path) -> None:
    with ChatCompletionsServer(lambda req: MODES["reset"]) as server:
        done = run(tmp_path, server, "--max-calls", "2", "--json")
    assert done.returncode == 3, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "stopped" and document["exit_code"] == 3
    assert "--max-calls 2 reached" in document["reason"]
    assert document["spending"]["requests"] == 2


def test_run_json_that_fails_prints_a_status_document(tmp_path: Path) -> None:
    with ChatCompletionsServer() as server:
        run(tmp_path, server)  # writes the project
        (tmp_path / "cases.jsonl").write_text('{"id": "c1"}\n{"id": "c1"}\n')
        bad = subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                              "run", "--json", "--no-progress", "--overwrite"], cwd=tmp_path,
                             env={**os.environ, "JUDGE_URL": server.api_base,
                                  "JUDGE_TIMEOUT": "5", "PYTHONPATH": str(tmp_path)},
                             capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2, bad.stderr
    document = json.loads(bad.stdout)
    assert (document["status"], document["exit_code"]) == ("error", 2)
    assert any(line.startswith("error:") for line in document["messages"]), document


def test_the_anthropic_sdk_retries_are_counted_and_stopped_at_the_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit_judge import Budget, BudgetExhausted, LLMJudge, use_budget
    from evalkit_judge.testing import MessagesAPIServer, error_body

    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    failure = (500, error_body("api_error", "internal error"), {"retry-after-ms": "10"})
    with MessagesAPIServer(lambda req: failure) as server, \
            use_budget(Budget(max_calls=2)) as budget:
        the_judge = LLMJudge("Is it right?", model="claude-test", base_url=server.base_url,
                             client=None, timeout=5.0, max_retries=4)
        with pytest.raises(BudgetExhausted, match="--max-calls 2 reached"):
            the_judge(TargetResponse(text="x"), GoldenCase("c1", "q"))
        received = len(server.requests)
    assert received == 2  # the SDK's third attempt was not sent
    assert (budget.calls, budget.failed_calls, budget.in_flight) == (2, 2, 0)
