"""Vega-Lite specifications of the report's charts, built from a report row's numbers.

Each function returns one JSON-ready Vega-Lite specification with its data inline and a
fixed size; :func:`evalkit_report_html.vega.to_svg` draws it as SVG when the report is
written. Nothing here draws: the marks, scales, axes and legends are Vega-Lite's.

* :func:`forest`: every difference with its interval against zero, significant ones
  coloured; one panel when every interval lies within [-1, 1] (metrics on a 0-1 scale),
  else one panel per metric (or gate check) with its own scale; the same chart draws the
  slices of ``--by tag`` (a row per slice) and the collections of ``--collections`` with
  their pooled estimate (a diamond);
* :func:`per_query`: the per-query differences sorted, wins and losses coloured by the
  metric's polarity;
* :func:`scatter`: baseline against candidate, one point per query, and the diagonal;
* :func:`density`: the same as a 2-D histogram, past :data:`MAX_MARKS` queries;
* :func:`null_distribution`: the binned null or resampling distribution of the test's
  statistic (at most :data:`DISTRIBUTION_BINS` bins), with the observed value marked.

The per-query bars and the scatter's points are drawn in the order of the query
positions :func:`per_query` and :func:`scatter` return, so the page can say which query
a mark is (its hover). The forest plot's and the density's marks carry their own text
(Vega-Lite's ``description``, written as each mark's ``aria-label``).

Past :data:`MAX_MARKS` queries the per-query bars show :data:`MAX_MARKS` queries evenly
spread over the sorted order (each bar still a real query) and the scatter becomes
:func:`density`; the page says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The most marks a per-query plot draws: past this many queries the sorted differences
#: are downsampled and the scatter becomes a 2-D histogram (the tables stay complete).
MAX_MARKS = 2000
#: Bins on each axis of the density view.
DENSITY_BINS = 40
#: The most bins a distribution is drawn with: adjacent bins of the test's histogram are
#: merged (their counts added) down to this many.
DISTRIBUTION_BINS = 50
#: The plotting area's width of the wide charts (per-query, distribution), of the
#: scatter and density, and of the forest plot, in CSS pixels.
WIDE, NARROW, FOREST = 680, 300, 560

WIN, TIE, LOSS = "candidate better", "tie", "baseline better"
#: The forest plot's two kinds of row when it shows a pooled estimate.
ESTIMATE, POOLED = "collection", "pooled (random effects)"
COLOURS = {WIN: "#1a9850", TIE: "#9e9e9e", LOSS: "#d73027"}


@dataclass(frozen=True)
class Series:
    """The per-query numbers of one comparison row, in one order.

    Attributes:
        ids: query ids; ``baseline``, ``candidate``: their values; ``diffs``: candidate
            minus baseline as the test saw it.
        higher_is_better: the metric's polarity (decides which colour a sign gets).
        baseline_name, candidate_name: the runs, for tooltips and axis titles.
        metric: the metric's name.
    """

    ids: Sequence[str]
    baseline: Sequence[float]
    candidate: Sequence[float]
    diffs: Sequence[float]
    higher_is_better: bool
    baseline_name: str
    candidate_name: str
    metric: str

    def outcome(self, d: float) -> str:
        if d == 0.0:  # the differences as the test saw them: rounding noise is exactly 0
            return TIE
        return WIN if (d > 0) == self.higher_is_better else LOSS


def _num(x: float) -> float | None:
    """A finite value rounded to 6 decimals (enough for 4 shown), else None."""
    return round(float(x), 6) if math.isfinite(x) else None


def _base(title: str, width: int, height: int) -> dict[str, Any]:
    # marks carry no ARIA text unless a chart gives them a description: a label on each
    # of thousands of marks would be most of the file (the figure has a label)
    return {"title": {"text": title, "anchor": "start", "fontSize": 13},
            "width": width, "height": height,
            "config": {"view": {"stroke": None}, "axis": {"labelFontSize": 11},
                       "aria": False}}


def _colour(legend: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"field": "o", "type": "nominal", "title": None,
                           "scale": {"domain": list(COLOURS), "range": list(COLOURS.values())}}
    out["legend"] = {"orient": "top", "direction": "horizontal"} if legend else None
    return out


def sorted_positions(n: int, limit: int = MAX_MARKS) -> list[int]:
    """The positions (in sorted order) of the queries a per-query plot draws: all of
    them up to ``limit`` queries, else ``limit`` positions evenly spread from the first to
    the last (the smallest and largest differences are always drawn)."""
    if n <= limit:
        return list(range(n))
    return [round(k * (n - 1) / (limit - 1)) for k in range(limit)]


def per_query(s: Series, limit: int = MAX_MARKS) -> tuple[dict[str, Any], list[int]]:
    """The sorted per-query differences as bars, and the queries drawn: their indices in
    ``s.ids``, in the order of the bars.

    Queries with a finite difference are sorted by it (ties by id); past ``limit``
    queries, ``limit`` of them evenly spread over that order are drawn
    (:func:`sorted_positions`), each bar a real query.
    """
    order = sorted((i for i in range(len(s.ids)) if math.isfinite(s.diffs[i])),
                   key=lambda i: (s.diffs[i], s.ids[i]))
    positions = sorted_positions(len(order), limit)
    sampled = len(positions) < len(order)
    drawn = [order[pos] for pos in positions]
    values = [{"r": pos, "d": _num(s.diffs[i]), "o": s.outcome(s.diffs[i])}
              for pos, i in zip(positions, drawn, strict=True)]
    title = f"{s.metric}: {s.candidate_name} − {s.baseline_name}, per query, sorted"
    spec = _base(title, WIDE, 220)
    spec.update({
        "data": {"values": values},
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "r", "type": "ordinal", "sort": None,
                  "axis": {"labels": False, "ticks": False, "title":
                           f"{len(order):,} queries, sorted by difference"
                           + (f" ({len(positions):,} shown, evenly spread)" if sampled
                              else "")},
                  "scale": {"paddingInner": 0.1 if len(values) < 200 else 0}},
            "y": {"field": "d", "type": "quantitative", "title": f"Δ {s.metric}"},
            "color": _colour()},
    })
    return spec, drawn


def _diagonal(lo: float, hi: float) -> dict[str, Any]:
    return {"data": {"values": [{"x": lo, "y": lo, "x2": hi, "y2": hi}]},
            "mark": {"type": "rule", "color": "#757575", "strokeDash": [4, 3], "aria": False},
            "encoding": {"x": {"field": "x", "type": "quantitative"},
                         "y": {"field": "y", "type": "quantitative"},
                         "x2": {"field": "x2"}, "y2": {"field": "y2"}}}


def _range(s: Series) -> tuple[float, float]:
    finite = [v for v in (*s.baseline, *s.candidate) if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _axes(s: Series, lo: float, hi: float) -> dict[str, Any]:
    scale = {"domain": [lo, hi], "nice": False, "zero": False}
    return {"x": {"field": "b", "type": "quantitative", "title": s.baseline_name,
                  "scale": scale},
            "y": {"field": "c", "type": "quantitative", "title": s.candidate_name,
                  "scale": scale}}


def scatter(s: Series) -> tuple[dict[str, Any], list[int]]:
    """Baseline (x) against candidate (y), one point per query with both values finite,
    over the diagonal; and the queries drawn (indices in ``s.ids``, in the points'
    order)."""
    lo, hi = _range(s)
    drawn = [i for i in range(len(s.ids))
             if math.isfinite(s.baseline[i]) and math.isfinite(s.candidate[i])]
    values = [{"b": _num(s.baseline[i]), "c": _num(s.candidate[i]),
               "o": s.outcome(s.diffs[i])} for i in drawn]
    spec = _base(f"{s.metric}: {s.candidate_name} against {s.baseline_name}", NARROW, 260)
    spec["config"]["axis"]["tickCount"] = 5
    spec.update({"layer": [
        _diagonal(lo, hi),
        # a circle of radius 3 px (size 36), no stroke: the shortest SVG per point
        {"data": {"values": values},
         "mark": {"type": "circle", "size": 36, "opacity": 0.7, "strokeWidth": None},
         "encoding": {**_axes(s, lo, hi), "color": _colour(False)}},
    ]})
    return spec, drawn


def density(s: Series, bins: int = DENSITY_BINS) -> tuple[dict[str, Any], int]:
    """Baseline against candidate as a 2-D histogram of ``bins`` x ``bins`` cells (only
    the cells that hold a query are drawn; each says how many), over the diagonal; and the
    cells drawn."""
    lo, hi = _range(s)
    width = (hi - lo) / bins
    counts: dict[tuple[int, int], int] = {}
    for b, c in zip(s.baseline, s.candidate, strict=True):
        if math.isfinite(b) and math.isfinite(c):
            key = (min(int((b - lo) / width), bins - 1), min(int((c - lo) / width), bins - 1))
            counts[key] = counts.get(key, 0) + 1
    cells = [{"b": _num(lo + i * width), "b2": _num(lo + (i + 1) * width),
              "c": _num(lo + j * width), "c2": _num(lo + (j + 1) * width), "n": n,
              "tip": f"{n:,} {'query' if n == 1 else 'queries'}"}
             for (i, j), n in sorted(counts.items())]
    spec = _base(f"{s.metric}: {s.candidate_name} against {s.baseline_name} "
                 f"(density of {len(s.ids):,} queries)", NARROW, 260)
    spec["config"]["aria"] = True
    spec.update({"layer": [
        {"data": {"values": cells}, "mark": {"type": "rect"},
         "encoding": {**_axes(s, lo, hi), "x2": {"field": "b2"}, "y2": {"field": "c2"},
                      "color": {"field": "n", "type": "quantitative", "title": "queries",
                                "scale": {"type": "log", "scheme": "blues"}},
                      "description": {"field": "tip"}}},
        _diagonal(lo, hi),
    ]})
    return spec, len(cells)


def merge_bins(edges: Sequence[float], counts: Sequence[int], most: int = DISTRIBUTION_BINS
               ) -> tuple[list[float], list[int]]:
    """``(edges, counts)`` of at most ``most`` bins: each run of ``ceil(len(counts) /
    most)`` adjacent bins becomes one (its counts added), so equal-width bins stay equal
    width but for the last."""
    step = max(1, math.ceil(len(counts) / most))
    merged = [sum(int(n) for n in counts[i:i + step]) for i in range(0, len(counts), step)]
    kept = [float(edges[i]) for i in range(0, len(counts), step)] + [float(edges[-1])]
    return kept, merged


def null_distribution(edges: Sequence[float], counts: Sequence[int], observed: float,
                      title: str, x_title: str) -> dict[str, Any]:
    """Bars over the bins of a distribution (merged to at most
    :data:`DISTRIBUTION_BINS`; empty bins draw nothing) and a rule at the observed
    value."""
    edges, counts = merge_bins(edges, counts)
    values = [{"x": _num(edges[i]), "x2": _num(edges[i + 1]), "n": n}
              for i, n in enumerate(counts) if n]
    spec = _base(title, WIDE, 200)
    spec["config"]["axis"]["tickCount"] = 6
    spec.update({"layer": [
        {"data": {"values": values},
         "mark": {"type": "rect", "color": "#90a4ae"},
         "encoding": {"x": {"field": "x", "type": "quantitative", "title": x_title},
                      "x2": {"field": "x2"},
                      "y": {"field": "n", "type": "quantitative", "title": "resamples"}}},
        {"data": {"values": [{"x": _num(observed)}]},
         "mark": {"type": "rule", "color": "#c62828", "strokeWidth": 2},
         "encoding": {"x": {"field": "x", "type": "quantitative"}}},
    ]})
    return spec


def forest(items: Sequence[Mapping[str, Any]], title: str) -> dict[str, Any]:
    """Differences with their intervals against zero.

    Args:
        items: one mapping per difference: ``group`` (a panel: the metric, or the gate
            check), ``label`` (its row in the panel: the candidate), ``diff``, ``lo``,
            ``hi`` (None: an open end, drawn to the difference), ``significant``, and
            ``p`` (text for the hover); optionally ``pooled`` (true on a pooled estimate
            of several collections: drawn as a diamond, the collections as circles).
        title: the chart's title.
    """
    from evalkit.report.formatting import interval, signed

    def tip(it: Mapping[str, Any]) -> str:
        name = it["group"] if it["label"] == it["group"] else f"{it['group']} · {it['label']}"
        return (f"{name}: {signed(it['diff'])} {interval(it['lo'], it['hi'])}, "
                f"p {it.get('p', '')}")

    values = [{"g": it["group"], "l": it["label"], "d": _num(it["diff"]),
               "lo": _num(it["diff"] if it["lo"] is None else it["lo"]),
               "hi": _num(it["diff"] if it["hi"] is None else it["hi"]),
               "s": "significant" if it["significant"] else "not significant",
               "tip": tip(it), "k": POOLED if it.get("pooled") else ESTIMATE}
              for it in items]
    y = {"field": "l", "type": "nominal", "title": None, "sort": None}
    colour = {"field": "s", "type": "nominal", "title": None,
              "scale": {"domain": ["significant", "not significant"],
                        "range": ["#1565c0", "#9e9e9e"]},
              "legend": {"orient": "top", "direction": "horizontal"}}
    described = {"field": "tip"}
    layer: list[dict[str, Any]] = [
        {"mark": {"type": "rule", "color": "#616161", "strokeDash": [3, 3], "aria": False},
         "encoding": {"x": {"datum": 0, "type": "quantitative"}}},
        {"mark": {"type": "rule", "strokeWidth": 2},
         "encoding": {"x": {"field": "lo", "type": "quantitative", "title": "difference"},
                      "x2": {"field": "hi"}, "y": y, "color": colour, "description": described}},
        {"mark": {"type": "point", "filled": True, "size": 70},
         "encoding": {"x": {"field": "d", "type": "quantitative"}, "y": y,
                      "color": colour, "description": described}},
    ]
    if any(it.get("pooled") for it in items):
        layer[-1]["mark"]["size"] = 110
        layer[-1]["encoding"]["shape"] = {
            "field": "k", "type": "nominal", "title": None,
            "scale": {"domain": [ESTIMATE, POOLED], "range": ["circle", "diamond"]},
            "legend": {"orient": "top", "direction": "horizontal"}}
    rows = len({v["l"] for v in values})
    spec = _base(title, FOREST, 0)
    spec["config"]["aria"] = True
    del spec["height"]
    ends = [x for v in values for x in (v["lo"], v["hi"]) if x is not None]
    if all(abs(x) <= 1 for x in ends):
        # one panel on one scale: differences of metrics in [0, 1] compare directly
        for v in values:
            v["l"] = f"{v['g']} · {v['l']}" if v["l"] != v["g"] else v["g"]
        spec.update({"data": {"values": values},
                     "height": max(40, 26 * len(values)), "layer": layer})
        return spec
    spec.update({
        "data": {"values": values},
        "facet": {"row": {"field": "g", "type": "nominal", "title": None, "sort": None,
                          "header": {"labelAngle": 0, "labelAlign": "left",
                                     "labelFontWeight": "bold"}}},
        "spec": {"width": FOREST, "height": max(24, 22 * rows), "layer": layer},
        "resolve": {"scale": {"x": "independent", "y": "independent"}},
    })
    del spec["width"]
    return spec


__all__ = ["COLOURS", "DENSITY_BINS", "DISTRIBUTION_BINS", "ESTIMATE", "FOREST", "LOSS",
           "MAX_MARKS", "NARROW", "POOLED", "TIE", "WIDE", "WIN", "Series",
           "density", "forest", "merge_bins", "null_distribution", "per_query", "scatter",
           "sorted_positions"]
