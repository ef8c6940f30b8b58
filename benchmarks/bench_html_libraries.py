"""The HTML report's choice of plotting library: the same charts drawn by Plotly, Bokeh and
Vega-Lite in the browser, or drawn as SVG when the page is written by Vega-Lite (through
vl-convert) or matplotlib, measured for file size, time to write and time to render in
headless Chromium.

    pip install plotly bokeh matplotlib   # not dependencies of evalkit; vl-convert-python is
    python benchmarks/bench_html_libraries.py N_QUERIES N_ROWS \
        [plotly bokeh bokehsvg vega vegasvg mplsvg]

Each row of the comparison gets a sorted per-query bar chart, a baseline-vs-candidate
scatter and a 200-bin histogram, every chart drawn in full (no downsampling), each library
used the ordinary way. Drawn in the browser, with a tooltip per bar (query id, text, both
scores): Plotly figures with the inlined plotly.js (SVG traces: bar, scatter), Bokeh
figures sharing one data source with BokehJS inlined (canvas, or SVG with ``bokehsvg``),
Vega-Lite specifications with the vl-convert bundle inlined (SVG renderer). Drawn when
written, without tooltips (the report adds its own hover): ``vegasvg``, the same Vega-Lite
specifications drawn by ``vl_convert.vegalite_to_svg`` and compacted as the report does
(:func:`evalkit_report_html.vega.to_svg`); ``mplsvg``, matplotlib figures saved as SVG
(text as text). Rendered is navigation to the moment every chart reported done, for the
pages drawn when written the first frames after the load (median of 3). A library that is
not installed is skipped. docs/report.md gives the figures and the choice.
"""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def data(n: int, rows: int, seed: int = 1
         ) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]
    texts = [f"query text number {i} about something" for i in range(n)]
    out = []
    for r in range(rows):
        b = rng.beta(2, 5, n)
        c = np.clip(b + rng.normal(0.03, 0.1, n), 0, 1)
        d = c - b
        counts, edges = np.histogram(rng.normal(0, 0.01, 10000), 200)
        out.append(dict(name=f"m{r}", b=b, c=c, d=d, counts=counts, edges=edges))
    return ids, texts, out


# ---------------------------------------------------------------- plotly
def plotly_page(ids: list[str], texts: list[str], rows: list[dict[str, Any]]) -> str:
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    figs = []
    for r in rows:
        order = np.argsort(r["d"], kind="stable")
        idx = np.array(ids)[order]
        custom = np.stack([idx, np.array(texts)[order], r["b"][order], r["c"][order]], axis=1)
        figs.append(go.Figure(go.Bar(
            x=np.arange(len(ids)), y=r["d"][order], customdata=custom,
            marker_color=np.where(r["d"][order] > 0, "#1b7837", "#b2182b"),
            hovertemplate="%{customdata[0]}<br>%{customdata[1]}<br>baseline %{customdata[2]:.4f}"
                          "<br>candidate %{customdata[3]:.4f}<extra></extra>")))
        figs.append(go.Figure(go.Scatter(
            x=r["b"], y=r["c"], mode="markers", customdata=np.stack([ids, texts], axis=1),
            hovertemplate="%{customdata[0]}<extra></extra>")))
        e = r["edges"]
        figs.append(go.Figure(go.Bar(x=(e[:-1] + e[1:]) / 2, y=r["counts"])))
    divs = []
    for i, f in enumerate(figs):
        divs.append(pio.to_html(f, include_plotlyjs=False, full_html=False, div_id=f"p{i}"))
    js = get_plotlyjs()
    wait = """<script>
    const gds=[...document.querySelectorAll('.plotly-graph-div')];
    Promise.all(gds.map(g=>new Promise(res=>{
      if(g._fullLayout) res(); else g.on('plotly_afterplot',res);})))
    .then(()=>requestAnimationFrame(()=>requestAnimationFrame(()=>{window.evalkitRendered=true;})));
    </script>"""
    return (f"<html><head><meta charset='utf-8'><script>{js}</script></head><body>"
            + "".join(divs) + wait + "</body></html>")


# ---------------------------------------------------------------- bokeh
def bokeh_page(ids: list[str], texts: list[str], rows: list[dict[str, Any]],
               backend: str = "canvas") -> str:
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    cols: dict[str, Any] = {"id": ids, "text": texts}
    for k, r in enumerate(rows):
        order = np.argsort(r["d"], kind="stable")
        rank = np.empty(len(ids), int)
        rank[order] = np.arange(len(ids))
        cols[f"b{k}"], cols[f"c{k}"], cols[f"d{k}"], cols[f"r{k}"] = r["b"], r["c"], r["d"], rank
    src = ColumnDataSource(cols)
    plots = []
    for k, r in enumerate(rows):
        p = figure(height=250, width=700, output_backend=backend)
        p.vbar(x=f"r{k}", top=f"d{k}", width=0.9, source=src)
        p.add_tools(HoverTool(tooltips=[("id", "@id"), ("text", "@text"), ("b", f"@b{k}"),
                                        ("c", f"@c{k}")]))
        plots.append(p)
        s = figure(height=250, width=250, output_backend=backend)
        s.scatter(f"b{k}", f"c{k}", source=src)
        plots.append(s)
        h = figure(height=250, width=400, output_backend=backend)
        e = r["edges"]
        h.quad(top=r["counts"], bottom=0, left=e[:-1], right=e[1:])
        plots.append(h)
    html = file_html(column(*plots), INLINE, "m")
    wait = """<script>
    (function poll(){ const d=window.Bokeh&&Bokeh.documents&&Bokeh.documents[0];
      if(d && Bokeh.index && Object.keys(Bokeh.index).length){ d.idle.connect(()=>{}) ;
        const v=Bokeh.index[Object.keys(Bokeh.index)[0]];
        const done=()=>requestAnimationFrame(()=>requestAnimationFrame(
          ()=>{window.evalkitRendered=true;}));
        if (v.is_idle || (d.is_idle)) done(); else d.idle.connect(done);
      } else setTimeout(poll,5);})();
    </script>"""
    return str(html).replace("</body>", wait + "</body>")


# ---------------------------------------------------------------- vega-lite
def vega_page(ids: list[str], texts: list[str], rows: list[dict[str, Any]]) -> str:
    import vl_convert as vlc

    specs = []
    for r in rows:
        order = np.argsort(r["d"], kind="stable")
        vals = [{"rank": i, "id": ids[j], "text": texts[j], "b": float(r["b"][j]),
                 "c": float(r["c"][j]), "d": float(r["d"][j])} for i, j in enumerate(order)]
        specs.append({"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
                      "data": {"values": vals}, "mark": "bar", "width": 700, "height": 250,
                      "encoding": {"x": {"field": "rank", "type": "ordinal", "axis": None},
                                   "y": {"field": "d", "type": "quantitative"},
                                   "tooltip": [{"field": "id"}, {"field": "text"},
                                               {"field": "b"}, {"field": "c"}]}})
        specs.append({"data": {"values": [{"b": v["b"], "c": v["c"], "id": v["id"]} for v in vals]},
                      "mark": "point", "width": 250, "height": 250,
                      "encoding": {"x": {"field": "b", "type": "quantitative"},
                                   "y": {"field": "c", "type": "quantitative"},
                                   "tooltip": [{"field": "id"}]}})
        e = r["edges"]
        specs.append({"data": {"values": [{"x0": float(e[i]), "x1": float(e[i + 1]),
                                           "n": int(r["counts"][i])} for i in range(200)]},
                      "mark": "bar", "width": 400, "height": 250,
                      "encoding": {"x": {"field": "x0", "type": "quantitative"},
                                   "x2": {"field": "x1"},
                                   "y": {"field": "n", "type": "quantitative"}}})
    bundle = vlc.javascript_bundle()  # type: ignore[call-arg]
    divs = "".join(f"<div id='v{i}'></div>" for i in range(len(specs)))
    run = ("<script>const S=" + json.dumps(specs) + ";Promise.all(S.map((s,i)=>vegaEmbed('#v'+i,s,"
           "{renderer:'svg',actions:false}))).then(()=>requestAnimationFrame(()=>"
           "requestAnimationFrame(()=>{window.evalkitRendered=true;})));</script>")
    return ("<html><head><meta charset='utf-8'><script type='module'>" + bundle
            + "</script></head><body>" + divs
            + run.replace("<script>", "<script type='module'>") + "</body></html>")


def vega_specs(ids: list[str], texts: list[str], rows: list[dict[str, Any]]
               ) -> list[dict[str, Any]]:
    """The three charts of each row as Vega-Lite specifications without tooltips."""
    specs: list[dict[str, Any]] = []
    for r in rows:
        order = np.argsort(r["d"], kind="stable")
        specs.append({"data": {"values": [{"r": int(k), "d": float(r["d"][i])}
                                          for k, i in enumerate(order)]},
                      "mark": "bar", "width": 700, "height": 250, "config": {"aria": False},
                      "encoding": {"x": {"field": "r", "type": "ordinal",
                                         "axis": {"labels": False, "ticks": False}},
                                   "y": {"field": "d", "type": "quantitative"}}})
        specs.append({"data": {"values": [{"b": float(b), "c": float(c)}
                                          for b, c in zip(r["b"], r["c"], strict=True)]},
                      "mark": {"type": "circle", "size": 36, "strokeWidth": None},
                      "width": 250, "height": 250, "config": {"aria": False},
                      "encoding": {"x": {"field": "b", "type": "quantitative"},
                                   "y": {"field": "c", "type": "quantitative"}}})
        e = r["edges"]
        specs.append({"data": {"values": [{"x0": float(e[i]), "x1": float(e[i + 1]),
                                           "n": int(r["counts"][i])} for i in range(200)]},
                      "mark": "rect", "width": 400, "height": 250, "config": {"aria": False},
                      "encoding": {"x": {"field": "x0", "type": "quantitative"},
                                   "x2": {"field": "x1"},
                                   "y": {"field": "n", "type": "quantitative"}}})
    return specs


#: Sets ``window.evalkitRendered`` once the page's first frames are painted.
_PAINTED = ("<script>requestAnimationFrame(()=>requestAnimationFrame(()=>"
            "{window.evalkitRendered=true;}));</script>")


def vega_svg_page(ids: list[str], texts: list[str], rows: list[dict[str, Any]]) -> str:
    from evalkit_report_html.vega import to_svg

    svgs = [to_svg(spec, f"c{i}") for i, spec in enumerate(vega_specs(ids, texts, rows))]
    return ("<html><head><meta charset='utf-8'></head><body>"
            + "".join(f"<figure>{s}</figure>" for s in svgs) + _PAINTED + "</body></html>")


def matplotlib_svg_page(ids: list[str], texts: list[str], rows: list[dict[str, Any]]) -> str:
    import io

    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text, not as paths
    svgs = []

    def save(fig: Any) -> None:
        out = io.StringIO()
        fig.savefig(out, format="svg")
        plt.close(fig)
        text = out.getvalue()
        svgs.append(text[text.index("<svg"):])

    for r in rows:
        order = np.argsort(r["d"], kind="stable")
        fig, ax = plt.subplots(figsize=(7, 2.5))
        ax.bar(np.arange(len(ids)), r["d"][order], width=1.0,
               color=np.where(r["d"][order] > 0, "#1a9850", "#d73027"))
        save(fig)
        fig, ax = plt.subplots(figsize=(2.5, 2.5))
        ax.scatter(r["b"], r["c"], s=9)
        save(fig)
        fig, ax = plt.subplots(figsize=(4, 2.5))
        e = r["edges"]
        ax.bar(e[:-1], r["counts"], width=np.diff(e), align="edge")
        save(fig)
    return ("<html><head><meta charset='utf-8'></head><body>"
            + "".join(f"<figure>{s}</figure>" for s in svgs) + _PAINTED + "</body></html>")


def render_ms(path: Path, runs: int = 3) -> tuple[float, list[str]]:
    from evalkit_report_html.browser import browser

    times, errors = [], []
    with browser() as b:
        for _ in range(runs):
            result, _ = b.open(path, timeout_s=180)
            times.append(result.seconds * 1000)
            errors += result.console_errors
    return statistics.median(times), errors[:3]


PAGES: dict[str, Callable[[list[str], list[str], list[dict[str, Any]]], str]] = {
    "plotly": plotly_page, "bokeh": bokeh_page,
    "bokehsvg": lambda i, t, r: bokeh_page(i, t, r, backend="svg"), "vega": vega_page,
    "vegasvg": vega_svg_page, "mplsvg": matplotlib_svg_page,
}


def main() -> int:
    n, nrows = int(sys.argv[1]), int(sys.argv[2])
    libs = sys.argv[3:] or ["plotly", "bokeh", "vega"]
    ids, texts, rows = data(n, nrows)
    for lib in libs:
        module = {"plotly": "plotly", "bokeh": "bokeh", "bokehsvg": "bokeh",
                  "vega": "vl_convert", "vegasvg": "vl_convert", "mplsvg": "matplotlib"}[lib]
        if importlib.util.find_spec(module) is None:
            print(f"{lib:8s} skipped: {module} is not installed")
            continue
        t = time.perf_counter()
        html = PAGES[lib](ids, texts, rows)
        path = Path(tempfile.gettempdir()) / f"evalkit-{lib}_{n}_{nrows}.html"
        path.write_text(html)
        wt = time.perf_counter() - t
        ms, errs = render_ms(path)
        print(f"{lib:8s} n={n:6d} rows={nrows:2d} size={path.stat().st_size / 1e6:6.2f} MB "
              f"write={wt:5.2f} s render={ms:7.0f} ms errors={errs}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
