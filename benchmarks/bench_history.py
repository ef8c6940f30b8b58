"""Time to add a run to a history of 200 and to show that history, against the kernel's
own work measured in the same run.

    python benchmarks/bench_history.py [--runs 200] [--cases 100] [--json]

The runs are TREC-style retrieval runs scored by ``evalkit.evaluate_run`` (``rr``,
``ndcg@10``, ``ap``) over ``--cases`` queries, each a random perturbation of the one
before (seeded), with other qrels every 50th run (a break). Each ``History.add`` is
timed; its baseline is ``evalkit.compare`` of the same two runs (the step's paired
tests, which ``add`` runs once and stores), timed right after it. Showing is timed as
``History.runs()`` plus the table, in process, and as ``evalkit history show`` in a
fresh process against ``evalkit --version`` (the floor of any command), each the median
of 5.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

METRICS = ["rr", "ndcg@10", "ap"]


def make_runs(n_runs: int, n_cases: int, seed: int = 7) -> list[Any]:
    import evalkit

    rng = random.Random(seed)
    qids = [f"q{i:04d}" for i in range(n_cases)]
    qrels = {q: {f"d{q}-{j}": 1 for j in range(3)} for q in qids}
    other = {q: {**rel, f"x{q}": 1} for q, rel in qrels.items()}
    ranks = {q: [rng.randint(1, 20) for _ in range(3)] for q in qids}
    runs = []
    for i in range(n_runs):
        for q in qids:  # each run moves a few relevant documents up or down
            ranks[q] = [max(1, min(30, r + rng.choice((-2, -1, 0, 0, 1, 2))))
                        for r in ranks[q]]
        ranking = {q: {f"d{q}-{j}": 100.0 - r - j / 10 for j, r in enumerate(ranks[q])}
                   | {f"n{k}": 100.0 - k - 0.05 for k in range(1, 31)} for q in qids}
        runs.append(evalkit.evaluate_run(ranking, other if (i // 50) % 2 else qrels,
                                         METRICS, name=f"sys-{i:03d}"))
    return runs


def median_wall(cmd: list[str], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from evalkit_history.store import History
    from evalkit_history.table import available_metrics, history_lines

    import evalkit

    runs = make_runs(args.runs, args.cases)
    folder = Path(tempfile.mkdtemp(prefix="evalkit-bench-history-"))
    db = folder / "history.sqlite"
    add_s: list[float] = []
    compare_s: list[float] = []
    with History(db) as history:
        for i, run in enumerate(runs):
            start = time.perf_counter()
            stored = history.add(run, label=f"v{i}")
            add_s.append(time.perf_counter() - start)
            if i and stored.step.comparable:
                start = time.perf_counter()
                evalkit.compare(runs[i - 1], run, metrics=METRICS)
                compare_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        listed = history.runs()
        lines = history_lines(listed, available_metrics(listed))
        show_in_process = time.perf_counter() - start
    evalkit_bin = str(Path(sys.executable).with_name("evalkit"))
    show_cli = median_wall([evalkit_bin, "history", "show", "--db", str(db)])
    floor_cli = median_wall([evalkit_bin, "--version"])
    breaks = sum(1 for r in listed[1:] if not r.step.comparable)
    result = {
        "runs": len(listed), "cases": args.cases, "metrics": METRICS, "breaks": breaks,
        "table_lines": len(lines), "db_bytes": db.stat().st_size,
        "add_median_s": statistics.median(add_s), "add_max_s": max(add_s),
        "compare_median_s": statistics.median(compare_s),
        "add_over_compare": statistics.median(add_s) / statistics.median(compare_s),
        "show_in_process_s": show_in_process, "show_cli_s": show_cli,
        "version_cli_s": floor_cli, "show_over_version": show_cli / floor_cli,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"history of {result['runs']} runs x {args.cases} cases x {len(METRICS)} metrics "
          f"({breaks} breaks), {result['db_bytes'] / 1e6:.1f} MB")
    print(f"add:  median {result['add_median_s'] * 1e3:.0f} ms, max "
          f"{result['add_max_s'] * 1e3:.0f} ms; evalkit.compare of the same two runs "
          f"{result['compare_median_s'] * 1e3:.0f} ms (ratio "
          f"{result['add_over_compare']:.2f})")
    print(f"show: {show_in_process * 1e3:.0f} ms in process; `evalkit history show` "
          f"{show_cli * 1e3:.0f} ms vs `evalkit --version` {floor_cli * 1e3:.0f} ms "
          f"(ratio {result['show_over_version']:.2f})")


if __name__ == "__main__":
    main()
