"""Ids given as Python values (mapping keys, DataFrame cells, list items) made text, as
every id is compared: a query or document id is text, as in a TREC file and in trec_eval.

Two different values can become the same text: ``1`` and ``"1"``, ``numpy.int64(7)`` and
``"7"``. Merged, their entries would overwrite each other (judgments dropped, which ones
depending on the mapping's order) or merge into one ranking, so :func:`text_ids` refuses
them, naming both values. Only the standard library is imported.
"""

from __future__ import annotations

from collections.abc import Iterable


class IdCollisionError(ValueError):
    """Two different values given as ids become the same id once written as text.

    Attributes:
        first, second: the two values, in the order given.
        text: the id both become.
    """

    def __init__(self, what: str, first: object, second: object, text: str) -> None:
        self.first, self.second, self.text = first, second, text
        super().__init__(
            f"{what}: {first!r} ({type(first).__name__}) and {second!r} "
            f"({type(second).__name__}) are both the id {text!r} once written as text (ids "
            "are compared as text, as in trec_eval), so their entries would overwrite or "
            "merge into each other; give every id one type, e.g. text throughout "
            "({str(k): v for k, v in ...}), after merging what the two hold")


def text_ids(values: Iterable[object], what: str) -> list[str]:
    """``str`` of each value (text is kept as it is), refusing two different values with
    the same text. A value may repeat (a DataFrame column's cells): equal values are one id.

    Args:
        values: the ids as given (mapping keys, column cells, list items).
        what: where they come from, to begin the message (``"qrels"``, ``"run query
            '3'"``).

    Raises:
        IdCollisionError: (a ``ValueError``) two different values, such as ``1`` and
            ``"1"``, become one id; the message names both and the fix.
    """
    given = values if isinstance(values, list) else list(values)
    out = [v if type(v) is str else str(v) for v in given]
    if out == given:  # text only (compared by identity first): nothing can collide
        return out
    seen: dict[str, object] = {}
    for text, value in zip(out, given, strict=True):
        first = seen.setdefault(text, value)
        if first is not value and not _same(first, value):
            raise IdCollisionError(what, first, value, text)
    return out


def _same(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an array or an object whose == does not give a truth value
        return False


__all__ = ["IdCollisionError", "text_ids"]
