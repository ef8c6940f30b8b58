"""The floors of the house hold: every import of src/ and plugins/*/src is one the table of
layers (evalkit.layers) allows, no module imports itself round a circle, and each package
says in its docstring what it may import, as the table does.

Imports are read with ast, inside functions and under `if TYPE_CHECKING:` too (an import
that never runs still says that the two modules know each other's types), and the names a
package exports lazily (its `_LAZY` or `_EXPORTS` table) count as imports of their modules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import layers

REPO = Path(__file__).resolve().parents[1]
ROOTS = [REPO / "src", *sorted((REPO / "plugins").glob("*/src"))]


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for root in ROOTS:
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = modules()


def imported_names(name: str, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, dotted name)`` of every import of the module ``name`` at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if (isinstance(target, ast.Name) and target.id in ("_LAZY", "_EXPORTS")
                    and isinstance(node.value, ast.Dict)):
                for value in node.value.values:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        yield value.lineno, value.value


def resolve(dotted: str) -> str | None:
    """The module of ours that ``dotted`` names (the longest known prefix), or None for a
    module of another project."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in MODULES:
            return candidate
    return None


def edges() -> dict[str, dict[str, int]]:
    """module -> {imported module of ours: first line}; a package importing its own
    submodules is not an edge (as in ../shared/tools/imports.py)."""
    graph: dict[str, dict[str, int]] = {}
    for name, path in MODULES.items():
        out: dict[str, int] = {}
        for line, dotted in imported_names(name, path):
            target = resolve(dotted)
            if target is None or target == name or target.startswith(name + "."):
                continue
            if name.startswith(target + ".") and dotted == target:
                continue  # `import a.b.c` binds `a`: not an import of the package a
            out.setdefault(target, line)
        graph[name] = out
    return graph


GRAPH = edges()


def test_imports_under_type_checking_and_inside_functions_count(tmp_path: Path) -> None:
    source = tmp_path / "views.py"
    source.write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from evalkit.gate.verdicts import GateReport\n"
        "def f() -> None:\n"
        "    from evalkit.comparison import model\n", encoding="utf-8")
    found = dict((dotted, line) for line, dotted in imported_names("evalkit.report.x", source))
    assert found["evalkit.gate.verdicts.GateReport"] == 4
    assert found["evalkit.comparison.model"] == 6


def _facade(module: str, target: str) -> tuple[str, str] | None:
    for importer, imported in layers.FACADES:
        if (module == importer or module.startswith(importer + ".")) and (
                target == imported or target.startswith(imported + ".")):
            return importer, imported
    return None


def test_every_module_has_a_floor() -> None:
    missing = sorted(m for m in MODULES if layers.floor_of(m) is None)
    assert missing == [], f"add these to evalkit.layers.LAYERS: {missing}"


def test_the_table_of_floors_is_itself_without_a_circle() -> None:
    seen: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(floor: str, path: list[str]) -> None:
        if seen.get(floor) == 2:
            return
        assert seen.get(floor) != 1, f"the table of layers has a circle: {[*path, floor]}"
        seen[floor] = 1
        for lower in layers.LAYERS[floor]:
            assert lower in layers.LAYERS, f"{floor} may import unknown floor {lower}"
            visit(lower, [*path, floor])
        seen[floor] = 2

    for floor in layers.LAYERS:
        visit(floor, [])


def test_no_import_of_a_floor_the_table_does_not_allow() -> None:
    refused = []
    for module, targets in GRAPH.items():
        floor = layers.floor_of(module)
        assert floor is not None
        allowed = {floor, *layers.LAYERS[floor]}
        for target, line in targets.items():
            target_floor = layers.floor_of(target)
            if target in layers.GROUND or target_floor in allowed:
                continue
            if target_floor == "evalkit_*" and target.split(".")[0] == module.split(".")[0]:
                continue  # a plugin's own modules
            if _facade(module, target) is None:
                refused.append(f"{MODULES[module].relative_to(REPO)}:{line}: {module} imports "
                               f"{target} (floor {target_floor}, not among {sorted(allowed)})")
    assert refused == [], "\n".join(refused)


#: The kernel's only imports of a plugin: the import paths version 0.2 documented.
SEED_FACADES = {("evalkit", "evalkit_http"), ("evalkit.metrics", "evalkit_judge"),
                ("evalkit.metrics.core", "evalkit_retrieval")}


def test_the_kernel_imports_a_plugin_only_through_the_three_seed_facades() -> None:
    reaching = {(module, target.split(".")[0]) for module, targets in GRAPH.items()
                if not module.startswith("evalkit_") for target in targets
                if target.startswith("evalkit_")}
    assert reaching == SEED_FACADES
    assert {key for key in layers.FACADES if key[1].startswith("evalkit_")} == SEED_FACADES


def test_the_kernel_imports_no_plugin_by_the_name_of_its_module() -> None:
    """``importlib.import_module("evalkit_x...")`` would be an import the graph misses."""
    named = []
    for name, path in MODULES.items():
        if name.startswith("evalkit_"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(
                    ("import_module", "__import__")) and node.args and isinstance(
                    node.args[0], ast.Constant) and str(node.args[0].value).startswith(
                    "evalkit_"):
                named.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert named == []


def test_every_facade_is_still_used() -> None:
    used = {_facade(m, t) for m, targets in GRAPH.items() for t in targets}
    assert set(layers.FACADES) - used == set()


def test_no_import_circle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert circles == []


def test_every_import_of_evalkit_names_a_module_or_a_top_level_name() -> None:
    """``import evalkit.x`` and ``from evalkit.x import y`` name a module of src/, and
    ``from evalkit import y`` a module or a name ``evalkit`` exports."""
    import evalkit

    unknown = []
    for name, path in MODULES.items():
        for line, dotted in imported_names(name, path):
            if resolve(dotted) == "evalkit" and \
                    dotted.removeprefix("evalkit.") not in evalkit.__all__:
                unknown.append(f"{path.relative_to(REPO)}:{line}: {dotted}")
    assert unknown == []


PACKAGES = sorted(m for m, p in MODULES.items()
                  if p.name == "__init__.py" and m.startswith("evalkit.") and m.count(".") == 1)


def _short(floor: str) -> str:
    return floor.removeprefix("evalkit.")


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_says_what_it_may_import(package: str) -> None:
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8"))) or ""
    assert doc, f"{package} has no docstring saying what it holds"
    found = re.search(r"^May import:(.*?)(?:\.\s|\.$|\(|$)", doc, re.M | re.S)
    assert found, f"{package}'s docstring has no 'May import:' line"
    said = {w for w in re.findall(r"[\w]+", found.group(1)) if w not in ("nothing", "of",
                                                                        "evalkit", "the")}
    assert said == {_short(f) for f in layers.LAYERS[package]}, package
