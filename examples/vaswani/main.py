"""The main job: two retrieval systems on Vaswani, scored per query, compared with a paired test.

1. Index the bundled collection and run BM25 and TF-IDF over its 93 queries
   (``retrieval.py``; numpy and scipy.sparse only).
2. Write both as TREC run files and score them with :func:`evalkit.evaluate_run`
   (trec_eval's conventions), keeping one row per query.
3. Save both as run artifacts (JSON Lines) and print the paired bootstrap of every metric.
4. Compare them with :func:`evalkit.compare` (the queries' text from ``query-text.trec``)
   and write the comparison as the LaTeX table of a paper, ``out/table.tex`` (the
   built-in ``latex`` reporter), and as the interactive HTML report, ``out/report.html``
   (the ``html`` reporter of the evalkit-report-html plugin).

Run it from the repository root::

    .venv/bin/python examples/vaswani/main.py

The artifacts then feed the command line, e.g.
``evalkit compare examples/vaswani/out/tfidf.jsonl examples/vaswani/out/bm25.jsonl --top 3``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import retrieval  # noqa: E402  (the example's own module, next to this file)

from evalkit import RegistryError, RunResult, compare, evaluate_run, paired_bootstrap  # noqa: E402
from evalkit.report.formatting import p_cell, signed  # noqa: E402

METRICS = ["AP", "nDCG@10", "P@10", "R@100", "RR"]


def compare_table(baseline: RunResult, candidate: RunResult, n_resamples: int) -> str:
    """Both means, the difference, its 95% CI, p and wins/ties/losses for every metric.

    A p at the bootstrap's floor, 1/(B+1), prints as ``< 0.0001`` (B = 10,000).
    """
    head = (
        f"{'metric':<14}{baseline.name:>9}{candidate.name:>9}{'diff':>9}"
        f"{'95% CI':>21}{'p':>10}  {'significant':<12}{'W/T/L':>9}"
    )
    lines = [head, "-" * len(head)]
    for metric in baseline.metric_names():
        v = paired_bootstrap(candidate, baseline, metric, n_resamples=n_resamples, seed=42)
        b, c = baseline.scores(metric), candidate.scores(metric)
        wins = sum(c[q] > b[q] for q in b)
        losses = sum(c[q] < b[q] for q in b)
        ties = len(b) - wins - losses
        ci = f"[{signed(v.ci_low)}, {signed(v.ci_high)}]"
        lines.append(
            f"{metric:<14}{baseline.mean(metric):>9.4f}{candidate.mean(metric):>9.4f}"
            f"{signed(v.observed):>9}{ci:>21}{p_cell(v.p_value, v.n_resamples):>10}  "
            f"{'yes' if v.significant else 'no':<12}{f'{wins}/{ties}/{losses}':>9}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=HERE / "out",
                        help="directory for the run files and artifacts (default: %(default)s)")
    parser.add_argument("--resamples", type=int, default=10_000,
                        help="bootstrap resamples (default: %(default)s)")
    parser.add_argument("--no-report", action="store_true",
                        help="do not compare the runs, nor write out/table.tex and "
                        "out/report.html")
    args = parser.parse_args(argv)
    out: Path = args.out
    data = retrieval.DATA_DIR
    qrels = data / "qrels"

    start = time.perf_counter()
    documents = retrieval.load_documents()
    queries = retrieval.load_queries()
    bm25, tfidf = retrieval.build(documents)
    print(f"indexed {len(documents):,} documents, {len(bm25.index.vocab):,} terms; "
          f"{len(queries)} queries ({time.perf_counter() - start:.1f} s)")

    results: dict[str, RunResult] = {}
    for system in (tfidf, bm25):
        run_file = retrieval.write_trec_run(
            out / f"run.{system.name}.txt", system.score_all(queries), tag=system.name
        )
        result = evaluate_run(run_file, qrels, METRICS, relevance_level=1, missing="zero")
        artifact = result.save(out / f"{system.name}.jsonl")
        notes = result.header.get("notes", {})
        print(f"{system.name:>6}: {len(result.per_query)} queries scored, "
              f"{notes.get('unjudged_ignored', 0)} unjudged run topics ignored, "
              f"{notes.get('missing_scored_zero', 0)} judged queries missing; "
              f"wrote {_show(run_file)} and {_show(artifact)}")
        results[system.name] = result

    print()
    print(f"paired bootstrap, {args.resamples:,} resamples, seed 42; "
          "diff = bm25 - tfidf, paired by query id")
    print(compare_table(results["tfidf"], results["bm25"], args.resamples))
    if not args.no_report:
        print()
        for line in write_reports(out, data / "query-text.trec", args.resamples):
            print(line)
    print()
    print(f"done in {time.perf_counter() - start:.1f} s. Next: evalkit compare "
          f"{_show(out / 'tfidf.jsonl')} {_show(out / 'bm25.jsonl')} --top 3")
    return 0


def write_reports(out: Path, topics: Path, n_resamples: int) -> list[str]:
    """Compare the two saved artifacts (TF-IDF the baseline) and write ``table.tex`` and
    ``report.html``; the lines to print."""
    # the runs by the paths printed above (relative to the current folder when under it)
    comparison = compare(_show(out / "tfidf.jsonl"), _show(out / "bm25.jsonl"),
                         topics=topics, n_resamples=n_resamples, top=10)
    table = out / "table.tex"
    comparison.to_latex(table)
    lines = [f"wrote {_show(table)}: the comparison as a booktabs table for a paper"]
    try:
        report = comparison.to_html(out / "report.html")
    except RegistryError as exc:  # the html plugin is not installed
        return [*lines, f"report: not written ({exc})"]
    return [*lines, f"wrote {_show(report)}: the comparison as one interactive page "
            f"({report.stat().st_size / 1e6:.1f} MB, opens offline)"]


def _show(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    raise SystemExit(main())
