"""MLflow credentials (``MLFLOW_TRACKING_TOKEN``, ``MLFLOW_TRACKING_USERNAME`` and
``MLFLOW_TRACKING_PASSWORD``) echoed back by a tracking server on 127.0.0.1 that refuses
them: ``evalkit compare --report mlflow:...`` in a subprocess prints the refusal, on
standard error, and nowhere in the ``--json`` document, with the credential masked in each form it
was sent (the token, the password, and the base64 of ``user:password`` that HTTP Basic
authentication sends)."""

from __future__ import annotations

import base64
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalkit
from evalkit.data.results import RunResult

pytest.importorskip("mlflow", reason="the tracking client (evalkit-mlflow's dependency)")

TOKEN = "mlfTOKENsecret99887766"
USER, PASSWORD = "bob", "pwSECRETbasic4455"


class Echo(http.server.BaseHTTPRequestHandler):
    """Answers 403 with the credential it got, without its scheme word, in the message."""

    def do_GET(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        credential = str(self.headers.get("Authorization")).partition(" ")[2]
        body = json.dumps({"error_code": "PERMISSION_DENIED",
                           "message": f"bad credential [{credential}]"}).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def runs(tmp_path: Path) -> tuple[Path, Path]:
    qrels = {f"q{i}": {"rel": 1} for i in range(6)}
    first: RunResult = evalkit.evaluate_run({q: {"rel": 2.0, "x": 1.0} for q in qrels},
                                            qrels, ["rr"], name="sys-a")
    second: RunResult = evalkit.evaluate_run({q: {"rel": 1.0, "x": 2.0} for q in qrels},
                                             qrels, ["rr"], name="sys-b")
    return first.save(tmp_path / "a.jsonl"), second.save(tmp_path / "b.jsonl")


@pytest.mark.parametrize("credentials", ["token", "basic"])
def test_a_credential_the_server_echoes_is_masked_on_stderr_and_in_json(
        tmp_path: Path, echo_server: str, credentials: str) -> None:
    a, b = runs(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env.update({"MLFLOW_TRACKING_URI": echo_server, "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"})
    if credentials == "token":
        env["MLFLOW_TRACKING_TOKEN"] = TOKEN
        secrets = [TOKEN]
    else:
        env.update({"MLFLOW_TRACKING_USERNAME": USER, "MLFLOW_TRACKING_PASSWORD": PASSWORD})
        secrets = [PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()]
    done = subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           "compare", str(a), str(b), "--report", "mlflow:exp1", "--json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert "bad credential [<redacted>]" in done.stderr, done.stderr
    json.loads(done.stdout)  # the comparison's document
    for secret in secrets:
        assert secret not in done.stdout and secret not in done.stderr
