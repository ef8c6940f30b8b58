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

Figures and context: docs/performance.md.
"""

from __future__ import annotations

import os


def prepare_process() -> None:
    """Set what must be set before numpy is imported (see the module docstring)."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
