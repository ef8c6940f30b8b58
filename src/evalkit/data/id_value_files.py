"""Files of ``query id<TAB>value`` lines, the form in which TREC runs' cases get what a
golden case states itself: a cluster (``--clusters``) or tags (``--tags``)."""

from __future__ import annotations

from collections.abc import Iterator
from os import PathLike
from pathlib import Path

from evalkit.io.error_messages import not_utf8_at
from evalkit.io.limits import LimitError, check_id
from evalkit.io.text_lines import universal_lines
from evalkit.io.user_files import read_input


def id_value_lines(path: str | PathLike[str], what: str, value: str, error: type[ValueError], *,
                   hint: str = "") -> Iterator[tuple[str, int, str, str]]:
    """``(where, line number, query id, value)`` of each line of a ``query id<TAB>value``
    file (a clusters or tags file): UTF-8 text of lines ending at ``\\n``, ``\\r\\n`` or
    ``\\r`` (:func:`evalkit.io.text_lines.universal_lines`: a U+2028 or a form feed is a
    character of its line), blank lines and lines starting with ``#`` skipped, ids and
    values checked as golden ids are (:func:`evalkit.io.limits.check_id`).
    ``what`` names the file's kind (``"clusters"``) and ``value`` its second column
    (``"cluster"``); ``hint`` is added to the message of a line with other than one tab.

    Raises:
        error: standard input (``-``), a missing file, a directory, not UTF-8, a line
            without exactly one tab, an empty or malformed id or value (file and line
            named).
    """
    p = Path(path)
    if str(p) == "-":
        raise error(f"{what} -: standard input is not read here; save the {what} to a file "
                    "and pass its path")
    raw = read_input(p, what, error=error)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{not_utf8_at(p, exc)}; save it as UTF-8 (from Latin-1: "
                    "iconv -f latin1 -t utf-8)") from None
    for lineno, line in universal_lines(text):
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{p}:{lineno}"
        fields = line.split("\t")
        if len(fields) != 2:
            raise error(f"{where}: expected 'query id<TAB>{value}' (one tab), got "
                        f"{len(fields) - 1} tabs{hint}")
        qid, given = fields
        if not qid.strip() or not given.strip():
            raise error(f"{where}: the {'query id' if not qid.strip() else value} is "
                        f"empty; write 'query id<TAB>{value}'")
        try:
            check_id(qid, "query id")
            check_id(given, value)
        except LimitError as exc:
            raise error(f"{where}: {exc}") from None
        yield where, lineno, qid, given


__all__ = ["id_value_lines"]
