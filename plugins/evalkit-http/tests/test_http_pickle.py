"""An HTTP target pickles as its arguments (url, name, options), so a remote executor's
worker can rebuild it: the copy has its own client and sends the same requests to a real
server on 127.0.0.1; a target given a test transport is refused, naming why."""

from __future__ import annotations

import pickle

import cloudpickle
import httpx
import pytest
from evalkit_http import AsyncHttpTarget, HttpTarget
from evalkit_http.testing import Reply, ScriptedServer

from evalkit.data.cases import GoldenCase


def _extract(body: dict[str, object]) -> list[str]:
    return [str(x) for x in body["hits"]]  # type: ignore[attr-defined]


def test_a_pickled_http_target_makes_the_same_requests_with_its_own_client() -> None:
    server = ScriptedServer([Reply(200, {"hits": ["d1", "d2"], "tokens_in": 7,
                                         "tokens_out": 2})]).start()
    try:
        original = HttpTarget(server.url, name="svc", headers={"x-api-key": "k-123"},
                              meta_keys=("tokens_in", "tokens_out"), extract=_extract,
                              timeout_s=5.0)
        copy = pickle.loads(pickle.dumps(original))
        # a lambda extract travels with cloudpickle, as the dask executor sends it
        lam = cloudpickle.loads(cloudpickle.dumps(HttpTarget(
            server.url, extract=lambda body: list(body["hits"]))))
        assert isinstance(copy, HttpTarget) and copy._client is not original._client
        case = GoldenCase("q1", "what")
        a, b, c = original.invoke(case), copy.invoke(case), lam.invoke(case)
        assert a.ranked_ids == b.ranked_ids == c.ranked_ids == ["d1", "d2"]
        assert b.meta == {"tokens_in": 7, "tokens_out": 2}
        first, second = server.requests[0], server.requests[1]
        assert first.body == second.body and first.path == second.path
        assert second.headers["x-api-key"] == "k-123" and copy.name == "svc"
        assert copy.timeout_s == 5.0
        for target in (original, copy, lam):
            target.close()
    finally:
        server.stop()


def test_an_async_http_target_pickles_too() -> None:
    target = AsyncHttpTarget("http://127.0.0.1:9/x", name="a", max_connections=3)
    copy = pickle.loads(pickle.dumps(target))
    assert isinstance(copy, AsyncHttpTarget) and copy.max_connections == 3


def test_a_target_with_a_test_transport_is_not_pickled() -> None:
    target = HttpTarget("http://127.0.0.1:9/x", transport=httpx.MockTransport(
        lambda request: httpx.Response(200, json={"ranked_ids": []})))
    with pytest.raises(TypeError, match=r"^HttpTarget with transport= cannot be pickled: "
                                        r"the transport belongs to this process"):
        pickle.dumps(target)
    target.close()
