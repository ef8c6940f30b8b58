"""Assertions on a response's text that score 1 or 0: ``contains`` and ``regex``.

``contains(text=refund)`` is 1 when the response's text contains ``refund`` (a substring,
case-sensitive; ``ignore_case=True`` compares :meth:`str.casefold` forms), as promptfoo's
``contains``/``icontains`` assertions. ``regex(pattern=^\\d+$)`` is 1 when
:func:`re.search` finds the pattern anywhere in the text (anchor it with ``^``/``$`` to
match the whole text; ``ignore_case=True`` adds :data:`re.IGNORECASE`), as promptfoo's
``regex``. Parameters are written in the metric's name with the measure grammar of
:mod:`evalkit.core.metric_names`; a pattern that does not compile is refused when the
name is resolved, before any call.

The pattern is compiled and searched by :mod:`evalkit_text.patterns` (the ``regex``
package in its :mod:`re`-compatible mode, because :mod:`re` cannot be stopped): each
search gets at most :data:`SEARCH_TIMEOUT_S` seconds; past it the case's metric fails,
naming the pattern, and every other metric of the case keeps its value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalkit_text.patterns import SEARCH_TIMEOUT_S, compile_pattern, search
from evalkit_text.reading import flag_parameter, response_text, text_parameter, variant_name

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

Scorer = Callable[["TargetResponse", "GoldenCase"], float]

__all__ = ["SEARCH_TIMEOUT_S", "contains_scorer", "regex_scorer"]


def contains_scorer(text: Any = None, ignore_case: Any = None) -> tuple[str, Scorer]:
    """``(canonical name, fn)`` of ``contains(text=..., ignore_case=...)``.

    Raises:
        ValueError: no text, a text that is empty or not text, a flag not True/False.
    """
    needle = text_parameter("contains", "text", text, "contains(text=refund)")
    fold = flag_parameter("contains", "ignore_case", ignore_case)
    name = variant_name("contains", {"text": needle, "ignore_case": fold})
    wanted = needle.casefold() if fold else needle

    def fn(response: TargetResponse, case: GoldenCase) -> float:
        said = response_text(response, name)
        return 1.0 if wanted in (said.casefold() if fold else said) else 0.0

    fn.__name__ = fn.__qualname__ = "contains"
    fn.__doc__ = f"1 when the response's text contains {needle!r}, else 0."
    return name, fn


def regex_scorer(pattern: Any = None, ignore_case: Any = None) -> tuple[str, Scorer]:
    """``(canonical name, fn)`` of ``regex(pattern=..., ignore_case=...)``.

    Raises:
        ValueError: no pattern, a pattern that is empty, not text or does not compile, a
            flag not True/False; from ``fn``, a search that took more than
            :data:`SEARCH_TIMEOUT_S` (that case's metric error).
    """
    source = text_parameter("regex", "pattern", pattern, "regex(pattern=^[0-9]+$)")
    fold = flag_parameter("regex", "ignore_case", ignore_case)
    compiled = compile_pattern(source, "regex", fold)
    name = variant_name("regex", {"pattern": source, "ignore_case": fold})

    def fn(response: TargetResponse, case: GoldenCase) -> float:
        return 1.0 if search(compiled, response_text(response, name), name,
                             "this response") else 0.0

    fn.__name__ = fn.__qualname__ = "regex"
    fn.__doc__ = f"1 when re.search finds {source!r} in the response's text, else 0."
    return name, fn
