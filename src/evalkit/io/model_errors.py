"""pydantic's validation errors turned into evalkit's one-line messages.

The declarative files (the checks file, the eval config, golden rows) are validated by
pydantic models (:mod:`evalkit.gate.checks_models`, :mod:`evalkit.execute.evalconfig_models`,
:mod:`evalkit.data.goldens_models`). Each of those modules turns the first of pydantic's errors
into the message its docs promise, in words a user can act on, and its reader prefixes
the file and the line (:meth:`evalkit.io.bounded_yaml.MarkedYaml.line` maps an error's
``loc`` back to its line). This module holds what they share: rule errors whose message
is kept verbatim, the choice of the error to report, the raw value at a location, the
value as a message may show it (:func:`shown_value`: never a secret) and the did-you-mean
of a typo'd key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from evalkit.io.error_messages import close_matches
from evalkit.io.limits import shown

#: the error type of :func:`rule` errors
RULE = "evalkit_rule"

Loc = tuple[int | str, ...]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


#: what :func:`value_at` returns for a location absent from the data
MISSING: Any = _Missing()


class Problem(ValueError):
    """One problem of a file, in words, and where it is: what a ``*_models`` module raises
    for its reader to prefix with the file and line (and raise as its own error class).

    Attributes:
        loc: the location in the data (pydantic's ``loc``), or ``None`` for a problem of
            the whole file (empty, no entries), which is named without a line.
        message: the problem, e.g. ``"check 'a': 'op' is '>'; use one of ..."``.
        related: another location the problem involves (the first of two duplicates), or
            ``None``; the reader then names both lines.
    """

    def __init__(self, loc: Loc | None, message: str, related: Loc | None = None) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message
        self.related = related


def rule(message: str, **context: Any) -> PydanticCustomError:
    """The error a model's validator raises for one of evalkit's rules: its message is
    ``message`` verbatim (braces and all); ``context`` travels in the error's ``ctx``."""
    return PydanticCustomError(RULE, "{message}", {"message": message, **context})


def is_rule(err: ErrorDetails) -> bool:
    """Whether ``err`` came from :func:`rule`."""
    return err["type"] == RULE


def rule_message(err: ErrorDetails) -> str:
    """The message of a :func:`rule` error."""
    return str((err.get("ctx") or {})["message"])


def first_error(exc: ValidationError, rank: Callable[[ErrorDetails], Any],
                prefix: Loc = ()) -> ErrorDetails:
    """The error to report: the smallest by ``rank`` (ties keep pydantic's order), its
    ``loc`` preceded by ``prefix`` (where the validated value sits in a larger document)."""
    errors = exc.errors(include_url=False)
    for err in errors:
        err["loc"] = (*prefix, *err["loc"])
    return min(errors, key=rank)


def value_at(data: Any, loc: Sequence[int | str]) -> Any:
    """The input at ``loc`` in ``data`` (mapping keys and list positions), or
    :data:`MISSING`. Parts that are not keys of the data (a union member's tag) are
    skipped."""
    current = data
    for part in loc:
        in_list = isinstance(current, list) and isinstance(part, int) and \
            0 <= part < len(current)
        if in_list or (isinstance(current, Mapping) and part in current):
            current = current[part]
        elif isinstance(current, Mapping | list):
            return MISSING
    return current


def is_secret_location(loc: Sequence[int | str]) -> bool:
    """Whether the value at ``loc`` is a secret: under a ``headers`` key, or under a
    secret-looking key (:func:`evalkit.io.redaction.is_secret_key`: ``api_key``,
    ``token``, ``password``, ``private_key``...; not ``api_key_env``, which names a
    variable)."""
    from evalkit.io.redaction import is_secret_key

    return any(isinstance(part, str) and (part.lower() == "headers" or (
        is_secret_key(part) and not part.lower().endswith("_env")))
        for part in loc)


def shown_value(loc: Sequence[int | str], value: Any) -> str:
    """``value`` (the input at ``loc``) as a validation message may quote it: its
    ``repr``, but ``'<redacted>'`` for a secret (:func:`is_secret_location`), URLs
    without user info and query string and header values hidden at any depth
    (:func:`evalkit.io.redaction.redact_structure`), registered secrets masked, and cut to
    about 60 characters (:func:`evalkit.io.limits.shown`). Every formatter of a
    declarative file quotes an input through it."""
    from evalkit.io.redaction import REDACTED, mask, redact_structure

    if is_secret_location(loc):
        return repr(REDACTED)
    last = next((p for p in reversed(loc) if isinstance(p, str)), "")
    return mask(shown(redact_structure(value, last if last.lower() != "headers" else "")))


def did_you_mean(key: str, known: Sequence[str], hints: Mapping[str, str] | None = None
                 ) -> str:
    """`` (hint)`` for a key with a known meaning elsewhere, else `` (did you mean 'x'?)``
    for a close match among ``known``, else ``""``."""
    if hints and key in hints:
        return f" ({hints[key]})"
    close = close_matches(key, known)
    return f" (did you mean {close[0]!r}?)" if close else ""


def where(source: str, line: int | None) -> str:
    """``"file:line"``, or ``"file"`` when the line is unknown."""
    return source if line is None else f"{source}:{line}"


def located(source: str, problem: Problem,
            line_of: Callable[[Sequence[int | str]], int | None] | None, *,
            line_last: bool = False) -> str:
    """``"file:line: problem"`` (``line_of`` maps a location to its line, when known), or
    with ``line_last`` ``"file: problem (line N)"``, the form of the checks file's messages
    (which start with the check). A problem with a related location names both lines at
    the end: ``"file: problem (lines 2 and 6)"``."""
    line = None if line_of is None or problem.loc is None else line_of(problem.loc)
    if problem.related is not None:
        first = None if line_of is None else line_of(problem.related)
        lines = f" (lines {first} and {line})" if line is not None and first is not None \
            else ""
        return f"{source}: {problem.message}{lines}"
    if line_last:
        return f"{source}: {problem.message}" + ("" if line is None else f" (line {line})")
    return f"{where(source, line)}: {problem.message}"


__all__ = [
    "MISSING",
    "RULE",
    "Loc",
    "Problem",
    "did_you_mean",
    "first_error",
    "is_rule",
    "is_secret_location",
    "located",
    "rule",
    "rule_message",
    "shown_value",
    "value_at",
    "where",
]
