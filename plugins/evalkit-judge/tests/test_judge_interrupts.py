"""Ctrl-C and SIGTERM of the commands that call a judge (``evalkit pairwise``, ``evalkit
rescore``, ``evalkit run`` of an async target, whose grades are asked from threads) while
its requests hang: real ``evalkit`` subprocesses, real signals, and a
judge on 127.0.0.1 that answers the first requests and then holds every later one
without answering (for longer than the test: the judge's ``timeout`` is 600 s). The
command must exit 130 with its ``--json`` document, and the grades or verdicts received
before the signal stay in the judge's cache: the same command again asks only for the
others."""

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
from evalkit_judge.testing import MessagesAPIServer, Reset, tool_reply, verdict_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import load_goldens
from evalkit.data.targets import TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

pytestmark = pytest.mark.schedule_first  # subprocesses waiting out a grace period

N_CASES = 5
ANSWERED = 3  # requests answered before the judge hangs
#: how long a stopped command may take (its grace period is 10 s; the hanging judge
#: would hold it for 600 s): no wall-clock threshold, a bound that load cannot reach
EXIT_BOUND_S = 60

PLUGIN = '''
import os
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec
from evalkit_judge import LLMJudge

judge = LLMJudge(
    "The more complete answer is better.", model="claude-test", max_tokens=100,
    base_url=os.environ["JUDGE_URL"], max_retries=0, timeout=600.0,
    cache_path=os.environ["JUDGE_CACHE"], prices={"claude-test": (1.0, 5.0)},
)


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("preference", judge, higher_is_better=True)]


def make_async():
    from evalkit.data.targets import CallableTarget, TargetResponse

    async def answer(case):
        return TargetResponse(text=f"an answer to {case.query}")
    return CallableTarget(answer, name="async-answers")
'''

CONFIG = """\
name: async-run
goldens: cases.jsonl
target: {factory: "judged_project:make_async"}
metrics: [preference]
output: run.jsonl
max_concurrency: 2
"""

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
PAIRWISE = ["pairwise", "short.jsonl", "long.jsonl", "--judge", "preference",
            "--max-concurrency", "2", "--json"]
RESCORE = ["rescore", "short.jsonl", "-m", "preference", "-o", "rescored.jsonl", "--json"]
RUN = ["run", "evalkit.yaml", "--no-progress", "--json"]
#: command -> (its first arguments, those of the rerun, its requests in all, its requests
#: in flight when the judge hangs)
COMMANDS = {"pairwise": (PAIRWISE, PAIRWISE, N_CASES * 2, 2),
            "rescore": (RESCORE, RESCORE, N_CASES, 1),
            "run": (RUN, [*RUN, "--resume"], N_CASES, 2)}


class Text:
    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse(text=f"{self.text} ({case.query})")


def answer(request: dict[str, Any]) -> dict[str, Any]:
    content = json.dumps(request["messages"])
    if "answer_b" in content:  # a pairwise verdict: the longer answer wins
        return verdict_reply("B" if "<answer_b>\\nlonger" in content else "A",
                             model="claude-test")
    return tool_reply(4, model="claude-test")


class Judge:
    """The judge's server: answers the first :data:`ANSWERED` requests, then holds each
    later one until the test ends (or :meth:`recover` is called)."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.hanging = True
        self.server = MessagesAPIServer(self._answer)

    def _answer(self, request: dict[str, Any]) -> Any:
        if self.hanging and len(self.server.requests) > ANSWERED:
            self.released.wait(600)  # accepted, never answered
            return 200, Reset(), {}  # the client is gone: hang up
        return answer(request)

    def recover(self) -> None:
        self.hanging = False


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, Judge, dict[str, str]]]:
    (tmp_path / "judged_project.py").write_text(textwrap.dedent(PLUGIN))
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    (tmp_path / "pyproject.toml").write_text('[tool.evalkit]\nlocal_plugins = '
                                             '["judged_project"]\n')
    goldens = tmp_path / "cases.jsonl"
    goldens.write_text("".join(json.dumps({"id": f"c{i}", "query": f"question {i}"}) + "\n"
                               for i in range(N_CASES)))
    gset = load_goldens(goldens)
    with use_registry(plugins=False):
        for name, text in (("short", "short"), ("long", "longer answer")):
            evaluate(Text(name, text), gset, [], progress=False, name=name,
                     artifact=tmp_path / f"{name}.jsonl")
    judge = Judge()
    with judge.server as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update({"JUDGE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key",
                    "JUDGE_CACHE": str(tmp_path / "judge.sqlite"),
                    "PYTHONPATH": str(tmp_path), "COLUMNS": "200"})
        try:
            yield tmp_path, judge, env
        finally:
            judge.released.set()  # the held handlers end, so the server can stop


@pytest.mark.parametrize(("command", "signals"), [
    ("pairwise", [signal.SIGINT]),
    ("pairwise", [signal.SIGINT, signal.SIGINT]),
    ("pairwise", [signal.SIGTERM]),
    ("rescore", [signal.SIGINT]),
    ("rescore", [signal.SIGTERM]),
    ("run", [signal.SIGINT]),
    ("run", [signal.SIGTERM]),
], ids=["pairwise-SIGINT", "pairwise-SIGINT-twice", "pairwise-SIGTERM", "rescore-SIGINT",
        "rescore-SIGTERM", "run-async-SIGINT", "run-async-SIGTERM"])
def test_a_signal_stops_the_command_while_the_judge_hangs_and_keeps_what_it_received(
        project: tuple[Path, Judge, dict[str, str]], command: str,
        signals: list[int]) -> None:
    root, judge, env = project
    args, rerun, total, in_flight = COMMANDS[command]
    proc = subprocess.Popen([*EVALKIT, *args], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            # as a shell starts it: SIGINT raises KeyboardInterrupt
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + EXIT_BOUND_S
    # every worker held: each stored its earlier replies before sending its next request
    while len(judge.server.requests) < ANSWERED + in_flight \
            and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert len(judge.server.requests) == ANSWERED + in_flight, proc.communicate()
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.5)
    try:
        stdout, stderr = proc.communicate(timeout=EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"evalkit {command} still running {EXIT_BOUND_S} s after "
                    f"{len(signals)} signal(s): {proc.communicate()}")
    assert proc.returncode == 130, stderr
    document = json.loads(stdout)
    assert document["status"] == "interrupted" and document["exit_code"] == 130
    if command != "run":  # (the run's line counts its cases, not its judge's requests)
        assert f"{in_flight} call(s) still running were abandoned" in stderr
    if len(signals) == 2:
        assert "interrupted again:" in stderr
    assert "again" in document["messages"][-1] or "--resume" in document["messages"][-1]
    assert not (root / "rescored.jsonl").exists()
    assert len(GradeCache(root / "judge.sqlite")) == ANSWERED

    paid = {json.dumps(r, sort_keys=True) for r in judge.server.requests[:ANSWERED]}
    before = len(judge.server.requests)
    judge.recover()
    done = subprocess.run([*EVALKIT, *rerun], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    again = [json.dumps(r, sort_keys=True) for r in judge.server.requests[before:]]
    assert len(again) == total - ANSWERED and not paid & set(again)
