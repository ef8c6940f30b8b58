"""Small static HTML tables for notebooks: what Jupyter shows of a run, a comparison or a
gate (their ``_repr_html_()``).

No script, no style sheet, no plotting library: a ``<table>`` with a caption, numbers
right-aligned, every text escaped with :func:`html.escape`. The interactive page is the
``html`` reporter's (``Comparison.to_html(path)``).
"""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence


def escape(text: object) -> str:
    """``str(text)`` with ``&``, ``<``, ``>`` and both quotes escaped (:func:`html.escape`)."""
    return html.escape(str(text), quote=True)


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
               numeric: Collection[int], caption: str) -> str:
    """A ``<table>`` of ``headers`` and ``rows`` (cells as text, escaped here), the
    columns whose positions are in ``numeric`` right-aligned; ``caption`` is HTML as
    given (escape its texts with :func:`escape`)."""
    def align(i: int) -> str:
        return "right" if i in numeric else "left"

    out = ["<table>", f"<caption style=\"text-align:left\">{caption}</caption>", "<thead><tr>"]
    out += [f"<th style=\"text-align:{align(i)}\">{escape(h)}</th>"
            for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(
            f"<td style=\"text-align:{align(i)}\">{escape(c)}</td>"
            for i, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


__all__ = ["escape", "html_table"]
