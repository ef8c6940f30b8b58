"""The HTTP targets read a response body as strictly as a golden file
(evalkit.io.limits.loads_json): a repeated key (JSON keeps only the last value) and the
NaN/Infinity literals (not JSON) are that case's error, without retry; a plain body is
read as before."""

from __future__ import annotations

import asyncio

import pytest
from evalkit_http import AsyncHttpTarget, HttpTarget
from evalkit_http.testing import Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetError, TargetResponse

CASE = GoldenCase("q1", "what is alpha")
OK = Reply(200, {"ranked_ids": ["d1"]})

REFUSED = [
    (b'{"ranked_ids": ["d9"], "ranked_ids": ["d1"]}',
     "the response body is not strict JSON: key 'ranked_ids' appears twice in one JSON "
     "object"),
    (b'{"ranked_ids": ["d1"], "score": NaN}',
     "the response body is not strict JSON: NaN is not JSON (RFC 8259 has no NaN or "
     "Infinity)"),
    (b'{"ranked_ids": ["d1"], "score": -Infinity}',
     "the response body is not strict JSON: -Infinity is not JSON"),
    (b'{"ranked_ids": ["d1"], "meta": {"a": 1, "a": 2}}',
     "key 'a' appears twice in one JSON object"),
    (b'{"text":"\xff\xfe bad"}',
     "the response body is not UTF-8 text (byte 0xff at offset 9)"),
]


def _sync(server: ScriptedServer) -> TargetResponse:
    with HttpTarget(server.url + "search", name="svc", retry_backoff_s=0.0) as t:
        return t.invoke(CASE)


def _async(server: ScriptedServer) -> TargetResponse:
    async def go() -> TargetResponse:
        async with AsyncHttpTarget(server.url + "search", name="svc",
                                   retry_backoff_s=0.0) as t:
            return await t.ainvoke(CASE)

    return asyncio.run(go())


@pytest.mark.parametrize("call", [_sync, _async], ids=["sync", "async"])
@pytest.mark.parametrize(("body", "said"), REFUSED)
def test_a_repeated_key_or_nan_in_the_body_is_the_cases_error_without_retry(
        call: object, body: bytes, said: str) -> None:
    assert callable(call)
    with ScriptedServer([Reply(200, body), OK]) as server:
        with pytest.raises(TargetError) as info:
            call(server)
        assert len(server.requests) == 1
    message = str(info.value)
    assert "target 'svc' failed on case 'q1'" in message
    assert said in message


@pytest.mark.parametrize("call", [_sync, _async], ids=["sync", "async"])
def test_a_strict_body_is_read_as_before(call: object) -> None:
    assert callable(call)
    body = b'{"ranked_ids": ["d1", "d2"], "score": 1e308, "nested": {"NaN": "NaN"}}'
    with ScriptedServer([Reply(200, body)]) as server:
        response = call(server)
    assert list(response.ranked_ids) == ["d1", "d2"]
