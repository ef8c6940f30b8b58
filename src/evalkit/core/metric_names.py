"""How measures are named: ir_measures' syntax, trec_eval's spellings, canonical names.

A name is ``Base``, ``Base@cutoff``, ``Base(param=value, ...)`` or
``Base(param=value, ...)@cutoff`` (ir_measures' syntax: ``P(rel=2)@5``,
``nDCG(dcg=exp-log2)@10``, ``RBP(p=0.8)``, ``IPrec@0.5``). A parameter value is a Python
literal (``2``, ``0.8``, ``'exp-log2'``, ``True``, ``{1: 3, 2: 9}``, ``(0.25, 0.5)``) or a
bare word (``exp-log2``); any other text is taken as written
(``regex(pattern=^[0-9]+ items$)`` gives the text ``^[0-9]+ items$``), for the measure to
accept or refuse. trec_eval's spellings of one cut-off, ``P_10``, ``P.10``,
``ndcg_cut_10`` and ``iprec_at_recall_0.50``, are ``Base@cutoff`` too
(:func:`trec_spelling`).

The canonical name stored in artifacts, checks and reports is built by :func:`canonical`:
the base, then the parameters that differ from the measure's defaults sorted by name, then
the cut-off (``precision(rel=2)@5``, ``ndcg(dcg=exp-log2)@10``, ``rbp(p=0.8)``,
``iprec@0.5``); numbers are written in their shortest form (``0.5``, ``2``).

:func:`split_measure_args` splits ``-m`` values the way the command line does, and a
:class:`MeasureRequest` is what they ask for once read (by a plugin's measure syntax, or
as typed).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = [
    "MeasureRequest",
    "MetricNameError",
    "ParsedName",
    "canonical",
    "format_value",
    "parse_name",
    "split_measure_args",
    "trec_spelling",
]

_BASE = re.compile(r"^[A-Za-z0-9_]+$")
_BARE = re.compile(r"^[A-Za-z0-9_.+\-]+$")
_TREC_CUT = re.compile(r"^(?P<base>.+?)[_.](?P<k>\d+(?:\.\d*)?|\.\d+)$")
_OPEN = {"(": ")", "[": "]", "{": "}"}
#: two letters in a row: a measure's name (``11pt_avg``), never a trec_eval parameter
_WORD = re.compile(r"[A-Za-z_]{2,}")


class MetricNameError(ValueError):
    """A measure name that cannot be parsed (the message says where and why)."""


class ParsedName(NamedTuple):
    """A parsed measure name.

    Attributes:
        base: the measure's name (``"P"``, ``"nDCG"``).
        params: ``{name: value}`` from the parentheses (empty without them).
        cutoff: the text after ``@``, or ``None``.
    """

    base: str
    params: dict[str, Any]
    cutoff: str | None


def parse_name(text: str) -> ParsedName | None:
    """``text`` as ``Base(params)@cutoff``, or ``None`` when it is not of that shape.

    Raises:
        MetricNameError: the parentheses are there but their content cannot be read
            (a piece without ``=``, a parameter given twice).
    """
    name = text.strip()
    cutoff: str | None = None
    at = _top_level_at(name)
    if at is not None:
        name, cutoff = name[:at], name[at + 1:].strip()
        if not cutoff:
            return None
    params: dict[str, Any] = {}
    if name.endswith(")") and "(" in name:
        base, _, inside = name.partition("(")
        params = _parse_params(inside[:-1], text)
        name = base
    if not _BASE.match(name):
        return None
    return ParsedName(name, params, cutoff)


def _top_level_at(text: str) -> int | None:
    depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "@" and depth == 0:
            return i
    return None


def split_outside_brackets(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _parse_params(inside: str, text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not inside.strip():
        return out
    for piece in split_outside_brackets(inside):
        key, eq, raw = piece.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise MetricNameError(
                f"{text!r}: parameter {piece.strip()!r} is not of the form name=value "
                "(e.g. P(rel=2)@5, nDCG(dcg=exp-log2)@10)"
            )
        if key in out:
            raise MetricNameError(f"{text!r}: parameter {key!r} is given twice")
        out[key] = _value(raw.strip(), text)
    return out


def _value(raw: str, text: str) -> Any:
    """A Python literal, else the text as written (a bare word such as ``exp-log2``, or a
    pattern such as ``^[0-9]+ items$``): the measure checks the type it needs."""
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw


def trec_spelling(text: str) -> tuple[str, str] | None:
    """trec_eval's ``base_k`` / ``base.k`` as ``(base, k)`` (``"ndcg_cut_10"`` ->
    ``("ndcg_cut", "10")``, ``"iprec_at_recall_0.50"`` -> ``("iprec_at_recall",
    "0.50")``), or ``None``."""
    m = _TREC_CUT.match(text.strip())
    return (m["base"], m["k"]) if m else None


def format_value(value: Any) -> str:
    """A parameter value as canonical names write it: integers and floats in their
    shortest form (``2``, ``0.5``; an integral float as an integer), booleans as
    ``True``/``False``, a word as itself (quoted only when it needs quotes), a mapping as
    ``{key:value,...}`` sorted by key, a sequence as ``(a,b,...)``."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value if _BARE.match(value) else repr(value)
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: (str(type(kv[0])), kv[0]))
        return "{" + ",".join(f"{format_value(k)}:{format_value(v)}" for k, v in items) + "}"
    if isinstance(value, Sequence):
        return "(" + ",".join(format_value(v) for v in value) + ")"
    return repr(value)


def canonical(base: str, params: Mapping[str, Any] | None = None,
              cutoff: float | int | None = None) -> str:
    """The canonical name of a measure: ``base``, its ``params`` (those a caller set to
    something other than the default; ``None`` values are left out) sorted by name, and
    its cut-off: ``canonical("precision", {"rel": 2}, 5) == "precision(rel=2)@5"``."""
    shown = {k: v for k, v in (params or {}).items() if v is not None}
    name = base
    if shown:
        name += "(" + ",".join(f"{k}={format_value(v)}" for k, v in sorted(shown.items())) + ")"
    if cutoff is not None:
        name += "@" + format_value(cutoff)
    return name


def split_measure_args(values: Sequence[str] | None) -> list[str]:
    """Split ``-m`` values into measure names: ``-m a -m b,c`` gives ``a``, ``b``, ``c``.

    Commas split only outside parentheses (``-m "P(rel=2)@5,AP"`` is two measures), and a
    piece that starts with a digit, ``.``, ``+`` or ``-`` continues the trec_eval parameter
    list of the measure before it: ``-m P.5,10`` is ``P.5,10`` and ``-m utility.2,-1,0,0``
    is ``utility.2,-1,0,0``, as trec_eval reads them (a piece holding a word, such as
    ``11pt_avg``, is a measure of its own). Order is kept and repeats dropped.

    Raises:
        MetricNameError: a value names no measure (``-m ""``, ``-m ,``), or a continuation
            follows no measure with a trec_eval parameter list.
    """
    out: list[str] = []
    for value in values or ():
        names: list[str] = []
        for raw in split_outside_brackets(value):
            piece = raw.strip()
            if not piece:
                continue
            if piece[0] in "0123456789.+-" and names and not _WORD.search(piece):
                if "." not in names[-1] or "@" in names[-1] or "(" in names[-1]:
                    raise MetricNameError(
                        f"-m {value!r}: {piece!r} would continue a trec_eval parameter "
                        f"list, but {names[-1]!r} has none; write -m P.5,10 (trec_eval) "
                        "or -m P@5,P@10"
                    )
                names[-1] += "," + piece
                continue
            names.append(piece)
        if not names:
            raise MetricNameError(
                f"-m {value!r} names no metric; give one or more names (-m ap -m ndcg@10 or "
                "-m ap,ndcg@10)"
            )
        for name in names:
            if name not in out:
                out.append(name)
    return out


class MeasureRequest(NamedTuple):
    """What ``-m`` values ask for: the measures to score and show, and what a run format
    reads beside them. A measure syntax's ``expand`` returns one
    (:class:`~evalkit.core.specs.MeasureSyntaxSpec`); values no syntax reads make
    ``MeasureRequest(pieces, asked=bool(pieces))``.

    Attributes:
        names: measure names in the order asked (canonical where the syntax resolved them,
            else as typed, for the registry to resolve).
        asked: whether any ``-m`` value was given (``names`` may still be empty:
            trec_eval's ``-m runid`` asks for a line of its layout only).
        layout: what the run format ``format`` reads beside the names (for trec_eval's:
            ``labels``, the line name of a measure where it is not the usual one;
            ``relstring``, its length or ``None``; ``header``, the ``runid`` / ``num_q``
            lines; ``counts``, whether the counts are printed; ``lines``, the values that
            name a line of the layout, which only ``format`` prints). Empty by default.
        format: the run format (``evalkit eval --format``) the values were written for;
            when they name no measure, only that format can print them.
        scored: what must be scored to print such a request (trec_eval's ``runid`` line
            needs a ranking evaluated: ``("num_ret",)``).
    """

    names: list[str]
    asked: bool = False
    layout: Mapping[str, Any] = MappingProxyType({})
    format: str | None = None
    scored: tuple[str, ...] = ()

    @property
    def lines_only(self) -> bool:
        """Values were given, and they name no measure, only lines of :attr:`format`."""
        return self.asked and not self.names

    def to_score(self, default: Sequence[str], output: str) -> list[str]:
        """The measures to score for ``evalkit eval --format OUTPUT``: those asked for,
        else ``default``; for :attr:`lines_only`, :attr:`scored`.

        Raises:
            MetricNameError: lines of :attr:`format`'s layout named (``layout["lines"]``),
                alone or beside measures, with another format than :attr:`format`.
        """
        lines = list(self.layout.get("lines") or ())
        if lines and self.format is not None and output != self.format and self.names:
            one = len(lines) == 1
            what, it = ("a line", "it") if one else ("lines", "them")
            raise MetricNameError(
                f"-m {', '.join(lines)}: {what} of the {self.format} format's layout, not "
                f"{'a measure' if one else 'measures'}: add --format {self.format} to print "
                f"{it}, or leave {it} out (the {output} output says how many queries were "
                "evaluated)")
        if not self.lines_only:
            return self.names or list(default)
        if self.format is None or output != self.format:
            raise MetricNameError(
                f"the -m values name no measure, only lines of the {self.format} format's "
                f"layout: add --format {self.format}, or name a measure (-m ap)")
        return list(self.scored)
