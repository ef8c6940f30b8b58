"""Ctrl-C while a command writes its outputs: a document on standard output is written
whole or not at all, and the interrupt names what was written and what was not.

* :func:`write_whole` writes a document (``--format json``, ``--report json:-``) to a
  stream: its pieces are first gathered in a spool (memory, then a temporary file past
  :data:`SPOOL_BYTES`), then copied with a first Ctrl-C held until the last byte is
  flushed. A Ctrl-C while the pieces are made leaves nothing on the stream; one during
  the copy lets the document end, then interrupts. A second Ctrl-C during the copy (a
  reader that stopped reading) interrupts at once, and the document is named cut short.
* :class:`Outputs` follows a command's outputs (its ``--report`` targets, its document
  on standard output): each is marked done when written; a :class:`KeyboardInterrupt`
  in its block becomes :class:`OutputsInterrupted`, whose text is the one line the
  command prints: ``interrupted; written: ...; not written: ...``.

Only the standard library is imported.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import FrameType
from typing import TextIO

#: the text a spool holds in memory before it moves to a temporary file
SPOOL_BYTES = 1 << 20

#: how :class:`Outputs` names a command's document on standard output
STDOUT_DOCUMENT = "the JSON document on standard output"


class OutputsInterrupted(KeyboardInterrupt):
    """Ctrl-C while a command wrote its outputs.

    Attributes:
        written: the outputs written in full before the interrupt (a report file is
            replaced atomically, so one being written is either there whole or left as
            it was).
        not_written: the outputs not written.
        cut: outputs cut short (a stream left by a second Ctrl-C).
    """

    def __init__(self, written: Sequence[str], not_written: Sequence[str],
                 cut: Sequence[str] = ()) -> None:
        super().__init__()
        self.written, self.not_written, self.cut = list(written), list(not_written), list(cut)

    def __str__(self) -> str:
        parts = ["interrupted"]
        for label, names in (("written", self.written), ("cut short", self.cut),
                             ("not written", self.not_written)):
            if names:
                parts.append(f"{label}: {', '.join(names)}")
        return "; ".join(parts)


class Outputs:
    """A command's outputs, in the order it writes them, and those written so far.

    Use as a context manager around the command's work and writing: a
    :class:`KeyboardInterrupt` raised in it is raised again as
    :class:`OutputsInterrupted` naming each output as written or not (none given: the
    interrupt goes through as it is).

    Args:
        names: each output as it is marked done (``--report markdown:a.md``,
            :data:`STDOUT_DOCUMENT`).
        shown: how the message names an output, when not as marked (``evalkit gate
            --json`` writes its document as the report ``json:-``).
    """

    def __init__(self, names: Iterable[str], shown: Mapping[str, str] | None = None
                 ) -> None:
        self.names = list(names)
        self.shown = dict(shown or {})
        self.written: list[str] = []
        self.cut: list[str] = []

    def done(self, name: str) -> None:
        """Mark ``name`` written in full."""
        self.written.append(name)

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if exc is None or not isinstance(exc, KeyboardInterrupt) or not self.names \
                or isinstance(exc, OutputsInterrupted):
            return
        left = [n for n in self.names if n not in self.written and n not in self.cut]
        raise OutputsInterrupted(*([self.shown.get(n, n) for n in names]
                                   for names in (self.written, left, self.cut))) from None


def report_label(target: str) -> str:
    """How :class:`Outputs` names a ``--report FORMAT:PATH`` target."""
    return f"--report {target}"


@contextlib.contextmanager
def held_interrupt() -> Iterator[None]:
    """Hold a first Ctrl-C (SIGINT) until the block ends, then raise
    :class:`KeyboardInterrupt`; a second one raises at once. Only in the main thread
    and while SIGINT has Python's default handler; anywhere else the block runs as is.

    Raises:
        KeyboardInterrupt: a Ctrl-C came while the block ran.
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    seen = 0

    def hold(signum: int, frame: FrameType | None) -> None:
        nonlocal seen
        seen += 1
        if seen > 1:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if seen:
        raise KeyboardInterrupt


def write_whole(stream: TextIO, document: str | Callable[[TextIO], object],
                name: str = STDOUT_DOCUMENT, outputs: Outputs | None = None) -> None:
    """Write ``document`` to ``stream`` whole or not at all (see the module's docstring),
    and mark ``name`` done in ``outputs`` once it is flushed.

    Args:
        document: the text (a line break is added when it does not end with one), or a
            function that writes it to the file it is given (``Comparison.write_json``).

    Raises:
        KeyboardInterrupt: Ctrl-C (after the document, unless it came twice; then
            ``name`` is marked cut in ``outputs``).
        OSError: ``stream`` or the spool cannot be written.
    """
    with tempfile.SpooledTemporaryFile(SPOOL_BYTES, "w+", encoding="utf-8",
                                       errors="surrogatepass") as spool:
        if isinstance(document, str):
            spool.write(document if document.endswith("\n") else document + "\n")
        else:
            document(spool)  # type: ignore[arg-type]
        spool.seek(0)
        started = False
        try:
            with held_interrupt():
                started = True
                shutil.copyfileobj(spool, stream)
                stream.flush()
                if stream is sys.stdout:
                    _written[0] += 1
                if outputs is not None:
                    outputs.done(name)
        except KeyboardInterrupt:
            if started and outputs is not None and name not in outputs.written:
                outputs.cut.append(name)
            raise


_written = [0]  # the documents written whole to standard output by this process


def stdout_documents() -> int:
    """How many documents :func:`write_whole` has written whole to standard output in
    this process (a command with ``--json`` that exits without one gets a status
    document: :func:`evalkit.cli.errors.json_document_on_exit`)."""
    return _written[0]


__all__ = ["STDOUT_DOCUMENT", "Outputs", "OutputsInterrupted", "held_interrupt",
           "report_label", "stdout_documents", "write_whole"]
