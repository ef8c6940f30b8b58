"""The target factory of the eval configs (``factory: targets:make_target``): the fake
model's HTTP endpoint, as an ``HttpTarget`` (or, with ``asynchronous``, an
``AsyncHttpTarget`` on one event loop) would call a deployed LLM gateway."""

from __future__ import annotations

import os

from evalkit_http import AsyncHttpTarget

from evalkit import HttpTarget
from evalkit.data.cases import GoldenCase
from evalkit.execute.samples import current_sample

#: set by run_offline.py to the running fake model's endpoint
URL_VARIABLE = "LLM_OFFLINE_MODEL_URL"


def make_target(version: str, asynchronous: bool = False) -> HttpTarget | AsyncHttpTarget:
    """The model ``version`` (``v1`` or ``v2``) behind the fake service; the body's
    ``text`` is the answer and its ``cost_usd``/``tokens_in``/``tokens_out`` go to the
    response's meta (the cost aggregates read them). The request carries the sample
    number being answered (``evalkit.execute.samples.current_sample``), which fixes the
    model's draw. ``asynchronous``: the same calls
    from an ``AsyncHttpTarget`` (httpx.AsyncClient), as an async LLM SDK would make them.
    Both retry a 429 or 529 after the service's ``Retry-After`` (``retry_rate_limited``).

    Raises:
        RuntimeError: the service's address is not set (start it with run_offline.py).
    """
    url = os.environ.get(URL_VARIABLE)
    if not url:
        raise RuntimeError(f"{URL_VARIABLE} is not set: run run_offline.py, which starts the "
                           "fake model and sets it")

    def payload(case: GoldenCase) -> dict[str, str | int]:
        # the sample number fixes the model's draw, as an API's seed would: sample k of
        # a case is the same on every run, whatever order concurrent calls arrive in
        return {"system": version, "question": case.query, "sample": current_sample() or 0}

    kind = AsyncHttpTarget if asynchronous else HttpTarget
    return kind(url=url, name=f"assistant-{version}", build_payload=payload,
                meta_keys=("cost_usd", "tokens_in", "tokens_out"), retry_rate_limited=True)
