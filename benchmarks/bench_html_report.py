"""The HTML report's budgets: time to write, file size, and time to render in headless
Chromium, with baselines measured in the same run.

    python benchmarks/bench_html_report.py [--rounds 3] [--json]

Three reports:

* ``vaswani``: the main job's comparison (93 queries, 5 metrics, 1 candidate; the runs of
  examples/vaswani/main.py). Budget: written in under 3 s, under 6 MB.
* ``systems``: 7 TREC runs x 5 metrics x 225 queries (the synthetic collection of
  :mod:`evalkit_report_html.testing`, scored against its qrels), 91 charts. Budget:
  written in under 10 s, under 2.5 MB, rendered in under 3 s.
* ``large``: 3 candidates x 5 metrics x 10,000 queries (synthetic per-query values).
  Budget: written in under 15 s, under 20 MB, rendered in under 5 s.

"Written" is ``Comparison.to_html(path)`` in a fresh interpreter, with its imports
(jinja2, the report modules) and the start of vl-convert's runtime, which draws every
chart as SVG; the comparison itself is computed before the clock starts (its time is
printed apart). "Rendered" is the navigation in headless Chromium to the page's
``evalkit:rendered`` event, the median of 3 loads. Baselines, in the same rounds: the
JSON report of the same comparison (written by the same process the same way; its size
too), and the render floor, a page with one chart drawn the same way and the same
event. Rounds alternate the reports so that load on the machine affects them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BUDGETS = {"vaswani": {"write_s": 3.0, "size_mb": 6.0},
           "systems": {"write_s": 10.0, "size_mb": 2.5, "render_s": 3.0},
           "large": {"write_s": 15.0, "size_mb": 20.0, "render_s": 5.0}}
METRICS = ["ap", "ndcg@10", "precision@10", "recall@100", "rr"]

WRITE = """
import sys, time, pickle
from pathlib import Path
comparison = pickle.loads(Path(sys.argv[1]).read_bytes())
start = time.perf_counter()
if sys.argv[3] == "html":
    comparison.to_html(sys.argv[2])
else:
    from evalkit.report import write_report
    write_report(comparison, sys.argv[3], sys.argv[2])
print(time.perf_counter() - start)
"""


def vaswani(tmp: Path) -> Any:
    import evalkit

    subprocess.run([sys.executable, str(REPO / "examples" / "vaswani" / "main.py"), "--out",
                    str(tmp), "--no-report", "--resamples", "200"], check=True,
                   capture_output=True)
    return evalkit.compare(tmp / "tfidf.jsonl", tmp / "bm25.jsonl",
                           topics=REPO / "examples" / "vaswani" / "data" / "query-text.trec",
                           top=10)


def systems(tmp: Path) -> Any:
    from evalkit_report_html.testing import write_collection

    import evalkit

    c = write_collection(tmp)
    return evalkit.compare(*c.runs, qrels=c.qrels, topics=c.topics)


def large(n: int = 10_000, candidates: int = 3) -> Any:
    import numpy as np

    import evalkit
    from evalkit.data.results import QueryResult, RunResult

    rng = np.random.default_rng(12)
    ids = [f"q{i:05d}" for i in range(n)]
    base = rng.beta(2, 5, (n, len(METRICS)))
    runs = [RunResult("baseline", [QueryResult(q, [], dict(zip(METRICS, map(float, row),
                                                                strict=True)))
                                   for q, row in zip(ids, base, strict=True)])]
    for k in range(candidates):
        vals = np.clip(base + rng.normal(0.01 * k, 0.08, base.shape), 0, 1)
        runs.append(RunResult(f"cand{k + 1}", [
            QueryResult(q, [], dict(zip(METRICS, map(float, row), strict=True)))
            for q, row in zip(ids, vals, strict=True)]))
    topics = {q: f"synthetic query number {i} about topic {i % 97}" for i, q in enumerate(ids)}
    return evalkit.compare(*runs, metrics=METRICS, topics=topics, top=10)


def write(pickled: Path, out: Path, fmt: str) -> float:
    proc = subprocess.run([sys.executable, "-c", WRITE, str(pickled), str(out), fmt],
                          capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def floor_page(path: Path) -> None:
    """One chart drawn as the report draws it, and the report's event."""
    from evalkit_report_html.vega import to_svg

    spec = {"mark": "point", "data": {"values": [{"x": 1}]}, "width": 300, "height": 200,
            "encoding": {"x": {"field": "x", "type": "quantitative"}}}
    path.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        "<figure class='chart' id='c'>" + to_svg(spec, "c") + "</figure><script>"
        "window.evalkitRendered=true;document.dispatchEvent(new CustomEvent("
        "'evalkit:rendered'));</script></body></html>", encoding="utf-8")


def runtime_start_seconds() -> float:
    """Starting vl-convert's runtime with one chart, in a fresh interpreter (every
    written report pays it once)."""
    code = ("import time; from evalkit_report_html.vega import to_svg; "
            "t = time.perf_counter(); to_svg({'mark': 'point', 'data': {'values': [{'x': 1}]},"
            " 'encoding': {'x': {'field': 'x', 'type': 'quantitative'}}}); "
            "print(time.perf_counter() - t)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return float(proc.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import pickle

    from evalkit_report_html.browser import browser

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        made: dict[str, Path] = {}
        for name in BUDGETS:
            start = time.perf_counter()
            comparison = (vaswani(tmp / "v") if name == "vaswani" else systems(tmp / "s")
                          if name == "systems" else large())
            results[name] = {"compare_s": time.perf_counter() - start, "write": [],
                             "json": [], "render": [], "floor": []}
            made[name] = tmp / f"{name}.pickle"
            made[name].write_bytes(pickle.dumps(comparison))
        floor = tmp / "floor.html"
        floor_page(floor)
        with browser() as b:
            for _ in range(args.rounds):
                for name, pickled in made.items():  # alternate the two reports
                    r = results[name]
                    html = tmp / f"{name}.html"
                    r["write"].append(write(pickled, html, "html"))
                    r["json"].append(write(pickled, tmp / f"{name}.json", "json"))
                    r["size_mb"] = html.stat().st_size / 1e6
                    r["json_mb"] = (tmp / f"{name}.json").stat().st_size / 1e6
                    page, _ = b.open(html, timeout_s=120)
                    r["render"].append(page.seconds)
                    r["console_errors"] = page.console_errors
                    r["charts"] = len(page.kinds)
                    r["floor"].append(b.open(floor)[0].seconds)
    results["runtime_start_s"] = runtime_start_seconds()
    for name, r in ((k, v) for k, v in results.items() if isinstance(v, dict)):
        for key in ("write", "json", "render", "floor"):
            r[f"{key}_median_s"] = statistics.median(r[key])
        r["write_x_json"] = r["write_median_s"] / r["json_median_s"]
        r["render_x_floor"] = r["render_median_s"] / r["floor_median_s"]
        r["size_x_json"] = r["size_mb"] / r["json_mb"]
        r["budget"] = BUDGETS[name]
        r["within_budget"] = (r["write_median_s"] < BUDGETS[name]["write_s"]
                              and r["size_mb"] < BUDGETS[name]["size_mb"]
                              and r["render_median_s"] < BUDGETS[name].get("render_s", 1e9))
    results["load_average"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"load average {results['load_average'][0]:.2f}; rounds {args.rounds} "
          f"(median shown); vl-convert's runtime started with one chart: "
          f"{results['runtime_start_s']:.2f} s")
    head = (f"{'report':<9}{'compare':>9}{'write':>8}{'json':>8}{'x json':>8}{'size':>9}"
            f"{'json':>9}{'x json':>8}{'render':>8}{'floor':>8}{'x floor':>8}  budget")
    print(head)
    print("-" * (len(head) + 28))
    for name in BUDGETS:
        r = results[name]
        b = r["budget"]
        budget = f"write < {b['write_s']:g} s, < {b['size_mb']:g} MB" + (
            f", render < {b['render_s']:g} s" if "render_s" in b else "")
        print(f"{name:<9}{r['compare_s']:>8.2f}s{r['write_median_s']:>7.2f}s"
              f"{r['json_median_s']:>7.2f}s{r['write_x_json']:>8.2f}{r['size_mb']:>6.2f} MB"
              f"{r['json_mb']:>6.2f} MB{r['size_x_json']:>8.2f}"
              f"{r['render_median_s']:>7.2f}s{r['floor_median_s']:>7.2f}s"
              f"{r['render_x_floor']:>8.2f}  {budget}: "
              f"{'met' if r['within_budget'] else 'MISSED'}"
              + (f"; console errors: {r['console_errors']}" if r["console_errors"] else ""))
    return 0 if all(results[n]["within_budget"] for n in BUDGETS) else 1


if __name__ == "__main__":
    raise SystemExit(main())
