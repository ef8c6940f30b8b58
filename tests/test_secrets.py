"""No secret in any file or stream: configured secrets with control characters, at DEBUG,
through the real httpx and anthropic clients against local servers.

``evalkit run`` runs as a user runs it, in a subprocess, with every logger at DEBUG
(``logging.basicConfig`` and ``ANTHROPIC_LOG=debug``, so httpx, httpcore and the SDK's
own httpx2/httpcore2 trace everything). The HTTP target's token (``${VAR}`` in a header,
holding a tab), URL password and query value (holding a control character) and the
judge's API key are all sent, and both servers echo them back in response headers and
bodies; one case gets a non-JSON body quoting the token, whose start the error shows.
Then ``evalkit gate`` writes reports from the artifact. Every stream and every file of
the project (artifact, judge cache, reports) is scanned for each secret in every form it
can take: as is, stripped, escaped as Python and JSON escape it, URL-quoted, and each run
of eight or more printable characters in it (the forms are derived here, independently
of evalkit's own list). Secrets that HTTP cannot send (a CR or LF at the end) are refused
before any request, and the refusal names the setting, not the value.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from evalkit_http.testing import RecordedRequest, Reply, ScriptedServer
from evalkit_judge.testing import MessagesAPIServer, tool_reply

HTTP_TOKEN = "tok-HTTP-SECRET-4242\tend"
URL_PASSWORD = "PW-SECRET-4242"
QUERY_VALUE = "QUERY-SECRET\x01-4242"
JUDGE_KEY = "sk-ant-JUDGE-SECRET-4242"

PLUGIN = '''
import os
from evalkit.hookspecs import hookimpl
from evalkit.specs import MetricSpec
from evalkit_judge import LLMJudge

judge = LLMJudge(
    "Does the answer address the query?", model="claude-test", max_tokens=100,
    base_url=os.environ["JUDGE_URL"], max_retries=0, timeout=5.0,
    cache_path=os.environ["JUDGE_CACHE"], prices={"claude-test": (1.0, 5.0)},
)


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("helpfulness", judge, higher_is_better=True)]
'''

CHECKS = "checks:\n  - id: helpful\n    metric: helpfulness\n    op: '>='\n    threshold: 1\n"


def shown_forms(secret: str) -> set[str]:
    """Every form in which ``secret`` could appear in text."""
    forms = {secret, secret.strip(), secret.encode("unicode_escape").decode(),
             json.dumps(secret)[1:-1], quote(secret, safe=""), quote(secret)}
    forms.update(re.findall(r"[\x21-\x7e]{8,}", secret))
    return {f for f in forms if len(f) >= 8}


def leaks(texts: Iterable[tuple[str, str]], secrets: Iterable[str]) -> list[str]:
    found: list[str] = []
    for where, text in texts:
        for secret in secrets:
            found.extend(f"{where}: {form!r}" for form in shown_forms(secret) if form in text)
    return found


#: the project's own input files (the config holds the URL with its credentials)
INPUTS = {"pyproject.toml", "secret_project.py", "cases.jsonl", "checks.yaml"}


def files_of(folder: Path) -> list[tuple[str, str]]:
    """Every file evalkit wrote in the project (the inputs written here excepted)."""
    return [(str(p), p.read_bytes().decode("latin-1")) for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.name not in INPUTS]


def evalkit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = ("import logging, sys; logging.basicConfig(level=logging.DEBUG); "
            "from evalkit.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def http_answer(request: RecordedRequest, index: int) -> Reply:
    """c1: a 503 quoting the token, then (retried) a good answer; c2: a 404 quoting it;
    c3: a 200 whose body is not JSON and starts with it; others: good answers that echo
    it in a header and in the body."""
    token = request.headers.get("x-api-key", "")
    echo = {"X-Echo": token, "X-Echo-Auth": request.headers.get("authorization", "")}
    case_id = request.json()["id"]
    if case_id == "c1" and index == 1:
        return Reply(503, {"error": f"overloaded, token {token}"}, headers=echo)
    if case_id == "c2":
        return Reply(404, {"error": f"bad token {token}"}, headers=echo)
    if case_id == "c3":
        return Reply(200, f"<html>{token}</html>".encode(), headers=echo)
    return Reply(200, {"ranked_ids": ["d1"], "text": "an answer", "echo": token},
                 headers=echo)


def project(tmp_path: Path, http_url: str, judge_url: str, token: str, key: str
            ) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "secret_project.py").write_text(textwrap.dedent(PLUGIN))
    url = http_url.replace("http://", f"http://user:{URL_PASSWORD}@") + \
        f"search?api_key={quote(QUERY_VALUE)}&k=2"
    (folder / "pyproject.toml").write_text(textwrap.dedent(f'''
        [tool.evalkit]
        local_plugins = ["secret_project"]
        goldens = "cases.jsonl"
        metrics = ["recall@1", "helpfulness"]
        output = "runs/run.jsonl"
        max_concurrency = 1

        [tool.evalkit.target]
        factory = "http"

        [tool.evalkit.target.kwargs]
        url = "{url}"
        timeout_s = 5
        retry_backoff_s = 0
        headers = {{X-Api-Key = "Bearer ${{EVALKIT_SECRET_TOKEN}}"}}
        '''))
    (folder / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": f"q{i}", "expected": ["d1"]}) + "\n"
        for i in range(4)))
    (folder / "checks.yaml").write_text(CHECKS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update({"JUDGE_URL": judge_url, "ANTHROPIC_API_KEY": key, "ANTHROPIC_LOG": "debug",
                "JUDGE_CACHE": str(folder / "judge.sqlite"), "PYTHONPATH": str(folder),
                "EVALKIT_SECRET_TOKEN": token, "COLUMNS": "200"})
    return folder, env


SECRETS = [HTTP_TOKEN, f"Bearer {HTTP_TOKEN}", URL_PASSWORD, QUERY_VALUE, JUDGE_KEY,
           base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()]


def test_no_secret_reaches_any_stream_or_file_at_debug(tmp_path: Path) -> None:
    def judge_answer(request: dict[str, Any]) -> Any:
        reply = tool_reply(4, reason=f"graded; the key was {JUDGE_KEY}", model="claude-test")
        return 200, reply, {"x-echo": JUDGE_KEY}

    with ScriptedServer(handler=http_answer) as http, \
            MessagesAPIServer(judge_answer) as judge:
        folder, env = project(tmp_path, http.url, judge.base_url, HTTP_TOKEN, JUDGE_KEY)
        run = evalkit(folder, env, "run")
        gate = evalkit(folder, env, "gate", "-c", "checks.yaml", "-r", "runs/run.jsonl",
                       "--report", f"json:{folder / 'gate.json'}",
                       "--report", f"markdown:{folder / 'gate.md'}")
    # the secrets were really used
    assert {r.headers["x-api-key"] for r in http.requests} == {f"Bearer {HTTP_TOKEN}"}
    basic = base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()
    assert {r.headers["authorization"] for r in http.requests} == {f"Basic {basic}"}
    assert all("api_key=QUERY-SECRET%01-4242" in r.path for r in http.requests)
    assert judge.headers and all(any(JUDGE_KEY in v for v in h.values()) for h in judge.headers)
    # ... the run did what it says, at DEBUG
    assert run.returncode == 1, run.stderr[-2000:]  # c2 (404) and c3 (not JSON) errored
    assert "case 'c3': the response body is not JSON (starts '<html><redacted></html>')" \
        in run.stdout
    for logger in ("httpcore.http11", "httpx", "anthropic._base_client", "httpcore2.http11"):
        assert f":{logger}:" in run.stderr, logger
    assert "<redacted>" in run.stderr
    assert gate.returncode == 2, gate.stderr  # a gate on an incomplete run is an error
    assert (folder / "gate.json").exists() and (folder / "gate.md").exists()
    # ... and no secret is anywhere
    streams = [("run stdout", run.stdout), ("run stderr", run.stderr),
               ("gate stdout", gate.stdout), ("gate stderr", gate.stderr)]
    written = files_of(folder)
    assert {Path(p).name for p, _ in written} >= {"run.jsonl", "judge.sqlite", "gate.json",
                                                  "gate.md"}
    assert leaks(streams + written, SECRETS) == []


@pytest.mark.parametrize(("token", "key", "named"), [
    ("tok-CRLF-SECRET-4242\r", JUDGE_KEY, "header 'X-Api-Key': its value holds a "
     "carriage return (CR, \\r) at its end"),
    (HTTP_TOKEN, "sk-ant-LF-SECRET-4242\n", "the api_key (ANTHROPIC_API_KEY unless passed "
     "to the client) cannot be sent: it holds a line feed (LF, \\n) at its end"),
])
def test_a_secret_http_cannot_send_is_refused_naming_the_setting(
        tmp_path: Path, token: str, key: str, named: str) -> None:
    with ScriptedServer(handler=http_answer) as http, \
            MessagesAPIServer(lambda req: tool_reply(4, model="claude-test")) as judge:
        folder, env = project(tmp_path, http.url, judge.base_url, token, key)
        run = evalkit(folder, env, "run")
    assert run.returncode == 2, run.stderr[-2000:]
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and named in errors[0]
    assert judge.requests == []  # the judge never sent its bad key
    if token.endswith("\r"):
        assert http.requests == []  # detected when the target was built
    streams = [("stdout", run.stdout), ("stderr", run.stderr)]
    assert leaks(streams + files_of(folder), [token, key, URL_PASSWORD, QUERY_VALUE]) == []


def test_the_sdk_own_loggers_and_exception_chain_are_masked() -> None:
    """The real anthropic client, handed a key that ends in a line feed (as read from a
    file), fails in its HTTP stack with an error quoting the whole key, and logs that
    error with its traceback at DEBUG; once the key is registered, neither shows it."""
    import anthropic

    from evalkit.redaction import register_secret, scrub_exception

    key = "sk-ant-SDK-SECRET-4242\n"
    register_secret(key)
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with MessagesAPIServer(lambda req: tool_reply(4)) as server:
            client = anthropic.Anthropic(api_key=key, base_url=server.base_url,
                                         max_retries=1)
            with pytest.raises(anthropic.APIConnectionError) as info:
                client.messages.create(model="m", max_tokens=5,
                                       messages=[{"role": "user", "content": "hi"}])
            assert server.requests == []  # h11 refused to send it
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    logged = buffer.getvalue()
    assert "Illegal header value" in logged and "Encountered Exception" in logged
    assert "httpcore2" in logged
    chain = "".join(traceback.format_exception(scrub_exception(info.value)))
    assert "LocalProtocolError" in chain and "<redacted>" in chain
    assert leaks([("log", logged), ("chain", chain)], [key]) == []
