"""Tables for papers and notebooks from paired-evalkit: the ``latex`` reporter.

:func:`render_latex` is imported on first use, so discovering the plugin (``evalkit plugins
list``, ``evalkit --help``) imports nothing but its hook implementations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"
__all__ = ["__version__", "render_latex"]

if TYPE_CHECKING:
    from evalkit_report_tables.latex import render_latex as render_latex


def __getattr__(name: str) -> Any:
    if name == "render_latex":
        from evalkit_report_tables.latex import render_latex

        return render_latex
    raise AttributeError(f"module 'evalkit_report_tables' has no attribute {name!r}")
