"""Peak memory of a target run by number of cases, large responses against tiny ones.

Each measurement is a fresh process (``ru_maxrss``) running :func:`evalkit.evaluate` with
an artifact, ``max_concurrency`` 2, on N cases of a target answering ``--ids`` ranked
ids per case (large) or 1 (tiny, the baseline measured in the same run), once with
``keep_responses=False`` (what ``evalkit run`` does) and once with ``True`` (the Python
API's default). Printed: peak RSS in MB and its excess over the tiny baseline.
docs/performance.md quotes the figures.

    .venv/bin/python benchmarks/bench_run_memory.py [--cases 16 32] [--ids 200000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile

CHILD = r"""
import resource, sys, tempfile
from pathlib import Path
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.target_runner import evaluate
n, ids, keep = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "keep"
def answer(case):
    return TargetResponse(ranked_ids=[f"d{i}" for i in range(ids)], latency_ms=1.0)
gset = GoldenSet([GoldenCase(id=f"q{i}", query="x", expected=["d1"]) for i in range(n)])
out = Path(sys.argv[4]) / f"run-{n}-{ids}-{keep}.jsonl"
evaluate(CallableTarget(answer, name="t"), gset, ["recall@10"], ["max_item_share@10"],
         max_concurrency=2, artifact=out, keep_responses=keep, progress=False)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def peak_mb(n: int, ids: int, keep: bool, folder: str) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(ids),
                          "keep" if keep else "drop", folder],
                         check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--ids", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'cases':>6} {'mode':>14} {'tiny MB':>8} {'large MB':>9} {'excess MB':>10}")
        for n in args.cases:
            for keep in (False, True):
                tiny = peak_mb(n, 1, keep, folder)
                large = peak_mb(n, args.ids, keep, folder)
                mode = "keep (API)" if keep else "drop (CLI)"
                print(f"{n:>6} {mode:>14} {tiny:>8.0f} {large:>9.0f} {large - tiny:>10.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
