"""The report's charts drawn as SVG when the report is written, by Vega-Lite and Vega.

:func:`to_svg` hands a Vega-Lite specification to ``vl-convert-python`` (the Vega
project's converter: Vega-Lite compiles it, Vega draws it with its SVG renderer, in a
JavaScript runtime embedded in the wheel, offline) and makes the SVG fit for inlining
many times in one page:

* coordinates in geometry attributes (``d``, ``transform``, ``x``, ``y``, ``width``...)
  are rounded to 0.1 px (Vega writes them to 15 digits; a tenth of a pixel cannot be
  seen);
* Vega's empty and zero-size background and foreground paths of each group are left
  out, and so are attributes that say SVG's default (``opacity="1"``,
  ``stroke-width="1"``);
* every ``id`` (gradients of colour legends, clip paths) gets the chart's prefix, so that
  two charts in one page never share one.

Text in the SVG (titles, axis titles, labels: run and metric names) is escaped by Vega's
SVG renderer. Starting the runtime takes about a second, once per process; each chart
then takes some tens of milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Geometry attributes whose numbers are rounded.
_GEOMETRY = re.compile(
    r'( (?:d|transform|x|y|x1|x2|y1|y2|width|height|cx|cy|r|dx|dy)=")([^"]*)"')
_LONG_NUMBER = re.compile(r"-?\d+\.\d{2,}")
#: What Vega writes for every group that has no visible background or foreground.
_EMPTY = re.compile(
    r'<path class="(?:background|foreground)" aria-hidden="true" '
    r'd="(?:|M0,0h0v0h0Z)" pointer-events="none"(?: display="none")?/>')
_DEFAULTS = re.compile(r' (?:opacity|stroke-width|stroke-opacity|fill-opacity)="1"')
_ID = re.compile(r'( id="| href="#|url\(#)([A-Za-z_][\w.-]*)')
_TAG = re.compile(r"<[^<>]+>")
#: An attribute's name: inside a tag, ``="`` can only follow one (Vega writes ``"`` in a
#: value as ``&quot;``).
_ATTRIBUTE = re.compile(r'\s([^\s="]+)="')
_ELEMENT = re.compile(r"</?([A-Za-z][\w:-]*)")
#: What SVG from Vega never holds, and an inlined SVG must not: script, embedded HTML,
#: event handlers.
_REFUSED = {"script", "foreignobject", "iframe", "object", "embed"}


def _round(match: re.Match[str]) -> str:
    text = f"{float(match.group(0)):.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def compact(svg: str, prefix: str = "") -> str:
    """``svg`` (Vega's SVG text) with its geometry rounded to 0.1 px, its empty group
    backgrounds and foregrounds and its attributes at SVG's default value left out, and
    its ids prefixed with ``prefix``.

    Raises:
        ValueError: the SVG holds a script, embedded HTML (``foreignObject``) or an event
            handler attribute, which Vega never writes (the page would run it).
    """

    def tag(match: re.Match[str]) -> str:  # only inside tags: text is never touched
        element = _ELEMENT.match(match.group(0))
        if (element is not None and element.group(1).lower() in _REFUSED) or any(
                a.lower().startswith("on") for a in _ATTRIBUTE.findall(match.group(0))):
            raise ValueError(f"the chart's SVG holds {match.group(0)[:60]!r}: refused")
        text = _GEOMETRY.sub(
            lambda m: m.group(1) + _LONG_NUMBER.sub(_round, m.group(2)) + '"',
            _DEFAULTS.sub("", match.group(0)))
        if prefix:
            text = _ID.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", text)
        return text

    return _TAG.sub(tag, _EMPTY.sub("", svg))


def to_svg(spec: Mapping[str, Any], prefix: str = "") -> str:
    """The chart of a Vega-Lite specification as an SVG element (text), compacted.

    Args:
        spec: a Vega-Lite specification with its data inline and fixed width and height
            (there is no container to size it to).
        prefix: put before every id in the SVG (the chart's element id).

    Raises:
        ImportError: vl-convert-python is not installed (a dependency of this plugin).
        ValueError: Vega-Lite refused the specification (vl-convert's message), or the
            SVG holds what :func:`compact` refuses.
    """
    import vl_convert as vlc

    return compact(vlc.vegalite_to_svg(dict(spec)), prefix)


def versions() -> dict[str, str]:
    """The versions of the libraries that draw the charts: ``vega``, ``vega-lite`` and
    ``vl-convert``."""
    from importlib.metadata import version

    import vl_convert as vlc

    return {"vega": str(vlc.get_vega_version()),
            "vega-lite": str(vlc.get_vegalite_versions()[-1]),
            "vl-convert": version("vl-convert-python")}


__all__ = ["compact", "to_svg", "versions"]
