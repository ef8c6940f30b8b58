"""Parse and evaluate a 1,000,000-line TREC run: evalkit against pytrec_eval, end to end.

What is timed, for each tool, in this one process and on the same two files:

* evalkit: ``evaluate_run(run_path, qrels_path, [ap, ndcg@10, ndcg, P@10, R@100, rr])``:
  reading both files, ranking, scoring, building the per-query rows;
* pytrec_eval: ``parse_qrel`` + ``parse_run`` (its own parsers) + ``RelevanceEvaluator``
  with ``map, ndcg_cut.10, ndcg, P.10, recall.100, recip_rank`` + ``evaluate``.

Imports and plugin discovery happen before any timing. The two tools are run alternately
``--rounds`` times; the best and the median of each are printed with their ratio. Every
per-query value of the six measures is then compared (they must agree to 1e-9).

The synthetic data (``--queries`` x ``--depth`` run lines, seeded) imitates a real run:
lines in rank order with five-decimal scores (some ties), a 1,000,000-document
collection, and graded qrels (labels 0-3) judging about 150 documents per query, most of
them drawn from the top of the ranking. ``--shuffle`` writes each query's lines in random
order instead (the rank column then disagrees with the scores, which both tools ignore).
Scores stay below 8 with five decimals so that they remain distinct in 32-bit floats:
pytrec_eval wraps trec_eval 9.0.8, which stores scores as ``float`` (scores that differ
only beyond float32 precision tie there and are then ordered by doc id), whereas
trec_eval 10.0 and evalkit keep 64-bit scores.

Usage: ``python benchmarks/bench_trec_eval.py [--rounds 5] [--shuffle] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

MEASURES = {  # evalkit name -> pytrec_eval (trec_eval) name
    "ap": "map",
    "ndcg@10": "ndcg_cut_10",
    "ndcg": "ndcg",
    "P@10": "P_10",
    "R@100": "recall_100",
    "rr": "recip_rank",
}
PYTREC_MEASURES = {"map", "ndcg_cut.10", "ndcg", "P.10", "recall.100", "recip_rank"}


def generate(directory: Path, queries: int, depth: int, *, shuffle: bool, seed: int = 7
             ) -> tuple[Path, Path]:
    """Write ``run.txt`` and ``qrels.txt`` into ``directory``; return their paths."""
    rng = np.random.default_rng(seed)
    collection = 1_000_000
    run_path = directory / "run.txt"
    qrels_path = directory / "qrels.txt"
    with run_path.open("w") as run, qrels_path.open("w") as qrels:
        for q in range(1, queries + 1):
            docs = rng.choice(collection, size=depth + 60, replace=False)
            ranked, unretrieved = docs[:depth], docs[depth:]
            # decreasing scores below 8 rounded to 5 decimals: some exact ties, and values
            # that stay distinct in float32 (pytrec_eval's trec_eval 9.0.8 ranks by 32-bit
            # scores, trec_eval 10.0 and evalkit by 64-bit ones)
            scores = np.round(7.99 - np.cumsum(rng.exponential(0.005, size=depth)), 5)
            order = rng.permutation(depth) if shuffle else np.arange(depth)
            run.write("".join(
                f"{q} Q0 D{ranked[i]:07d} {i + 1} {scores[i]:.5f} bench\n" for i in order
            ))
            # ~90 judged from the ranking (denser near the top) + 60 never retrieved
            pick = np.unique(np.minimum(rng.geometric(1 / 150, size=110) - 1, depth - 1))
            judged = np.concatenate((ranked[pick][:90], unretrieved))
            labels = rng.choice(4, size=len(judged), p=[0.55, 0.25, 0.12, 0.08])
            qrels.write("".join(
                f"{q} 0 D{d:07d} {g}\n" for d, g in zip(judged, labels, strict=True)
            ))
    return run_path, qrels_path


def run_evalkit(run_path: Path, qrels_path: Path) -> dict[str, dict[str, float]]:
    from evalkit import evaluate_run

    result = evaluate_run(run_path, qrels_path, list(MEASURES))
    names = {_canonical(m): trec for m, trec in MEASURES.items()}
    return {
        row.query_id: {trec: row.metrics[m] for m, trec in names.items()}
        for row in result.per_query
    }


def run_pytrec(run_path: Path, qrels_path: Path) -> dict[str, dict[str, float]]:
    import pytrec_eval

    with qrels_path.open() as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with run_path.open() as fh:
        run = pytrec_eval.parse_run(fh)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES)
    out: dict[str, dict[str, float]] = evaluator.evaluate(run)
    return out


def breakdown(run_path: Path, qrels_path: Path) -> dict[str, float]:
    """Seconds spent by evalkit in each stage: reading and ranking the run, reading the
    qrels, and the rest of ``evaluate_run`` (cases, the six measures, rows, header)."""
    from evalkit_retrieval.trec import load_qrels, load_run

    from evalkit import evaluate_run

    t0 = time.perf_counter()
    ranked = load_run(run_path)
    t1 = time.perf_counter()
    load_qrels(qrels_path)
    t2 = time.perf_counter()
    evaluate_run(ranked, qrels_path, list(MEASURES))
    t3 = time.perf_counter()
    return {"read+rank run": t1 - t0, "read qrels": t2 - t1,
            "score and rows": (t3 - t2) - (t2 - t1)}


def _canonical(name: str) -> str:
    from evalkit.plugins.default import resolve

    return resolve(name).name


def _timed(fn: Callable[[Path, Path], Any], run_path: Path, qrels_path: Path
           ) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn(run_path, qrels_path)
    return time.perf_counter() - start, out


def compare(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]
            ) -> tuple[int, float]:
    """Number of values compared and the largest absolute difference."""
    if set(ours) != set(theirs):
        raise SystemExit(f"query sets differ: {len(ours)} vs {len(theirs)}")
    worst = 0.0
    count = 0
    for qid, values in ours.items():
        for measure, value in values.items():
            worst = max(worst, abs(value - theirs[qid][measure]))
            count += 1
    return count, worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shuffle", action="store_true",
                        help="write each query's lines in random order")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time evalkit's stages separately (best of --rounds)")
    args = parser.parse_args(argv)

    # imports and plugin discovery outside the timings
    import pytrec_eval  # noqa: F401

    from evalkit.plugins.default import default_registry

    default_registry()
    for name in MEASURES:
        _canonical(name)

    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        run_path, qrels_path = generate(directory, args.queries, args.depth,
                                        shuffle=args.shuffle)
        lines = args.queries * args.depth
        print(f"generated {lines:,} run lines and "
              f"{sum(1 for _ in qrels_path.open()):,} qrels lines in "
              f"{time.perf_counter() - t0:.1f} s ({'shuffled' if args.shuffle else 'rank order'})")

        times: dict[str, list[float]] = {"evalkit": [], "pytrec_eval": []}
        results: dict[str, Any] = {}
        for _ in range(args.rounds):
            for label, fn in (("evalkit", run_evalkit), ("pytrec_eval", run_pytrec)):
                seconds, results[label] = _timed(fn, run_path, qrels_path)
                times[label].append(seconds)

        stages: dict[str, list[float]] = {}
        if args.breakdown:
            for _ in range(args.rounds):
                for stage, seconds in breakdown(run_path, qrels_path).items():
                    stages.setdefault(stage, []).append(seconds)

        count, worst = compare(results["evalkit"], results["pytrec_eval"])
        print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
              f"{args.rounds} rounds, alternating")
        for label, values in times.items():
            print(f"{label:12s} best {min(values):.3f} s   median "
                  f"{statistics.median(values):.3f} s   all "
                  + " ".join(f"{v:.3f}" for v in values))
        ratio_best = min(times["evalkit"]) / min(times["pytrec_eval"])
        ratio_median = statistics.median(times["evalkit"]) / statistics.median(
            times["pytrec_eval"])
        print(f"evalkit / pytrec_eval: {ratio_best:.2f} (best), {ratio_median:.2f} (median)")
        for stage, values in stages.items():
            print(f"  evalkit {stage:20s} best {min(values):.3f} s")
        print(f"agreement: {count:,} per-query values, max |diff| {worst:.2e}")
        if worst > 1e-9:
            print("MISMATCH: the per-query values disagree", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
