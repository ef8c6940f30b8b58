"""What a TREC run with a mistake costs `evalkit eval`, against the C trec_eval 10.0 binary
on the same files, measured in the same run (wall time and peak resident memory of each
process, through the launcher of ``bench_trec_eval.py``).

Plain runs (``--lines``, 3,000,000 by default: about 76 MB, 1,000 queries; the qrels judge
every query, so trec_eval refuses a duplicate as ``duplicate docs``, exit 4):

* ``valid``: the run without a mistake (scored: what reading it costs);
* ``dup@2``: line 2 repeats line 1 (evalkit stops at line 2);
* ``dup@end``: the last line repeats line 1 (both tools read the whole file).

Gzip runs, which trec_eval does not read (evalkit only; memory compared with the
1,024 MiB decompression cap and the compressed size):

* ``gz dup@2``: about 1.0 GB of one repeated line (under the cap), 2.4 MB compressed;
* ``gz dup@2002``: 2,000 valid lines, then the repeated line to 1.1 GiB (past the first
  lines read before the bulk reader; a text that repeats itself is read by the careful
  reader first, which stops at line 2,002);
* ``gz over cap``: 2,000 valid lines, then line breaks to 1.1 GiB (refused at the cap);
* ``gz blank``: 1.5 GiB of line breaks.

Each process is timed ``--rounds`` times (tools alternating); the medians are printed,
with evalkit / trec_eval ratios for the plain runs.

Usage::

    python benchmarks/bench_trec_errors.py [--rounds 3] [--lines 3000000]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_trec_eval as base  # the trec_eval build and the launcher

CAP_MB = 1024.0


def write_plain(directory: Path, lines: int) -> dict[str, Path]:
    """The qrels and the three plain runs."""
    rows = [f"q{i % 1000} Q0 d{i} {i // 1000 + 1} {1 - i / lines:.6f} sys\n"
            for i in range(lines)]
    (directory / "qrels").write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(1000)))
    out = {"valid": directory / "valid.txt", "dup@2": directory / "dup2.txt",
           "dup@end": directory / "dupend.txt"}
    out["valid"].write_text("".join(rows))
    out["dup@2"].write_text("".join([rows[0], rows[0], *rows[2:]]))
    out["dup@end"].write_text("".join([*rows[:-1], rows[0]]))
    return out


def write_gzip(directory: Path) -> dict[str, Path]:
    """The gzip runs (written a block at a time)."""
    line = b"q1 Q0 d1 1 0.5 s\n"
    head = b"".join(f"q0 Q0 h{i} 1 0.5 s\n".encode() for i in range(2000))
    out = {"gz dup@2": directory / "dup2.txt.gz", "gz dup@2002": directory / "late.txt.gz",
           "gz over cap": directory / "cap.txt.gz", "gz blank": directory / "blank.txt.gz"}
    with gzip.open(out["gz dup@2"], "wb", compresslevel=9) as fh:
        for _ in range(900):
            fh.write(line * 65536)
    with gzip.open(out["gz dup@2002"], "wb", compresslevel=9) as fh:
        fh.write(head)
        for _ in range(1100):
            fh.write(line * 65536)
    with gzip.open(out["gz over cap"], "wb", compresslevel=9) as fh:
        fh.write(head)
        for _ in range(1100):
            fh.write(b"\n" * (1 << 20))
    with gzip.open(out["gz blank"], "wb", compresslevel=9) as fh:
        for _ in range(1500):
            fh.write(b"\n" * (1 << 20))
    return out


def measure(argv: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """``(seconds, peak MB, exit status, first line of stderr)`` of ``argv``."""
    launcher = base.LAUNCHER[0]
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run([str(launcher), rss.name, *argv], cwd=cwd, check=False,
                              capture_output=True)
        seconds = time.perf_counter() - start
        peak = int(rss.read() or 0) / 1024
    said = (proc.stderr.decode(errors="replace").strip().splitlines() or [""])[0]
    return seconds, peak, proc.returncode, said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=3_000_000)
    parser.add_argument("--tarball", type=Path, default=base.TARBALL)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trec_eval = base.build_trec_eval(args.tarball, work / "te")
        if trec_eval is None:
            return 0
        evalkit = base.evalkit_command()
        plain, packed = write_plain(work, args.lines), write_gzip(work)
        qrels = str(work / "qrels")
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        said: dict[tuple[str, str], str] = {}
        for _ in range(args.rounds):
            for case, path in {**plain, **packed}.items():
                tools = {"evalkit": [*evalkit, "eval", str(path), "--qrels", qrels, "-m",
                                     "ap"]}
                if case in plain:
                    tools["trec_eval"] = [str(trec_eval), "-c", "-m", "map", qrels,
                                          str(path)]
                for tool, command in tools.items():
                    seconds, peak, status, first = measure(command, work)
                    times.setdefault((case, tool), []).append((seconds, peak))
                    said[(case, tool)] = f"exit {status}: {first[:90]}"
        size = {case: p.stat().st_size / 1e6 for case, p in {**plain, **packed}.items()}
        print(f"{'case':<12} {'MB':>7} {'evalkit s':>9} {'MB':>7} {'trec_eval s':>11} "
              f"{'MB':>7} {'time x':>7} {'mem x':>6}")
        for case in {**plain, **packed}:
            ek = times[(case, "evalkit")]
            ek_s, ek_m = (statistics.median(x[i] for x in ek) for i in (0, 1))
            row = f"{case:<12} {size[case]:>7.1f} {ek_s:>9.2f} {ek_m:>7.0f}"
            if (case, "trec_eval") in times:
                te = times[(case, "trec_eval")]
                te_s, te_m = (statistics.median(x[i] for x in te) for i in (0, 1))
                row += f" {te_s:>11.2f} {te_m:>7.0f} {ek_s / te_s:>7.2f} {ek_m / te_m:>6.2f}"
            else:
                row += f" {'-':>11} {'-':>7} {'-':>7} {ek_m / CAP_MB:>5.2f}c"
            print(row)
        print("\n(c: peak memory as a fraction of the 1,024 MiB decompression cap)")
        for (case, tool), text in said.items():
            print(f"{case:<12} {tool:<9} {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
