"""How long a batch of calls started together takes, by batch size, in one process.

The Dask executor runs the items of one task at once on a worker's threads, and the task
ends with its slowest item. This measures that tail without Dask: ``--calls`` work items
of the local HTTP service (``evalkit_http.testing``, answering after ``--delay-ms``) run
through the worker's own code (:func:`evalkit_dask.remote_work.run_item` on an
``HttpTarget``) in batches of 16, 8, 4 and 1 started together on a thread pool, one batch
after another. Printed per batch size: the median span of a batch (start of its first
call to end of its last), the span over the span of a single call measured in the same
run (the baseline), and the CPU time per item. docs/scaling.md quotes the figures.

    .venv/bin/python benchmarks/bench_batch_tail.py [--calls 1000] [--delay-ms 50]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    args = parser.parse_args()

    from evalkit_dask.remote_work import build_target, run_item

    from evalkit.data.cases import GoldenCase
    from evalkit.execute.executor import Job
    from evalkit.execute.executor_api import TargetRecipe
    from evalkit.execute.scoring import resolve_metrics

    server = subprocess.Popen(
        [sys.executable, "-m", "evalkit_http.testing", "--delay-ms", str(args.delay_ms)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        target = build_target(TargetRecipe("http", {"url": url, "name": "bench",
                                                    "timeout_s": 10}))
        specs = resolve_metrics(["recall@1"])
        jobs = [Job(GoldenCase(f"c{i:05d}", f"query {i}", relevant=frozenset({f"c{i:05d}-a"})))
                for i in range(args.calls)]
        pool = ThreadPoolExecutor(32)

        def run(job: Job) -> object:
            return run_item(target, "bench", job, specs, True)

        list(pool.map(run, jobs[:64]))  # warm the connection pool
        results: dict[int, tuple[float, float]] = {}
        for size in (1, 16, 8, 4):
            cpu, spans = time.process_time(), []
            for start in range(0, args.calls, size):
                began = time.perf_counter()
                list(pool.map(run, jobs[start:start + size]))
                spans.append(time.perf_counter() - began)
            results[size] = (statistics.median(spans),
                             (time.process_time() - cpu) / args.calls)
        pool.shutdown()
        close = getattr(target, "close", None)
        if callable(close):
            close()
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    single = results[1][0]
    print(f"{args.calls} calls of a {args.delay_ms:g} ms service; a single call's span "
          f"{single * 1000:.1f} ms (the baseline)")
    print(f"{'batch':>5} {'span ms':>8} {'x single':>8} {'CPU ms/item':>11}")
    for size in (16, 8, 4, 1):
        span, per_item = results[size]
        print(f"{size:>5} {span * 1000:>8.1f} {span / single:>8.2f} {per_item * 1000:>11.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
