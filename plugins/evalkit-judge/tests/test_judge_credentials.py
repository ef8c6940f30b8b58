"""Credentials: a judge that cannot authenticate stops the run once, before any request
when it has no credentials, after the first refusal (401) otherwise; neither is a case
error, and neither counts as a request sent.

The real ``anthropic`` SDK runs against a local imitation of the Messages API
(127.0.0.1), with every ``ANTHROPIC_*`` variable removed and ``HOME`` pointing at an empty
folder, so no credential of the machine running the tests (environment, or a credentials
profile under ``~/.config/anthropic``) is found.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import (
    Budget,
    GradeNotRequested,
    JudgeError,
    JudgeUnavailable,
    LLMJudge,
)
from evalkit_judge.testing import FakeAnthropic, MessagesAPIServer, error_body, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.scoring import MetricError, RunAborted, resolve_metrics, score_cases
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

ANSWER = TargetResponse(text="Paris")
PRICES = {"claude-test": (1.0, 5.0)}
REFUSED: tuple[int, Any, dict[str, str]] = (
    401, error_body("authentication_error", "invalid x-api-key"), {})


def case(cid: str = "q1") -> GoldenCase:
    return GoldenCase(id=cid, query=f"Capital of France? ({cid})", expected="Paris")


@pytest.fixture
def no_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No credential in the environment nor in the SDK's default config folder (under an
    empty ``HOME``); returns a folder for an ``ANTHROPIC_CONFIG_DIR``, not created."""
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return tmp_path / "anthropic-config"


@pytest.fixture
def server() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer(lambda req: tool_reply(4, model="claude-test")) as srv:
        yield srv


def own_client_judge(srv: MessagesAPIServer, tmp_path: Path, **kw: Any) -> LLMJudge:
    """A judge that builds its own SDK client (no client=)."""
    return LLMJudge("Is the answer correct?", model="claude-test", base_url=srv.base_url,
                    max_retries=0, timeout=5.0, cache_path=tmp_path / "judge.sqlite",
                    prices=PRICES, **kw)


def aborted_error(info: pytest.ExceptionInfo[RunAborted]) -> JudgeUnavailable:
    error = info.value.error
    assert isinstance(error, JudgeUnavailable)
    return error


@pytest.mark.usefixtures("no_credentials")
def test_without_credentials_the_judge_stops_before_its_first_request(
        server: MessagesAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    budget = Budget(max_calls=2, max_cost=1.0)
    judge = own_client_judge(server, tmp_path, budget=budget)
    with pytest.raises(RunAborted) as info:
        judge(ANSWER, case())
    message = str(aborted_error(info))
    assert "no Anthropic API credentials" in message
    assert "ANTHROPIC_API_KEY" in message and "client=" in message
    # nothing was sent, counted (not even the token count of --max-cost) or reported
    assert server.requests == [] and server.count_requests == []
    report = budget.report()
    assert (report["requests"], report["failed_requests"], report["refused_requests"]) == \
        (0, 0, 0)
    assert "0 request(s) sent (0 failed)" in budget.describe()
    # the error is not one case's: score_cases raises it, not a MetricError
    with use_registry(plugins=False) as reg:
        reg.register_metric("correct", higher_is_better=True)(judge)
        with pytest.raises(JudgeUnavailable, match="no Anthropic API credentials"):
            score_cases([ANSWER], [case()], resolve_metrics(["correct"], reg))
    # the client built without credentials was not kept: once a key is set, it grades
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    assert judge(ANSWER, case()) == 4.0
    assert len(server.requests) == 1


@pytest.mark.usefixtures("no_credentials")
def test_evaluate_without_credentials_raises_once_instead_of_erroring_every_case(
        server: MessagesAPIServer, tmp_path: Path) -> None:
    judge = own_client_judge(server, tmp_path)
    invoked: list[str] = []

    def target(c: GoldenCase) -> str:
        invoked.append(c.id)
        return "Paris"

    with use_registry(plugins=False) as reg:
        reg.register_metric("correct", higher_is_better=True)(judge)
        with pytest.raises(JudgeUnavailable, match="no Anthropic API credentials"):
            evaluate(CallableTarget(target), [case(f"q{i}") for i in range(40)], ["correct"],
                     max_concurrency=1, artifact=tmp_path / "run.jsonl", progress=False)
    assert invoked == ["q0"]  # the run stopped at the first case
    assert server.requests == []
    # the answered case is kept for --resume (not a call error), its grade not made
    (row,) = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()[1:]]
    assert (row["id"], row["error"], row["metrics"]) == ("q0", None, {})
    assert "not graded on case 'q0'" in row["metric_errors"]["correct"]


@pytest.mark.usefixtures("no_credentials")
def test_a_dry_run_needs_no_credentials(server: MessagesAPIServer, tmp_path: Path) -> None:
    budget = Budget(dry_run=True)
    judge = own_client_judge(server, tmp_path, budget=budget)
    with pytest.raises(GradeNotRequested):
        judge(ANSWER, case())
    assert budget.report()["would_request"] == 1
    assert server.requests == []


@pytest.mark.usefixtures("no_credentials")
def test_a_passed_sdk_client_without_credentials_is_stopped_too(
        server: MessagesAPIServer, tmp_path: Path) -> None:
    import anthropic  # here, not at collection: the SDK takes seconds to import

    client = anthropic.Anthropic(base_url=server.base_url, max_retries=0)
    judge = LLMJudge("r", model="claude-test", client=client)
    with pytest.raises(RunAborted) as info:
        judge(ANSWER, case())
    assert "no Anthropic API credentials" in str(aborted_error(info))
    assert server.requests == []


def test_a_broken_credentials_profile_stops_the_run_and_sends_nothing(
        server: MessagesAPIServer, tmp_path: Path, no_credentials: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # ANTHROPIC_CONFIG_DIR names a folder without the profile: the SDK accepts it as a
    # credential source and fails only when it comes to send, on this machine
    no_credentials.mkdir()
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(no_credentials))
    budget = Budget(max_calls=3)
    judge = own_client_judge(server, tmp_path, budget=budget)
    with pytest.raises(RunAborted) as info:
        judge(ANSWER, case())
    message = str(aborted_error(info))
    assert "CredentialsError" in message and "default.json" in message
    assert "no request was sent" in message
    assert server.requests == [] and budget.report()["requests"] == 0
    assert budget.report()["failed_requests"] == 0
    # once the profile is written, the same judge builds a new client and grades
    write_profile(no_credentials, "token-0")
    assert judge(ANSWER, case()) == 4.0
    assert server.headers[-1]["authorization"] == "Bearer token-0"
    assert budget.report()["requests"] == 1


def write_profile(config: Path, token: str) -> None:
    """A credentials profile as the SDK reads it: ``<config>/configs/default.json`` and
    ``<config>/credentials/default.json`` (mode 0600)."""
    config.mkdir(exist_ok=True)
    (config / "configs").mkdir()
    (config / "configs" / "default.json").write_text(
        json.dumps({"authentication": {"type": "user_oauth"}}))
    (config / "credentials").mkdir()
    secret = config / "credentials" / "default.json"
    secret.write_text(json.dumps({"access_token": token}))
    secret.chmod(0o600)


@pytest.mark.parametrize("source", ["auth-token", "profile", "client-header"])
def test_every_credential_the_sdk_accepts_is_accepted(
        source: str, server: MessagesAPIServer, tmp_path: Path, no_credentials: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    client: Any = None
    if source == "auth-token":
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-1")
        header, expected = "authorization", "Bearer token-1"
    elif source == "profile":
        write_profile(no_credentials, "token-2")
        monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(no_credentials))
        header, expected = "authorization", "Bearer token-2"
    else:
        import anthropic  # here, not at collection: the SDK takes seconds to import

        client = anthropic.Anthropic(base_url=server.base_url, max_retries=0,
                                     default_headers={"X-Api-Key": "key-3"})
        header, expected = "x-api-key", "key-3"
    judge = LLMJudge("r", model="claude-test", base_url=server.base_url, max_retries=0,
                     client=client)
    assert judge(ANSWER, case()) == 4.0
    assert server.headers[0][header] == expected


def test_a_refused_api_key_stops_the_run_once_and_is_not_counted_as_sent(
        server: MessagesAPIServer, tmp_path: Path, no_credentials: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "revoked-key")
    server.answer = lambda req: REFUSED
    budget = Budget(max_calls=5)
    judge = own_client_judge(server, tmp_path, budget=budget)
    with pytest.raises(RunAborted) as info:
        judge(ANSWER, case("q1"))
    message = str(aborted_error(info))
    assert "refused the credentials (401" in message and "invalid x-api-key" in message
    assert len(server.requests) == 1
    report = budget.report()
    assert (report["requests"], report["failed_requests"], report["refused_requests"]) == \
        (0, 0, 1)
    assert report["spent_usd"] == 0.0
    lines = budget.describe().splitlines()
    assert lines[0].startswith("judge: 0 request(s) sent (0 failed)")
    assert "1 request(s) refused by the API for their credentials (401)" in lines[1]
    # later cases stop at once, without another request
    with pytest.raises(RunAborted):
        judge(ANSWER, case("q2"))
    assert len(server.requests) == 1


def test_evaluate_stops_at_the_first_refusal(server: MessagesAPIServer, tmp_path: Path,
                                             no_credentials: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "revoked-key")
    server.answer = lambda req: REFUSED
    judge = own_client_judge(server, tmp_path)
    with use_registry(plugins=False) as reg:
        reg.register_metric("correct", higher_is_better=True)(judge)
        with pytest.raises(JudgeUnavailable, match=r"refused the credentials \(401"):
            evaluate(CallableTarget(lambda c: "Paris"), [case(f"q{i}") for i in range(10)],
                     ["correct"], max_concurrency=1, progress=False)
    assert len(server.requests) == 1


def test_a_refused_token_count_stops_before_the_grade_request(
        server: MessagesAPIServer, tmp_path: Path, no_credentials: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "revoked-key")
    server.count = lambda req: REFUSED
    # the worst case of the first request does not fit $0.0005, so its input is counted
    budget = Budget(max_cost=0.0005)
    judge = own_client_judge(server, tmp_path, budget=budget, max_tokens=100)
    with pytest.raises(RunAborted) as info:
        judge(ANSWER, case())
    assert "refused the credentials (401" in str(aborted_error(info))
    assert len(server.count_requests) == 1 and server.requests == []
    assert budget.report()["requests"] == 0


class Refusal(Exception):
    status_code = 401


def test_any_client_raising_a_401_is_a_refusal_and_other_failures_stay_case_errors() -> None:
    outcomes: list[Any] = [ConnectionError("reset"), Refusal("bad key")]
    fake = FakeAnthropic(lambda req: outcomes.pop(0))
    budget = Budget(max_calls=5)
    judge = LLMJudge("r", model="m", client=fake, budget=budget)
    with pytest.raises(JudgeError, match="reset") as failed:  # a case error, counted as sent
        judge(ANSWER, case("q1"))
    assert not isinstance(failed.value, JudgeUnavailable)
    with use_registry(plugins=False) as reg:
        reg.register_metric("correct", higher_is_better=True)(judge)
        with pytest.raises(JudgeUnavailable, match="bad key"):
            score_cases([ANSWER], [case("q2")], resolve_metrics(["correct"], reg))
        with pytest.raises(JudgeUnavailable):  # no request after a refusal
            score_cases([ANSWER], [case("q3")], resolve_metrics(["correct"], reg))
    assert fake.call_count == 2
    report = budget.report()
    assert (report["requests"], report["failed_requests"], report["refused_requests"]) == \
        (1, 1, 1)


def test_judge_unavailable_is_a_configuration_error_that_stops_runs() -> None:
    # a ValueError, as the command line reports configuration errors (exit 2), and a
    # JudgeError; carried by RunAborted, which per-case `except Exception` lets through
    assert issubclass(JudgeUnavailable, ValueError) and issubclass(JudgeUnavailable, JudgeError)
    assert not issubclass(RunAborted, Exception)
    assert not issubclass(JudgeUnavailable, MetricError)
