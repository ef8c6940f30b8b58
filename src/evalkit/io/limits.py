"""The bounds evalkit puts on what it reads, and the bounded readers that enforce them.

Hostile or broken input (a YAML alias bomb, JSON nested 100,000 deep, a one-megabyte
"id") is refused quickly with a one-line :class:`LimitError` that the caller turns into
its own error naming the file and line; it never becomes a ``RecursionError``, a
``MemoryError`` or a hang.

* :data:`MAX_DEPTH`: JSON (golden JSON Lines, CSV cells, HTTP bodies) and YAML (golden
  sets, checks, eval configs) nest at most this many levels of lists and mappings.
  Artifact lines may nest :data:`MAX_ARTIFACT_DEPTH` (a row adds levels above a
  response's raw body).
* YAML: at most :data:`MAX_YAML_NODES` nodes are composed, and aliases may add at most
  :data:`MAX_ALIAS_NODES` nodes in total when expanded (an alias counts as a copy of the
  whole node it names), so that a 600-byte "billion laughs" is refused in milliseconds
  instead of expanding to gigabytes. :mod:`evalkit.io.bounded_yaml` applies them with
  pyyaml's own ``SafeLoader`` and a composer that counts.
* :data:`MAX_ID_CHARS`: the longest case, query or document id; :data:`MAX_NAME_CHARS`:
  the longest run name or TREC run tag. Longer ones are refused (not printed back).
* :data:`MAX_INFLATED_BYTES`: the most a gzip TREC run or qrels file is decompressed to
  (1 GiB); a larger one is refused, naming the file and the cap (decompress it and pass
  the plain file, if it really is that large). :data:`MAX_INFLATE_RATIO`: past 16 MiB,
  such a file may decompress to at most 100 times the compressed bytes read (TREC text
  compresses 4 to 10 times; a file of one line repeated, 400 times or more), so that the
  time spent reading stays in proportion to the file's size: a 3 MB file is refused after
  16 MiB, not read for minutes up to the 1 GiB cap. Topic and BEIR files have their own caps
  (:func:`evalkit.io.user_files.gunzipped`).
* :data:`MAX_EPOCHS`: the most samples per case (``epochs: K``); the (case, sample) work
  items are planned before the first call, so ``epochs: 1000000000`` is refused at once
  instead of filling memory.
* :data:`MAX_WAIT_S`: the longest wait one option may ask for, one hour: the grace
  period after Ctrl-C (``grace_s``, ``--grace-s``; :data:`MAX_GRACE_S`), and
  ``HttpTarget``'s ``timeout_s``, ``retry_backoff_s``, ``retry_after_max_s`` and
  ``rate_limit_total_s``; so that ``--grace-s 1e12`` or ``timeout_s: 1e9`` is refused
  rather than leaving a run waiting for ever on a call that never ends.
* :data:`MAX_RETRIES`: the most retries of one failed request an option may ask for
  (``HttpTarget``'s ``retries``, ``LLMJudge``'s ``max_retries``): 10, so that with the
  longest attempt deadline a call still ends within hours.
* :data:`MAX_METRIC_FILE_BYTES`: the largest file a metric reads for its definition (a
  ``json_schema(schema=PATH)`` schema, a judge's price table): 16 MiB, read by
  :func:`read_capped`, which never reads more than the cap plus one byte, so
  ``schema=/dev/zero`` or a multi-gigabyte file is refused at once instead of filling
  memory while every metric name is resolved.
* :data:`MAX_CSV_COLUMNS`: the most columns a CSV golden set's header names (10,000; a
  golden set has tens); repeated names are found in one pass (:func:`repeated`), never by
  comparing each name with those before it, which takes minutes on 100,000 columns.
* :data:`MIN_LABEL` .. :data:`MAX_LABEL`: a relevance label is a 64-bit signed integer,
  trec_eval's ``long`` (:func:`label_problem`); ``10**30`` in a qrels file is refused with
  its line instead of overflowing where the labels become arrays.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

MAX_DEPTH = 100
MAX_ARTIFACT_DEPTH = MAX_DEPTH + 5
MAX_YAML_NODES = 5_000_000
MAX_ALIAS_NODES = 100_000
MAX_ID_CHARS = 1024
MAX_NAME_CHARS = 256
#: the most samples per case (``epochs``): K x cases work items are planned up front
MAX_EPOCHS = 10_000
#: the most bytes a gzip input (a TREC run or qrels file) is decompressed to: a
#: "decompression bomb" of 19 MB that inflates to gigabytes is refused there
MAX_INFLATED_BYTES = 1 << 30
#: the most times its compressed size a gzip TREC run or qrels file may decompress to,
#: once past 16 MiB (:class:`evalkit.io.gzip_data.InflateRatioError`)
MAX_INFLATE_RATIO = 100
#: the largest file a metric reads for its definition (bytes)
MAX_METRIC_FILE_BYTES = 16 << 20
#: the longest wait one option may ask for (seconds)
MAX_WAIT_S = 3600.0
#: the longest grace period after Ctrl-C (seconds)
MAX_GRACE_S = MAX_WAIT_S
#: the most retries of one failed request (a 5xx, a transport failure)
MAX_RETRIES = 10
#: the most columns a CSV header (a golden set's) may name
MAX_CSV_COLUMNS = 10_000
MIN_LABEL = -(2**63)
MAX_LABEL = 2**63 - 1


class LimitError(ValueError):
    """Input beyond one of the bounds of this module.

    Attributes:
        line: the 1-based line where it was found, when known (YAML); the caller adds the
            file (and the line, for one-document-per-line formats).
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def label_problem(label: int) -> str | None:
    """Why ``label`` cannot be a relevance label (outside the 64-bit range), or ``None``."""
    if MIN_LABEL <= label <= MAX_LABEL:
        return None
    return (f"the relevance label {label} is outside the range of a 64-bit integer "
            f"({MIN_LABEL} to {MAX_LABEL}); labels are small grades such as 0-3")


# ------------------------------------------------------------------ JSON
def _too_deep(limit: int) -> LimitError:
    return LimitError(f"nested more than {limit} levels deep (lists and objects); "
                      "evalkit refuses deeper JSON")


class RepeatedKeyError(LimitError):
    """A key written twice in one JSON object (or YAML mapping): the format keeps only
    the last value, so a declarative file that repeats a key would silently lose one."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKeyError(
                f"key {key!r} appears twice in one JSON object; JSON keeps only the last "
                "value, so evalkit refuses it: remove or merge one of them")
        out[key] = value
    return out


class NotJsonError(LimitError):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's :mod:`json` reads them, but RFC 8259
    has no such literal, so a document that holds one is not JSON."""


def refuse_constant(name: str) -> Any:
    """The ``parse_constant`` hook of :func:`json.loads` that refuses ``NaN``,
    ``Infinity`` and ``-Infinity``.

    Raises:
        NotJsonError: always, naming the literal.
    """
    raise NotJsonError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity); send null "
                       "or a string instead")


def json_problem(exc: json.JSONDecodeError) -> str:
    """What ``json`` could not read and where on the line: ``"Unterminated string
    starting at column 12"`` (its message without a dangling "at", and the column)."""
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"


def loads_json(text: str | bytes, max_depth: int = MAX_DEPTH, *,
               unique_keys: bool = False, constants: bool = True) -> Any:
    """``json.loads(text)``, refusing a document nested deeper than ``max_depth``; with
    ``unique_keys``, also an object that repeats a key (declarative files: goldens,
    price tables, schemas; an HTTP target's body; RFC 8259 section 4 leaves its meaning
    undefined); with ``constants=False``, also ``NaN``, ``Infinity`` and ``-Infinity``,
    which are not JSON (:func:`refuse_constant`).

    Raises:
        json.JSONDecodeError: not JSON (as ``json.loads``).
        UnicodeDecodeError: bytes that are not UTF-8.
        LimitError: nested too deeply; :class:`RepeatedKeyError`, a repeated key;
            :class:`NotJsonError`, a refused constant.
    """
    hooks: dict[str, Any] = {}
    if unique_keys:
        hooks["object_pairs_hook"] = _unique_pairs
    if not constants:
        hooks["parse_constant"] = refuse_constant
    try:
        value = json.loads(text, **hooks)
    except RecursionError:
        raise _too_deep(max_depth) from None
    except (json.JSONDecodeError, LimitError, UnicodeDecodeError):
        raise  # UnicodeDecodeError is a ValueError too: bytes that are not UTF-8
    except ValueError:  # an integer of more digits than Python converts
        raise LimitError(
            f"an integer of more than {sys.get_int_max_str_digits()} digits is not read "
            "(Python's limit for converting integer text); write the number with an "
            "exponent (1.5e4300), or as text") from None
    check_depth(value, max_depth, text)
    return value


def check_depth(value: Any, max_depth: int = MAX_DEPTH, text: str | bytes | None = None
                ) -> None:
    """Refuse ``value`` (decoded JSON or YAML) when lists and mappings nest deeper than
    ``max_depth``. With ``text``, the JSON it was decoded from, a document with at most
    ``max_depth`` opening brackets is accepted without walking it.

    Raises:
        LimitError: nested too deeply.
    """
    if text is not None:
        opening = (text.count(b"[") + text.count(b"{")) if isinstance(text, bytes) \
            else (text.count("[") + text.count("{"))
        if opening <= max_depth:
            return
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > max_depth:
            raise _too_deep(max_depth)
        children = current.values() if isinstance(current, dict) else current
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))


class NotRegularError(OSError):
    """The path is a pipe, socket or device (raised by :func:`open_regular`, with which
    :mod:`evalkit.io.user_files` reads user files)."""


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for binary reading, without blocking on a named pipe.

    Raises:
        FileNotFoundError, PermissionError, OSError: as ``open``.
        IsADirectoryError: a directory.
        NotRegularError: a pipe, socket or device (checked on the open file).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularError(errno.EINVAL, "is a pipe or device, not a regular file",
                                  str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: Path, max_bytes: int = MAX_METRIC_FILE_BYTES) -> bytes:
    """The bytes of the file ``path``, reading at most ``max_bytes + 1`` of them (a
    device or a pipe that never ends is refused too).

    Raises:
        OSError: as ``open`` and ``read`` (a directory: ``IsADirectoryError``).
        LimitError: the file holds more than ``max_bytes`` bytes (the message gives the
            cap in MiB), or is a pipe or device (opened without blocking, then refused).
    """
    try:
        with open_regular(path) as fh:
            data = fh.read(max_bytes + 1)
    except NotRegularError:
        raise LimitError("a pipe or device, not a regular file; save it to a file and "
                         "pass its path") from None
    if len(data) > max_bytes:
        raise LimitError(f"larger than {max_bytes / (1 << 20):g} MiB; evalkit reads at "
                         "most that much of a file that defines a metric")
    return data


# ------------------------------------------------------------------ repeats
_H = TypeVar("_H", bound=Hashable)


def repeated(items: Iterable[_H]) -> list[_H]:
    """The items of ``items`` that appear more than once, each once, in the order of their
    second appearance; one pass with a set (linear time), for every "listed twice" check
    of a header, a list of ids or of names."""
    seen: set[_H] = set()
    out: dict[_H, None] = {}
    for item in items:
        if item in seen:
            out[item] = None
        else:
            seen.add(item)
    return list(out)


def first_repeated(items: Iterable[_H]) -> _H | None:
    """The first item of ``items`` equal to one before it, or ``None`` (linear time; stops
    there)."""
    seen: set[_H] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


# ------------------------------------------------------------------ values in messages
#: the most characters of one user value a message quotes (:func:`shown`)
MAX_SHOWN_CHARS = 60


def shown(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """``value`` as a message quotes it: its ``repr``, cut to about ``limit`` characters
    with ``...`` and, for a long string, its length (``'aaaa...' (209,715,200
    characters)``). Built by :mod:`reprlib`, so a 200 MB string or a list of a million
    items is never copied whole into the message; every message that echoes a value read
    from a user's file goes through it."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring = r.maxother = limit
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = r.maxfrozenset = r.maxdeque = 6
    r.maxlevel = 3
    text = r.repr(value)
    if isinstance(value, str) and len(value) > limit:
        text += f" ({len(value):,} characters)"
    return text


# ------------------------------------------------------------------ ids and names
def check_length(text: str, what: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters.

    Raises:
        LimitError: longer; the message gives its length and a short prefix, never the
            whole text.
    """
    if len(text) > limit:
        raise LimitError(f"the {what} is {len(text)} characters long (starts "
                         f"{text[:20]!r}); the limit is {limit}")
    return text


def control_at(text: str) -> int | None:
    """The position of the first control character of ``text`` (Unicode category Cc:
    U+0000..U+001F, U+007F..U+009F, a NUL written ``\\u0000`` in JSON included), line
    or paragraph separator (U+2028, U+2029) or lone surrogate (U+D800..U+DFFF, written
    ``\\ud800`` in JSON: UTF-8 cannot write it), or ``None``: characters that break a
    table row or a terminal line, or every output written as UTF-8."""
    if text.isprintable():  # no character of category Cc, Zl, Zp or Cs (nor any other C, Z)
        return None
    import unicodedata

    return next((i for i, ch in enumerate(text)
                 if (ch < " " or ch >= "\x7f")
                 and unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs")), None)


def _unprintable(text: str, at: int) -> str:
    """How messages name the character :func:`control_at` found at ``at``."""
    ch = text[at]
    if "\ud800" <= ch <= "\udfff":
        return (f"a lone surrogate (U+{ord(ch):04X} at position {at}, \\u{ord(ch):04x} in "
                "JSON), which UTF-8 cannot write")
    return f"a control character ({ch!r} at position {at})"


def check_id(text: str, what: str = "id") -> str:
    """``text`` when it is at most :data:`MAX_ID_CHARS` characters (see
    :func:`check_length`), holds no control character or line separator
    (:func:`control_at`) and starts and ends with a character that is not white space
    (``" a "`` could never match the ``a`` of a TREC file or a ranking).

    Raises:
        LimitError: the first of these problems, naming ``what`` and saying what to write.
    """
    check_length(text, what, MAX_ID_CHARS)
    bad = control_at(text)
    if bad is not None:
        raise LimitError(f"{what} {text[:40]!r} holds {_unprintable(text, bad)}; ids are "
                         "printable text: remove it")
    if text.strip() != text and text.strip():
        end = "start" if text[0].isspace() else "end"
        raise LimitError(f"{what} {text[:40]!r} has white space at its {end}, so it "
                         "can never match an id of a TREC file or a ranking; write "
                         f"{text.strip()[:40]!r}")
    return text


def ids_pass(texts: list[str]) -> bool:
    """Whether :func:`check_id` accepts every one of ``texts``, tested at once (a file's
    row ids): ``False`` when one may be refused, and the caller then checks each to name
    it and its line."""
    return (max(map(len, texts), default=0) <= MAX_ID_CHARS
            and "".join(texts).isprintable()  # no control character nor separator
            and [t.strip() for t in texts] == texts)


def text_problem(text: str, what: str) -> str | None:
    """Why ``text`` (a query, an answer: free text) cannot be read, or None: it holds a
    NUL character (``\\u0000`` in JSON), refused in every format (docs/runner.md)."""
    nul = text.find("\x00")
    if nul < 0:
        return None
    return (f"{what} holds a NUL character (\\u0000 at position {nul}); remove it (a NUL "
            "is refused in every format)")


def check_name(text: str, what: str = "run name") -> str:
    """``text`` when it is not blank and at most :data:`MAX_NAME_CHARS` characters (see
    :func:`check_length`).

    Raises:
        ValueError: ``text`` is empty or only whitespace (``""``, ``"   "``): a run
            named so cannot be told apart in a table or a comparison; as the eval
            config refuses it; or it holds a control character or line separator
            (:func:`control_at`: a terminal escape would be printed raw).
        LimitError: ``text`` is longer than the limit.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the {what} {text!r} is blank; give a name with a visible "
                         "character, or leave it out for the default")
    bad = control_at(text)
    if bad is not None:  # a terminal escape or a line break would be printed raw
        raise ValueError(f"the {what} {text[:40]!r} holds {_unprintable(text, bad)}; names "
                         "are printable text")
    return check_length(text, what, MAX_NAME_CHARS)


__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_ARTIFACT_DEPTH",
    "MAX_CSV_COLUMNS",
    "MAX_DEPTH",
    "MAX_GRACE_S",
    "MAX_ID_CHARS",
    "MAX_INFLATED_BYTES",
    "MAX_INFLATE_RATIO",
    "MAX_METRIC_FILE_BYTES",
    "MAX_NAME_CHARS",
    "MAX_RETRIES",
    "MAX_SHOWN_CHARS",
    "MAX_WAIT_S",
    "MAX_YAML_NODES",
    "LimitError",
    "NotJsonError",
    "NotRegularError",
    "RepeatedKeyError",
    "check_depth",
    "check_id",
    "check_length",
    "check_name",
    "first_repeated",
    "loads_json",
    "open_regular",
    "read_capped",
    "refuse_constant",
    "repeated",
    "shown",
    "text_problem",
]
