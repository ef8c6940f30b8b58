"""`evalkit eval` against the C trec_eval 10.0 binary, as whole processes on one TREC run.

Both tools run as fresh processes on the same files, alternately, ``--rounds`` times (the
order rotates every round, so that load on the shared machine falls on all alike), and
each process's wall time and peak memory (``ru_maxrss``, through a small C launcher built
with trec_eval, see ``MAXRSS_C``) are recorded:

* ``trec_eval -c -m map -m ndcg_cut.10 -m ndcg -m P.10 -m recall.100 -m recip_rank
  -m num_ret -m num_rel -m num_rel_ret -m num_q qrels run`` (the six measures and the
  counts evalkit prints with them) against ``evalkit eval run --qrels qrels -m
  ap,ndcg@10,ndcg,P@10,R@100,rr`` in each output format (table, ``--format trec``,
  ``--json``);
* ``trec_eval -c -m all_trec`` against ``evalkit eval -m all_trec --format trec``.

trec_eval is built from ``../shared/tools/trec_eval-10.0.tar.gz`` (``--tarball``) in a
temporary directory; without a C compiler the benchmark says so and stops (exit 0).
Every round copies the run afresh into an empty directory, runs evalkit there with
``TMPDIR`` and ``XDG_CACHE_HOME`` (and ``NUMBA_CACHE_DIR``) pointing into it, and fails
if evalkit left any file behind, there or in its installed packages (bytecode is written
by an untimed warm-up run first): no result may come from a previous round. Every round
also checks that evalkit's values equal trec_eval's at its four printed decimals and its
counts exactly, in every format; at the end one untimed ``-q`` run of each compares all
per-query values.

``--lines 300000 1000000`` times runs of those sizes in the same rounds (each with its
own trec_eval baseline; ``--depth`` documents per query), and checks the budgets of
:data:`GOALS`. ``--previous DIR`` also times ``evalkit eval --format trec`` (six
measures) as the source tree at ``DIR`` has it (a checkout of an earlier commit:
``git worktree add DIR main``; its ``src`` and ``plugins/*/src`` put first on
``PYTHONPATH``, the installed distributions' entry points unchanged), and checks that
its output is byte for byte the current one's, every round.

``--linearity`` measures instead how time and memory grow: runs of 1 line, 1,000,000 and
5,000,000 lines (1,000 documents per query, qrels growing with the queries), and prints
(X(5M) - X(1 line)) / (X(1M) - X(1 line)) for wall time and peak memory (5 is linear).

The synthetic data (``--queries`` x ``--depth`` run lines, seeded) imitates a real run:
lines in rank order with five-decimal scores (some ties), a 1,000,000-document
collection, and graded qrels (labels 0-3) judging about 150 documents per query, most of
them drawn from the top of the ranking. ``--shuffle`` writes each query's lines in random
order instead (the rank column then disagrees with the scores, which both tools ignore).
Scores stay below 8 with five decimals so that they remain distinct in 32-bit floats
(pytrec_eval, which wraps trec_eval 9.0.8, ranks by float scores; the cross-check test
plugins/evalkit-retrieval/tests/test_parity_pytrec_eval.py uses this generator).

Usage::

    python benchmarks/bench_trec_eval.py [--rounds 5] [--shuffle] [--keep DIR]
    python benchmarks/bench_trec_eval.py --lines 300000 1000000 [--previous DIR]
    python benchmarks/bench_trec_eval.py --linearity [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TARBALL = ROOT.parent / "shared" / "tools" / "trec_eval-10.0.tar.gz"
SIX = ["-m", "ap,ndcg@10,ndcg,P@10,R@100,rr"]
SIX_TREC = ["map", "ndcg_cut.10", "ndcg", "P.10", "recall.100", "recip_rank",
            "num_ret", "num_rel", "num_rel_ret"]
#: trec_eval prints the number of queries on request only
#: evalkit's names of the six measures -> trec_eval's line names
NAMES = {"ap": "map", "ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "precision@10": "P_10",
         "recall@100": "recall_100", "rr": "recip_rank"}
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
#: budgets on the medians, per run size (lines): evalkit's six measures (each format) at
#: most this multiple of trec_eval's wall time and of its peak memory
GOALS = {300_000: {"time": 2.0}, 1_000_000: {"time": 0.7, "memory": 1.5}}


def generate(directory: Path, queries: int, depth: int, *, shuffle: bool, seed: int = 7
             ) -> tuple[Path, Path]:
    """Write ``run.txt`` and ``qrels.txt`` into ``directory``; return their paths."""
    rng = np.random.default_rng(seed)
    collection = 1_000_000
    run_path = directory / "run.txt"
    qrels_path = directory / "qrels.txt"
    with run_path.open("w") as run, qrels_path.open("w") as qrels:
        for q in range(1, queries + 1):
            docs = rng.choice(collection, size=depth + 60, replace=False)
            ranked, unretrieved = docs[:depth], docs[depth:]
            # decreasing scores below 8 rounded to 5 decimals: some exact ties, and values
            # that stay distinct in float32 (pytrec_eval's trec_eval 9.0.8 ranks by 32-bit
            # scores, trec_eval 10.0 and evalkit by 64-bit ones)
            scores = np.round(7.99 - np.cumsum(rng.exponential(0.005, size=depth)), 5)
            order = rng.permutation(depth) if shuffle else np.arange(depth)
            run.write("".join(
                f"{q} Q0 D{ranked[i]:07d} {i + 1} {scores[i]:.5f} bench\n" for i in order
            ))
            # ~90 judged from the ranking (denser near the top) + 60 never retrieved
            pick = np.unique(np.minimum(rng.geometric(1 / 150, size=110) - 1, depth - 1))
            judged = np.concatenate((ranked[pick][:90], unretrieved))
            labels = rng.choice(4, size=len(judged), p=[0.55, 0.25, 0.12, 0.08])
            qrels.write("".join(
                f"{q} 0 D{d:07d} {g}\n" for d, g in zip(judged, labels, strict=True)
            ))
    return run_path, qrels_path


# --------------------------------------------------------------------------- processes
@dataclass
class Measured:
    seconds: float
    max_rss_mb: float
    stdout: str


#: A launcher that forks and runs a command and writes the child's peak resident memory
#: (``ru_maxrss``, KiB) to a file. Linux counts the memory of the process a program is
#: started from into the program's peak (a child exec'd straight from this benchmark would
#: report at least this Python process's size); forked from this small launcher, it
#: reports its own.
MAXRSS_C = r"""
#include <stdio.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
    int status;
    struct rusage ru;
    pid_t pid;
    FILE *out;
    if (argc < 3) return 2;
    pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) { execvp(argv[2], argv + 2); _exit(127); }
    if (wait4(pid, &status, 0, &ru) < 0) return 2;
    out = fopen(argv[1], "w");
    if (out == NULL) return 2;
    fprintf(out, "%ld\n", ru.ru_maxrss);
    fclose(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""
LAUNCHER: list[Path] = []


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``argv`` to completion (through the launcher); its wall time, peak resident
    memory and output."""
    launcher = LAUNCHER[0]
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run([str(launcher), rss.name, *argv], cwd=cwd, env=env,
                              stdout=out, stderr=subprocess.PIPE, check=False)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode()
        peak_kib = int(rss.read() or 0)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                         f"{proc.stderr.decode()}")
    return Measured(seconds, peak_kib / 1024, text)


def build_trec_eval(tarball: Path, workdir: Path) -> Path | None:
    """trec_eval built from ``tarball`` in ``workdir``, or None (with a message) when no C
    compiler is found."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        print("skipped: no C compiler (cc, gcc or clang) to build trec_eval with")
        return None
    if not tarball.is_file():
        print(f"skipped: {tarball} not found (pass --tarball)")
        return None
    with tarfile.open(tarball) as tar:
        tar.extractall(workdir, filter="data")
    source = next(p.parent for p in workdir.rglob("Makefile"))
    subprocess.run(["make", f"CC={cc}"], cwd=source, check=True, capture_output=True)
    (workdir / "maxrss.c").write_text(MAXRSS_C)
    subprocess.run([cc, "-O2", "-o", str(workdir / "maxrss"), str(workdir / "maxrss.c")],
                   check=True, capture_output=True)
    LAUNCHER.append(workdir / "maxrss")
    return source / "trec_eval"


def evalkit_command() -> list[str]:
    script = Path(sys.executable).with_name("evalkit")
    found = str(script) if script.exists() else shutil.which("evalkit")
    if found is None:
        raise SystemExit("evalkit is not installed in this environment")
    return [found]


# --------------------------------------------------------------------------- values
def trec_all_lines(text: str) -> dict[str, str]:
    """``{measure: value text}`` of the ``all`` lines of trec_eval's layout."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == "all":
            out[parts[0].strip()] = parts[2]
    return out


def trec_query_lines(text: str) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] != "all":
            out[(parts[0].strip(), parts[1])] = parts[2]
    return out


def check_values(kind: str, ours: str, theirs: dict[str, str]) -> int:
    """Compare evalkit's output (``kind``: table, trec, json, all_trec) with trec_eval's
    ``all`` lines; return the number of values compared, exit on a difference."""
    import json

    got: dict[str, str] = {}
    required = {*NAMES.values(), "num_q"}
    if kind in ("trec", "all_trec"):
        got = {k: v for k, v in trec_all_lines(ours).items() if k != "runid"}
        required = set(theirs) - {"runid"} if kind == "all_trec" else required | set(COUNTS)
    elif kind == "json":
        data = json.loads(ours)
        got = {NAMES[m]: f"{v:.4f}" for m, v in data["means"].items()}
        got["num_q"] = str(data["num_queries"])
    else:
        for line in ours.splitlines():
            match = re.fullmatch(r"\s*(\S+)\s+(-?\d+\.\d{4})\s*", line)
            if match and match.group(1) in NAMES:
                got[NAMES[match.group(1)]] = match.group(2)
        found = re.search(r"(\d+) quer(?:y|ies) evaluated", ours)
        got["num_q"] = found.group(1) if found else "?"
    wrong = {k: (got.get(k), theirs.get(k)) for k in required
             if k not in got or got[k] != theirs.get(k)}
    if kind == "all_trec" and set(got) != required:
        wrong.update({k: (got[k], None) for k in set(got) - required})
    if wrong:
        raise SystemExit(f"MISMATCH ({kind}): evalkit vs trec_eval {wrong}")
    return len(required)


# --------------------------------------------------------------------------- sidecars
def snapshot(*roots: Path) -> dict[Path, float]:
    """Every file under ``roots`` with its modification time."""
    out: dict[Path, float] = {}
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in files:
                p = Path(dirpath) / name
                with contextlib.suppress(FileNotFoundError):
                    out[p] = p.stat().st_mtime_ns
    return out


def package_dirs() -> list[Path]:
    import evalkit_retrieval

    import evalkit

    return [Path(evalkit.__file__).parent, Path(evalkit_retrieval.__file__).parent]


def left_behind(before: dict[Path, float], after: dict[Path, float]) -> list[str]:
    return sorted(str(p) for p, t in after.items() if before.get(p) != t)


# --------------------------------------------------------------------------- rounds
@dataclass
class Job:
    label: str
    kind: str  # table, trec, json, all_trec, previous, or trec_eval / trec_eval_all
    argv: list[str]
    samples: list[Measured] = field(default_factory=list)
    lines: int = 0  # the size of the run it reads
    folder: str = ""  # where in a round's directory that run is
    env: dict[str, str] = field(default_factory=dict)  # added to the round's


def jobs(trec_eval: Path, evalkit: list[str], run: str, qrels: str,
         previous: Path | None = None) -> list[Job]:
    six = [a for m in [*SIX_TREC, "num_q"] for a in ("-m", m)]
    ek = [*evalkit, "eval", run, "--qrels", qrels]
    out = [
        Job("trec_eval (six measures)", "trec_eval", [str(trec_eval), "-c", *six, qrels, run]),
        Job("evalkit eval (table)", "table", [*ek, *SIX]),
        Job("evalkit eval --format trec", "trec", [*ek, *SIX, "--format", "trec"]),
        Job("evalkit eval --json", "json", [*ek, *SIX, "--json"]),
        Job("trec_eval -m all_trec", "trec_eval_all",
            [str(trec_eval), "-c", "-m", "all_trec", qrels, run]),
        Job("evalkit eval -m all_trec --format trec", "all_trec",
            [*ek, "-m", "all_trec", "--format", "trec"]),
    ]
    if previous is not None:
        out.append(Job("previous tree: eval --format trec", "previous",
                       [*ek, *SIX, "--format", "trec"], env=previous_env(previous)))
    return out


def previous_env(tree: Path) -> dict[str, str]:
    """``PYTHONPATH`` putting the kernel and plugin sources of ``tree`` before the
    installed (editable) ones."""
    if not (tree / "src" / "evalkit").is_dir():
        raise SystemExit(f"--previous {tree}: no src/evalkit there (a checkout of the tree)")
    paths = [tree / "src", *sorted((tree / "plugins").glob("*/src"))]
    return {"PYTHONPATH": os.pathsep.join(str(p) for p in paths)}


def fresh_round(base: Path, sources: dict[str, tuple[Path, Path]], r: int) -> Path:
    """An empty round directory holding a fresh copy of each run and qrels in a folder
    named after it (``sources``: folder -> (run, qrels))."""
    where = base / f"round{r}"
    where.mkdir()
    for folder, (source_run, source_qrels) in sources.items():
        (where / folder).mkdir()
        shutil.copyfile(source_run, where / folder / "run.txt")
        shutil.copyfile(source_qrels, where / folder / "qrels.txt")
    for sub in ("tmp", "cache"):
        (where / sub).mkdir()
    return where


def round_env(where: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TMPDIR=str(where / "tmp"), XDG_CACHE_HOME=str(where / "cache"),
               NUMBA_CACHE_DIR=str(where / "cache" / "numba"))
    return env


def run_rounds(args: argparse.Namespace, trec_eval: Path, data: Path,
               sources: dict[int, tuple[Path, Path]]) -> list[Job]:
    """Time every job on every run (``sources``: lines -> (run, qrels)), alternately."""
    evalkit = evalkit_command()
    folders = {f"lines{n}": paths for n, paths in sources.items()}
    table: list[Job] = []
    for n in sources:
        for job in jobs(trec_eval, evalkit, "run.txt", "qrels.txt", args.previous):
            job.lines, job.folder = n, f"lines{n}"
            table.append(job)
    if args.only:
        kept = {*args.only, "previous", "trec"} if args.previous else set(args.only)
        table = [j for j in table if j.kind in kept or j.kind.startswith("trec_eval")]
    packages = package_dirs()
    warm = fresh_round(data, folders, 0)
    for job in table:  # bytecode written, page cache warm; untimed
        measure(job.argv, warm / job.folder, {**round_env(warm), **job.env})
    compared = 0
    for r in range(1, args.rounds + 1):
        where = fresh_round(data, folders, r)
        env = round_env(where)
        shift = r % len(table)
        for job in table[shift:] + table[:shift]:
            before = snapshot(where, *packages)
            got = measure(job.argv, where / job.folder, {**env, **job.env})
            job.samples.append(got)
            extra = left_behind(before, snapshot(where, *packages))
            extra = [p for p in extra if not p.endswith(("run.txt", "qrels.txt"))]
            if extra:
                raise SystemExit(f"{job.label} left files behind: {extra[:5]}")
        for n in sources:
            mine = [j for j in table if j.lines == n]
            baseline = {j.kind: trec_all_lines(j.samples[-1].stdout)
                        for j in mine if j.kind.startswith("trec_eval")}
            current = {j.kind: j.samples[-1].stdout for j in mine}
            for job in mine:
                if job.kind == "previous":
                    if current["previous"] != current["trec"]:
                        raise SystemExit(f"MISMATCH at {n:,} lines: the previous tree's "
                                         "--format trec output differs from this tree's")
                    compared += len(trec_all_lines(current["previous"]))
                elif not job.kind.startswith("trec_eval"):
                    key = "trec_eval_all" if job.kind == "all_trec" else "trec_eval"
                    compared += check_values(job.kind, job.samples[-1].stdout, baseline[key])
        shutil.rmtree(where)
    per_query = sum(check_per_query(trec_eval, evalkit, warm / f"lines{n}") for n in sources)
    shutil.rmtree(warm)
    print(f"values: {compared:,} summary values equal trec_eval's (and the previous tree's, "
          f"where timed) in {args.rounds} rounds; {per_query:,} per-query values of -q "
          "equal too")
    return table


def check_per_query(trec_eval: Path, evalkit: list[str], where: Path) -> int:
    six = [a for m in SIX_TREC for a in ("-m", m)]
    theirs = trec_query_lines(measure(
        [str(trec_eval), "-c", "-q", *six, "qrels.txt", "run.txt"], where).stdout)
    ours = trec_query_lines(measure(
        [*evalkit, "eval", "run.txt", "--qrels", "qrels.txt", *SIX, "--format", "trec",
         "-q"], where).stdout)
    if ours != theirs:
        bad = [k for k in theirs if ours.get(k) != theirs[k]][:5]
        raise SystemExit(f"MISMATCH in per-query values: {bad}")
    return len(theirs)


def report(table: list[Job]) -> None:
    """Medians, bests and ratios to trec_eval on the same run: of the medians, and the
    median of each round's ratio (the two ran within seconds of each other: the figure
    least moved by load that comes and goes); then the budgets of :data:`GOALS`."""
    print(f"{'lines':>9s} {'command':40s} {'median':>8s} {'best':>8s} {'x trec_eval':>11s} "
          f"{'per round':>9s} {'peak MB':>8s} {'x trec_eval':>11s}")
    ratios: dict[tuple[int, str], tuple[float, float, float]] = {}
    for job in table:
        ref = next(j for j in table if j.lines == job.lines and j.kind == (
            "trec_eval_all" if job.kind in ("all_trec", "trec_eval_all") else "trec_eval"))
        t = statistics.median(s.seconds for s in job.samples)
        m = statistics.median(s.max_rss_mb for s in job.samples)
        rt = t / statistics.median(s.seconds for s in ref.samples)
        rr = statistics.median(a.seconds / b.seconds
                               for a, b in zip(job.samples, ref.samples, strict=True))
        rm = m / statistics.median(s.max_rss_mb for s in ref.samples)
        ratios[(job.lines, job.kind)] = (rt, rr, rm)
        print(f"{job.lines:9,d} {job.label:40s} {t:7.3f}s "
              f"{min(s.seconds for s in job.samples):7.3f}s {rt:10.2f}x {rr:8.2f}x {m:8.1f} "
              f"{rm:10.2f}x")
    for job in table:
        print(f"  {job.lines:9,d} {job.label:40s} "
              + " ".join(f"{s.seconds:.3f}" for s in job.samples))
    for lines, goal in GOALS.items():
        for kind in ("table", "trec", "json"):
            if (lines, kind) not in ratios:
                continue
            rt, rr, rm = ratios[(lines, kind)]
            verdicts = [f"time {rt:.2f}x (per round {rr:.2f}x) "
                        f"{'meets' if rt <= goal['time'] else 'misses'} <= {goal['time']}x"]
            if "memory" in goal:
                verdicts.append(f"memory {rm:.2f}x "
                                f"{'meets' if rm <= goal['memory'] else 'misses'} "
                                f"<= {goal['memory']}x")
            print(f"budget at {lines:,} lines, evalkit eval ({kind}): " + "; ".join(verdicts))


# --------------------------------------------------------------------------- linearity
def linearity(args: argparse.Namespace, trec_eval: Path, base: Path) -> None:
    evalkit = evalkit_command()
    sizes = {"1 line": (1, 1), "1M lines": (1000, 1000), "5M lines": (5000, 1000)}
    dirs: dict[str, Path] = {}
    for label, (queries, depth) in sizes.items():
        dirs[label] = base / label.replace(" ", "_")
        dirs[label].mkdir()
        generate(dirs[label], queries, depth, shuffle=args.shuffle)
    tools = {
        "trec_eval": [str(trec_eval), "-c", *[a for m in SIX_TREC for a in ("-m", m)],
                      "qrels.txt", "run.txt"],
        "evalkit --format trec": [*evalkit, "eval", "run.txt", "--qrels", "qrels.txt", *SIX,
                                  "--format", "trec"],
    }
    samples: dict[tuple[str, str], list[Measured]] = {}
    for d in dirs.values():
        for command in tools.values():
            measure(command, d)  # warm-up
    for _ in range(args.rounds):
        for label, d in dirs.items():
            for tool, command in tools.items():
                samples.setdefault((tool, label), []).append(measure(command, d))
    print(f"{'tool':24s} {'size':10s} {'median s':>9s} {'peak MB':>8s}")
    for (tool, label), got in samples.items():
        print(f"{tool:24s} {label:10s} {statistics.median(s.seconds for s in got):9.3f} "
              f"{statistics.median(s.max_rss_mb for s in got):8.1f}")
    for tool in tools:
        for what in ("seconds", "max_rss_mb"):
            x = {label: statistics.median(getattr(s, what) for s in samples[(tool, label)])
                 for label in sizes}
            ratio = (x["5M lines"] - x["1 line"]) / (x["1M lines"] - x["1 line"])
            shown = "time" if what == "seconds" else "memory"
            print(f"{tool:24s} {shown:7s} (X(5M) - X(1)) / (X(1M) - X(1)) = {ratio:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shuffle", action="store_true",
                        help="write each query's lines in random order")
    parser.add_argument("--keep", type=Path, help="write the data here and keep it")
    parser.add_argument("--tarball", type=Path, default=TARBALL)
    parser.add_argument("--linearity", action="store_true",
                        help="measure growth from 1 line to 1M and 5M lines instead")
    parser.add_argument("--only", nargs="+", choices=("table", "trec", "json", "all_trec"),
                        help="time only these evalkit jobs (and trec_eval)")
    parser.add_argument("--lines", type=int, nargs="+",
                        help="run sizes timed in the same rounds (default: --queries x "
                             "--depth); each a multiple of --depth")
    parser.add_argument("--previous", type=Path,
                        help="a checkout of an earlier tree, timed and checked too")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trec_eval = build_trec_eval(args.tarball, work / "build")
        if trec_eval is None:
            return 0
        data = args.keep or work / "data"
        data.mkdir(parents=True, exist_ok=True)
        if args.linearity:
            linearity(args, trec_eval, data)
        else:
            sources: dict[int, tuple[Path, Path]] = {}
            for lines in args.lines or [args.queries * args.depth]:
                if lines % args.depth:
                    raise SystemExit(f"--lines {lines} is no multiple of --depth {args.depth}")
                t0 = time.perf_counter()
                folder = data / f"source{lines}"
                folder.mkdir(exist_ok=True)
                sources[lines] = generate(folder, lines // args.depth, args.depth,
                                          shuffle=args.shuffle)
                print(f"generated {lines:,} run lines and "
                      f"{sum(1 for _ in sources[lines][1].open()):,} qrels lines in "
                      f"{time.perf_counter() - t0:.1f} s "
                      f"({'shuffled' if args.shuffle else 'rank order'})")
            table = run_rounds(args, trec_eval, data, sources)
            print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
                  f"{args.rounds} rounds, alternating")
            report(table)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
