"""The async and rate-limited suites of ``benchmarks/bench_runner.py``; run
them through it (``--suite async``, ``--suite rate-limited``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from evalkit_http import AsyncHttpTarget, HttpTarget
from evalkit_http.async_target import CONNECTIONS_PER_POOL

from evalkit import GoldenCase, GoldenSet
from evalkit.execute.target_runner import evaluate

HERE = Path(__file__).resolve().parent


def goldens(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i:04d}", f"query {i}", relevant=frozenset({f"c{i:04d}-a"}))
                     for i in range(n))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def stop(server: subprocess.Popen[str]) -> str:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.close()
    rest = server.stdout.read()
    server.wait(timeout=10)
    return rest


async def bare_loop(url: str, n: int, concurrency: int, pools: int = 1) -> None:
    """The baseline: one POST per case, at most ``concurrency`` at once, each body
    decoded, through one ``httpx.AsyncClient`` (``pools=1``) or through ``pools`` clients
    sharing the connections, as ``AsyncHttpTarget`` splits them (round robin)."""
    size = concurrency // pools
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    clients = [httpx.AsyncClient(limits=limits, timeout=30.0) for _ in range(pools)]
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            response = await clients[i % pools].post(url, json={"id": f"c{i:04d}",
                                                                "query": f"query {i}"})
            response.raise_for_status()
            response.json()

    try:
        await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        for client in clients:
            await client.aclose()


def async_suite(args: argparse.Namespace) -> int:
    n = args.cases if args.cases != 500 else 2000
    concurrency, delay_ms = 256, args.delay_ms if args.delay_ms != 50.0 else 200.0
    cases = goldens(n)
    server, url = start([sys.executable, str(HERE / "aio_server.py"), "--delay-ms",
                         str(delay_ms)])
    ideal = math.ceil(n / concurrency) * delay_ms / 1000.0
    print(f"asyncio server {url} answering in {delay_ms:g} ms; {n} cases at concurrency "
          f"{concurrency}; artifact {'on' if args.artifact else 'off'}; ideal {ideal:.3f} s; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    bare: list[float] = []
    sharded: list[float] = []
    ours: list[float] = []
    pools = concurrency // CONNECTIONS_PER_POOL
    try:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(bare_loop(url, 64, 64))  # untimed warm-up of both sides
            with AsyncHttpTarget(url, name="bench", timeout_s=30, max_connections=256) as t:
                evaluate(t, goldens(64), ["recall@1"], max_concurrency=64, progress=False)
            for rep in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                asyncio.run(bare_loop(url, n, concurrency))
                bare.append(time.perf_counter() - t0)
                rss_bare = peak_rss_mb()
                t0 = time.perf_counter()
                asyncio.run(bare_loop(url, n, concurrency, pools))
                sharded.append(time.perf_counter() - t0)
                artifact = Path(tmp) / f"run-{rep}.jsonl" if args.artifact else None
                with AsyncHttpTarget(url, name="bench", timeout_s=30,
                                     max_connections=concurrency) as target:
                    t0 = time.perf_counter()
                    run = evaluate(target, cases, ["recall@1"], max_concurrency=concurrency,
                                   artifact=artifact, progress=False)
                    ours.append(time.perf_counter() - t0)
                if run.header["status"] != "complete":
                    raise SystemExit(f"incomplete: {run.header['error_ids'][:5]}")
                print(f"  round {rep + 1}: bare {bare[-1]:.3f} s (peak RSS {rss_bare:.0f} MB), "
                      f"bare in {pools} pools {sharded[-1]:.3f} s, evalkit {ours[-1]:.3f} s "
                      f"(peak RSS {peak_rss_mb():.0f} MB), evalkit / bare "
                      f"{ours[-1] / bare[-1]:.3f}, / bare in pools "
                      f"{ours[-1] / sharded[-1]:.3f}")
    finally:
        stop(server)
    mb, ms, mo = statistics.median(bare), statistics.median(sharded), statistics.median(ours)
    print(f"median: bare {mb:.3f} s, bare in {pools} pools {ms:.3f} s, evalkit {mo:.3f} s; "
          f"evalkit / bare {mo / mb:.3f} (bar 1.15), evalkit / bare in pools {ms and mo / ms:.3f}; "
          f"ideal / bare {ideal / mb:.1%}, ideal / bare in pools {ideal / ms:.1%}, ideal / "
          f"evalkit {ideal / mo:.1%}; peak RSS {peak_rss_mb():.0f} MB")
    return 0 if mo / mb <= 1.15 else 1


def rate_limited_suite(args: argparse.Namespace) -> int:
    n = args.cases if args.cases != 500 else 1500
    rate, status = args.rate, 0
    print(f"{n} cases; server allows {rate:g} requests/s (bucket of {rate / 10:g}), 429 "
          f"above, answers in {args.delay_ms:g} ms; max_concurrency 32, retry_rate_limited, "
          f"no requests_per_minute; load average {os.getloadavg()[0]:.1f}")
    for kind in (HttpTarget, AsyncHttpTarget):
        server, url = start([sys.executable, "-m", "evalkit_http.testing", "--delay-ms",
                             str(args.delay_ms), "--rate", str(rate), "--burst",
                             str(rate / 10)])
        try:
            with kind(url, name="bench", timeout_s=30, retry_rate_limited=True) as target:
                t0 = time.perf_counter()
                run = evaluate(target, goldens(n), ["recall@1"], max_concurrency=32,
                               progress=False)
                wall = time.perf_counter() - t0
        finally:
            counts = json.loads(stop(server).strip().splitlines()[-1])
        errors = run.header["errors"]
        throughput = n / wall
        worst = max(r.rate_limited for r in run.per_query)
        print(f"  {kind.__name__:>15}: {wall:.2f} s, errored rows {errors}, {throughput:.1f} "
              f"cases/s = {throughput / rate:.1%} of the rate (bar 80%); server sent "
              f"{counts['200']} x 200, {counts['429']} x 429; most 429s of one case {worst}")
        if errors or throughput < 0.8 * rate:
            status = 1
    return status
