"""Griffe extension: a module attribute documented by ``#:`` comments gets them as its
docstring.

evalkit documents its constants the way Sphinx reads them, with ``#:`` comment lines right
above the assignment::

    #: The most marks a per-query plot draws.
    MAX_MARKS = 2000

Griffe (mkdocstrings' loader) reads only a string literal after the assignment; this
extension gives an attribute without one the text of those comment lines, so the API
reference (and ``tests/test_docs_site.py``, which loads the code with it) sees the
documentation the code already has.
"""

from __future__ import annotations

from typing import Any

import griffe


class CommentDocstrings(griffe.Extension):
    """Fill missing attribute docstrings from the ``#:`` lines above them."""

    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, agent: Any,
                              **kwargs: Any) -> None:
        """Set ``attr``'s docstring from the comment block that ends just above it."""
        if attr.docstring is not None or attr.lineno is None:
            return
        try:
            lines = attr.lines_collection[attr.filepath]  # type: ignore[index]
        except (KeyError, TypeError):
            return
        found: list[str] = []
        i = attr.lineno - 2  # the line above the assignment, 0-based
        while i >= 0 and lines[i].strip().startswith("#:"):
            found.append(lines[i].strip()[2:].strip())
            i -= 1
        if found:
            attr.docstring = griffe.Docstring("\n".join(reversed(found)), parent=attr)
