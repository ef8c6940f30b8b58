"""Runner throughput: threaded and async targets, and a rate-limited server.

``--suite threaded`` (the default): 500 cases against a local server that answers in 50 ms.

The server (``python -m evalkit_http.testing --delay-ms 50``: ``http.server`` on
127.0.0.1, a free port, HTTP/1.1 keep-alive, a thread per connection) runs in its own
process, so it does not share the runner's interpreter lock. For each ``max_concurrency``
the runner evaluates every case through one ``HttpTarget`` with one metric
(``recall@1``); with ``--artifact`` (the default) it also writes the run artifact with
the shipped fsync policy. Printed per level: the median and the best wall time of
``--repeat`` runs, the ideal ``ceil(cases / concurrency) x 50 ms``, ideal / median wall
and ideal / best wall (100% = no overhead at all), and every run's ideal / wall. The
machine's load moves single runs by several percent: compare medians of several runs.
An untimed warm-up run of 32 cases comes first (plugin loading, imports).

    .venv/bin/python benchmarks/bench_runner.py [--cases 500] [--delay-ms 50]
        [--levels 1,8,32] [--repeat 9] [--no-artifact]

``--suite async`` (issue #20): 2,000 cases through ``AsyncHttpTarget`` at concurrency 256
against an asyncio server in its own process (``benchmarks/aio_server.py``) answering
in 200 ms, alternating with a bare ``httpx.AsyncClient`` loop (a semaphore of 256, one
POST per case, the JSON decoded) against the same server, ``--repeat`` rounds each, and
with the same loop over the connections split into pools of 8 as ``AsyncHttpTarget``
splits them. Printed: the walls, evalkit / bare (the bar: 1.15) and evalkit / bare in
pools, the ideal ``ceil(N / c) x latency`` and ideal / wall, and the peak RSS of the
process after each side.

``--suite rate-limited``: 1,500 cases against a server that allows ``--rate`` requests
a second (a token bucket refilled at that rate holding 100 ms of requests;
``python -m evalkit_http.testing --rate``) and answers 429 with ``Retry-After`` above
it, answering allowed requests in 50 ms, at ``max_concurrency`` 32, with
``retry_rate_limited`` and no ``requests_per_minute``: errored rows (the bar: 0),
throughput and throughput / rate (the bar: 80%), the 429s the server sent and the
lowest concurrency limit the runner reached, for the threaded and the async target.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalkit import GoldenCase, GoldenSet, HttpTarget
from evalkit.execute.target_runner import evaluate


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--levels", default="1,8,32")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per level (median and best reported)")
    parser.add_argument("--artifact", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--suite", choices=("threaded", "async", "rate-limited"),
                        default="threaded")
    parser.add_argument("--rate", type=float, default=100.0)
    args = parser.parse_args()
    if args.suite != "threaded":
        from bench_runner_async import async_suite, rate_limited_suite

        suite = async_suite if args.suite == "async" else rate_limited_suite
        return suite(args)
    levels = [int(x) for x in args.levels.split(",")]
    goldens = GoldenSet(GoldenCase(f"c{i:04d}", f"query {i}", relevant=frozenset({f"c{i:04d}-a"}))
                        for i in range(args.cases))
    server = subprocess.Popen(
        [sys.executable, "-m", "evalkit_http.testing", "--delay-ms", str(args.delay_ms)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        print(f"server {url} answering in {args.delay_ms:g} ms; {args.cases} cases; "
              f"artifact {'on' if args.artifact else 'off'}; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'concurrency':>11} {'median s':>8} {'best s':>8} {'ideal s':>8} "
              f"{'ideal/median':>12} {'ideal/best':>10}  runs (ideal/wall)")
        with tempfile.TemporaryDirectory() as tmp:
            # untimed: the first run of a process loads the plugins and imports the rest
            with HttpTarget(url, name="bench", timeout_s=10) as target:
                evaluate(target, GoldenSet(list(goldens)[:32]), ["recall@1"],
                         max_concurrency=32, progress=False)
            for level in levels:
                walls: list[float] = []
                for rep in range(args.repeat):
                    artifact = Path(tmp) / f"run-{level}-{rep}.jsonl" if args.artifact else None
                    with HttpTarget(url, name="bench", timeout_s=10) as target:
                        start = time.perf_counter()
                        run = evaluate(target, goldens, ["recall@1"], max_concurrency=level,
                                       artifact=artifact, progress=False)
                        wall = time.perf_counter() - start
                    if run.header["status"] != "complete":
                        raise SystemExit(f"run at {level} incomplete: {run.header['error_ids']}")
                    walls.append(wall)
                ideal = math.ceil(args.cases / level) * args.delay_ms / 1000.0
                median, best = statistics.median(walls), min(walls)
                runs = " ".join(f"{ideal / w:.1%}" for w in walls)
                print(f"{level:>11} {median:>8.3f} {best:>8.3f} {ideal:>8.3f} "
                      f"{ideal / median:>12.1%} {ideal / best:>10.1%}  {runs}")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
