"""How close a bounded call comes to its documented bound, and how soon a paced run ends.

The tests prove that each bound acts (a hostile server that would take hours is cut, a
paced run grants one start per call) without timing anything; the wall-clock claims are
measured here, where the machine's load is part of the reading:

* HTTP deadlines (docs/runner.md: an attempt ends at ``timeout_s``, a case takes at most
  ``2 x timeout_s + retry_backoff_s``): ``HttpTarget`` and ``AsyncHttpTarget`` against a
  127.0.0.1 server that drips a body one byte every 0.2 s (``timeout_s`` 1,
  ``retry_backoff_s`` 0.1: bound 2.1 s) and one that drips its headers one byte every
  50 ms (``timeout_s`` 0.5: bound 1 s). Printed: the median wall, the bound and wall /
  bound (the bar: at most 1.25, with 0.25 of the bound for thread scheduling).
* Paced runs (:mod:`evalkit.execute.pacing`, 60 requests a minute, a bucket of one):
  3 cases start at 0, 1 and 2 s in the threaded and the async executor. Printed: the
  median wall, the 2 s the bucket needs and the seconds from the last start to the run's
  return (the bar: under 0.4 s; an idle worker waiting for a token would add 1 s).

    .venv/bin/python benchmarks/bench_http_bounds.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable

from evalkit_http import AsyncHttpTarget, HttpTarget
from evalkit_http.testing import Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget, TargetError
from evalkit.execute.target_runner import evaluate

CASE = GoldenCase("q1", "what is alpha")
#: hours of drip: only the deadline ends a call
BODY_DRIP = Reply(200, b"x" * 60, drip_s=0.2, repeat=1000)
HEADER_DRIP = Reply(200, {"ranked_ids": []}, header_drip_s=0.05,
                    headers={"X-Pad": "p" * 100_000})


def failing_wall(call: Callable[[], object]) -> float:
    start = time.monotonic()
    try:
        call()
    except TargetError:
        return time.monotonic() - start
    raise AssertionError("the call did not fail")


def http_wall(reply: Reply, kind: str, timeout_s: float, backoff_s: float) -> float:
    with ScriptedServer([reply]) as server:
        url = server.url + "search"
        if kind == "sync":
            with HttpTarget(url, name="svc", timeout_s=timeout_s,
                            retry_backoff_s=backoff_s) as t:
                return failing_wall(lambda: t.invoke(CASE))
        target = AsyncHttpTarget(url, name="svc", timeout_s=timeout_s,
                                 retry_backoff_s=backoff_s)

        async def go() -> None:
            async with target:
                await target.ainvoke(CASE)

        return failing_wall(lambda: asyncio.run(go()))


def paced(kind: str) -> tuple[float, float]:
    """``(wall, seconds from the last start to the return)`` of 3 cases at 60 a minute."""
    starts: list[float] = []

    def rank(case: GoldenCase) -> list[str]:
        starts.append(time.monotonic())
        return [case.id]

    async def arank(case: GoldenCase) -> list[str]:
        starts.append(time.monotonic())
        return [case.id]

    target = CallableTarget(rank if kind == "threads" else arank, name="r")
    cases = GoldenSet(GoldenCase(f"c{i}", "q", expected=[f"c{i}"]) for i in range(3))
    t0 = time.monotonic()
    evaluate(target, cases, ["recall@1"], progress=False, requests_per_minute=60,
             max_concurrency=4)
    end = time.monotonic()
    return end - t0, end - max(starts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'case':<28}{'median wall':>12}{'bound':>8}{'wall/bound':>12}")
    for name, reply, timeout_s, backoff_s in (("body drip", BODY_DRIP, 1.0, 0.1),
                                              ("header drip", HEADER_DRIP, 0.5, 0.0)):
        for kind in ("sync", "async"):
            walls = [http_wall(reply, kind, timeout_s, backoff_s) for _ in range(args.repeat)]
            bound = 2 * timeout_s + backoff_s
            wall = statistics.median(walls)
            print(f"{name + ' (' + kind + ')':<28}{wall:>11.2f}s{bound:>7.1f}s"
                  f"{wall / bound:>12.2f}")
    print(f"\n{'paced run (60/min, 3 cases)':<28}{'median wall':>12}{'bucket':>8}"
          f"{'after last':>12}")
    for kind in ("threads", "async"):
        runs = [paced(kind) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        after = statistics.median(r[1] for r in runs)
        print(f"{kind:<28}{wall:>11.2f}s{2.0:>7.1f}s{after:>11.2f}s")


if __name__ == "__main__":
    main()
