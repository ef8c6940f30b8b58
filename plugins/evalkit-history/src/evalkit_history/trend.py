"""The trend of a history as a page: ``evalkit history report --report html:PATH``.

Each metric gets one chart, a Vega-Lite specification drawn as SVG when the page is
written by ``vl-convert-python`` (the Vega project's converter: Vega-Lite compiles the
specification and Vega draws it, in the JavaScript runtime the wheel embeds, offline),
the approach of the ``evalkit-report-html`` plugin; the page opens without a network or
a script. On each chart:

* the line joins the means of consecutive comparable runs; a break (runs not comparable:
  another golden set, qrels, setting or metric definition) is a gap in the line and a
  dashed vertical rule;
* the error bar at a run is the interval of its step, the paired difference from the
  run before (after a break, from the latest earlier run evaluated alike), placed at
  that earlier run's mean: ``[previous mean + ci_low, previous mean
  + ci_high]``. It holds the run's own mean, and for the tests whose interval agrees with
  their p-value (every test but the percentile bootstrap) it misses the earlier mean
  exactly when the step is significant;
* a significant step is a filled triangle, green when the metric moved the better way,
  red when the worse (by the metric's polarity); other runs are small circles.

Aggregates (whole-run values) have a line and no steps. ``json:PATH`` writes the same
data as ``evalkit history show --json``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from evalkit_history.store import StoredRun

#: The formats of ``evalkit history report --report FORMAT:PATH``.
TREND_FORMATS = ("html", "json")


#: The ``step`` of a run whose step is not significant, or that has none.
NO_STEP = "no significant step"


class ChartLibraryError(ValueError):
    """vl-convert-python, which draws the charts, is not installed."""


def trend_points(runs: Sequence[StoredRun], metric: str) -> list[dict[str, Any]]:
    """The points of ``metric``'s chart: one per run that holds it, with ``id``, ``mean``,
    ``segment`` (the number of breaks before it), ``lo``/``hi`` (the step's interval
    placed at the earlier mean, or None), ``step`` (``"better"`` or ``"worse"`` for a
    significant step, else ``"no significant step"``) and ``label``."""
    points: list[dict[str, Any]] = []
    segment = 0
    mean_of: dict[int, float] = {}
    for i, run in enumerate(runs):
        value = run.means.get(metric, run.aggregates.get(metric))
        if i > 0 and run.step.is_break:
            segment += 1
        if value is None:
            continue
        mean_of[run.id] = value
        step = next((m for m in run.step.metrics if m.metric == metric), None)
        lo = hi = None
        kind = (step.direction if step is not None else "") or NO_STEP
        previous_mean = (None if run.step.previous_id is None
                         else mean_of.get(run.step.previous_id))
        if step is not None and previous_mean is not None:
            lo = None if step.ci_low is None else previous_mean + step.ci_low
            hi = None if step.ci_high is None else previous_mean + step.ci_high
        points.append({"id": run.id, "mean": value, "segment": segment, "lo": lo, "hi": hi,
                       "step": kind, "label": run.label or run.name,
                       "commit": (run.commit or "")[:10]})
    return points


def trend_spec(runs: Sequence[StoredRun], metric: str) -> dict[str, Any]:
    """The Vega-Lite specification of ``metric``'s chart (see the module docstring)."""
    points = trend_points(runs, metric)
    breaks = [{"x": r.id - 0.5} for i, r in enumerate(runs) if i > 0 and r.step.is_break]
    ids = [r.id for r in runs]
    axis: dict[str, Any] = {"tickMinStep": 1, "format": "d"}
    if len(ids) <= 30:
        axis["values"] = ids
    x = {"field": "id", "type": "quantitative", "title": "run #", "axis": axis,
         "scale": {"domain": [min(ids, default=0) - 0.5, max(ids, default=0) + 0.5],
                   "nice": False}}
    y = {"field": "mean", "type": "quantitative", "title": metric,
         "scale": {"zero": False}}
    colors = {"domain": ["better", "worse", NO_STEP], "range": ["#1a7f37", "#cf222e", "#57606a"]}
    layers: list[dict[str, Any]] = [
        {"mark": {"type": "line", "color": "#0969da"},
         "encoding": {"x": x, "y": y, "detail": {"field": "segment", "type": "nominal"}}},
        {"transform": [{"filter": "datum.lo != null && datum.hi != null"}],
         "mark": {"type": "rule", "color": "#8c959f"},
         "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative"},
                      "y2": {"field": "hi"}}},
        {"mark": {"type": "point", "filled": True},
         "encoding": {
             "x": x, "y": y,
             "color": {"field": "step", "type": "nominal", "scale": colors,
                       "title": "step"},
             "shape": {"condition": {"test": "datum.step == 'better' || "
                                             "datum.step == 'worse'", "value": "triangle"},
                       "value": "circle"},
             "size": {"condition": {"test": "datum.step == 'better' || "
                                            "datum.step == 'worse'", "value": 90},
                      "value": 25}}},
    ]
    if breaks:
        layers.append({"data": {"values": breaks},
                       "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#bf8700"},
                       "encoding": {"x": {"field": "x", "type": "quantitative"}}})
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": metric, "width": 640, "height": 220,
        "data": {"values": points}, "layer": layers,
    }


def _svg(spec: dict[str, Any]) -> str:
    try:
        import vl_convert
    except ImportError:
        raise ChartLibraryError(
            "the trend charts are drawn by vl-convert-python, which is not installed: "
            "pip install 'evalkit-history[chart]' (paired-evalkit[html] brings it too)"
        ) from None
    return str(vl_convert.vegalite_to_svg(spec))


def _steps_table(runs: Sequence[StoredRun], metrics: Sequence[str]) -> str:
    rows = []
    for run in runs:
        for m in run.step.metrics:
            if m.metric in metrics and m.significant:
                p = m.p_adjusted if m.p_adjusted is not None else m.p_value
                rows.append(
                    f"<tr><td>#{run.id}</td><td>{html.escape(run.label or run.name)}</td>"
                    f"<td>{html.escape(m.metric)}</td><td>{m.diff:+.4f}</td>"
                    f"<td>{m.direction}</td><td>{p:.3g}"
                    "</td></tr>")
        if run.step.is_break:
            against = (f"; steps against #{run.step.previous_id}, the latest run evaluated "
                       "alike" if run.step.skips else "")
            rows.append(f"<tr class='break'><td>#{run.id}</td><td colspan='5'>break: "
                        f"{html.escape('; '.join(run.step.reasons))}{against}</td></tr>")
    if not rows:
        return "<p>No significant step and no break.</p>"
    return ("<table><thead><tr><th>run</th><th>label</th><th>metric</th><th>difference</th>"
            "<th>direction</th><th>adjusted p</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def render_trend(runs: Sequence[StoredRun], metrics: Sequence[str], fmt: str,
                 title: str = "Run history") -> str:
    """The trend of ``metrics`` over ``runs`` as ``fmt`` (:data:`TREND_FORMATS`).

    Raises:
        ValueError: an unknown format.
        ChartLibraryError: (a ``ValueError``) ``html`` without vl-convert-python.
    """
    if fmt == "json":
        return json.dumps({"metrics": list(metrics), "runs": [r.to_json() for r in runs]},
                          indent=2, allow_nan=False)
    if fmt != "html":
        raise ValueError(f"unknown trend format {fmt!r}; use one of {', '.join(TREND_FORMATS)}")
    charts = "".join(
        f"<section><h2>{html.escape(m)}</h2>{_svg(trend_spec(runs, m))}</section>"
        for m in metrics)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
        "table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;"
        "text-align:left}tr.break td{color:#bf8700}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{len(runs)} run(s). Each chart: the mean run by "
        "run; the bar at a run is its step's interval (the paired difference from the run "
        "before, placed at that run's mean); filled triangles are significant steps (green "
        "better, red worse); dashed rules are breaks between runs that are not "
        "comparable.</p>"
        f"{charts}<h2>Significant steps and breaks</h2>{_steps_table(runs, metrics)}"
        "</body></html>\n")


__all__ = ["NO_STEP", "TREND_FORMATS", "ChartLibraryError", "render_trend", "trend_points",
           "trend_spec"]
