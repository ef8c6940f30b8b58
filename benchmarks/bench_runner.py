"""Runner throughput: 500 cases against a local server that answers in 50 ms.

The server (``python -m evalkit_http.testing --delay-ms 50``: ``http.server`` on
127.0.0.1, a free port, HTTP/1.1 keep-alive, a thread per connection) runs in its own
process, so it does not share the runner's interpreter lock. For each ``max_concurrency``
the runner evaluates every case through one ``HttpTarget`` with one metric
(``recall@1``); with ``--artifact`` (the default) it also writes the run artifact with
the shipped fsync policy. Printed: the best wall time of ``--repeat`` runs, the ideal
``ceil(cases / concurrency) x 50 ms``, and ideal / wall (100% = no overhead at all).

    .venv/bin/python benchmarks/bench_runner.py [--cases 500] [--delay-ms 50]
        [--levels 1,8,32] [--repeat 3] [--no-artifact]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalkit import GoldenCase, GoldenSet, HttpTarget
from evalkit.evaluation import evaluate


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--levels", default="1,8,32")
    parser.add_argument("--repeat", type=int, default=1, help="runs per level (best kept)")
    parser.add_argument("--artifact", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
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
        print(f"{'concurrency':>11} {'wall s':>8} {'ideal s':>8} {'ideal/wall':>10}")
        with tempfile.TemporaryDirectory() as tmp:
            for level in levels:
                best = math.inf
                for rep in range(args.repeat):
                    artifact = Path(tmp) / f"run-{level}-{rep}.jsonl" if args.artifact else None
                    with HttpTarget(url, name="bench", timeout_s=10) as target:
                        start = time.perf_counter()
                        run = evaluate(target, goldens, ["recall@1"], max_concurrency=level,
                                       artifact=artifact, progress=False)
                        wall = time.perf_counter() - start
                    if run.header["status"] != "complete":
                        raise SystemExit(f"run at {level} incomplete: {run.header['error_ids']}")
                    best = min(best, wall)
                ideal = math.ceil(args.cases / level) * args.delay_ms / 1000.0
                print(f"{level:>11} {best:>8.3f} {ideal:>8.3f} {ideal / best:>10.1%}")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
