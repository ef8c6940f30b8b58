"""Every speed and memory budget of docs/performance.md, measured in one run.

Runs, one after the other in fresh processes, each benchmark that checks a budget
against a baseline measured in its own run, prints its whole output as it comes, and
ends with the budget lines of all of them (each benchmark's own "met"/"not met" or
"meets"/"misses" verdicts) and the load average at every step:

* ``bench_startup.py --runs 21``: ``evalkit --help`` and ``evalkit plugins list`` against
  ``python -c "import typer, rich"``;
* ``bench_startup.py --import-profile --runs 11``: where the import time goes;
* ``bench_trec_eval.py --lines 300000 1000000 --rounds 7``: ``evalkit eval`` against the
  trec_eval binary built from ``../shared/tools/trec_eval-10.0.tar.gz``;
* ``bench_paired.py --rounds 9``: ``paired_bootstrap`` and ``paired_test`` against the
  limit kernels, and pairing 100,000 ids;
* ``bench_compare.py``: ``evalkit compare`` of 21 runs against the limit kernels;
* with ``--suite``, the test suite: ``python -m pytest -q -p no:cacheprovider`` (the
  README's test command), its wall time against the 4-minute budget.

    .venv/bin/python benchmarks/bench_budgets.py [--suite] [--quick]

``--quick`` runs each benchmark with fewer rounds (for checking the driver, not for
figures).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VERDICT = re.compile(r"\b(met|not met|meets|misses)\b")
SUITE_BUDGET_S = 240.0


def steps(quick: bool) -> list[tuple[str, list[str]]]:
    """(title, argv) of each benchmark, in the order run."""
    py = sys.executable
    few = quick
    return [
        ("start-up", [py, str(HERE / "bench_startup.py"), "--runs", "5" if few else "21"]),
        ("import-time profile", [py, str(HERE / "bench_startup.py"), "--import-profile",
                                 "--runs", "3" if few else "11"]),
        ("evalkit eval against trec_eval",
         [py, str(HERE / "bench_trec_eval.py"), "--lines", "300000", "1000000",
          "--rounds", "2" if few else "7"]),
        ("one paired test, pairing", [py, str(HERE / "bench_paired.py"),
                                      "--rounds", "2" if few else "9"]),
        ("evalkit compare of 21 runs", [py, str(HERE / "bench_compare.py"),
                                        *(["--skip-all-pairs"] if few else [])]),
    ]


def run_step(title: str, argv: list[str]) -> tuple[int, list[str], float]:
    """Run one benchmark, echoing its output; (exit status, verdict lines, seconds)."""
    print(f"\n=== {title}: {' '.join(Path(a).name if i < 2 else a for i, a in enumerate(argv))}"
          f" (load average {os.getloadavg()[0]:.2f}, {time.strftime('%H:%M:%S')})",
          flush=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    verdicts = []
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        if VERDICT.search(line):
            verdicts.append(line.rstrip())
    return proc.wait(), verdicts, time.perf_counter() - t0


def run_suite() -> tuple[int, list[str], float]:
    """The README's test command, timed (wall seconds) against :data:`SUITE_BUDGET_S`."""
    print(f"\n=== test suite: python -m pytest -q -p no:cacheprovider "
          f"(load average {os.getloadavg()[0]:.2f}, {time.strftime('%H:%M:%S')})", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    tail = proc.stdout.strip().splitlines()[-1:] or [""]
    print(tail[0])
    verdict = "met" if wall <= SUITE_BUDGET_S and proc.returncode == 0 else "not met"
    return proc.returncode, [f"test suite: {wall:.0f} s wall ({tail[0].strip('= ')}): "
                             f"{verdict} (<= {SUITE_BUDGET_S:.0f} s)"], wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="store_true", help="time the test suite too")
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds: checks the driver, gives no figures")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}, load average {os.getloadavg()[0]:.2f}")
    summary: list[tuple[str, int, list[str], float]] = []
    for title, argv in steps(args.quick):
        status, verdicts, seconds = run_step(title, argv)
        summary.append((title, status, verdicts, seconds))
    if args.suite:
        status, verdicts, seconds = run_suite()
        summary.append(("test suite", status, verdicts, seconds))
    print(f"\n=== budgets (load average at end {os.getloadavg()[0]:.2f}, "
          f"{time.strftime('%H:%M:%S')})")
    failed = 0
    for title, status, verdicts, seconds in summary:
        print(f"{title} ({seconds:.0f} s{'' if status == 0 else f', exit status {status}'}):")
        for line in verdicts:
            print(f"  {line.strip()}")
        failed += status != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
