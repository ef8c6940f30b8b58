"""The judge's retries (``max_retries``, done by the ``anthropic`` SDK): a 5xx is retried,
the count is bounded and checked, and the requests sent again are counted on the grade,
in the run's totals and in the summary of ``evalkit run``.

The real SDK talks to a local imitation of the Messages API on 127.0.0.1 that answers
500 a given number of times, then grades; the server counts what it received.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import JudgeError, LLMJudge
from evalkit_judge.testing import MessagesAPIServer, error_body, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse

CASE = GoldenCase("c1", "what is alpha")
RESPONSE = TargetResponse(text="alpha is a letter")
# the SDK waits retry-after-ms when an answer gives it: 10 ms keeps the test quick
FAILURE = (500, error_body("api_error", "internal error"), {"retry-after-ms": "10"})


def judge(server: MessagesAPIServer, **kw: Any) -> LLMJudge:
    return LLMJudge("Is it right?", model="claude-test", base_url=server.base_url,
                    client=None, timeout=5.0, **kw)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


def resent(server: MessagesAPIServer) -> int:
    """The requests the server received marked by the SDK as a retry."""
    return sum(1 for h in server.headers if int(h.get("x-stainless-retry-count", 0)) > 0)


def test_two_500s_then_a_grade_with_two_retries_counted_on_the_grade() -> None:
    with MessagesAPIServer(lambda req: tool_reply(4), script=[FAILURE, FAILURE]) as server:
        the_judge = judge(server, max_retries=2)
        assert the_judge(RESPONSE, CASE) == 4.0
    assert len(server.requests) == 3 and resent(server) == 2
    details = the_judge.details("c1")
    assert details is not None and details["retries"] == 2
    assert LLMJudge.summarize_details([details, None])["retried"] == 2


def test_a_grade_without_retries_has_no_retries_key() -> None:
    with MessagesAPIServer(lambda req: tool_reply(4)) as server:
        the_judge = judge(server)
        the_judge(RESPONSE, CASE)
    details = the_judge.details("c1")
    assert details is not None and "retries" not in details
    assert LLMJudge.summarize_details([details])["retried"] == 0


def test_when_the_retries_run_out_the_error_says_how_many_were_made() -> None:
    with MessagesAPIServer(lambda req: tool_reply(4), script=[FAILURE, FAILURE]) as server, \
            pytest.raises(JudgeError) as info:
        judge(server, max_retries=1)(RESPONSE, CASE)
    assert len(server.requests) == 2
    assert str(info.value).startswith(
        "judge 'claude-test', case 'c1': the request failed after 1 retry (InternalServerError")
    with MessagesAPIServer(lambda req: tool_reply(4), script=[FAILURE]) as server, \
            pytest.raises(JudgeError) as info:
        judge(server, max_retries=0)(RESPONSE, CASE)
    assert len(server.requests) == 1
    assert "the request failed (InternalServerError" in str(info.value)


@pytest.mark.parametrize("value", [-1, 11, True, 2.0, "3"])
def test_max_retries_outside_0_to_10_is_refused(value: object) -> None:
    with pytest.raises(ValueError) as info:
        LLMJudge("Is it right?", model="claude-test", max_retries=value)  # type: ignore[arg-type]
    assert str(info.value) == f"max_retries must be an integer from 0 to 10, got {value!r}"


PLUGIN = '''
import os
from evalkit import register_metric
from evalkit.data.targets import CallableTarget
from evalkit_judge import LLMJudge

judge = LLMJudge("Does the answer address the query?", model="claude-test",
                 base_url=os.environ["JUDGE_URL"], max_retries=3, timeout=5.0)
register_metric("helpfulness", higher_is_better=True)(judge)


def make_target():
    return CallableTarget(lambda case: "an answer to " + case.query, name="echo")
'''


def test_evalkit_run_reports_the_requests_the_judge_sent_again(tmp_path: Path) -> None:
    (tmp_path / "judged.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''
        [tool.evalkit]
        local_plugins = ["judged"]
        goldens = "cases.jsonl"
        target = {factory = "judged:make_target"}
        metrics = ["helpfulness"]
        output = "runs/judged.jsonl"
        max_concurrency = 1
        '''))
    (tmp_path / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": f"question {i}"}) + "\n" for i in range(4)))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "EVALKIT_PLUGINS"))}
    env["ANTHROPIC_API_KEY"] = "test-key"
    # the first grade meets two 500s, the third one more
    answers: list[Any] = [FAILURE, FAILURE, tool_reply(3), tool_reply(3), FAILURE]
    with MessagesAPIServer(lambda req: tool_reply(3), script=answers) as server:
        env["JUDGE_URL"] = server.base_url
        done = subprocess.run(
            [sys.executable, "-c", "from evalkit.cli import main; main()", "run",
             "--no-progress", "--json"], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 4 + 3 and resent(server) == 3
    summary = json.loads(done.stdout)
    assert summary["retried_requests"] == {"target": 0, "helpfulness": 3}
    rows = [json.loads(x) for x in (tmp_path / "runs" / "judged.jsonl").read_text()
            .splitlines()]
    header = rows[0]
    assert header["details"]["helpfulness"]["retried"] == 3
    assert sorted(r["details"]["helpfulness"].get("retries", 0) for r in rows
                  if r["type"] == "row") == [0, 0, 1, 2]


def test_a_request_sends_no_retry_once_other_requests_stopped_the_judge() -> None:
    """Other requests failing the same way stop the judge (:mod:`evalkit_judge.systemic`)
    while this one waits to retry: it sends no retry and ends with the stop, instead of
    retrying ``max_retries`` times (a command stopping on a closed port waited for it)."""
    from evalkit_judge.budget import JudgeUnavailable
    from evalkit_judge.systemic import SYSTEMIC_FAILURES

    from evalkit.execute.scoring import RunAborted

    judges: list[LLMJudge] = []

    def answer(request: dict[str, Any]) -> Any:
        for _ in range(SYSTEMIC_FAILURES):  # what three other requests would report
            judges[0]._failures.failure(ConnectionRefusedError("ConnectError: refused"),
                                        "another request failed")
        return FAILURE

    with MessagesAPIServer(answer) as server:
        judges.append(judge(server, max_retries=4))
        with pytest.raises(RunAborted) as stopped:
            judges[0](RESPONSE, CASE)
        assert len(server.requests) == 1
        assert isinstance(stopped.value.error, JudgeUnavailable)
