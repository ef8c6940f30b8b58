"""Grades served without a request: from the cache, from a 0.2 grade imported into it, or
from the request another thread of this process has in flight for the same key."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from evalkit_judge.budget import JudgeError, Usage
from evalkit_judge.cache import CacheError
from evalkit_judge.grades import Grade

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse
    from evalkit_judge.judge import LLMJudge

T = TypeVar("T")


def stored_grade(judge: LLMJudge, key: str) -> Grade | None:
    """The grade the judge's cache holds for ``key``, or None.

    Raises:
        JudgeError: the cache cannot be read.
    """
    if judge.cache is None:
        return None
    try:
        stored = judge.cache.get(key)
    except CacheError as exc:
        raise JudgeError(str(exc)) from exc
    if stored is None:
        return None
    return Grade(score=stored.score, reason=stored.reason, model=judge.model, key=key,
                 cached=True, source="cache" if stored.source == "api" else stored.source,
                 usage=stored.usage, served_model=stored.served_model,
                 cost_usd=None if stored.source == "seed-json"
                 else judge.cost(stored.usage, stored.served_model),
                 definition=judge.definition)


def cached_grade(judge: LLMJudge, key: str, response: TargetResponse,
                 case: GoldenCase) -> Grade | None:
    """The stored grade for ``key``, else one imported from a 0.2 JSON cache (matched on
    the 0.2 key, kept under ``key`` from now on) when ``seed_grades`` allows, else None.

    Raises:
        JudgeError: the cache cannot be read or written.
    """
    grade = stored_grade(judge, key)
    if grade is not None or judge.cache is None or not judge.seed_grades:
        return grade
    try:
        if not judge.cache.has_seed_grades():
            return None
        seed = judge.cache.seed_get(judge.seed_key(response, case))
        if seed is None:
            return None
        score, reason = seed
        if not 1 <= score <= judge.scale:
            return None
        judge.cache.put(key, case_id=str(case.id), model=judge.model, score=score,
                        reason=reason, usage=Usage(), served_model=None,
                        source="seed-json", reply=None)
    except CacheError as exc:
        raise JudgeError(str(exc)) from exc
    return stored_grade(judge, key)


class SingleFlight(Generic[T]):
    """One fetch per key at a time: a thread asking for a key another thread is fetching
    waits for it, then reads what it stored; if nothing was stored (the fetch failed, or
    there is no cache), it fetches itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}

    def run(self, key: str, reread: Callable[[], T | None], fetch: Callable[[], T]
            ) -> tuple[T, bool]:
        """``(value, whether it was read rather than fetched)``."""
        while True:
            with self._lock:
                event = self._inflight.get(key)
                owner = event is None
                if event is None:
                    event = self._inflight[key] = threading.Event()
            if owner:
                try:
                    found = reread()  # a fetch that finished between our read and now
                    return (found, True) if found is not None else (fetch(), False)
                finally:
                    with self._lock:
                        del self._inflight[key]
                    event.set()
            # unbounded: as long as the owner's request for this key, which its client's
            # timeout and retries bound; the owner sets the event whatever happens (finally)
            event.wait()
            found = reread()
            if found is not None:
                return found, True
