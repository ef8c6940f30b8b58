"""Bounded regular-expression searches: the one engine every pattern of evalkit-text runs
on, ``regex(pattern=...)``'s and every ``pattern``/``patternProperties`` a
``json_schema(...)`` schema carries.

Patterns are compiled and searched with the ``regex`` package in its :mod:`re`-compatible
mode (``VERSION0``), because :mod:`re` cannot be stopped: a pattern with nested
repetition such as ``(a+)+$`` backtracks exponentially on a long text it does not match,
and :func:`re.search` would hold the thread (and the GIL, so even SIGTERM) for hours.
Each search gets at most :data:`SEARCH_TIMEOUT_S` seconds; past it :func:`search` raises
``ValueError`` naming the pattern, the limit and the text's length, which the runner
records as that case's metric error.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

#: the most seconds one search of one pattern may take on one text
SEARCH_TIMEOUT_S = 1.0


def compile_pattern(source: str, who: str, ignore_case: bool = False) -> regex.Pattern[str]:
    """``source`` compiled with ``regex`` (``VERSION0``, plus ``IGNORECASE`` if asked);
    the same pattern is compiled once per process.

    Raises:
        ValueError: the pattern does not compile, naming it, ``who`` (``"regex"``, a
            metric's name) and the engine's message.
    """
    import regex  # the re-compatible engine whose searches can be stopped

    try:
        return _compiled(source, ignore_case)
    except (regex.error, re.error) as exc:
        raise ValueError(f"the pattern {source!r} of {who} does not compile: {exc}") from None


@lru_cache(maxsize=1024)  # a schema's patterns are searched on every case
def _compiled(source: str, ignore_case: bool) -> regex.Pattern[str]:
    import regex

    return regex.compile(source, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))


def search(pattern: regex.Pattern[str], text: str, who: str, where: str) -> bool:
    """True when ``pattern`` matches somewhere in ``text`` (:meth:`re.Pattern.search`).

    ``who`` starts the error message (the metric's name), ``where`` says what ``text``
    is (``"this response"``, ``"a string of the response"``).

    Raises:
        ValueError: the search took more than :data:`SEARCH_TIMEOUT_S` seconds and was
            stopped, naming the pattern, the limit and the text's length.
    """
    try:
        return pattern.search(text, timeout=SEARCH_TIMEOUT_S) is not None
    except TimeoutError:
        raise ValueError(
            f"{who}: the search for the pattern {pattern.pattern!r} took more than "
            f"{SEARCH_TIMEOUT_S:g} s on {where} ({len(text)} characters) and was stopped: "
            "the pattern backtracks too much (nested repetition such as (a+)+ is "
            "exponential); write it without nested quantifiers") from None
