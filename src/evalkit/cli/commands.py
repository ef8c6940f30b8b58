"""The table of ``evalkit`` commands: one line per command.

Each command lives in its own module under :mod:`evalkit.cli` and exposes either

* ``command``: a function whose parameters are typer options (a plain command), or
* ``app``: a :class:`typer.Typer` (a command group such as ``evalkit plugins list``).

To add a command, write the module and add one line to :data:`COMMANDS`. A command's module
is imported only when that command runs (:class:`evalkit.cli.group.EvalkitGroup` loads it),
so ``evalkit --help`` lists the commands from this table alone.
"""

from __future__ import annotations

from typing import NamedTuple


class LazyCommand(NamedTuple):
    """One ``evalkit`` command: its name, the module defining it, and the one-line summary
    that ``evalkit --help`` lists without importing the module (also the command's
    ``short_help``, so the two cannot differ)."""

    name: str
    module: str
    summary: str


#: The commands, in the order ``evalkit --help`` lists them.
COMMANDS: list[LazyCommand] = [
    LazyCommand("compare", "evalkit.cli.compare_cmd",
                "Compare runs with a baseline on the same queries (paired tests)."),
    LazyCommand("power", "evalkit.cli.power_cmd",
                "Plan a comparison: minimum detectable effect or queries needed."),
    LazyCommand("run", "evalkit.cli.run_cmd",
                "Run the eval config's target on every golden case (resumable)."),
    LazyCommand("rescore", "evalkit.cli.rescore_cmd",
                "Recompute the metrics and aggregates of a saved run."),
    LazyCommand("gate", "evalkit.cli.gate_cmd",
                "Check a run against YAML checks: exit 0 pass, 1 fail, 2 error."),
    LazyCommand("baseline", "evalkit.cli.baseline_cmd",
                "Store and inspect the baselines that gates compare against."),
    LazyCommand("plugins", "evalkit.cli.plugins_cmd",
                "Audit the installed plugins and the names they register."),
    LazyCommand("schema", "evalkit.cli.schema_cmd",
                "Print the JSON Schema of checks, evalkit.yaml or goldens files."),
]
