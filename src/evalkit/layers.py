"""The floors of the house: which package may import which, in one table.

Rows flow up the floors: records and the registry (core) and the plugins that fill it,
then cases and runs (data), their making (execute), then what is concluded from them
(report, comparison, gate), then the command line. A package may import its own modules,
the ground (:data:`GROUND`), and the packages :data:`LAYERS` lists for it; nothing else.
Every import counts: inside functions, and under ``if TYPE_CHECKING:`` too (never run, but
two modules that name each other's types know each other). The few deliberate exceptions
are :data:`FACADES`, each with its reason: the kernel imports a plugin only for the three
import paths of version 0.2 listed there.

tests/test_layers.py reads this table, walks every import of ``src/`` and
``plugins/*/src`` with :mod:`ast`, and fails on an import the table refuses, on an import
circle between modules, on a facade nothing uses, and on a package whose ``__init__``
docstring names other floors than the table in its ``May import:`` line.
"""

from __future__ import annotations

#: Modules every floor may import: the version and the lazy-export helper.
GROUND: frozenset[str] = frozenset({"evalkit._version", "evalkit._lazy"})

#: floor (a module or package of ``evalkit``, or ``evalkit_*`` for every plugin
#: distribution) -> the floors it may import besides itself and the ground
LAYERS: dict[str, tuple[str, ...]] = {
    "evalkit._version": (),
    "evalkit._lazy": (),
    "evalkit.layers": (),
    "evalkit.io": (),
    # names in messages quoted as the tables print them (io.error_messages)
    "evalkit.stats": ("evalkit.io",),
    # tables as columns, DataFrames and notebook HTML, for every floor that has a table
    "evalkit.tables": ("evalkit.io",),
    "evalkit.core": ("evalkit.io",),
    "evalkit.plugins": ("evalkit.io", "evalkit.core"),
    "evalkit.data": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                     "evalkit.tables"),
    "evalkit.metrics": ("evalkit.core", "evalkit.plugins", "evalkit.data"),
    "evalkit.execute": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                        "evalkit.data", "evalkit.metrics"),
    "evalkit.report": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                       "evalkit.data", "evalkit.tables"),
    "evalkit.comparison": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                           "evalkit.data", "evalkit.execute", "evalkit.report",
                           "evalkit.tables"),
    "evalkit.gate": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                     "evalkit.data", "evalkit.report", "evalkit.tables"),
    # `evalkit.runner.METRICS` and `evalkit.runner.run`, where version 0.2 documented them
    "evalkit.runner": ("evalkit.execute",),
    "evalkit.builtins": ("evalkit.core", "evalkit.data", "evalkit.execute", "evalkit.report"),
    # the JSON Schemas of the three declarative files, from the models on their floors
    "evalkit.file_schemas": ("evalkit.data", "evalkit.execute", "evalkit.gate"),
    "evalkit.testing": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                        "evalkit.data", "evalkit.execute", "evalkit.report"),
    "evalkit.cli": ("evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                    "evalkit.data", "evalkit.execute", "evalkit.report", "evalkit.comparison",
                    "evalkit.gate", "evalkit.file_schemas"),
    # the package itself: its top-level names, each imported on first use from its floor
    "evalkit": ("evalkit.stats", "evalkit.core", "evalkit.plugins", "evalkit.data",
                "evalkit.execute", "evalkit.comparison", "evalkit.gate"),
    # an in-repo plugin talks to the kernel through its hooks and public records (a run
    # history compares stored runs and reads the gate's fingerprints); a plugin's command
    # prints and fails as the kernel's do (the command line's errors and output)
    "evalkit_*": ("evalkit", "evalkit.io", "evalkit.stats", "evalkit.core", "evalkit.plugins",
                  "evalkit.data", "evalkit.execute", "evalkit.report", "evalkit.tables",
                  "evalkit.comparison", "evalkit.gate", "evalkit.cli"),
}

#: (importing module or package, imported module) -> why it is imported against the table.
#: The kernel imports a plugin only for the three import paths version 0.2 documented,
#: each resolved on first use and naming the distribution to install when it is missing;
#: everything else a plugin gives the kernel comes through its hooks and the records they
#: return (docs/plugins.md). The one other entry is the kernel's command table, read by
#: the built-ins.
FACADES: dict[tuple[str, str], str] = {
    ("evalkit", "evalkit_http"):
        "`from evalkit import HttpTarget`: the HTTP target is the evalkit-http plugin's",
    ("evalkit.metrics", "evalkit_judge"):
        "`evalkit.metrics.LLMJudge`: the judge is the evalkit-judge plugin's",
    ("evalkit.metrics.core", "evalkit_retrieval"):
        "`evalkit.metrics.core` (beside `evalkit.metrics.retrieval`, the kernel's adapters): "
        "the ranking functions are the evalkit-retrieval plugin's",
    ("evalkit.builtins", "evalkit.cli.commands"):
        "the kernel's commands are the built-ins' command records, so that a plugin's "
        "command of the same name is a conflict naming both (the table itself stays where "
        "`evalkit --help` reads it without the registry)",
}


def floor_of(module: str) -> str | None:
    """The floor of ``module``: the longest key of :data:`LAYERS` it is or lies in
    (``evalkit_*`` for a plugin distribution), or None when the table lacks it."""
    if module.startswith("evalkit_"):
        return "evalkit_*"
    parts = module.split(".")
    for i in range(len(parts), 1, -1):
        key = ".".join(parts[:i])
        if key in LAYERS:
            return key
    return "evalkit" if module == "evalkit" else None
