"""Start-up time of `evalkit --help` and `evalkit plugins list`, against the floor of any
typer CLI, `python -c "import typer, rich"`, measured in the same run.

    python benchmarks/bench_startup.py [--runs 21] [--json]

Every command runs in a fresh process, interleaved with the others so that machine load
affects all alike. The table shows the fastest and the median wall time of each and both
ratios to the baseline; the budgets, on the medians, are 1.5x for `--help` and 2x
for `plugins list`. Reference rows: a bare interpreter, a
one-option typer command that does nothing (what typer itself costs to run any command),
`evalkit --help` without the kept list of the plugins' commands (each run discovers the
plugins, as the first after an install or a change of the project's plugins does), the
libraries any plugin listing needs (typer, rich, importlib.metadata with one
entry-point scan, pluggy, tomllib: the floor under `plugins list`), `plugins list` with
`EVALKIT_PLUGINS=` (the kernel alone, no plugin imported), and `plugins list` with the
interpreter's final garbage collection left in (what `evalkit.cli.main`'s `gc.freeze()`
saves). The last column lists the heavy dependencies each evalkit command imported.

Bytecode is cached for every module each command imports (the warm-up run writes
evalkit's; pip compiled the installed libraries'): the benchmark checks this and says so
before timing. ``--no-bytecode`` adds the baseline and ``plugins list`` run with no
bytecode at all (``PYTHONDONTWRITEBYTECODE=1`` and an empty ``PYTHONPYCACHEPREFIX``:
every module compiled from source on every run, for both alike), and their ratio.

``--import-profile`` prints where the import time goes (``python -X importtime``, the
fastest of ``--runs`` runs for each module) for ``evalkit plugins list`` and ``evalkit
eval`` of a small TREC run (six measures, ``--format trec``): by package, and the
slowest modules; with ``--previous DIR`` (a checkout of an earlier tree: its ``src``
and ``plugins/*/src`` first on ``PYTHONPATH``) for that tree too, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: the budget of each command, as a ratio of the baseline's median (docs/performance.md)
GOALS = {"evalkit --help": 1.5, "evalkit plugins list": 2.0}
BASELINE = 'python -c "import typer, rich"'
HEAVY = ("numpy", "scipy", "pydantic", "yaml", "anthropic", "httpx", "pluggy", "rich.console")

# As on a user's machine, Python caches bytecode (the warm-up run writes it); a shell that
# sets PYTHONDONTWRITEBYTECODE would recompile every evalkit module on every run. Likewise
# `evalkit --help` keeps the list of the plugins' commands (evalkit.plugins.command_list),
# here in a folder of the benchmark's own, which the warm-up run writes.
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                         "EVALKIT_PLUGINS")}
ENV["EVALKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="evalkit-bench-")

FLOOR = ("import typer, rich, importlib.metadata, pluggy, tomllib; "
         "importlib.metadata.entry_points(group='evalkit.plugins')")

WITH_FINAL_GC = ("import sys; sys.argv = ['evalkit', 'plugins', 'list']; "
                 "from evalkit.cli.app import app; app()")

TYPER_NOOP = """
import typer
app = typer.Typer()
@app.command()
def main(flag: bool = typer.Option(False, "--flag")) -> None:
    pass
app()
"""

PROBE = """
import sys
sys.argv = {argv!r}
try:
    from evalkit.cli import main
    main()
except SystemExit:
    pass
print(",".join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


@dataclass
class Command:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    times: list[float] = field(default_factory=list)
    probe: list[str] | None = None  # evalkit argv to probe for heavy imports


@dataclass
class Row:
    command: str
    min_ms: float
    median_ms: float
    ratio_min: float
    ratio_median: float
    heavy_imports: list[str] | None


#: both sides without bytecode: nothing read from a cache, nothing written (--no-bytecode)
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="evalkit-bench-nopyc-")}


def commands(no_bytecode: bool = False) -> list[Command]:
    script = Path(sys.executable).with_name("evalkit")
    evalkit = [str(script)] if script.exists() else [
        sys.executable, "-c", "from evalkit.cli import main; main()"]
    return [
        Command('python -c "pass"', [sys.executable, "-c", "pass"]),
        Command(BASELINE, [sys.executable, "-c", "import typer, rich"]),
        Command("typer command, one option, no-op", [sys.executable, "-c", TYPER_NOOP]),
        Command("evalkit --help", [*evalkit, "--help"], probe=["--help"]),
        Command("evalkit --help, plugins' commands not kept", [*evalkit, "--help"],
                env={"EVALKIT_CACHE_DIR": ""}, probe=["--help"]),
        Command("floor of a plugin listing (see above)", [sys.executable, "-c", FLOOR]),
        Command("evalkit plugins list", [*evalkit, "plugins", "list"],
                probe=["plugins", "list"]),
        Command("EVALKIT_PLUGINS= evalkit plugins list", [*evalkit, "plugins", "list"],
                env={"EVALKIT_PLUGINS": ""}, probe=["plugins", "list"]),
        Command("plugins list, with the final GC", [sys.executable, "-c", WITH_FINAL_GC]),
        *([Command(f"{BASELINE}, no bytecode", [sys.executable, "-c", "import typer, rich"],
                   env=NO_BYTECODE),
           Command("evalkit plugins list, no bytecode", [*evalkit, "plugins", "list"],
                   env=NO_BYTECODE)] if no_bytecode else []),
    ]


BYTECODE_PROBE = """
import importlib.util, os, sys
sys.argv = {argv!r}
try:
    from evalkit.cli import main
    main()
except SystemExit:
    pass
missing = []
for name, module in list(sys.modules.items()):
    source = getattr(module, "__file__", None)
    if isinstance(source, str) and source.endswith(".py"):
        if not os.path.exists(importlib.util.cache_from_source(source)):
            missing.append(name)
print(len(sys.modules), ",".join(sorted(missing)), file=sys.stderr)
"""


def check_bytecode(argvs: list[list[str]]) -> str:
    """Fail unless every module imported by ``python -c "import typer, rich"`` and by each
    evalkit command (``argvs``) has its bytecode cached; else say how many were checked."""
    checked = 0
    for argv in [["--version"], *argvs]:
        code = BYTECODE_PROBE.format(argv=["evalkit", *argv])
        if argv == ["--version"]:  # the baseline's modules, typer and rich
            code = code.replace("from evalkit.cli import main\n    main()", "import typer, rich")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=ENV)
        count, _, missing = out.stderr.strip().splitlines()[-1].partition(" ")
        if missing:
            raise SystemExit(f"no bytecode cached for {missing} (imported by "
                             f"{' '.join(argv)}): the comparison would not be like for like")
        checked += int(count)
    return f"bytecode cached for every module imported ({checked} module loads checked)"


def wall(cmd: Command) -> float:
    start = time.perf_counter()
    subprocess.run(cmd.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env={**ENV, **cmd.env})
    return time.perf_counter() - start


def heavy_imports(cmd: Command) -> list[str]:
    code = PROBE.format(argv=["evalkit", *(cmd.probe or [])], heavy=HEAVY)
    for _ in range(2):  # the probe's first `--help` keeps the plugins' commands, as above
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={**ENV, **cmd.env})
    lines = out.stderr.strip().splitlines()
    return [m for m in (lines[-1] if lines else "").split(",") if m]


def measure(runs: int, no_bytecode: bool = False) -> list[Row]:
    cmds = commands(no_bytecode)
    for cmd in cmds:  # warm the file cache and write bytecode
        wall(cmd)
    print(check_bytecode([c.probe for c in cmds if c.probe is not None]), file=sys.stderr)
    for _ in range(runs):
        for cmd in cmds:
            cmd.times.append(wall(cmd))
    cached = next(c for c in cmds if c.name == BASELINE)
    uncached = next((c for c in cmds if c.name == f"{BASELINE}, no bytecode"), cached)
    rows = []
    for c in cmds:
        base = uncached if "no bytecode" in c.name else cached
        rows.append(Row(
            command=c.name,
            min_ms=round(min(c.times) * 1000, 1),
            median_ms=round(statistics.median(c.times) * 1000, 1),
            ratio_min=round(min(c.times) / min(base.times), 2),
            ratio_median=round(statistics.median(c.times) / statistics.median(base.times), 2),
            heavy_imports=heavy_imports(c) if c.probe is not None else None,
        ))
    return rows


# --------------------------------------------------------------------------- import profile
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
#: top-level packages shown as themselves; the rest of the standard library as one group
PACKAGES = {"numpy": "numpy", "typer": "typer", "click": "typer", "rich": "rich",
            "pluggy": "pluggy", "evalkit": "evalkit (kernel)"}


def package_of(module: str) -> str:
    top = module.split(".")[0]
    if top.startswith("evalkit_"):
        return "evalkit plugins"
    if top in PACKAGES:
        return PACKAGES[top]
    if module.startswith("importlib.metadata") or top in (
            "email", "zipfile", "csv", "socket", "calendar", "quopri", "uu"):
        return "importlib.metadata (and its email parser)"
    if top in sys.stdlib_module_names or top.startswith("_"):
        return "rest of the standard library"
    return top


@dataclass
class ImportProfile:
    total_ms: float  # sum of the top-level imports' cumulative time, fastest run
    self_ms: dict[str, float]  # each module's own time, its fastest run


def import_profile(argv: list[str], runs: int, env: dict[str, str], cwd: str) -> ImportProfile:
    """``python -X importtime`` of an evalkit command, ``runs`` times: each module's
    fastest own time, and the fastest run's total."""
    code = PROBE.format(argv=["evalkit", *argv], heavy=())
    best: dict[str, int] = {}
    totals = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=cwd,
                             capture_output=True, text=True, check=True, env=env)
        total = 0
        for line in out.stderr.splitlines():
            m = IMPORT_LINE.match(line)
            if m is None:
                continue
            own, cumulative, indent, name = int(m[1]), int(m[2]), len(m[3]), m[4]
            best[name] = min(best.get(name, own), own)
            if indent == 1:  # a top-level import
                total += cumulative
        totals.append(total)
    return ImportProfile(min(totals) / 1000, {k: v / 1000 for k, v in best.items()})


def print_profiles(runs: int, previous: Path | None) -> None:
    """The import profiles of ``plugins list`` and ``eval`` (see the module docstring)."""
    folder = Path(tempfile.mkdtemp(prefix="evalkit-bench-run-"))
    (folder / "run.txt").write_text("".join(
        f"{q} Q0 D{d} {d} {100 - d / 10:.2f} bench\n" for q in range(1, 11) for d in range(100)))
    (folder / "qrels.txt").write_text("".join(
        f"{q} 0 D{d} {d % 3}\n" for q in range(1, 11) for d in range(0, 200, 7)))
    trees = {"this tree": ENV}
    if previous is not None:
        paths = [previous / "src", *sorted((previous / "plugins").glob("*/src"))]
        trees = {"previous tree": {**ENV, "PYTHONPATH": os.pathsep.join(map(str, paths))},
                 **trees}
    for argv in (["plugins", "list"],
                 ["eval", "run.txt", "--qrels", "qrels.txt", "-m",
                  "ap,ndcg@10,ndcg,P@10,R@100,rr", "--format", "trec"]):
        profiles = {}
        for name, env in trees.items():
            import_profile(argv, 1, env, str(folder))  # writes bytecode
            profiles[name] = import_profile(argv, runs, env, str(folder))
        print(f"\nimports of `evalkit {' '.join(argv)}` (python -X importtime, fastest of "
              f"{runs} runs per module, ms)")
        print(f"{'':48s}" + "".join(f"{name:>15s}" for name in profiles))
        groups: dict[str, dict[str, float]] = {}
        for name, prof in profiles.items():
            for module, ms in prof.self_ms.items():
                g = groups.setdefault(package_of(module), {})
                g[name] = g.get(name, 0.0) + ms
        for group, by_tree in sorted(groups.items(), key=lambda kv: -max(kv[1].values())):
            if max(by_tree.values()) >= 0.5:
                print(f"{group:48s}" + "".join(f"{by_tree.get(n, 0.0):15.1f}" for n in profiles))
        print(f"{'all imports (top-level, fastest run)':48s}"
              + "".join(f"{p.total_ms:15.1f}" for p in profiles.values()))
        print(f"{'modules imported':48s}" + "".join(f"{len(p.self_ms):15d}"
                                                    for p in profiles.values()))
        last = list(profiles.values())[-1].self_ms
        slowest = sorted(last.items(), key=lambda kv: -kv[1])[:12]
        print("slowest modules (this tree): " + ", ".join(f"{m} {ms:.1f}" for m, ms in slowest))


def main() -> int:
    parser = argparse.ArgumentParser(description="evalkit start-up benchmark")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="add the baseline and plugins list without any bytecode")
    parser.add_argument("--import-profile", action="store_true",
                        help="print where the import time goes instead of timing")
    parser.add_argument("--previous", type=Path,
                        help="with --import-profile: a checkout of an earlier tree too")
    args = parser.parse_args()
    if args.import_profile:
        print_profiles(args.runs, args.previous)
        return 0
    rows = measure(args.runs, args.no_bytecode)
    if args.json:
        print(json.dumps({"runs": args.runs, "goal_ratios": GOALS,
                          "python": sys.version.split()[0], "cpus": os.cpu_count(),
                          "rows": [asdict(r) for r in rows]}, indent=2))
        return 0
    print(f"{args.runs} runs each, interleaved; ratios to `{BASELINE}` (fastest, median)")
    print(f"{'command':44} {'min ms':>7} {'median':>7} {'x min':>6} {'x med':>6}  heavy imports")
    for r in rows:
        heavy = "" if r.heavy_imports is None else (", ".join(r.heavy_imports) or "-")
        print(f"{r.command:44} {r.min_ms:>7} {r.median_ms:>7} {r.ratio_min:>6} "
              f"{r.ratio_median:>6}  {heavy}")
    for r in rows:
        if r.command in GOALS:
            goal = GOALS[r.command]
            verdict = "meets" if r.ratio_median <= goal else "misses"
            print(f"{r.command}: {r.ratio_median}x (medians; fastest runs {r.ratio_min}x), "
                  f"{verdict} the budget of <= {goal}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
