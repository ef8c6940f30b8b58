"""Process settings the ``evalkit`` command makes before any library is imported.

``NUMPY_MADVISE_HUGEPAGE=0`` (unless already set): numpy asks the kernel for transparent
huge pages for every large array. Where the kernel then compacts memory to find one (the
``madvise`` defragmentation mode of many distributions and virtual machines), each fresh
array of tens of megabytes stalls: on the development machine, hashing the ids of a
5,000,000-line run took 210 ms with huge pages and 46 ms without (docs/performance.md).
evalkit's arrays live for one command, too briefly for huge pages to repay that. numpy
reads the variable once, when it is imported; a value the user set is kept.
"""

from __future__ import annotations

import os


def prepare_process() -> None:
    """Set what must be set before numpy is imported (see the module docstring)."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
