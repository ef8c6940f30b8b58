"""HttpTarget against a real local server on 127.0.0.1: the retry policy (C29) and faults.

Each test counts the requests the server received.
"""

from __future__ import annotations

import logging
import sys
import threading

import pytest
from evalkit_http import HttpTarget
from evalkit_http.testing import Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetError

CASE = GoldenCase("q1", "what is alpha")
OK = Reply(200, {"ranked_ids": ["d1", "d2"], "cost_usd": 0.25, "other": 1})


def target(server: ScriptedServer, **kw: object) -> HttpTarget:
    kw.setdefault("retry_backoff_s", 0.0)
    return HttpTarget(server.url + "search", name="svc", **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ C29
def test_c29_a_503_then_200_retries_once_with_the_same_body() -> None:
    with ScriptedServer([Reply(503), OK]) as server, target(server) as t:
        response = t.invoke(CASE)
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body
    assert server.requests[0].json() == {"id": "q1", "query": "what is alpha"}
    assert list(response.ranked_ids) == ["d1", "d2"]


def test_c29_b_500_then_502_fails_after_two_requests() -> None:
    with ScriptedServer([Reply(500), Reply(502), OK]) as server, target(server) as t, \
            pytest.raises(TargetError) as info:
        t.invoke(CASE)
    assert len(server.requests) == 2
    message = str(info.value)
    assert "target 'svc' failed on case 'q1'" in message
    assert "HTTP 502" in message and "2 requests" in message


def test_c29_c_404_is_not_retried() -> None:
    with ScriptedServer([Reply(404), OK]) as server, target(server) as t, \
            pytest.raises(TargetError, match=r"case 'q1': HTTP 404 .*1 request\b"):
        t.invoke(CASE)
    assert len(server.requests) == 1


def test_c29_d_429_is_not_retried() -> None:
    with ScriptedServer([Reply(429), OK]) as server, target(server) as t, \
            pytest.raises(TargetError, match=r"HTTP 429 .*not retried.*1 request\b"):
        t.invoke(CASE)
    assert len(server.requests) == 1


def test_c29_e_200_is_one_request() -> None:
    with ScriptedServer([OK]) as server, target(server) as t:
        assert list(t.invoke(CASE).ranked_ids) == ["d1", "d2"]
    assert len(server.requests) == 1


def test_c29_f_a_timeout_is_retried_once_then_reported() -> None:
    # the server answers only once the test opens the gate, after the call returned: a
    # call that ends was ended by its own deadline (60 s: a guard against a hang)
    gate = threading.Event()

    def held(request: object, index: int) -> Reply:
        gate.wait(60)
        return Reply(200, {"ranked_ids": []})

    with ScriptedServer(handler=held) as server, target(server, timeout_s=0.2) as t:
        try:
            with pytest.raises(TargetError, match=r"timed out after 0.2 s.*2 requests"):
                t.invoke(CASE)
            assert not gate.is_set()
        finally:
            gate.set()
    assert len(server.requests) == 2


def test_a_timeout_then_success() -> None:
    with ScriptedServer([Reply(200, {"ranked_ids": []}, delay_s=1.0), OK]) as server, \
            target(server, timeout_s=0.2) as t:
        assert list(t.invoke(CASE).ranked_ids) == ["d1", "d2"]
    assert len(server.requests) == 2


# ------------------------------------------------------------------ other faults
def test_connection_reset_then_success() -> None:
    with ScriptedServer([Reply(reset=True), OK]) as server, target(server) as t:
        assert list(t.invoke(CASE).ranked_ids) == ["d1", "d2"]
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


def test_connection_reset_twice_is_a_transport_failure() -> None:
    with ScriptedServer([Reply(reset=True)]) as server, target(server) as t, \
            pytest.raises(TargetError, match=r"transport failure: .*2 requests"):
        t.invoke(CASE)
    assert len(server.requests) == 2


def test_non_json_body_is_an_error_without_retry() -> None:
    with ScriptedServer([Reply(200, b"<html>busy</html>"), OK]) as server, target(server) as t, \
            pytest.raises(TargetError, match=r"case 'q1': the response body is not JSON "
                          r"\(starts '<html>busy</html>'\)"):
        t.invoke(CASE)
    assert len(server.requests) == 1


def test_json_array_body_is_an_error_without_retry() -> None:
    with ScriptedServer([Reply(200, ["d1", "d2"]), OK]) as server, target(server) as t, \
            pytest.raises(TargetError, match=r"the response body is a JSON array, not an obj"):
        t.invoke(CASE)
    assert len(server.requests) == 1


def test_connection_refused_is_retried_once() -> None:
    server = ScriptedServer([OK]).start()
    url = server.url
    server.stop()  # nothing listens on the port any more
    with HttpTarget(url, name="gone", retry_backoff_s=0.0, timeout_s=2) as t, \
            pytest.raises(TargetError, match=r"'gone' failed on case 'q1': transport failure.*"
                          r"2 requests"):
        t.invoke(CASE)


# ------------------------------------------------------------------ contract
def test_latency_spans_both_attempts_and_the_pause() -> None:
    script = [Reply(503, delay_s=0.1), Reply(200, {"ranked_ids": ["d"]}, delay_s=0.1)]
    with ScriptedServer(script) as server, target(server, retry_backoff_s=0.05) as t:
        response = t.invoke(CASE)
    # two replies of 0.1 s each and a pause of 0.05 s less up to 25 % jitter (backoff_s)
    assert response.latency_ms >= 200.0 + 0.75 * 50.0


def test_build_payload_extract_and_meta_keys() -> None:
    body = {"results": [{"id": "b"}, {"id": "a"}], "cost_usd": 0.25, "tokens": 7}
    with ScriptedServer([Reply(200, body)]) as server, target(
        server,
        build_payload=lambda c: {"q": c.query, "k": 2},
        extract=lambda b: [r["id"] for r in b["results"]],
        meta_keys=("cost_usd", "missing"),
    ) as t:
        response = t.invoke(CASE)
    assert server.requests[0].json() == {"q": "what is alpha", "k": 2}
    assert server.requests[0].headers["content-type"] == "application/json"
    assert list(response.ranked_ids) == ["b", "a"]
    assert dict(response.meta) == {"cost_usd": 0.25}
    assert response.raw == body


def test_text_answers_and_bad_extract_results() -> None:
    with ScriptedServer([Reply(200, {"text": "an answer"})]) as server, target(server) as t:
        response = t.invoke(CASE)
        assert response.text == "an answer" and list(response.ranked_ids) == []
    with ScriptedServer([Reply(200, {"nothing": 1})]) as server, target(server) as t, \
            pytest.raises(TargetError, match=r"'svc' failed on case 'q1': extract failed: "
                          r"KeyError.*neither 'ranked_ids' nor 'text'"):
        t.invoke(CASE)
    with ScriptedServer([Reply(200, {"x": 1})]) as server, \
            target(server, extract=lambda b: 3.5) as t, \
            pytest.raises(TargetError, match="extract returned float"):
        t.invoke(CASE)
    with ScriptedServer([Reply(200, {"x": 1})]) as server, \
            target(server, extract=lambda b: [{"id": 1}]) as t, \
            pytest.raises(TargetError, match="ids must be strings"):
        t.invoke(CASE)


def test_payload_that_cannot_be_encoded() -> None:
    with ScriptedServer([OK]) as server, target(server, build_payload=lambda c: {1, 2}) as t, \
            pytest.raises(TargetError, match="cannot build the request body"):
        t.invoke(CASE)
    assert server.requests == []


def test_one_connection_pool_reused_across_calls() -> None:
    with ScriptedServer([OK]) as server, target(server) as t:
        for i in range(5):
            t.invoke(GoldenCase(f"q{i}", "x"))
    assert len(server.requests) == 5
    assert len({r.client_port for r in server.requests}) == 1  # one kept-alive connection


def test_closed_target_fails_as_target_error() -> None:
    with ScriptedServer([OK]) as server:
        t = target(server)
        with t:
            t.invoke(CASE)
        with pytest.raises(TargetError, match="'svc' failed on case 'q1': RuntimeError"):
            t.invoke(CASE)
    assert len(server.requests) == 1


def test_header_values_never_reach_messages_repr_describe_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "Bearer sk-very-secret-token-123"
    caplog.set_level(logging.DEBUG)
    with ScriptedServer([Reply(503), Reply(404)]) as server, \
            target(server, headers={"Authorization": secret}) as t:
        with pytest.raises(TargetError) as info:
            t.invoke(CASE)
        assert server.requests[0].headers["authorization"] == secret  # it was sent
        shown = " ".join([str(info.value), repr(t), str(t.describe()), caplog.text])
    assert "sk-very-secret" not in shown
    assert t.describe()["header_names"] == ["Authorization"]
    assert "retry 1 of 1" in caplog.text


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO])
def test_query_string_and_header_secrets_never_reach_any_log(
    caplog: pytest.LogCaptureFixture, level: int,
) -> None:
    # httpx logs "HTTP Request: POST <full url>" at INFO and httpcore traces the response
    # headers at DEBUG; the server here also echoes the token in a response header
    caplog.set_level(level)
    echo = {"X-Echo": "SECRET-header-echo"}
    with ScriptedServer([Reply(503, headers=echo), Reply(200, OK.body, headers=echo)]) \
            as server, HttpTarget(server.url + "search?token=SECRET-query&k=2", name="svc",
                                  headers={"X-Api-Key": "SECRET-header"},
                                  retry_backoff_s=0.0) as t:
        url = server.url
        response = t.invoke(CASE)
        dead = HttpTarget("http://u:SECRET-pw@127.0.0.1:9/x?token=SECRET-query",
                          name="dead", retry_backoff_s=0.0, timeout_s=2)
        with dead, pytest.raises(TargetError) as info:
            dead.invoke(CASE)
    assert list(response.ranked_ids) == ["d1", "d2"]
    assert server.requests[0].path == "/search?token=SECRET-query&k=2"  # it was sent
    assert server.requests[0].headers["x-api-key"] == "SECRET-header"
    logged = caplog.text
    assert "SECRET" not in logged and "SECRET" not in str(info.value)
    assert f'POST {url}search?<redacted> "HTTP/1.1 200 OK"' in logged
    assert "retry 1 of 1" in logged
    if level == logging.DEBUG:
        assert "receive_response_headers.complete" in logged  # traced, values redacted


def test_redact_keeps_host_and_path_and_drops_the_rest() -> None:
    from evalkit_http.target import redact

    assert redact("GET https://u:p@h.example:8443/a/b?x=1&t=2#frag done") == \
        "GET https://<redacted>@h.example:8443/a/b?<redacted>#<redacted> done"
    assert redact("return_value=(b'HTTP/1.1', 200, b'OK', [(b'A', b'x])y'), (b'B', b'z')])") \
        == "return_value=(b'HTTP/1.1', 200, b'OK', [<headers redacted>])"
    assert redact("no url here") == "no url here"


def test_query_string_and_userinfo_are_not_shown() -> None:
    t = HttpTarget("http://user:pw@127.0.0.1:9/x?api_key=s3cr3t", name="n")
    try:
        assert "s3cr3t" not in repr(t) and "pw" not in str(t.describe())
        assert t.describe()["url"] == "http://127.0.0.1:9/x"
    finally:
        t.close()


def test_the_body_is_sent_as_json_once_whatever_content_type_the_caller_set() -> None:
    with ScriptedServer([OK]) as server, \
            target(server, headers={"Content-Type": "text/plain", "X-Key": "k"}) as t:
        t.invoke(CASE)
    sent = server.requests[0]
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["x-key"] == "k"
    assert sent.path == "/search" and sent.json() == {"id": "q1", "query": "what is alpha"}


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"'http://127.0.0.1:port/x' is not a valid URL"):
        HttpTarget("http://127.0.0.1:port/x?key=s3cr3t")
    with pytest.raises(ValueError, match="must start with http"):
        HttpTarget("127.0.0.1:80/x")
    with pytest.raises(ValueError, match="timeout_s must be a finite number > 0"):
        HttpTarget("http://127.0.0.1/", timeout_s=0)


# ------------------------------------------------------------------ plugin wiring
def test_registered_http_target_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.core.specs import TargetSpec
    from evalkit.plugins.default import default_registry

    spec = default_registry().get("target", "http")
    assert isinstance(spec, TargetSpec)
    monkeypatch.setenv("EVALKIT_TEST_TOKEN", "tok-42")
    with ScriptedServer([OK]) as server:
        t = spec.factory(url=server.url, name="cfg",
                         extract="evalkit_http.target:default_extract",
                         headers={"Authorization": "Bearer ${EVALKIT_TEST_TOKEN}"})
        with t:
            assert list(t.invoke(CASE).ranked_ids) == ["d1", "d2"]
        assert server.requests[0].headers["authorization"] == "Bearer tok-42"
    monkeypatch.delenv("EVALKIT_TEST_TOKEN")
    with pytest.raises(ValueError, match=r"refers to \$\{EVALKIT_TEST_TOKEN\}, which is not "
                       "set; export EVALKIT_TEST_TOKEN before the run"):
        spec.factory(url="http://127.0.0.1/", headers={"X": "${EVALKIT_TEST_TOKEN}"})
    with pytest.raises(ValueError, match="import string"):
        spec.factory(url="http://127.0.0.1/", extract="no_colon")


def test_from_evalkit_import_http_target_and_missing_plugin_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import evalkit

    assert evalkit.HttpTarget is HttpTarget
    monkeypatch.setitem(sys.modules, "evalkit_http", None)
    with pytest.raises(ImportError, match=r"HttpTarget is provided by the 'evalkit-http' "
                       r"plugin.*pip install -e plugins/evalkit-http"):
        evalkit.__getattr__("HttpTarget")


def test_errors_become_rows_of_an_incomplete_run(tmp_path: object) -> None:
    from evalkit.data.goldens import GoldenSet
    from evalkit.execute.target_runner import evaluate

    def handler(request: object, index: int) -> Reply:
        case_id = request.json()["id"]  # type: ignore[attr-defined]
        return {"ok": OK, "missing": Reply(404), "broken": Reply(500)}[case_id]

    gs = GoldenSet([GoldenCase("ok", "a"), GoldenCase("missing", "b"),
                    GoldenCase("broken", "c")])
    with ScriptedServer(handler=handler) as server, target(server) as t:
        run = evaluate(t, gs, aggregates=["latency_p50"], max_concurrency=3, progress=False)
    by_id = {r.query_id: r for r in run.per_query}
    assert run.header["status"] == "incomplete" and run.header["errors"] == 2
    assert by_id["ok"].error is None
    assert "HTTP 404" in by_id["missing"].error and "1 request " in by_id["missing"].error
    assert "HTTP 500" in by_id["broken"].error and "2 requests" in by_id["broken"].error
    assert run.header["aggregates"] == {}
    assert len(server.requests) == 4  # ok 1 + missing 1 + broken 2
