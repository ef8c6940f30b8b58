"""Peak memory of ``evalkit run`` by number of cases, large responses against tiny ones.

A local HTTP service (a thread of this process) answers ``{"ranked_ids": [...]}`` with
``--ids`` ids per case (large, 900,000 ids: a 9.9 MB body) or 1 id (tiny: the baseline,
measured in the same run). For each N of ``--cases`` a fresh process runs ``evalkit run``
(max_concurrency 2, an artifact, ``recall@10`` and ``latency_p95``) on N cases of each,
and prints its peak resident memory (``VmHWM``, Linux). Printed per N: the tiny and large
peaks in MB and their difference, which stays flat in N when the run holds the calls in
flight and not every response. docs/performance.md quotes the figures.

``--rescore`` measures, on each N's artifacts, ``evalkit rescore`` (``recall@1`` scored
again, ``recall@10`` kept) and ``evalkit run --resume`` of a copy cut to its first half
(the trailer and the last N/2 rows gone, as a stopped run leaves it): their peaks beside
the artifact's size and the tiny artifact's peaks (the baselines, same run). With
``--before SRC`` (a checkout of the code to compare, e.g. ``git worktree add /tmp/old
adcd6ac``) the same commands also run on ``SRC/src`` and their peaks are printed beside.

    .venv/bin/python benchmarks/bench_run_memory.py [--cases 16 32 64] [--ids 900000]
    .venv/bin/python benchmarks/bench_run_memory.py --rescore --cases 32 [--before SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: ``evalkit ARGS`` printing its peak resident memory in MB last on stderr: ``VmHWM`` of
#: /proc/self/status, the high-water mark of this program's memory since it started
#: (``ru_maxrss`` would also count the memory of the benchmark's process at the fork).
#: Exit status 1 (an incomplete run) is not a failure here.
CHILD = r"""
import sys
from evalkit.cli import main
sys.argv = ["evalkit", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    if exc.code not in (None, 0, 1):
        raise
with open("/proc/self/status") as fh:
    kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(kb / 1024, file=sys.stderr)
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


def child_peak(args: list[str], folder: Path, src: Path | None = None) -> float:
    """The peak RSS (MB) of ``evalkit ARGS`` run in a fresh process in ``folder``
    (``src``: import evalkit from there first)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True,
                          text=True, cwd=folder, env=env)
    if done.returncode:
        raise SystemExit(f"evalkit {args[0]} failed:\n{done.stderr}")
    return float(done.stderr.strip().splitlines()[-1])


def cut_copy(artifact: Path, copy: Path) -> None:
    """``copy``: ``artifact`` without its trailer and its last half of rows (copied one
    line at a time: this process stays small)."""
    with artifact.open("rb") as fh:
        rows = sum(1 for _ in fh) - 2
    with artifact.open("rb") as fh, copy.open("wb") as out:
        for _, line in zip(range(1 + rows - rows // 2), fh, strict=False):
            out.write(line)


def rescore_resume_mb(folder: Path, kind: str, n: int, src: Path | None
                      ) -> tuple[float, float]:
    """Peaks (MB) of ``evalkit rescore`` and of ``evalkit run --resume`` on copies of
    the ``kind`` artifact of ``n`` cases (made by :func:`peak_mb`)."""
    artifact = folder / f"{kind}{n}.jsonl"
    shutil.copyfile(artifact, folder / "rescored.jsonl")
    rescore = child_peak(["rescore", "rescored.jsonl", "-m", "recall@1", "--no-progress"],
                         folder, src)
    cut_copy(artifact, folder / "resumed.jsonl")
    config = folder / f"{kind}{n}.yaml"
    resumed = folder / "resume.yaml"
    resumed.write_text(config.read_text().replace(f"output: {kind}{n}.jsonl",
                                                  "output: resumed.jsonl"))
    resume = child_peak(["run", resumed.name, "--resume", "--no-progress"], folder, src)
    return rescore, resume


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
    parser.add_argument("--rescore", action="store_true",
                        help="measure evalkit rescore and evalkit run --resume")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout whose src/ is measured too (with --rescore)")
    args = parser.parse_args()
    server = serve(args.ids)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"{'cases':>6} {'tiny MB':>8} {'large MB':>9} {'large - tiny':>13}")
            for n in args.cases:
                tiny = peak_mb(Path(tmp), server.server_port, "tiny", n)
                large = peak_mb(Path(tmp), server.server_port, "large", n)
                print(f"{n:>6} {tiny:>8.0f} {large:>9.0f} {large - tiny:>13.0f}", flush=True)
            if args.rescore:
                rescore_table(Path(tmp), args.cases, args.before)
    finally:
        server.shutdown()
    return 0


def rescore_table(folder: Path, cases: list[int], before: Path | None) -> None:
    """Print the peaks of rescore and resume per N (tiny, large; ``before``'s too)."""
    versions = [("now", None)] + ([] if before is None else [("before", before / "src")])
    print(f"\n{'cases':>6} {'code':>6} {'artifact MB':>12} {'command':>8} "
          f"{'tiny MB':>8} {'large MB':>9} {'large - tiny':>13}")
    for n in cases:
        size = (folder / f"large{n}.jsonl").stat().st_size / 2**20
        for label, src in versions:
            tiny = rescore_resume_mb(folder, "tiny", n, src)
            large = rescore_resume_mb(folder, "large", n, src)
            for i, command in enumerate(("rescore", "resume")):
                print(f"{n:>6} {label:>6} {size:>12.0f} {command:>8} {tiny[i]:>8.0f} "
                      f"{large[i]:>9.0f} {large[i] - tiny[i]:>13.0f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
