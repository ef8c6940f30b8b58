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
"""

from __future__ import annotations

import argparse
import json
import os
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


def commands() -> list[Command]:
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
    ]


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


def measure(runs: int) -> list[Row]:
    cmds = commands()
    for cmd in cmds:  # warm the file cache and write bytecode
        wall(cmd)
    for _ in range(runs):
        for cmd in cmds:
            cmd.times.append(wall(cmd))
    base = next(c for c in cmds if c.name == BASELINE)
    base_min, base_med = min(base.times), statistics.median(base.times)
    return [
        Row(
            command=c.name,
            min_ms=round(min(c.times) * 1000, 1),
            median_ms=round(statistics.median(c.times) * 1000, 1),
            ratio_min=round(min(c.times) / base_min, 2),
            ratio_median=round(statistics.median(c.times) / base_med, 2),
            heavy_imports=heavy_imports(c) if c.probe is not None else None,
        )
        for c in cmds
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description="evalkit start-up benchmark")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = measure(args.runs)
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
