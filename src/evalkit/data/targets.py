"""What a target returns, and the protocol every target follows."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalkit.plugins.failures import PLUGIN_FAILURES

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase


def _failure(exc: BaseException) -> str:
    """What a wrapped function's exception says: its message; for a ``sys.exit()`` call,
    which says only its code, ``SystemExit(0) (a sys.exit() call)``."""
    from evalkit.io.redaction import error_text  # logging and traceback: on failures only

    return error_text(exc) if isinstance(exc, SystemExit) else str(exc)


@dataclass(frozen=True)
class TargetResponse:
    """A target's answer to one case.

    Attributes:
        ranked_ids: ids best first (retrieval targets); empty for text targets.
        text: the generated text (LLM targets); ``None`` for pure retrieval.
        latency_ms: wall time of the call in milliseconds, retries included.
        raw: the decoded raw body, kept for rescoring (rows keep it up to a size: see
            :func:`evalkit.data.rows.bounded_response`).
        meta: selected extra fields; what a call cost and the tokens it used go under
            the keys of :mod:`evalkit.data.usage_keys`.
        raw_cut: ``None`` while ``raw`` is whole; on a row whose raw body was too large
            to keep, the size in bytes of its JSON (0 when it could not be measured), and
            ``raw`` is ``None``.
        requests: how many requests the answer took (retries included), when the
            target counts them (``HttpTarget`` does); the runner copies it to the row's
            ``requests``. Not compared, not stored with the response.
        rate_limited: how many of those requests were answered "rate limited" (429,
            529); the runner lowers its concurrency when it is not 0. Not compared, not
            stored.
    """

    ranked_ids: Sequence[str] = ()
    text: str | None = None
    latency_ms: float = 0.0
    raw: Any = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    raw_cut: int | None = None
    requests: int | None = field(default=None, compare=False)
    rate_limited: int = field(default=0, compare=False)


class TargetError(RuntimeError):
    """A target failed on a case; the message names the target and the case.

    Attributes:
        requests: the requests the failed call made, when the target counts them.
        rate_limited: how many of them were answered "rate limited" (429, 529).
    """

    def __init__(self, *args: object, requests: int | None = None,
                 rate_limited: int = 0) -> None:
        super().__init__(*args)
        self.requests, self.rate_limited = requests, rate_limited


@runtime_checkable
class Target(Protocol):
    """Anything with a ``name`` and ``invoke(case) -> TargetResponse``."""

    name: str

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """Answer one case.

        Raises:
            TargetError: any failure, with a message naming the target and the case.
        """
        ...


@runtime_checkable
class AsyncTarget(Protocol):
    """Anything with a ``name`` and a coroutine ``ainvoke(case) -> TargetResponse``
    (called from the runner's event loop: :mod:`evalkit.execute.async_executor`)."""

    name: str

    async def ainvoke(self, case: GoldenCase) -> TargetResponse:
        """Answer one case (raises :class:`TargetError`, as ``Target.invoke``)."""
        ...


class CallableTarget:
    """Wrap a Python callable as a target.

    The callable receives the :class:`~evalkit.data.cases.GoldenCase` and returns either a
    :class:`TargetResponse`, a list of ids (best first), or a string (generated text).
    Latency is measured around the call in milliseconds. Any exception becomes a
    :class:`TargetError` naming the target and the case.

    An ``async def`` function (or an object whose ``__call__`` is one) makes an async
    target: ``ainvoke(case)`` awaits it, and the runner calls it from one event loop
    (:mod:`evalkit.execute.async_executor`); ``invoke(case)`` still works outside a
    running event loop (it runs the coroutine to completion with ``asyncio.run``).
    ``ainvoke`` is ``None`` for a plain function.
    """

    def __init__(self, fn: Callable[[GoldenCase], Any], name: str | None = None) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "callable"))
        coroutine = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None))  # noqa: B004 - an async __call__, not callable()
        self.ainvoke: Callable[[GoldenCase], Awaitable[TargetResponse]] | None = (
            self._ainvoke if coroutine else None)

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """Call the wrapped function on ``case``; latency in ms is measured around it.

        Raises:
            TargetError: the function raised or returned something other than a
                ``TargetResponse``, a list of ids or a string; an async function called
                from inside a running event loop (await :meth:`ainvoke` there).
        """
        start = time.perf_counter()
        try:
            out = self.fn(case)
            if inspect.isawaitable(out):
                out = _run_to_end(out, self.name, case)
        except TargetError:
            raise
        except PLUGIN_FAILURES as exc:
            raise TargetError(f"target {self.name!r} failed on case {case.id!r}: "
                              f"{_failure(exc)}") from exc
        return self._response(case, out, start)

    async def _ainvoke(self, case: GoldenCase) -> TargetResponse:
        """Await the wrapped ``async def`` function on ``case`` (latency measured around
        it); raises as :meth:`invoke`."""
        start = time.perf_counter()
        try:
            out = await self.fn(case)
        except PLUGIN_FAILURES as exc:
            raise TargetError(f"target {self.name!r} failed on case {case.id!r}: "
                              f"{_failure(exc)}") from exc
        return self._response(case, out, start)

    def _response(self, case: GoldenCase, out: Any, start: float) -> TargetResponse:
        elapsed = (time.perf_counter() - start) * 1000.0
        if isinstance(out, TargetResponse):
            if out.latency_ms:
                return out
            return TargetResponse(
                ranked_ids=out.ranked_ids, text=out.text, latency_ms=elapsed,
                raw=out.raw, meta=out.meta,
            )
        if isinstance(out, str):
            return TargetResponse(text=out, latency_ms=elapsed, raw=out)
        if isinstance(out, Sequence):
            return TargetResponse(ranked_ids=[str(x) for x in out], latency_ms=elapsed, raw=out)
        raise TargetError(
            f"target {self.name!r} returned {type(out).__name__} for case {case.id!r}; "
            "return a TargetResponse, a list of ids, or a string"
        )


def _run_to_end(awaitable: Awaitable[Any], name: str, case: GoldenCase) -> Any:
    """The result of ``awaitable`` run on a new event loop (none may be running)."""
    import asyncio  # only async targets need it (it imports a thread pool)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        async def wait() -> Any:
            return await awaitable

        return asyncio.run(wait())
    if inspect.iscoroutine(awaitable):
        awaitable.close()  # never awaited: no warning
    raise TargetError(f"target {name!r} is async: await its ainvoke(case) inside a running "
                      f"event loop instead of invoke (case {case.id!r})")
