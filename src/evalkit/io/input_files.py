"""What an input file is, and the refusal of a path that is not a file to read.

:func:`sniff` reads the first bytes of a file and classifies them: a run artifact, a TREC
run or qrels file, a golden set (JSON Lines, YAML or CSV), a labels file, an evalkit YAML
file, other JSON, binary data, an empty file, a directory.
:func:`evalkit.compare` and the commands use it when an input is not what they expect, to
name what it looks like and what they need instead (``evalkit eval qrels.txt`` says "looks
like a TREC qrels file" rather than "is a TREC run file"); those messages are
:mod:`evalkit.io.input_messages`. :func:`require_file` and :func:`refuse_directory` refuse
a path that is missing, a folder, standard input or a pipe, and
:func:`require_artifact_rows` a run artifact without rows. Only the standard library and
:mod:`evalkit.io` are imported.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from evalkit.io.limits import MAX_ARTIFACT_DEPTH, LimitError, loads_json
from evalkit.io.setting_names import SettingError
from evalkit.io.symlink_loops import refuse_symlink_loop
from evalkit.io.text_lines import ASCII_SPACE, text_lines

#: bytes inspected (after gzip decompression, when the file is compressed)
SNIFF_BYTES = 1 << 16

Kind = Literal[
    "missing", "directory", "unreadable", "damaged", "empty", "binary", "artifact", "goldens",
    "labels", "json", "cut", "refused", "qrels", "run", "text", "not_utf8", "yaml",
]

class InputError(SettingError):
    """An input file that is missing, a directory or not what the function takes; the
    message names the file and says what to pass (a setting it names is spelled as the
    command line's option there: :class:`~evalkit.io.setting_names.SettingError`)."""


RUN_LINE = "qid Q0 docno rank score tag"
QRELS_LINE = "qid 0 docno label"


@dataclass(frozen=True)
class Sniffed:
    """What :func:`sniff` found.

    Attributes:
        kind: the classification.
        looks_like: a phrase for messages, e.g. ``"a TREC qrels file (4 fields per line:
            qid 0 docno label)"``; for ``"refused"`` (a first line a limit of
            :mod:`evalkit.io.limits` refuses: nested too deeply, an integer too long),
            the limit's message.
        line: the 1-based number of the first data line inspected, when there is one.
        role: for ``"yaml"``, which evalkit file its top-level keys make it (a key of
            :data:`YAML_ROLES`: ``"checks"``, ``"config"``, ``"collections"``,
            ``"goldens"``), else ``""``.
    """

    kind: Kind
    looks_like: str
    line: int | None = None
    role: str = ""


#: the YAML files evalkit reads: ``role: (what it is, where it is passed)``
YAML_ROLES: dict[str, tuple[str, str]] = {
    "checks": ("a gate checks file (YAML)", "pass it as `evalkit gate --checks FILE`"),
    "config": ("an eval config (evalkit.yaml)",
               "pass it as `evalkit run CONFIG` or `evalkit gate --config CONFIG`"),
    "collections": ("a collections file (YAML)",
                    "pass it as `evalkit compare --collections FILE`"),
    "goldens": ("a golden set (YAML cases with id and query)",
                "name it as goldens: in evalkit.yaml and run it with `evalkit run` (a golden "
                "set with labels is also read by --labels)"),
}

_YAML_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]|$)")
#: a ``query`` key of a case in a YAML list (``- query: ...``, ``  query: ...``,
#: ``- {id: c1, query: ...}``)
_YAML_CASE_QUERY = re.compile(r"(?:^[- \t]*|[{,][ \t]*)[\"']?query[\"']?[ \t]*:(?:[ \t]|$)")
_CONFIG_KEYS = frozenset({"target", "goldens", "output", "goldens_loader"})


def _yaml_role(keys: set[str], lines: list[str]) -> str:
    """The evalkit YAML file whose top-level ``keys`` these are, or ``""``; a top-level
    list (``lines``, the data lines, start with ``-``) whose items have a ``query`` is a
    golden set."""
    if lines[0].startswith("-"):
        return "goldens" if any(_YAML_CASE_QUERY.search(s) for s in lines) else ""
    if keys & _CONFIG_KEYS:
        return "config"
    for role in ("checks", "collections"):
        if role in keys:
            return role
    return "goldens" if "cases" in keys else ""


def _head(path: Path) -> tuple[bytes, int] | None:
    """Up to :data:`SNIFF_BYTES` bytes of ``path`` (decompressed when it is gzip) from its
    first line of data, and the number of blank and comment lines before that line; None
    when the first :data:`SKIP_BYTES` bytes (decompressed) hold only blank or comment lines.

    Blank and comment lines are skipped (:func:`_first_data_line`) a block at a time, the
    same way in a plain file and in gzip data; a file with nothing else gives what is
    left of its last block.

    Raises:
        DamagedGzipError: gzip data damaged within what is read, or cut short.
    """
    from evalkit.io.gzip_data import GzipReader, inflate, is_gzip

    with path.open("rb") as fh:
        raw = fh.read(SNIFF_BYTES + 1)
        whole = len(raw) <= SNIFF_BYTES
        head = raw[:SNIFF_BYTES]
        gz = is_gzip(head)
        if gz:
            head = inflate(head, SNIFF_BYTES, complete=whole)[:SNIFF_BYTES]
        found = _first_data_line(head)
        if found is not None and found[0] == 0:  # the usual case: data from the first line
            return head, 0
        if len(head) < SNIFF_BYTES:  # the whole file
            return (head, 0) if found is None else (head[found[0]:], found[1])
        # blank or comment lines first: read on from the start, a block at a time
        fh.seek(0)
        if gz:  # decompressed a block at a time, no further than the blocks read
            text: BinaryIO = io.BufferedReader(
                GzipReader(fh, SKIP_BYTES + SNIFF_BYTES), SNIFF_BYTES)
            return _from_data_line(text)
        return _from_data_line(fh)


#: the most bytes of a file (decompressed, when it is gzip) :func:`sniff` reads looking
#: for its first data line: past them, the file's own reader says what it holds
SKIP_BYTES = 4 << 20

_NOT_BLANK = re.compile(rb"[^ \t\r\n\x0b\x0c]")


def _first_data_line(block: bytes, start: int = 0) -> tuple[int, int] | None:
    """``(offset, lines before)`` of the first line of ``block`` from ``start`` holding
    something other than white space that is not a ``#`` comment, or None."""
    pos, lines = start, 0
    while True:
        m = _NOT_BLANK.search(block, pos)
        if m is None:
            return None
        at = m.start()
        lines += block.count(b"\n", pos, at)
        line_start = block.rfind(b"\n", pos, at) + 1 or pos
        if block[at:at + 1] != b"#":
            return max(line_start, pos), lines
        end = block.find(b"\n", at)
        if end < 0:
            return None
        pos, lines = end + 1, lines + 1


def _from_data_line(fh: BinaryIO) -> tuple[bytes, int] | None:
    """:func:`_head` over the text read from ``fh``, :data:`SNIFF_BYTES` at a time: blank
    and comment lines skipped a block at a time (a comment line is followed to its end,
    never held whole) through at most :data:`SKIP_BYTES` bytes (then None)."""
    lines, in_comment, last, seen = 0, False, b"", 0
    while seen < SKIP_BYTES:
        block = fh.read(SNIFF_BYTES)
        if not block:
            return last, 0
        last, pos, seen = block, 0, seen + len(block)
        if in_comment:
            end = block.find(b"\n")
            if end < 0:
                continue
            pos, lines, in_comment = end + 1, lines + 1, False
        found = _first_data_line(block, pos)
        if found is None:
            lines += block.count(b"\n", pos)
            tail = block[block.rfind(b"\n", pos) + 1:] if b"\n" in block[pos:] else block[pos:]
            in_comment = tail.lstrip().startswith(b"#")
            continue
        offset, before = found
        head = block[offset:]
        while len(head) < SNIFF_BYTES and (more := fh.read(SNIFF_BYTES - len(head))):
            head += more
        return head, lines + before
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def sniff(path: str | Path) -> Sniffed:
    """Classify ``path`` from the first 64 KiB from its first line of data (blank and
    comment lines before it skipped, through the first :data:`SKIP_BYTES` of the file,
    decompressed when it is gzip: a file with only those lines there is ``"text"``);
    never raises for a missing or odd file."""
    p = Path(path)
    if not p.exists():
        return Sniffed("missing", "a path that does not exist")
    if p.is_dir():
        return Sniffed("directory", "a directory")
    from evalkit.io.gzip_data import DamagedGzipError

    try:
        head = _head(p)
    except OSError as exc:
        return Sniffed("unreadable", f"a file that cannot be read ({exc.strerror or exc})")
    except DamagedGzipError as exc:
        return Sniffed("damaged", str(exc))
    if head is None:  # "text": what a reader takes on to say precisely what is there
        return Sniffed("text", f"a text file whose first {SKIP_BYTES >> 20} MiB hold only "
                       "blank or comment lines")
    raw, skipped = head
    if not raw.strip():
        return Sniffed("empty", "an empty file" if not raw else
                       "a file of only white space (no line of data)")
    if b"\x00" in raw:
        return Sniffed("binary", "a binary file (it contains NUL bytes)")
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(raw, final=False)
    except UnicodeDecodeError as exc:
        line = skipped + raw.count(b"\n", 0, exc.start) + 1
        return Sniffed(
            "not_utf8", f"a binary file, or text that is not UTF-8 (byte "
            f"0x{raw[exc.start]:02x} on line {line})", line)
    lines = [line for _, line in text_lines(text)]  # a U+2028 in a JSON string ends no line
    if len(raw) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    data = [(i, s) for i, s in enumerate(lines, start=skipped + 1) if s.strip()
            and not s.lstrip().startswith("#")]
    if not data:
        return Sniffed("empty", "a file with only blank or comment lines")
    lineno, first = data[0]
    stripped = first.strip()
    if stripped[0] in "{[":
        return _sniff_json(stripped, lineno, last=len(data) == 1)
    if stripped == "---" or _YAML_KEY.match(first) or (
            p.suffix.lower() in (".yaml", ".yml") and stripped.startswith("- ")):
        keys = {m[1] for _, s in data if (m := _YAML_KEY.match(s))}
        role = _yaml_role(keys, [s for _, s in data])
        what = YAML_ROLES[role][0] if role else "a YAML file"
        return Sniffed("yaml", what, lineno, role)
    if _is_golden_csv_header(stripped):
        return Sniffed("goldens", "a golden set (CSV with id and query columns)", lineno)
    fields = stripped.split()
    if len(fields) == 4 and _is_int(fields[3]):
        return Sniffed("qrels", f"a TREC qrels file (4 fields per line: {QRELS_LINE})", lineno)
    if len(fields) >= 6 and _is_number(fields[4]):
        return Sniffed("run", f"a TREC run file ({RUN_LINE})", lineno)
    return Sniffed(
        "text",
        f"a text file whose first data line (line {lineno}) has {len(fields)} "
        f"field{'' if len(fields) == 1 else 's'}",
        lineno,
    )


def _is_golden_csv_header(line: str) -> bool:
    """Whether ``line`` is the header row of a CSV golden set (``id`` and ``query``
    among its comma-separated cells)."""
    if "," not in line:
        return False
    import csv

    try:
        cells = {c.strip() for c in next(csv.reader([line]))}
    except csv.Error:
        return False
    return {"id", "query"} <= cells


def _sniff_json(line: str, lineno: int, *, last: bool) -> Sniffed:
    try:
        obj = loads_json(line, MAX_ARTIFACT_DEPTH)
    except LimitError as exc:
        return Sniffed("refused", str(exc), lineno)
    except json.JSONDecodeError as exc:
        # the file ends inside the value (or inside a string of it): cut short
        if last and (exc.pos >= len(line) or exc.msg.startswith("Unterminated string")):
            return Sniffed("cut", "the line ends in the middle of a JSON value (the file "
                           "was cut short?)", lineno)
        if "\r" in line:  # lines that end with a carriage return alone read as one
            return Sniffed("json", "JSON Lines whose lines end with a carriage return alone "
                           "(classic Mac OS line endings), so the file reads as one line: "
                           "convert them to newlines", lineno)
        return Sniffed("json", "a JSON document (not JSON Lines)", lineno)
    if isinstance(obj, dict):
        if obj.get("type") == "header":
            return Sniffed("artifact", "an evalkit run artifact", lineno)
        if obj.get("type") == "row":
            return Sniffed(
                "json", "the rows of a run artifact without its header line", lineno)
        if "query" in obj and "id" in obj:
            return Sniffed("goldens", "a golden set (JSON Lines of cases with id and query)",
                           lineno)
        if {"id", "labels"} <= set(obj) or set(obj) in ({"selection"}, {"selection", "seed"}):
            return Sniffed("labels", "a labels file (JSON Lines of case ids and their "
                           "labels)", lineno)
        return Sniffed("json", "a JSON object that is not a run header", lineno)
    return Sniffed("json", f"JSON (a {type(obj).__name__})", lineno)


# ------------------------------------------------------------------ checks
def directory_message(path: str | Path, what: str, label: str | None = None,
                      inside: tuple[str, ...] = ()) -> str:
    """The one refusal of a folder given where a file is read: ``"{label} {path}: is a
    directory; pass the {what} file itself"``, ``label`` the option or key that named it
    (default: ``what``), and ``, e.g. {label} {path}/{name}`` for the first of ``inside``
    the folder holds."""
    label = what if label is None else label
    found = next((n for n in inside if (Path(path) / n).is_file()), None)
    example = f", e.g. {label} {Path(path) / found}" if found is not None else ""
    return f"{label} {path}: is a directory; pass the {what} file itself{example}"


def refuse_directory(path: str | Path | None, what: str, *, label: str | None = None,
                     inside: tuple[str, ...] = (),
                     error: type[Exception] = InputError) -> None:
    """Raise ``error`` with :func:`directory_message` when ``path`` is a folder (a
    command-line option or config key that names one file; nothing when None)."""
    if path is not None and Path(path).is_dir():
        raise error(directory_message(path, what, label, inside))


def require_file(path: Path, what: str) -> None:
    """Refuse a path that is missing, a directory, ``-`` or a pipe or device, naming what
    it should have been.

    Runs, qrels and artifacts are read more than once (their first bytes tell what they
    are, then they are parsed and hashed), which standard input and pipes cannot give, so
    ``-``, ``/dev/stdin`` and named pipes are refused with a message saying to save the
    data to a file first. (The gate's checks file, read once, takes ``-``.)
    """
    if str(path) == "-":
        raise InputError(f"{what} -: standard input is not read here: evalkit reads a "
                         f"{what} file more than once (to tell what it is, then to parse and "
                         "hash it); save it to a file and pass its path")
    if not path.exists():
        refuse_symlink_loop(path, what, error=InputError)
        raise InputError(f"{what} {path}: no such file")
    if path.is_dir():
        raise InputError(directory_message(path, what))
    if not path.is_file():
        raise InputError(f"{what} {path}: is a pipe or device, not a regular file: evalkit "
                         f"reads a {what} file more than once (to tell what it is, then to "
                         "parse and hash it); save it to a file and pass its path")


def utf8_fix(path: str | Path) -> str:
    """How to convert ``path`` to UTF-8 when it is Latin-1 text (the encoding of old TREC
    collections): an ``iconv`` command, through ``gunzip -c`` for a ``.gz`` file."""
    p = Path(path)
    if p.suffix.lower() == ".gz":
        out = p.with_suffix("").name + ".utf8"
        return (f"Save it as UTF-8; if it is Latin-1 text: gunzip -c {p} | iconv -f latin1 "
                f"-t utf-8 > {out}, and pass {out}")
    return (f"Save it as UTF-8; if it is Latin-1 text: iconv -f latin1 -t utf-8 {p} > "
            f"{p.name}.utf8, and pass {p.name}.utf8")


def no_query_message(path: str | Path, hint: str | None = None) -> str:
    """What to say when a TREC run scored with ``--missing skip`` (``missing="skip"``)
    leaves no query to evaluate: none of its topics is judged (``evalkit eval`` and
    ``evalkit compare`` alike); ``hint``, a sentence on ids that look alike, is added."""
    return (f"{path}: no query was evaluated (none of the run's topics is judged in the "
            "qrels, and --missing skip drops the judged ones the run lacks)"
            + (f"; {hint}" if hint else "; check that the run and the qrels are of the "
               "same topics, or score with --missing zero"))


def no_rows_message(path: Path, what: str = "") -> str:
    """What to say about a run artifact that holds its header line and no row."""
    return (
        f"{what + ' ' if what else ''}{path}: the run artifact has no rows (only its header "
        "line): it holds no evaluated case. Was it written by an interrupted run? Continue "
        "it with `evalkit run --resume`, or score the TREC run again with --save"
    )
def require_artifact_rows(path: Path, what: str) -> None:
    """Refuse a run artifact that holds its header line and no row (read lazily: stops at
    the first row)."""
    with path.open("rb") as fh:
        # lines read a piece at a time (a 400 MB row is never held): a piece without its
        # end is the start of a longer line
        pieces = iter(lambda: fh.readline(SNIFF_BYTES), b"")
        in_header = False
        for piece in pieces:  # the header: the first line that is not blank
            if in_header or piece.strip(b"\xef\xbb\xbf" + ASCII_SPACE.encode()):
                in_header = not piece.endswith(b"\n")
                if not in_header:
                    break
        for piece in pieces:
            if piece.strip():
                if (piece.endswith(b"\n") and b'"trailer"' in piece
                        and _is_trailer(piece.decode("utf-8", "replace"))):
                    break  # a finished file of no row: header and trailer only
                return
    raise InputError(no_rows_message(path, what))


def _is_trailer(line: str) -> bool:
    try:
        obj = loads_json(line, MAX_ARTIFACT_DEPTH)
    except ValueError:  # not JSON, or nested too deeply (LimitError)
        return False
    return isinstance(obj, dict) and obj.get("type") == "trailer"

