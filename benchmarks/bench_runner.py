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

``--suite async``: 2,000 cases through ``AsyncHttpTarget`` at concurrency 256
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
``--executors`` compares the executors instead: ``--cases`` (2,000) items at
``--delay-ms`` through the ``local`` executor and through the ``dask`` executor on a
``LocalCluster`` of ``--workers`` (2) worker processes, both at total concurrency
``--concurrency`` (32), each writing its artifact. The cluster's start-up is timed on
its own and excluded from the Dask wall time (the run still pays its client connection
and the probe that builds the target on a worker). Printed: both walls (median of
``--repeat``), the ratio dask / local (the goal: at most 1.25), the ideal
``ceil(N/c) x latency``, and Dask's no-op floor on the same cluster: the round trip of
one empty task, and the cost per task of 1,000 empty tasks in flight at once; and the
CPU seconds each run took in the driver, the worker processes and the service (on a
machine with few CPUs the Dask run is bound by them).

    .venv/bin/python benchmarks/bench_runner.py --executors [--cases 2000]
        [--concurrency 32] [--workers 2] [--repeat 3] [--batch-size N]
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
from typing import Any

from evalkit import GoldenCase, GoldenSet, HttpTarget
from evalkit.execute.target_runner import evaluate


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=None,
                        help="500; 2,000 with --executors")
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--levels", default="1,8,32")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per level (median and best reported)")
    parser.add_argument("--artifact", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--suite", choices=("threaded", "async", "rate-limited"),
                        default="threaded")
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--executors", action="store_true",
                        help="compare the local and dask executors (see the docstring)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=None)
    args = parser.parse_args()
    if args.suite != "threaded":
        from bench_runner_async import async_suite, rate_limited_suite

        if args.cases is None:
            args.cases = 500  # each suite's own default (2,000 async, 1,500 rate-limited)
        suite = async_suite if args.suite == "async" else rate_limited_suite
        return suite(args)
    if args.cases is None:
        args.cases = 2000 if args.executors else 500
    if args.executors:
        return compare_executors(args)
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


def _noop(x: int) -> int:
    return x


def noop_floor(client: Any) -> tuple[float, float]:
    """``(ms of one empty task's round trip (median of 50), ms per task of 1,000 empty
    tasks in flight at once)`` on ``client``'s cluster."""
    trips = []
    for i in range(50):
        start = time.perf_counter()
        client.submit(_noop, i, pure=False).result()
        trips.append(time.perf_counter() - start)
    start = time.perf_counter()
    client.gather(client.map(_noop, range(1000), pure=False))
    return statistics.median(trips) * 1000.0, (time.perf_counter() - start)


def cpu_seconds(server_pid: int) -> tuple[float, float, float]:
    """CPU seconds (user + system) so far of this process (the driver, with the
    LocalCluster's scheduler), of its other children (the worker processes) and of the
    service."""
    import psutil

    me = psutil.Process()

    def used(p: Any) -> float:
        t = p.cpu_times()
        return float(t.user + t.system)

    kids = [p for p in me.children(recursive=True) if p.pid != server_pid]
    return used(me), sum(used(k) for k in kids), used(psutil.Process(server_pid))


def compare_executors(args: argparse.Namespace) -> int:
    """The local and dask executors on the same items, server and concurrency."""
    import logging

    import dask
    import distributed
    from evalkit_dask.executor import default_batch_size

    from evalkit.execute.executor_api import ExecutorChoice, TargetRecipe

    n, c = args.cases, args.concurrency
    goldens = GoldenSet(GoldenCase(f"c{i:05d}", f"query {i}", relevant=frozenset({f"c{i:05d}-a"}))
                        for i in range(n))
    server = subprocess.Popen(
        [sys.executable, "-m", "evalkit_http.testing", "--delay-ms", str(args.delay_ms)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    batch = args.batch_size or default_batch_size(c, args.workers)
    cluster_cls: Any = distributed.LocalCluster
    client_cls: Any = distributed.Client
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        start = time.perf_counter()
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            cluster = cluster_cls(n_workers=args.workers, processes=True, host="127.0.0.1",
                                  threads_per_worker=math.ceil(c / batch / args.workers) + 1,
                                  dashboard_address=None, silence_logs=logging.ERROR)
        client = client_cls(cluster)
        startup = time.perf_counter() - start
        trip_ms, thousand_s = noop_floor(client)
        recipe = TargetRecipe("http", {"url": url, "name": "bench", "timeout_s": 10})
        choice = ExecutorChoice("dask", {"address": cluster.scheduler_address,
                                         "batch_size": batch}, recipe)
        print(f"server {url} answering in {args.delay_ms:g} ms; {n} items at concurrency {c}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"LocalCluster of {args.workers} worker processes started in {startup:.2f} s "
              "(excluded below)")
        walls: dict[str, list[float]] = {"local": [], "dask": []}
        cpus: dict[str, list[tuple[float, float, float]]] = {"local": [], "dask": []}
        with tempfile.TemporaryDirectory() as tmp, \
                HttpTarget(url, name="bench", timeout_s=10) as target:
            evaluate(target, GoldenSet(list(goldens)[:64]), ["recall@1"], max_concurrency=c,
                     progress=False, executor=choice)  # untimed warm-up of both
            for rep in range(args.repeat):
                for name, executor in (("local", None), ("dask", choice)):
                    before = cpu_seconds(server.pid)
                    begin = time.perf_counter()
                    run = evaluate(target, goldens, ["recall@1"], max_concurrency=c,
                                   artifact=Path(tmp) / f"{name}-{rep}.jsonl", progress=False,
                                   executor=executor)
                    walls[name].append(time.perf_counter() - begin)
                    after = cpu_seconds(server.pid)
                    cpus[name].append((after[0] - before[0], after[1] - before[1],
                                       after[2] - before[2]))
                    if run.header["status"] != "complete":
                        raise SystemExit(f"{name} run incomplete: {run.header['error_ids']}")
        client.close()
        cluster.close()
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    ideal = math.ceil(n / c) * args.delay_ms / 1000.0
    local, remote = statistics.median(walls["local"]), statistics.median(walls["dask"])
    print(f"{'executor':>9} {'median s':>8}  {'CPU s: driver':>13} {'workers':>7} "
          f"{'server':>6}  runs (s)")
    for name, values in walls.items():
        med = [statistics.median(x[i] for x in cpus[name]) for i in range(3)]
        print(f"{name:>9} {statistics.median(values):>8.3f}  {med[0]:>13.2f} {med[1]:>7.2f} "
              f"{med[2]:>6.2f}  " + " ".join(f"{v:.3f}" for v in values))
    print(f"ideal ceil(N/c) x latency: {ideal:.3f} s; local/ideal {local / ideal:.2f}x, "
          f"dask/ideal {remote / ideal:.2f}x")
    print(f"dask / local: {remote / local:.2f}x (goal <= 1.25x); {batch} items per task, "
          f"{math.ceil(n / batch)} tasks")
    print(f"Dask no-op floor: {trip_ms:.2f} ms for one empty task's round trip; "
          f"{thousand_s * 1000.0 / 1000:.2f} ms per task for 1,000 empty tasks at once")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
