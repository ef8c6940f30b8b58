"""`evalkit compare` of many systems against its floor: the compiled limit of the tests
it runs, measured in the same run.

Inputs (``compare_inputs.py``): a baseline and 20 candidate run artifacts, five metrics,
10,000 queries (one skewed metric, so the default test runs the sign-flip test on some
columns and the sign-flip test with the bootstrap-t on others). Each command runs in a
fresh process under ``/usr/bin/time`` (wall time, and the peak resident memory of the
command alone); the default test, interval and Holm correction, B = 10,000:

* ``evalkit compare BASELINE CAND...`` (100 tests), printing its table, and again with
  ``--format json`` (every per-query value written out);
* ``evalkit compare --all-pairs`` over the 21 runs (1,050 tests), printing its table;
* with ``--linearity``, the first with 5 and 10 candidates and with 2,500 and 5,000
  queries: peak memory per (systems x queries).

The floor is the sum of the limit-kernel resamplings the command runs
(``benchmarks/limit_kernels.py``: numba on all cores, no index matrix, n = 10,000,
B = 10,000): one sign-flip limit test per comparison, and one bootstrap limit test more
for each comparison whose differences are skewed, where the default test runs the
bootstrap-t beside the sign-flip test (20 of the 100 against the baseline, 160 of the
1,050 all-pairs: the methods the stored reference records). Each kernel is timed right
before and right after each command (100 sign-flip calls, 20 bootstrap calls); the mean
of the two is that command's per-test floor, so both see the load the machine had then.
Ratios are command / floor; the stricter ratio to the sign-flip tests alone (as if no
comparison ran the bootstrap-t) is printed beside it.

Values: the JSON output's observed differences, intervals, p-values and adjusted p-values
of the 100 comparisons, and the statistics core's 1,050 all-pairs ones
(``evalkit.stats.compare_runs``, in this process), must equal those stored by the
implementation before the speed-up (``data/compare_reference.json.gz``): observed
differences and p-values bit for bit, interval ends within ``END_TOLERANCE`` of the
interval's width (``compare_inputs.same_values``; the count bit for bit is printed too).

    .venv/bin/python benchmarks/bench_compare.py [--skip-all-pairs] [--linearity]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import compare_inputs  # noqa: E402
import limit_kernels  # noqa: E402

N, B, CANDIDATES = 10_000, 10_000, 20
BUDGET_RATIO = 1.5
BUDGET_MB = 600.0
EVALKIT = Path(sys.executable).with_name("evalkit")


def floor_per_test(calls: int = 100, boot_calls: int = 20) -> tuple[float, float]:
    """(seconds per sign-flip limit test, per bootstrap limit test): ``calls`` and
    ``boot_calls`` calls, each kernel's timed together."""
    d = np.random.default_rng(5).normal(0.01, 0.2, N)
    limit_kernels.warm()
    out = []
    for kernel, n_calls in ((limit_kernels.signflip_means, calls),
                            (limit_kernels.bootstrap_means, boot_calls)):
        kernel(d, B, 1)
        t0 = time.perf_counter()
        for seed in range(n_calls):
            kernel(d, B, seed)
        out.append((time.perf_counter() - t0) / n_calls)
    return out[0], out[1]


def run_timed(args: list[str], stdout: Path | None = None) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of ``evalkit compare ARGS`` in a fresh process."""
    timer = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r", suffix=".time") as rec:
        out = open(stdout, "w") if stdout else subprocess.DEVNULL  # noqa: SIM115
        try:
            proc = subprocess.run([timer, "-f", "%e %M", "-o", rec.name, str(EVALKIT),
                                   "compare", *args],
                                  stdout=out, stderr=subprocess.PIPE, text=True)
        finally:
            if stdout:
                out.close()  # type: ignore[union-attr]
        if proc.returncode != 0:
            raise SystemExit(f"evalkit {' '.join(args[:3])} ... failed:\n{proc.stderr}")
        wall, kb = rec.read().split()[-2:]
    return float(wall), int(kb) / 1024


def check_json(path: Path, expected: list[list[Any]]) -> tuple[int, int, int]:
    """(equal bit for bit, equal with the interval ends within the tolerance, total) of
    the JSON output's comparisons against the stored values."""
    doc = json.loads(path.read_text())
    got = {(c["candidate"], c["baseline"], c["metric"]): c for c in doc["comparisons"]}
    rows = []
    for a, b, metric, *_ in expected:
        c = got[(a, b, metric)]
        rows.append([a, b, metric, c["method"],
                     *(repr(math.nan if c[k] is None else float(c[k]))
                       for k in ("diff", "ci_low", "ci_high", "p_value", "p_adjusted"))])
    return _counts(rows, expected)


def check_family(paths: list[Path], all_pairs: bool, expected: list[list[Any]]
                 ) -> tuple[int, int, int]:
    return _counts(compare_inputs.reference(paths, all_pairs), expected)


def _counts(got: list[list[Any]], expected: list[list[Any]]) -> tuple[int, int, int]:
    same = [compare_inputs.same_values(g, e) for g, e in zip(got, expected, strict=True)]
    return sum(s[0] for s in same), sum(s[1] for s in same), len(expected)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-all-pairs", action="store_true")
    parser.add_argument("--linearity", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores, load average {load:.2f} at start; n = {N:,}, B = {B:,}")
    reference = compare_inputs.load_reference()
    ok = True
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        paths = compare_inputs.write_runs(tmp / "runs", N, CANDIDATES)
        files = [str(p) for p in paths]
        run_timed(files[:2])  # untimed: bytecode and the compiled kernels' cache
        sign_0, boot_0 = floor_per_test()
        print(f"limit kernel, one test: sign-flip {sign_0 * 1e3:.1f} ms (mean of 100 "
              f"calls), bootstrap {boot_0 * 1e3:.1f} ms (mean of 20 calls)")
        rows: list[tuple[str, float, float, float, float]] = []
        tests = {k: (len(v), sum("bootstrap" in e[3] for e in v)) for k, v in reference.items()}

        def timed(name: str, family: str, cmd: list[str], stdout: Path | None = None) -> None:
            sign_tests, boot_tests = tests[family]
            before = floor_per_test()
            t, mb = run_timed(cmd, stdout)
            after = floor_per_test()
            sign, boot = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
            rows.append((name, t, mb, sign_tests * sign + boot_tests * boot, sign_tests * sign))
            print(f"  {name}: {t:.2f} s; limit before: sign-flip {before[0] * 1e3:.1f} ms, "
                  f"bootstrap {before[1] * 1e3:.1f} ms; after: {after[0] * 1e3:.1f} ms, "
                  f"{after[1] * 1e3:.1f} ms; {sign_tests} sign-flip and {boot_tests} "
                  "bootstrap limit tests", flush=True)

        timed("baseline + 20 candidates, table", "baseline", files)
        out = tmp / "compare.json"
        timed("baseline + 20 candidates, --format json", "baseline",
              [*files, "--format", "json"], out)
        exact, close, total = check_json(out, reference["baseline"])
        print(f"values (JSON output) equal to the stored ones: {close} of {total} "
              f"({exact} bit for bit; the others' interval ends within "
              f"{compare_inputs.END_TOLERANCE:g} of the width)")
        ok &= close == total
        if not args.skip_all_pairs:
            timed("all pairs of 21 runs, table", "all_pairs", [*files, "--all-pairs"])
            exact, close, total = check_family(paths, True, reference["all_pairs"])
            print(f"values (all pairs, compare_runs) equal to the stored ones: {close} of "
                  f"{total} ({exact} bit for bit; the others' interval ends within "
                  f"{compare_inputs.END_TOLERANCE:g} of the width)")
            ok &= close == total
        print(f"\n{'command':<42}{'wall':>9}{'floor':>9}{'x floor':>9}"
              f"{'x sign-flip floor':>19}{'peak MB':>9}")
        for name, t, mb, floor, sign_floor in rows:
            fast = "met" if t <= BUDGET_RATIO * floor else "not met"
            small = "met" if mb < BUDGET_MB else "not met"
            print(f"{name:<42}{t:>8.2f}s{floor:>8.2f}s{t / floor:>9.2f}{t / sign_floor:>19.2f}"
                  f"{mb:>9.0f}   time (<= {BUDGET_RATIO}x) {fast}, memory (< {BUDGET_MB:g} MB)"
                  f" {small}")
        if args.linearity:
            print("\npeak memory against systems x queries (baseline case, table); the "
                  "slope from the smallest:")
            first: tuple[int, float] | None = None
            for systems, n in ((6, N // 4), (6, N), (11, N), (21, N // 4), (21, N // 2),
                               (21, N)):
                sub = tmp / f"runs{systems}_{n}"
                sub_paths = compare_inputs.write_runs(sub, n, systems - 1)
                _, mb = run_timed([str(p) for p in sub_paths])
                slope = ""
                if first is None:
                    first = (systems * n, mb)
                else:
                    per = (mb - first[1]) * 1024**2 / (systems * n - first[0])
                    slope = f", {per:6.0f} bytes per further run x query"
                print(f"  {systems:>3} systems x {n:>6,} queries: {mb:7.0f} MB{slope}")
                shutil.rmtree(sub)
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
