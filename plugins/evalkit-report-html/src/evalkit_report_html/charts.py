"""Vega-Lite specifications of the report's charts, built from a report row's numbers.

Each function returns one JSON-ready Vega-Lite specification; vega-embed renders it as
SVG in the page. Nothing here draws: the marks, scales, axes and tooltips are Vega-Lite's.

* :func:`forest`: every difference with its interval against zero, significant ones
  coloured; one panel when every interval lies within [-1, 1] (metrics on a 0-1 scale),
  else one panel per metric (or gate check) with its own scale;
* :func:`per_query`: the per-query differences sorted, wins and losses coloured by the
  metric's polarity, a tooltip per bar (query id, text, both scores, difference);
* :func:`scatter`: baseline against candidate, one point per query, and the diagonal;
* :func:`density`: the same as a 2-D histogram, past :data:`MAX_MARKS` queries;
* :func:`null_distribution`: the binned null or resampling distribution of the test's
  statistic, with the observed value marked.

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
#: Characters of query text kept in a tooltip (the per-query table has it all).
TOOLTIP_TEXT = 160
#: A difference within this of zero is a tie (the rule of the comparison's W/T/L).
TIE_ATOL = 1e-12

WIN, TIE, LOSS = "candidate better", "tie", "baseline better"
COLOURS = {WIN: "#1a9850", TIE: "#9e9e9e", LOSS: "#d73027"}


@dataclass(frozen=True)
class Series:
    """The per-query numbers of one comparison row, in one order.

    Attributes:
        ids: query ids; ``baseline``, ``candidate``: their values; ``diffs``: candidate
            minus baseline as the test saw it; ``texts``: ``{id: text}`` where known.
        higher_is_better: the metric's polarity (decides which colour a sign gets).
        baseline_name, candidate_name: the runs, for tooltips and axis titles.
        metric: the metric's name.
    """

    ids: Sequence[str]
    baseline: Sequence[float]
    candidate: Sequence[float]
    diffs: Sequence[float]
    texts: Mapping[str, str]
    higher_is_better: bool
    baseline_name: str
    candidate_name: str
    metric: str

    def outcome(self, d: float) -> str:
        if abs(d) <= TIE_ATOL:
            return TIE
        return WIN if (d > 0) == self.higher_is_better else LOSS


def _num(x: float) -> float | None:
    """A finite value rounded to 6 decimals (enough for 4 shown), else None."""
    return round(float(x), 6) if math.isfinite(x) else None


def _short(text: str | None) -> str:
    if not text:
        return ""
    return text if len(text) <= TOOLTIP_TEXT else text[: TOOLTIP_TEXT - 1] + "…"


def _base(title: str, height: int = 220) -> dict[str, Any]:
    # no "$schema": the page names the mode (vega-lite) itself, so it holds no URL
    return {"title": {"text": title, "anchor": "start", "fontSize": 13},
            "width": "container", "height": height,
            "config": {"view": {"stroke": None}, "axis": {"labelFontSize": 11}}}


def _colour(legend: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"field": "o", "type": "nominal", "title": None,
                           "scale": {"domain": list(COLOURS), "range": list(COLOURS.values())}}
    out["legend"] = {"orient": "top", "direction": "horizontal"} if legend else None
    return out


def _tooltip(s: Series) -> list[dict[str, Any]]:
    return [{"field": "q", "title": "query"}, {"field": "t", "title": "text"},
            {"field": "b", "title": s.baseline_name, "format": ".4f"},
            {"field": "c", "title": s.candidate_name, "format": ".4f"},
            {"field": "d", "title": "difference", "format": "+.4f"}]


def sorted_positions(n: int, limit: int = MAX_MARKS) -> list[int]:
    """The positions (in sorted order) of the queries a per-query plot draws: all of
    them up to ``limit`` queries, else ``limit`` positions evenly spread from the first to
    the last (the smallest and largest differences are always drawn)."""
    if n <= limit:
        return list(range(n))
    return [round(k * (n - 1) / (limit - 1)) for k in range(limit)]


def per_query(s: Series, limit: int = MAX_MARKS) -> tuple[dict[str, Any], int]:
    """The sorted per-query differences as bars, and the number of bars drawn.

    Queries are sorted by difference (ties by id); past ``limit`` queries, ``limit`` of
    them evenly spread over that order are drawn (:func:`sorted_positions`), each bar a
    real query with its own tooltip.
    """
    order = sorted(range(len(s.ids)), key=lambda i: (s.diffs[i], s.ids[i]))
    positions = sorted_positions(len(order), limit)
    sampled = len(positions) < len(order)
    values = []
    for pos in positions:
        i = order[pos]
        values.append({"r": pos, "q": s.ids[i], "t": _short(s.texts.get(s.ids[i])),
                       "b": _num(s.baseline[i]), "c": _num(s.candidate[i]),
                       "d": _num(s.diffs[i]), "o": s.outcome(s.diffs[i])})
    title = f"{s.metric}: {s.candidate_name} − {s.baseline_name}, per query, sorted"
    spec = _base(title)
    spec.update({
        "data": {"values": values},
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "r", "type": "ordinal", "sort": None,
                  "axis": {"labels": False, "ticks": False, "title":
                           f"{len(order):,} queries, sorted by difference"
                           + (f" ({len(positions):,} shown, evenly spread)" if sampled
                              else "")},
                  "scale": {"paddingInner": 0.1 if len(values) < 200 else 0}},
            "y": {"field": "d", "type": "quantitative", "title": f"Δ {s.metric}"},
            "color": _colour(), "tooltip": _tooltip(s)},
    })
    return spec, len(values)


def _diagonal(lo: float, hi: float) -> dict[str, Any]:
    return {"data": {"values": [{"x": lo, "y": lo, "x2": hi, "y2": hi}]},
            "mark": {"type": "rule", "color": "#757575", "strokeDash": [4, 3]},
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


def scatter(s: Series) -> dict[str, Any]:
    """Baseline (x) against candidate (y), one point per query, over the diagonal."""
    lo, hi = _range(s)
    values = [{"q": q, "t": _short(s.texts.get(q)), "b": _num(b), "c": _num(c),
               "d": _num(d), "o": s.outcome(d)}
              for q, b, c, d in zip(s.ids, s.baseline, s.candidate, s.diffs, strict=True)]
    spec = _base(f"{s.metric}: {s.candidate_name} against {s.baseline_name}", 260)
    spec.update({"layer": [
        _diagonal(lo, hi),
        {"data": {"values": values},
         "mark": {"type": "point", "filled": True, "size": 28, "opacity": 0.75,
                  "tooltip": True},
         "encoding": {**_axes(s, lo, hi), "color": _colour(False), "tooltip": _tooltip(s)}},
    ]})
    return spec


def density(s: Series, bins: int = DENSITY_BINS) -> tuple[dict[str, Any], int]:
    """Baseline against candidate as a 2-D histogram of ``bins`` x ``bins`` cells (only
    the cells that hold a query are drawn), over the diagonal; and the cells drawn."""
    lo, hi = _range(s)
    width = (hi - lo) / bins
    counts: dict[tuple[int, int], int] = {}
    for b, c in zip(s.baseline, s.candidate, strict=True):
        if math.isfinite(b) and math.isfinite(c):
            key = (min(int((b - lo) / width), bins - 1), min(int((c - lo) / width), bins - 1))
            counts[key] = counts.get(key, 0) + 1
    cells = [{"b": _num(lo + i * width), "b2": _num(lo + (i + 1) * width),
              "c": _num(lo + j * width), "c2": _num(lo + (j + 1) * width), "n": n}
             for (i, j), n in sorted(counts.items())]
    spec = _base(f"{s.metric}: {s.candidate_name} against {s.baseline_name} "
                 f"(density of {len(s.ids):,} queries)", 260)
    spec.update({"layer": [
        {"data": {"values": cells}, "mark": {"type": "rect", "tooltip": True},
         "encoding": {**_axes(s, lo, hi), "x2": {"field": "b2"}, "y2": {"field": "c2"},
                      "color": {"field": "n", "type": "quantitative", "title": "queries",
                                "scale": {"type": "log", "scheme": "blues"}},
                      "tooltip": [{"field": "n", "title": "queries"}]}},
        _diagonal(lo, hi),
    ]})
    return spec, len(cells)


def null_distribution(edges: Sequence[float], counts: Sequence[int], observed: float,
                      title: str, x_title: str) -> dict[str, Any]:
    """Bars over the bins of a distribution and a rule at the observed value."""
    values = [{"x": _num(edges[i]), "x2": _num(edges[i + 1]), "n": int(n)}
              for i, n in enumerate(counts)]
    spec = _base(title, 200)
    spec.update({"layer": [
        {"data": {"values": values},
         "mark": {"type": "rect", "color": "#90a4ae", "tooltip": True},
         "encoding": {"x": {"field": "x", "type": "quantitative", "title": x_title},
                      "x2": {"field": "x2"},
                      "y": {"field": "n", "type": "quantitative", "title": "resamples"},
                      "tooltip": [{"field": "x", "title": "from", "format": "+.4f"},
                                  {"field": "x2", "title": "to", "format": "+.4f"},
                                  {"field": "n", "title": "count"}]}},
        {"data": {"values": [{"x": _num(observed), "label": "observed"}]},
         "mark": {"type": "rule", "color": "#c62828", "strokeWidth": 2, "tooltip": True},
         "encoding": {"x": {"field": "x", "type": "quantitative"},
                      "tooltip": [{"field": "label", "title": "value"},
                                  {"field": "x", "title": "statistic", "format": "+.4f"}]}},
    ]})
    return spec


def forest(items: Sequence[Mapping[str, Any]], title: str) -> dict[str, Any]:
    """Differences with their intervals against zero.

    Args:
        items: one mapping per difference: ``group`` (a panel: the metric, or the gate
            check), ``label`` (its row in the panel: the candidate), ``diff``, ``lo``,
            ``hi`` (None: an open end, drawn to the difference), ``significant``, and
            ``p`` (text for the tooltip).
        title: the chart's title.
    """
    values = [{"g": it["group"], "l": it["label"], "d": _num(it["diff"]),
               "lo": _num(it["diff"] if it["lo"] is None else it["lo"]),
               "hi": _num(it["diff"] if it["hi"] is None else it["hi"]),
               "s": "significant" if it["significant"] else "not significant",
               "p": it.get("p", "")} for it in items]
    tooltip = [{"field": "g", "title": "metric"}, {"field": "l", "title": "candidate"},
               {"field": "d", "title": "difference", "format": "+.4f"},
               {"field": "lo", "title": "CI low", "format": "+.4f"},
               {"field": "hi", "title": "CI high", "format": "+.4f"},
               {"field": "p", "title": "p"}]
    y = {"field": "l", "type": "nominal", "title": None, "sort": None}
    colour = {"field": "s", "type": "nominal", "title": None,
              "scale": {"domain": ["significant", "not significant"],
                        "range": ["#1565c0", "#9e9e9e"]},
              "legend": {"orient": "top", "direction": "horizontal"}}
    layer = [
        {"mark": {"type": "rule", "color": "#616161", "strokeDash": [3, 3]},
         "encoding": {"x": {"datum": 0, "type": "quantitative"}}},
        {"mark": {"type": "rule", "strokeWidth": 2, "tooltip": True},
         "encoding": {"x": {"field": "lo", "type": "quantitative", "title": "difference"},
                      "x2": {"field": "hi"}, "y": y, "color": colour,
                      "tooltip": tooltip}},
        {"mark": {"type": "point", "filled": True, "size": 70, "tooltip": True},
         "encoding": {"x": {"field": "d", "type": "quantitative"}, "y": y,
                      "color": colour, "tooltip": tooltip}},
    ]
    rows = len({v["l"] for v in values})
    spec = _base(title)
    del spec["height"]
    ends = [x for v in values for x in (v["lo"], v["hi"]) if x is not None]
    if all(abs(x) <= 1 for x in ends):
        # one panel on one scale: differences of metrics in [0, 1] compare directly
        for v in values:
            v["l"] = f"{v['g']} · {v['l']}" if v["l"] != v["g"] else v["g"]
        spec.update({"data": {"values": values}, "width": 560,
                     "height": max(40, 26 * len(values)), "layer": layer})
        return spec
    spec.update({
        "data": {"values": values},
        "facet": {"row": {"field": "g", "type": "nominal", "title": None, "sort": None,
                          "header": {"labelAngle": 0, "labelAlign": "left",
                                     "labelFontWeight": "bold"}}},
        "spec": {"width": 560, "height": max(24, 22 * rows), "layer": layer},
        "resolve": {"scale": {"x": "independent", "y": "independent"}},
    })
    del spec["width"]
    return spec


__all__ = ["COLOURS", "DENSITY_BINS", "LOSS", "MAX_MARKS", "TIE", "TIE_ATOL", "WIN",
           "Series", "density", "forest", "null_distribution", "per_query", "scatter",
           "sorted_positions"]
