"""Peak memory of ``evalkit run`` by number of cases, large responses against tiny ones.

A local HTTP service (a thread of this process) answers ``{"ranked_ids": [...]}`` with
``--ids`` ids per case (large, 900,000 ids: a 9.9 MB body) or 1 id (tiny: the baseline,
measured in the same run). For each N of ``--cases`` a fresh process runs ``evalkit run``
(max_concurrency 2, an artifact, ``recall@10`` and ``latency_p95``) on N cases of each,
and prints its peak resident memory (``ru_maxrss``). Printed per N: the tiny and large
peaks in MB and their difference, which stays flat in N when the run holds the calls in
flight and not every response. docs/performance.md quotes the figures.

    .venv/bin/python benchmarks/bench_run_memory.py [--cases 16 32 64] [--ids 900000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHILD = r"""
import resource, sys
from evalkit.cli import main
sys.argv = ["evalkit", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)
"""


def serve(ids: int) -> ThreadingHTTPServer:
    """A service on 127.0.0.1 answering ``/large`` with ``ids`` ids, ``/tiny`` with 1."""
    bodies = {f"/{name}": json.dumps({"ranked_ids": [f"d{i}" for i in range(n)]}).encode()
              for name, n in (("large", ids), ("tiny", 1))}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = bodies[self.path]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def peak_mb(folder: Path, port: int, kind: str, n: int) -> float:
    goldens = folder / f"g{n}.jsonl"
    goldens.write_text("".join(json.dumps({"id": f"q{i}", "query": "x", "expected": ["d1"]})
                               + "\n" for i in range(n)))
    config = folder / f"{kind}{n}.yaml"
    config.write_text(
        f"name: {kind}\ngoldens: {goldens.name}\ntarget:\n  factory: http\n"
        f"  kwargs: {{url: \"http://127.0.0.1:{port}/{kind}\", timeout_s: 120}}\n"
        f"metrics: [recall@10]\naggregates: [latency_p95]\noutput: {kind}{n}.jsonl\n"
        "max_concurrency: 2\n")
    done = subprocess.run([sys.executable, "-c", CHILD, "run", str(config), "--overwrite",
                           "--no-progress"], capture_output=True, text=True, cwd=folder)
    if done.returncode:
        raise SystemExit(f"evalkit run failed:\n{done.stderr}")
    return float(done.stderr.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--ids", type=int, default=900_000)
    args = parser.parse_args()
    server = serve(args.ids)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"{'cases':>6} {'tiny MB':>8} {'large MB':>9} {'large - tiny':>13}")
            for n in args.cases:
                tiny = peak_mb(Path(tmp), server.server_port, "tiny", n)
                large = peak_mb(Path(tmp), server.server_port, "large", n)
                print(f"{n:>6} {tiny:>8.0f} {large:>9.0f} {large - tiny:>13.0f}", flush=True)
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
