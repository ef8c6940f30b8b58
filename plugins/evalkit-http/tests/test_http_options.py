"""HttpTarget's numeric options are checked when the target is built, before any call: a
NaN, infinite, negative, zero (where it cannot be), boolean or non-numeric value is a
``ValueError`` naming the option, and ``evalkit run`` with ``factory: http`` exits 2 with
that one line (no traceback, no call made)."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from evalkit_http.target import HttpTarget

URL = "http://127.0.0.1:9/search"
BAD: list[tuple[str, object]] = [
    ("timeout_s", -1), ("timeout_s", 0), ("timeout_s", math.nan), ("timeout_s", math.inf),
    ("timeout_s", True), ("timeout_s", "5"),
    ("retry_backoff_s", -0.5), ("retry_backoff_s", math.nan), ("retry_backoff_s", math.inf),
    ("max_connections", 0), ("max_connections", -1), ("max_connections", 1.5),
    ("max_connections", True),
    ("max_response_bytes", 0), ("max_response_bytes", -1), ("max_response_bytes", 1e6),
    ("max_raw_bytes", -5), ("max_raw_bytes", math.nan),
    # waits past one hour (evalkit.io.limits.MAX_WAIT_S): a run that never ends
    ("timeout_s", 3600.5), ("timeout_s", 1e9), ("retry_backoff_s", 1e9),
]


@pytest.mark.parametrize(("option", "value"), BAD, ids=[f"{o}={v!r}" for o, v in BAD])
def test_a_bad_numeric_option_is_refused_at_build_time(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^HttpTarget {option} must be .*got "):
        HttpTarget(URL, **{option: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("option", ["retry_after_max_s", "rate_limit_total_s"])
def test_rate_limit_waits_past_an_hour_are_refused(option: str) -> None:
    with pytest.raises(ValueError, match=re.escape(
            f"{option} must be a positive number of seconds, at most 3600 (one hour), got "
            "1000000000.0")):
        HttpTarget(URL, **{option: 1e9})  # type: ignore[arg-type]
    with HttpTarget(URL, **{option: 3600}):  # type: ignore[arg-type]
        pass


def test_the_edges_that_make_sense_are_accepted() -> None:
    with HttpTarget(URL, timeout_s=0.001, retry_backoff_s=0, max_connections=1,
                    max_response_bytes=1, max_raw_bytes=0) as target:
        assert target.timeout_s == 0.001 and target.retry_backoff_s == 0.0
    with HttpTarget(URL, timeout_s=3600, retry_backoff_s=3600) as target:
        assert target.timeout_s == 3600.0
    with HttpTarget(URL, max_raw_bytes=None) as target:
        assert target.max_raw_bytes is None


@pytest.mark.parametrize(("yaml_value", "says"), [
    ("timeout_s: .nan", "timeout_s must be a finite number > 0 (seconds), got nan"),
    ("timeout_s: .inf", "timeout_s must be a finite number > 0 (seconds), got inf"),
    ("retry_backoff_s: -2", "retry_backoff_s must be a finite number >= 0 (seconds), got -2"),
    ("max_connections: 0", "max_connections must be an integer >= 1, got 0"),
    ("timeout_s: 7200", "timeout_s must be at most 3600 seconds (one hour), got 7200"),
])
def test_evalkit_run_exits_2_on_a_bad_option(tmp_path: Path, yaml_value: str,
                                             says: str) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "c1", "query": "q", "expected": ["a"]}\n')
    (tmp_path / "evalkit.yaml").write_text(
        "name: h\ngoldens: cases.jsonl\ntarget:\n  factory: http\n"
        f"  kwargs: {{url: \"{URL}\", {yaml_value}}}\nmetrics: [recall@1]\n"
        "output: out/h.jsonl\n")
    proc = subprocess.run(
        [sys.executable, "-c", "from evalkit.cli import main; main()", "run", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert says in proc.stderr and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()



@pytest.mark.parametrize("name", ["Authorization", "authorization"])
def test_url_credentials_and_an_authorization_header_are_refused_together(name: str) -> None:
    with pytest.raises(ValueError) as raised:
        HttpTarget("http://alice:S3cr3tPW@127.0.0.1:9/search", headers={name: "Bearer t0k"})
    message = str(raised.value)
    assert "user:password@" in message and "Authorization" in message
    assert "S3cr3tPW" not in message and "alice" not in message and "t0k" not in message
    # either one alone is accepted
    HttpTarget("http://alice:S3cr3tPW@127.0.0.1:9/search").close()
    HttpTarget("http://127.0.0.1:9/search", headers={name: "Bearer t0k"}).close()
