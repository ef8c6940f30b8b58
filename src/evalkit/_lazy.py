"""Names a package exports but imports on first use: one implementation for every package.

A package lists ``{name: module}`` and binds what :func:`lazy_exports` returns as its
module-level ``__getattr__`` and ``__dir__``; a name is imported from its module when first
read, then kept in the package. Worth it where a package's submodules pull in numpy or
the statistics that most of its users never touch (``import evalkit`` costs a few
milliseconds, not the 150 of numpy and scipy). Type checkers read the package's
``if TYPE_CHECKING:`` imports instead.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, exporting each name of ``table`` from its
    module.

    Raises (from ``__getattr__``):
        AttributeError: a name the table does not list.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*table, *(n for n in namespace if not n.startswith("_"))})

    return __getattr__, __dir__
