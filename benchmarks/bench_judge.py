"""Benchmark the judge's grade cache against the 0.2 JSON cache, in one run.

Writes N new grades and re-reads them as cached grades, through ``LLMJudge`` with an
in-process fake client (no network, so the figures are the cache's and the judge's own
cost), and through ``GradeCache`` alone; then does the same with the 0.2 scheme, which
rewrites the whole JSON file (temporary file, fsync, rename) after every grade. Both
sync every grade to disk. Prints the time per grade in microseconds.

    .venv/bin/python benchmarks/bench_judge.py            # N = 10,000
    .venv/bin/python benchmarks/bench_judge.py --n 2000   # quicker
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit_judge import GradeCache, LLMJudge, Usage
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse

REASON = "The answer names the right entity and cites the passage it comes from."


class SeedJsonCache:
    """The 0.2 persistence: a dict in memory, the whole file rewritten per grade."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, dict[str, Any]] = {}
        if path.exists():
            self.data = json.loads(path.read_text())

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        self.data[key] = verdict
        payload = json.dumps(self.data, indent=2, sort_keys=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.",
                                   suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def per_grade_us(n: int, fn: Callable[[int], object]) -> float:
    """Mean microseconds per call of ``fn(0) .. fn(n - 1)``."""
    return timed(n, fn)[0]


def timed(n: int, fn: Callable[[int], object]) -> tuple[float, float]:
    """Mean microseconds per call over all ``n`` calls, and over the last tenth."""
    start = time.perf_counter()
    tail_from = n - max(1, n // 10)
    tail_start = start
    for i in range(n):
        if i == tail_from:
            tail_start = time.perf_counter()
        fn(i)
    end = time.perf_counter()
    return (end - start) / n * 1e6, (end - tail_start) / (n - tail_from) * 1e6


def cases(n: int) -> tuple[list[TargetResponse], list[GoldenCase]]:
    responses = [TargetResponse(text=f"Answer {i}: the capital is city number {i}.")
                 for i in range(n)]
    goldens = [GoldenCase(id=f"q{i}", query=f"Which city is capital number {i}?",
                          expected=f"city {i}") for i in range(n)]
    return responses, goldens


def bench(n: int, folder: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    responses, goldens = cases(n)

    # the judge end to end (render, hash, cache, fake client), durable commits
    fake = FakeAnthropic(lambda req: tool_reply(4, REASON))
    judge = LLMJudge("Score factual correctness.", model="claude-bench", client=fake,
                     cache_path=folder / "judge.sqlite")
    out["judge_new"] = per_grade_us(n, lambda i: judge(responses[i], goldens[i]))
    assert fake.call_count == n
    out["judge_cached"] = per_grade_us(n, lambda i: judge(responses[i], goldens[i]))
    assert fake.call_count == n
    keys = [judge.key(responses[i], goldens[i]) for i in range(n)]
    out["render_and_hash"] = per_grade_us(n, lambda i: judge.key(responses[i], goldens[i]))

    # the stores alone, with the same keys and grades
    reply = tool_reply(4, REASON)
    for durable in (True, False):
        label = "sqlite" if durable else "sqlite_normal"
        cache = GradeCache(folder / f"{label}.sqlite", durable=durable)

        def put(i: int, cache: GradeCache = cache) -> None:
            cache.put(keys[i], case_id=f"q{i}", model="claude-bench", score=4,
                      reason=REASON, usage=Usage(100, 20), served_model="claude-bench",
                      source="api", reply=reply)

        out[f"{label}_write"], out[f"{label}_write_tail"] = timed(n, put)
        fresh = GradeCache(folder / f"{label}.sqlite")  # a new process would reopen it

        def get(i: int, cache: GradeCache = fresh) -> None:
            cache.get(keys[i])

        out[f"{label}_read"] = per_grade_us(n, get)
        out[f"{label}_bytes"] = float((folder / f"{label}.sqlite").stat().st_size)

    seed = SeedJsonCache(folder / "judge-cache.json")
    out["json_write"], out["json_write_tail"] = timed(
        n, lambda i: seed.put(keys[i], {"score": 4, "reason": REASON}))
    start = time.perf_counter()
    reopened = SeedJsonCache(folder / "judge-cache.json")
    load = time.perf_counter() - start
    out["json_load_ms"] = load * 1e3
    out["json_read"] = per_grade_us(n, lambda i: reopened.get(keys[i])) + load / n * 1e6
    out["json_bytes"] = float((folder / "judge-cache.json").stat().st_size)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="grades (default 10000)")
    parser.add_argument("--dir", type=Path, default=None,
                        help="folder for the cache files (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        r = bench(args.n, Path(tmp))
    print(f"evalkit-judge cache benchmark: {args.n} grades, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}, {platform.system()} {platform.machine()}")
    print(f"{'what':58} {'us/grade':>10}")
    rows = [
        ("LLMJudge, new grade (fake client, durable SQLite commit)", r["judge_new"]),
        ("LLMJudge, cached grade re-read", r["judge_cached"]),
        ("  of which: render the request and hash it", r["render_and_hash"]),
        ("GradeCache.put, synchronous=FULL (default)", r["sqlite_write"]),
        ("  the last tenth of the writes", r["sqlite_write_tail"]),
        ("GradeCache.get, reopened cache", r["sqlite_read"]),
        ("GradeCache.put, synchronous=NORMAL (durable=False)", r["sqlite_normal_write"]),
        ("0.2 JSON: rewrite the whole file per grade (fsync)", r["json_write"]),
        ("  the last tenth of the writes", r["json_write_tail"]),
        ("0.2 JSON: re-read (load once, then dict lookups)", r["json_read"]),
    ]
    for label, value in rows:
        print(f"{label:58} {value:10.1f}")
    print(f"0.2 JSON rewrite / SQLite put: {r['json_write'] / r['sqlite_write']:.1f}x over "
          f"all writes, {r['json_write_tail'] / r['sqlite_write_tail']:.1f}x over the last "
          f"tenth; NORMAL: {r['json_write'] / r['sqlite_normal_write']:.0f}x")
    print(f"file sizes: SQLite {r['sqlite_bytes'] / 1e6:.1f} MB (with the reply JSON), "
          f"0.2 JSON {r['json_bytes'] / 1e6:.1f} MB; 0.2 JSON load {r['json_load_ms']:.0f} ms")


if __name__ == "__main__":
    main()
