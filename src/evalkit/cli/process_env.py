"""Process settings the ``evalkit`` command makes before any library is imported.

Both are read once, when numpy is imported, and a value the user set is kept:

* ``NUMPY_MADVISE_HUGEPAGE=0``: numpy asks the kernel for transparent huge pages for
  every large array. Where the kernel then compacts memory to find one (the ``madvise``
  defragmentation mode of many distributions and virtual machines), each fresh array of
  tens of megabytes stalls: on the development machine, hashing the ids of a
  5,000,000-line run took 210 ms with huge pages and 46 ms without. evalkit's arrays live
  for one command, too briefly for huge pages to repay that.
* ``OPENBLAS_NUM_THREADS=1``: importing numpy starts OpenBLAS's thread pool (one thread
  per CPU) although no evalkit command calls BLAS (no matrix product, no linear
  algebra; the compiled statistics kernels have their own threads). With one thread,
  ``import numpy`` took 0.07 s instead of 0.09-0.15 s on the shared development machine.

A command that reads many rows and then works on them to the end of the process
(``evalkit compare``) also stops the cyclic garbage collector (:func:`collector_held`).

Figures and context: docs/performance.md.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager


def prepare_process() -> None:
    """Set what must be set before numpy is imported (see the module docstring)."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


#: Whether the process ends with the command (:func:`command_ends_process`).
_ends_with_command = False


def command_ends_process() -> None:
    """Record that the process ends when the command does: called by the console script
    (:func:`evalkit.cli.main`), not when a test or a program runs a command in its own
    process."""
    global _ends_with_command
    _ends_with_command = True


@contextmanager
def collector_held() -> Iterator[None]:
    """The cyclic garbage collector stopped while the body runs and, when the process
    ends with the command, to the end (:func:`evalkit.cli.main` freezes every object
    then); otherwise started again as it was.

    A comparison's rows (a few objects per run and case, 21 runs of 10,000 cases: about
    half a million) live to the end of the command; meanwhile each collection of the
    older generations walked them all again (0.5-0.7 s of ``evalkit compare`` over those
    runs) to find no garbage among them. The command makes little cyclic garbage, and
    reference counting frees the rest as before: its peak memory is the same within
    1 MB (docs/performance.md).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was and not _ends_with_command:
            gc.enable()
