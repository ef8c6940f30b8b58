"""What ``evalkit run`` says when the target factory of an eval config refuses its
keyword arguments: the file, the line of the offending key under ``target.kwargs``, and
the problem in words.

A factory reports a problem with one of its keyword arguments by raising
:class:`evalkit.io.model_errors.Problem` whose ``loc`` is the key path under ``kwargs``
(the ``http`` factory does: an unknown option with its did-you-mean, a header referring
to an unset environment variable); Python's own ``TypeError: f() got an unexpected
keyword argument 'x'`` is located the same way, and so is a ``ValueError`` naming one
key (``HttpTarget timeout_s must be a finite number > 0``). Any other exception is shown as
``<factory>(**kwargs) raised <Type>: <message>``, masked (:mod:`evalkit.io.redaction`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalkit.io.model_errors import Loc, Problem, located
from evalkit.io.redaction import error_text, mask

_UNEXPECTED = re.compile(r"got an unexpected keyword argument '([^']+)'")


def _mentioned(text: str, kwargs: Mapping[str, Any]) -> Loc | None:
    """The one key of ``kwargs`` (or header name under ``headers``) that ``text`` names as
    a word (``HttpTarget timeout_s must be ...``), or None when none or several are."""
    found: list[Loc] = [(k,) for k in kwargs if re.search(rf"(?<![\w.]){re.escape(k)}\b", text)]
    headers = kwargs.get("headers")
    if isinstance(headers, Mapping):
        found += [("headers", str(h)) for h in headers if f"header {str(h)!r}" in text]
    return found[0] if len(found) == 1 else None


def _kwarg_problem(exc: Exception, factory: str, kwargs: Mapping[str, Any]) -> Problem | None:
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, TypeError):
        m = _UNEXPECTED.search(str(exc))
        if m is not None:
            return Problem((m.group(1),), f"{factory}(**kwargs) takes no keyword argument "
                           f"{m.group(1)!r}")
    if isinstance(exc, ValueError | TypeError):
        loc = _mentioned(str(exc), kwargs)
        if loc is not None:
            return Problem(loc, str(exc))
    return None


def factory_error(exc: Exception, *, source: str, factory: str, kwargs: Mapping[str, Any],
                  line_of: Callable[[Sequence[int | str]], int | None] | None) -> str:
    """The one-line message for ``exc``, raised by the factory ``factory`` of the config
    ``source`` called with ``kwargs`` (``line_of`` maps a location of the config to its
    line, when known). A ``ValueError`` or ``TypeError`` whose message names exactly one
    key of ``kwargs`` as a word (or one header as ``header 'Name'``) is located there."""
    problem = _kwarg_problem(exc, factory, kwargs)
    if problem is None:
        return f"{source}: target.factory: {factory}(**kwargs) raised {error_text(exc)}"
    loc = ("target", "kwargs", *(problem.loc or ()))
    key = ".".join(str(p) for p in loc)
    return located(source, Problem(loc, mask(f"{key}: {problem.message}")), line_of)


def yaml_lines(path: Path) -> Callable[[Sequence[int | str]], int | None] | None:
    """The line finder of the YAML file ``path`` (``None`` for a TOML file or a file that
    cannot be read again: the message then names no line)."""
    if path.suffix not in (".yaml", ".yml"):
        return None
    from evalkit.io.bounded_yaml import load_marked

    try:
        return load_marked(path.read_text(encoding="utf-8-sig")).line
    except Exception:  # the file changed since it was read: no line rather than an error
        return None


__all__ = ["factory_error", "yaml_lines"]
