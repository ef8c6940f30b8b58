"""Gate two retrieval systems against a stored baseline on the bundled Vaswani collection.

1. The baseline is the reference BM25 run shipped with the data
   (``examples/vaswani/data/runs/run.vaswani.bm25.txt``), scored with
   :func:`evalkit.evaluate_run` and stored by :func:`evalkit.gate.baseline.promote` in
   ``baseline.jsonl`` next to this file (regenerate it with ``--promote``).
2. The candidates are the two systems of ``examples/vaswani`` (our own BM25 and TF-IDF),
   built and scored by ``examples/vaswani/main.py``.
3. Each candidate is gated with ``checks.yaml``: a scoped floor, two no-regression tests
   and a recall floor block; a precision target only warns. JUnit XML and Markdown
   reports are written per candidate.

Run it from the repository root::

    .venv/bin/python examples/gate/gate_example.py

Our BM25 passes (exit 0, with one warning); TF-IDF fails (exit 1). The script exits 0 when
both verdicts come out that way.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from evalkit import evaluate_gate, evaluate_run, load_checks
from evalkit.data.results import RunResult
from evalkit.gate import GateReport
from evalkit.gate.baseline import load_baseline, promote
from evalkit.report.writing import write_reports

HERE = Path(__file__).resolve().parent
VASWANI = HERE.parent / "vaswani"
DATA = VASWANI / "data"
REFERENCE_RUN = DATA / "runs" / "run.vaswani.bm25.txt"
BASELINE = HERE / "baseline.jsonl"
CHECKS = HERE / "checks.yaml"
METRICS = ["ap", "ndcg@10", "precision@10", "recall@100", "rr"]


def reference_run() -> RunResult:
    """The reference BM25 run, scored per query against the bundled qrels."""
    return evaluate_run(REFERENCE_RUN, DATA / "qrels", METRICS, relevance_level=1,
                        missing="zero", name="reference-bm25")


def promote_baseline(to: Path = BASELINE) -> Path:
    """Store the reference run as the baseline (metrics only, small enough to commit)."""
    return promote(reference_run(), to, drop_rankings=True)


def build_candidates(out: Path) -> dict[str, Path]:
    """Run ``examples/vaswani/main.py``: both systems, scored, saved as run artifacts."""
    spec = importlib.util.spec_from_file_location("vaswani_main", VASWANI / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--out", str(out), "--resamples", "1000"])
    return {name: out / f"{name}.jsonl" for name in ("bm25", "tfidf")}


def gate(candidate: Path, baseline: Path = BASELINE, reports: Path | None = None) -> GateReport:
    """Gate one candidate artifact; write ``<name>.xml`` and ``<name>.md`` to ``reports``."""
    base = load_baseline(baseline)
    checks = load_checks(CHECKS, known_case_ids=base.run.ids())
    report = evaluate_gate(checks, RunResult.load(candidate), base)
    if reports is not None:
        write_reports(report, [f"junit:{reports / candidate.stem}.xml",
                               f"markdown:{reports / candidate.stem}.md"])
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=HERE / "out",
                        help="directory for runs and reports (default: %(default)s)")
    parser.add_argument("--promote", action="store_true",
                        help="store the reference run as baseline.jsonl first")
    args = parser.parse_args(argv)
    if args.promote or not BASELINE.exists():
        print(f"promoted the reference run to {promote_baseline()}")
    candidates = build_candidates(args.out / "runs")
    codes: dict[str, int] = {}
    for name, path in candidates.items():
        report = gate(path, reports=args.out / "reports")
        print(f"\n== evalkit gate: {name} against the stored baseline ==")
        print("\n".join(report.lines()))
        codes[name] = report.exit_code
    print(f"\nreports in {args.out / 'reports'}")
    return 0 if codes == {"bm25": 0, "tfidf": 1} else 1


if __name__ == "__main__":
    raise SystemExit(main())
