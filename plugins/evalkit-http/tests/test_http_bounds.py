"""Hostile services, each bounded: real 127.0.0.1 servers that drip, stall in their
headers, send oversized or decompression-bomb bodies, reset connections or answer with
illegal headers; and settings that can never work, refused before any call.

The hostile servers never finish on their own (a drip of hours), so a call that ends at
all was cut by its bound: each call runs in a thread the test waits for with a limit far
beyond any bound (a guard against a hang, never a measurement), and no result depends on
the machine's load. Lower bounds follow from the deadlines (an attempt ends at
``timeout_s``, docs/runner.md); how close a case comes to ``2 x timeout_s +
retry_backoff_s`` is measured by benchmarks/bench_http_bounds.py. Expected sizes come from
how the bodies are built here (a gzip body made from 500 MiB of zeros decodes to 500 MiB).
"""

from __future__ import annotations

import gzip
import json
import sys
import tracemalloc
import zlib
from pathlib import Path

import httpx
import pytest
from evalkit_http import HttpTarget
from evalkit_http.bounds import DeadlineBackend
from evalkit_http.target import DEFAULT_MAX_RESPONSE_BYTES
from evalkit_http.testing import Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetError
from evalkit.execute.target_runner import evaluate
from evalkit.testing import returns_within

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

CASE = GoldenCase("q1", "what is alpha")
OK_BODY = {"ranked_ids": ["d1", "d2"]}
#: a guard against a hang: far beyond every bound below, far below every server's drip
HANG_S = 120.0
#: repeats of a dripped body: hours at the drips below, so only a bound ends a call
ENDLESS = 1000


def target(server: ScriptedServer, **kw: object) -> HttpTarget:
    kw.setdefault("retry_backoff_s", 0.0)
    return HttpTarget(server.url + "search", name="svc", **kw)  # type: ignore[arg-type]


def timed_failure(t: HttpTarget) -> tuple[float, str]:
    elapsed, result = returns_within(lambda: t.invoke(CASE), HANG_S)
    assert isinstance(result, TargetError), result
    return elapsed, str(result)


# ------------------------------------------------------------------ the deadline
def test_the_default_transport_enforces_the_deadline_in_its_network_backend() -> None:
    with HttpTarget("http://127.0.0.1:9/") as t:
        assert t.deadline_in_transport
        pool = t._client._transport._pool  # type: ignore[attr-defined]
        assert isinstance(pool._network_backend, DeadlineBackend)


def test_a_dripping_body_is_cut_at_the_deadline_of_each_attempt() -> None:
    # one byte every 0.2 s: no read ever waits 1 s, and the 60,000-byte body takes hours
    drip = Reply(200, b"x" * 60, drip_s=0.2, repeat=ENDLESS)
    with ScriptedServer([drip]) as server, target(server, timeout_s=1.0,
                                                  retry_backoff_s=0.1) as t:
        elapsed, message = timed_failure(t)
    bound = 2 * 1.0 + 0.1  # attempts x attempt deadline + backoff
    assert bound - 0.05 <= elapsed
    assert "timed out after 1 s (the whole attempt" in message and "2 requests" in message
    assert len(server.requests) == 2


def test_without_the_backend_the_deadline_is_checked_between_reads() -> None:
    class Wrapped(httpx.BaseTransport):  # hides the pool: only the chunk check is left
        def __init__(self) -> None:
            self.inner = httpx.HTTPTransport()

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            return self.inner.handle_request(request)

    drip = Reply(200, b"x" * 60, drip_s=0.3, repeat=ENDLESS)
    with ScriptedServer([drip]) as server, \
            target(server, timeout_s=1.0, transport=Wrapped()) as t:
        assert not t.deadline_in_transport
        elapsed, message = timed_failure(t)
    # each attempt: the deadline plus at most one read (one drip interval)
    assert elapsed >= 2 * 1.0
    assert "timed out after 1 s" in message and len(server.requests) == 2


def test_slow_headers_are_cut_at_the_deadline() -> None:
    # the status line and headers at one byte per 50 ms, with a header of 100,000
    # bytes: more than an hour unbounded
    slow = Reply(200, OK_BODY, header_drip_s=0.05, headers={"X-Pad": "p" * 100_000})
    with ScriptedServer([slow]) as server, target(server, timeout_s=0.5) as t:
        elapsed, message = timed_failure(t)
    assert elapsed >= 2 * 0.5 - 0.05
    assert "timed out after 0.5 s" in message and len(server.requests) == 2


def test_a_dripping_server_bounds_a_whole_run(tmp_path: Path) -> None:
    """Three cases against a server that drips: the run ends by max_concurrency rounds
    of the case bound, with every case an error and the run incomplete."""
    drip = Reply(200, b"x" * 100, drip_s=0.1, repeat=ENDLESS)
    cases = GoldenSet([GoldenCase(f"c{i}", "q", expected=["d1"]) for i in range(3)])
    with ScriptedServer([drip]) as server, target(server, timeout_s=0.4,
                                                  retry_backoff_s=0.05) as t:
        elapsed, run = returns_within(lambda: evaluate(
            t, cases, ["recall@1"], max_concurrency=3, progress=False,
            artifact=tmp_path / "run.jsonl"), HANG_S)
    assert isinstance(run, RunResult), run
    assert elapsed >= 2 * 0.4 + 0.05 - 0.05
    assert run.header["status"] == "incomplete" and run.header["errors"] == 3
    assert len(server.requests) == 6  # two attempts of each case


# ------------------------------------------------------------------ the size cap
def test_a_declared_oversized_body_is_refused_without_reading_it() -> None:
    # Content-Length: 52428800, sent 64 KiB every 0.5 s: reading it would take 400 s
    big = Reply(200, b"x" * (1 << 20), repeat=50, drip_s=0.5, drip_bytes=1 << 16)
    with ScriptedServer([big]) as server, target(server) as t:
        _, message = timed_failure(t)
    assert f"declares {50 << 20} bytes, over the cap of {DEFAULT_MAX_RESPONSE_BYTES} bytes " \
        "(max_response_bytes)" in message
    assert "1 request" in message and len(server.requests) == 1  # not retried


def test_an_undeclared_oversized_body_is_cut_at_the_cap() -> None:
    big = Reply(200, b"x" * (1 << 20), repeat=50, chunked=True)  # no Content-Length
    with ScriptedServer([big]) as server, target(server, max_response_bytes=3_000_000) as t:
        _, message = timed_failure(t)
    assert "sent more than 3000000 bytes, over the cap of 3000000 bytes" in message
    assert len(server.requests) == 1


def test_a_body_at_the_cap_is_read() -> None:
    body = json.dumps({"ranked_ids": ["d1"], "pad": "y" * 1000}).encode()
    with ScriptedServer([Reply(200, body, chunked=True)]) as server, \
            target(server, max_response_bytes=len(body)) as t:
        assert list(t.invoke(CASE).ranked_ids) == ["d1"]
    with ScriptedServer([Reply(200, body, chunked=True)]) as server, \
            target(server, max_response_bytes=len(body) - 1) as t:
        _, message = timed_failure(t)
    assert f"over the cap of {len(body) - 1} bytes" in message


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """500 MiB of zeros, gzip level 9: about 510 KB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(1 << 20)
    parts = [packer.compress(zeros) for _ in range(500)]
    parts.append(packer.flush())
    return b"".join(parts)


def test_a_gzip_bomb_is_stopped_at_the_cap_in_bounded_memory(gzip_bomb: bytes) -> None:
    assert len(gzip_bomb) < 600_000  # decodes to 500 MiB = 524288000 bytes
    bomb = Reply(200, gzip_bomb, headers={"Content-Encoding": "gzip"})
    with ScriptedServer([bomb]) as server, target(server) as t:
        tracemalloc.start()
        try:
            _, message = timed_failure(t)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert f"decodes to more than {DEFAULT_MAX_RESPONSE_BYTES} bytes" in message
    assert len(server.requests) == 1
    # the cap, one network chunk and the compressed body in the server's thread; the
    # whole body would be 524288000 bytes (httpx's decoder: ~65 MB per 64 KiB chunk)
    assert peak < 3 * DEFAULT_MAX_RESPONSE_BYTES


def test_gzip_and_deflate_bodies_under_the_cap_are_decoded() -> None:
    body = json.dumps(OK_BODY).encode()
    raw_deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    answers = {
        "gzip": gzip.compress(body),
        "deflate": zlib.compress(body),
        "raw-deflate": raw_deflate.compress(body) + raw_deflate.flush(),
    }
    for name, data in answers.items():
        coding = "gzip" if name == "gzip" else "deflate"
        reply = Reply(200, data, headers={"Content-Encoding": coding})
        with ScriptedServer([reply]) as server, target(server) as t:
            assert list(t.invoke(CASE).ranked_ids) == ["d1", "d2"], name
        assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"


def test_a_deflate_bomb_and_an_unknown_coding_are_case_errors() -> None:
    bomb = zlib.compress(bytes(50 << 20), 9)
    with ScriptedServer([Reply(200, bomb, headers={"Content-Encoding": "deflate"})]) \
            as server, target(server, max_response_bytes=1_000_000) as t:
        _, message = timed_failure(t)
    assert "decodes to more than 1000000 bytes" in message
    with ScriptedServer([Reply(200, b"\x00\x01", headers={"Content-Encoding": "br"})]) \
            as server, target(server) as t:
        _, message = timed_failure(t)
    assert "content-encoding 'br' is not supported" in message
    with ScriptedServer([Reply(200, b"not gzip at all", headers={"Content-Encoding": "gzip"})]) \
            as server, target(server) as t:
        _, message = timed_failure(t)
    assert "the gzip body is corrupt" in message and len(server.requests) == 1


def test_an_oversized_body_is_a_case_error_and_the_run_incomplete(tmp_path: Path) -> None:
    def handler(request: object, index: int) -> Reply:
        if request.json()["id"] == "big":  # type: ignore[attr-defined]
            return Reply(200, b"x" * (1 << 20), repeat=12, chunked=True)
        return Reply(200, OK_BODY)

    cases = GoldenSet([GoldenCase("ok", "a", expected=["d1"]),
                       GoldenCase("big", "b", expected=["d1"])])
    artifact = tmp_path / "run.jsonl"
    with ScriptedServer(handler=handler) as server, target(server) as t:
        run = evaluate(t, cases, ["recall@1"], progress=False, artifact=artifact)
    assert run.header["status"] == "incomplete" and run.header["error_ids"] == ["big"]
    assert artifact.stat().st_size < 20_000  # not a 12 MB row


# ------------------------------------------------------------------ broken answers
def test_a_reset_in_the_middle_of_the_body_is_retried() -> None:
    cut = Reply(raw=b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"ranked_ids\": [")
    with ScriptedServer([cut, Reply(200, OK_BODY)]) as server, target(server) as t:
        assert list(t.invoke(CASE).ranked_ids) == ["d1", "d2"]
    assert len(server.requests) == 2
    with ScriptedServer([cut]) as server, target(server) as t:
        _, message = timed_failure(t)
    assert "transport failure: RemoteProtocolError" in message and "2 requests" in message


def test_illegal_response_headers_are_a_transport_failure() -> None:
    bad = Reply(raw=b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Bad\x01Name: v\r\n\r\n{}")
    with ScriptedServer([bad]) as server, target(server) as t:
        _, message = timed_failure(t)
    assert "transport failure: RemoteProtocolError" in message
    assert len(server.requests) == 2


def test_json_nested_deeper_than_the_bound_is_a_one_line_case_error() -> None:
    deep = Reply(200, b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    with ScriptedServer([deep]) as server, target(server) as t:
        _, message = timed_failure(t)
    assert "the response body is refused: nested more than 100 levels deep" in message
    assert "\n" not in message and "RecursionError" not in message


def test_an_integer_too_long_to_read_is_a_one_line_case_error() -> None:
    huge = Reply(200, b'{"ranked_ids": ["d1"], "n": ' + b"7" * 100_000 + b"}")
    with ScriptedServer([huge]) as server, target(server) as t:
        _, message = timed_failure(t)
    digits = sys.get_int_max_str_digits()
    assert (f"the response body is refused: an integer of more than {digits} digits is "
            "not read (Python's limit for converting integer text)") in message
    assert "\n" not in message and "Exceeds the limit" not in message


# ------------------------------------------------------------------ settings that cannot work
ILLEGAL_VALUES = {
    "Bearer tok-123456789\r": "a carriage return (CR, \\r) at its end",
    "tok-123456789\n": "a line feed (LF, \\n) at its end",
    "tok\x00123456789": "a NUL byte at character 4 of 13",
    " tok-123456789": "a space at its start",
    "tok-123456789\t": "a tab at its end",
    "tok-\x7f123456789": "the control character U+007F at character 5",
}


@pytest.mark.parametrize("value", list(ILLEGAL_VALUES))
def test_an_illegal_header_value_is_refused_when_the_target_is_built(value: str) -> None:
    with ScriptedServer([Reply(200, OK_BODY)]) as server:
        with pytest.raises(ValueError) as info:
            HttpTarget(server.url, headers={"Authorization": value})
        message = str(info.value)
        assert message.startswith("HttpTarget header 'Authorization': its value holds ")
        assert ILLEGAL_VALUES[value] in message and "123456789" not in message
        if "\x7f" not in value:
            # independently: the HTTP stack itself can never send it (a retry is useless);
            # DEL is refused by RFC 9110's grammar (field-vchar), though h11 would send it
            with httpx.Client() as raw, pytest.raises(httpx.LocalProtocolError):
                raw.post(server.url, headers={"Authorization": value}, content=b"{}")
        assert server.requests == []


def test_legal_header_values_with_inner_spaces_and_tabs_are_sent() -> None:
    with ScriptedServer([Reply(200, OK_BODY)]) as server, \
            target(server, headers={"X-A": "a b", "X-B": "a\tb", "X-C": ""}) as t:
        t.invoke(CASE)
    sent = server.requests[0].headers
    assert (sent["x-a"], sent["x-b"], sent["x-c"]) == ("a b", "a\tb", "")


@pytest.mark.parametrize(("url", "problem"), [
    ("http://", "has no host"),
    ("http:///search", "has no host"),
    ("http://127.0.0.1:99999/x", "Port out of range"),
    ("http://exa mple.org/x", "is not a valid host name or address"),
    ("http://127.0.0.1:0/x", "port 0 cannot be called"),
    ("ftp://127.0.0.1/x", "must start with http:// or https://"),
])
def test_an_invalid_url_is_refused_when_the_target_is_built(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        HttpTarget(url + "?key=s3cr3t-query-value")


def test_the_run_exits_2_naming_the_header_not_its_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    (tmp_path / "cases.jsonl").write_text('{"id": "q1", "query": "a", "expected": ["d1"]}\n')
    monkeypatch.setenv("EVALKIT_FAULT_TOKEN", "sk-fault-0123456789\r")
    with ScriptedServer([Reply(200, OK_BODY)]) as server:
        (tmp_path / "evalkit.yaml").write_text(
            "goldens: cases.jsonl\noutput: run.jsonl\nmetrics: [recall@1]\n"
            "target:\n  factory: http\n  kwargs:\n"
            f"    url: {server.url}\n"
            "    headers: {Authorization: 'Bearer ${EVALKIT_FAULT_TOKEN}'}\n")
        res = CliRunner().invoke(app, ["run", str(tmp_path / "evalkit.yaml")])
        assert server.requests == []  # detected before any call
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "header 'Authorization': its value holds a carriage return (CR, \\r) at its " \
        "end" in lines[0]
    assert "0123456789" not in res.output and not (tmp_path / "run.jsonl").exists()
