"""Charts drawn as SVG when the report is written (:mod:`evalkit_report_html.vega`): the
compaction of Vega's SVG, checked on hand-written SVG, and a chart drawn by vl-convert
whose titles hold markup, inlined in a page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from evalkit_report_html.render import render_html
from evalkit_report_html.vega import compact, to_svg

import evalkit
from evalkit.data.results import QueryResult, RunResult

HOSTILE = '</svg><script>alert(1)</script><img src=x onerror="alert(2)"> & d="1.23456"'


def test_geometry_is_rounded_to_a_tenth_of_a_pixel_and_text_is_left_alone() -> None:
    svg = ('<svg width="100" height="50"><g transform="translate(12.34567,0.049)">'
           '<path d="M0,118.46153846153845h3.111111111111111v-0.04Z" fill="#d73027"/>'
           '<text transform="translate(-7.25,3.333)" font-size="11px">x d="1.23456"</text>'
           "</g></svg>")
    assert compact(svg) == (
        '<svg width="100" height="50"><g transform="translate(12.3,0)">'
        '<path d="M0,118.5h3.1v0Z" fill="#d73027"/>'
        '<text transform="translate(-7.2,3.3)" font-size="11px">x d="1.23456"</text>'
        "</g></svg>")


def test_empty_group_paths_and_default_attributes_are_left_out() -> None:
    svg = ('<g><path class="background" aria-hidden="true" d="M0,0h0v0h0Z" '
           'pointer-events="none"/><path class="foreground" aria-hidden="true" d="" '
           'pointer-events="none" display="none"/><line x2="5" stroke="#888" '
           'stroke-width="1" opacity="1"/><path d="M0,0h1" opacity="0.7"/></g>')
    assert compact(svg) == ('<g><line x2="5" stroke="#888"/>'
                            '<path d="M0,0h1" opacity="0.7"/></g>')


def test_ids_get_the_charts_prefix() -> None:
    svg = ('<svg><defs><linearGradient id="gradient_0"/></defs>'
           '<rect fill="url(#gradient_0)"/><use href="#gradient_0"/></svg>')
    assert compact(svg, "chart-7") == (
        '<svg><defs><linearGradient id="chart-7-gradient_0"/></defs>'
        '<rect fill="url(#chart-7-gradient_0)"/><use href="#chart-7-gradient_0"/></svg>')


@pytest.mark.parametrize("svg", [
    "<svg><script>alert(1)</script></svg>",
    '<svg><path d="M0,0" onload="alert(1)"/></svg>',
    "<svg><foreignObject><div>x</div></foreignObject></svg>",
    '<svg><g ONCLICK="x"/></svg>',
])
def test_what_vega_never_writes_is_refused(svg: str) -> None:
    with pytest.raises(ValueError, match="refused"):
        compact(svg)


def test_markup_in_an_attribute_value_or_text_is_not_refused() -> None:
    svg = ('<svg><path aria-label="a onload=&quot;x&quot; &lt;script&gt;"/>'
           "<text>onclick=&quot;y&quot; &lt;script&gt;</text></svg>")
    assert compact(svg) == svg


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text inside SVG ``<text>``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.svg_text: list[str] = []
        self._in_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_text = tag == "text"

    def handle_endtag(self, tag: str) -> None:
        self._in_text = False

    def handle_data(self, data: str) -> None:
        if self._in_text:
            self.svg_text.append(data)


def test_a_run_named_with_markup_stays_text_in_the_charts() -> None:
    svg = to_svg({"title": HOSTILE, "width": 100, "height": 100, "mark": "bar",
                  "data": {"values": [{"a": HOSTILE, "b": 1}]},
                  "encoding": {"x": {"field": "a", "type": "nominal", "title": HOSTILE},
                               "y": {"field": "b", "type": "quantitative"}}})
    found = _Elements()
    found.feed(svg)
    assert [t for t, _ in found.tags if t in ("script", "img")] == []
    assert HOSTILE in found.svg_text  # the title, whole, as text
    # the same name as a run of a comparison: the page's only scripts are its own two
    base = RunResult(HOSTILE, [QueryResult(f"q{i}", [], {"ap": i / 10}) for i in range(8)])
    cand = RunResult("cand", [QueryResult(f"q{i}", [], {"ap": (i + i % 3) / 12})
                              for i in range(8)])
    page = _Elements()
    page.feed(render_html(evalkit.compare(base, cand, metrics=["ap"], n_resamples=200)))
    assert [t for t, _ in page.tags].count("script") == 2
    assert [t for t, _ in page.tags if t == "img"] == []
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert any(HOSTILE in text for text in page.svg_text)
