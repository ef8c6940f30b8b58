"""The documentation site: ``mkdocs build --strict`` passes, and the API reference
is complete and documented.

* The real site is built into a temporary folder with the project's ``mkdocs.yml``
  (MkDocs, Material, mkdocstrings: the dev extra); a broken link anywhere fails the build,
  which a small site built beside it shows for a link inside ``docs/`` and one outside.
* Every public name (the ``__all__`` of ``evalkit``, of every module the reference
  documents, and of the in-repository plugins' packages) must appear in ``docs/api/`` and
  carry a docstring as the site reads it (griffe, mkdocstrings' loader): for classes, every
  public method and property too.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

REPO = Path(__file__).resolve().parents[1]
API = REPO / "docs" / "api"
SOURCES = [REPO / "src", *sorted((REPO / "plugins").glob("*/src"))]
#: The in-repository plugins' packages: their names are public API too.
PLUGIN_PACKAGES = ("evalkit_retrieval", "evalkit_judge", "evalkit_http", "evalkit_report_html",
                   "evalkit_report_tables", "evalkit_text", "evalkit_history")
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.MULTILINE)


def mkdocs(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mkdocs", reason="the docs site needs the dev extra (mkdocs)")
    pytest.importorskip("material", reason="the docs site needs mkdocs-material")
    pytest.importorskip("mkdocstrings_handlers.python",
                        reason="the docs site needs mkdocstrings-python")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_the_site_builds_strict_offline_with_the_api_reference(tmp_path: Path) -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["name"] == "material" and config["theme"]["font"] is False
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]]
    assert not {"privacy", "social", "material/privacy", "material/social"} & set(plugins)
    assert config["strict"] is True
    site = tmp_path / "site"
    proc = mkdocs("build", "--strict", "--site-dir", str(site))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr
    # every page of docs/ is a chapter of the site
    for page in (REPO / "docs").glob("*.md"):
        name = "index.html" if page.stem == "index" else f"{page.stem}/index.html"
        assert (site / name).is_file(), page
    api = (site / "api" / "evalkit" / "index.html").read_text(encoding="utf-8")
    for anchor in ("evalkit.evaluate_run", "evalkit.RunResult.to_pandas",
                   "evalkit.Comparison.to_latex", "evalkit.GateReport.to_pandas"):
        assert f'id="{anchor}"' in api, anchor
    # the repository files the chapters link to are pages of the site
    assert (site / "repo" / "index.html").is_file()  # the README
    assert (site / "repo" / "examples" / "gate" / "index.html").is_file()
    assert (site / "images" / "report.png").is_file()
    for html in site.rglob("*.html"):  # nothing the pages would fetch from the web
        text = html.read_text(encoding="utf-8", errors="replace")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """A small site with the project's hook: one broken link inside docs/, one outside."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "README.md").write_text("# readme\n\nBack to [the docs](docs/index.md).\n")
    hook = (REPO / "docs" / "hooks" / "links.py").read_text(encoding="utf-8")
    (tmp_path / "hooks.py").write_text(hook)
    validation = yaml.safe_load((REPO / "mkdocs.yml").read_text())["validation"]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({
        "site_name": "t", "theme": {"name": "material", "font": False},
        "hooks": ["hooks.py"], "plugins": ["search"], "validation": validation}))
    good = "# home\n\nSee [the README](../README.md) and [a page](other.md#part).\n"
    (tmp_path / "docs" / "index.md").write_text(good)
    (tmp_path / "docs" / "other.md").write_text("# other\n\n## part\n")
    proc = mkdocs("build", "--strict", "-d", str(tmp_path / "s1"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s1" / "repo" / "index.html").is_file()
    for broken, said in (("[gone](missing.md)", "missing.md"),
                         ("[anchor](other.md#nowhere)", "nowhere"),
                         ("[outside](../examples/nope/)", "examples/nope/README.md")):
        (tmp_path / "docs" / "index.md").write_text(good + f"\n{broken}\n")
        proc = mkdocs("build", "--strict", "-d", str(tmp_path / "s2"), cwd=tmp_path)
        assert proc.returncode != 0, broken
        assert said in proc.stderr, proc.stderr


# ----------------------------------------------------------------- docstrings
def directives() -> list[str]:
    """Every ``::: path`` of the API reference, in page order."""
    return [p for page in sorted(API.glob("*.md"))
            for p in DIRECTIVE.findall(page.read_text(encoding="utf-8"))]


def documented_modules() -> list[str]:
    """``evalkit``, the in-repo plugins' packages, and every module a directive names an
    object of."""
    out = ["evalkit", *PLUGIN_PACKAGES]
    for path in directives():
        module = path.rpartition(".")[0]
        if module not in out:
            out.append(module)
    return out


def public_names(module: str) -> list[str]:
    mod = importlib.import_module(module)
    return [n for n in getattr(mod, "__all__", []) if n != "__version__"]


@pytest.fixture(scope="module")
def griffe_objects() -> Any:
    griffe = pytest.importorskip("griffe", reason="the docstring test reads docstrings as "
                                 "the site does, with griffe (mkdocstrings-python)")
    extensions = griffe.load_extensions(str(REPO / "docs" / "hooks" / "comment_docstrings.py"))
    loader = griffe.GriffeLoader(search_paths=[str(p) for p in SOURCES], extensions=extensions)
    for package in ("evalkit", *PLUGIN_PACKAGES):
        loader.load(package)
    loader.resolve_aliases(implicit=True, external=False)
    return loader.modules_collection


def test_every_public_name_is_in_the_reference() -> None:
    listed = set(directives())
    missing = [f"{m}.{n}" for m in documented_modules() for n in public_names(m)
               if f"{m}.{n}" not in listed and not _listed_elsewhere(m, n, listed)]
    assert not missing, ("public names missing from docs/api/ (add a `::: name` line): "
                         f"{missing}")
    for path in listed:  # and every line of the reference names something that exists
        module, _, name = path.rpartition(".")
        assert hasattr(importlib.import_module(module), name), path


def _listed_elsewhere(module: str, name: str, listed: set[str]) -> bool:
    """A re-export documented under another public path (``evalkit.compare`` and
    ``evalkit.comparison.compare`` are one function)."""
    obj = getattr(importlib.import_module(module), name)
    for path in listed:
        mod, _, other = path.rpartition(".")
        if other == name and getattr(importlib.import_module(mod), other, None) is obj:
            return True
    return False


def _members(obj: Any) -> list[Any]:
    """The public methods and properties a class defines itself (not inherited)."""
    out = []
    for name, member in obj.members.items():
        if name.startswith("_") or member.is_alias:
            continue
        if member.is_function or (member.is_attribute and "property" in member.labels):
            out.append(member)
    return out


def _griffe_object(objects: Any, module: str, name: str) -> Any:
    """The object griffe loaded for ``module.name``; for a name resolved at run time (a
    plugin's class re-exported by ``evalkit``), the one at its defining module."""
    try:
        return objects[f"{module}.{name}"]
    except KeyError:
        pass
    obj = getattr(importlib.import_module(module), name)
    defined = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', name)}"
    try:
        return objects[defined]
    except KeyError:
        return None


def test_every_public_name_has_a_docstring(griffe_objects: Any) -> None:
    undocumented: list[str] = []
    for module in documented_modules():
        mod = griffe_objects[module]
        if not (mod.docstring and mod.docstring.value.strip()):
            undocumented.append(module)
        for name in public_names(module):
            obj = _griffe_object(griffe_objects, module, name)
            if obj is None:
                undocumented.append(f"{module}.{name} (not found by griffe)")
                continue
            target = obj.final_target if obj.is_alias else obj
            if not (target.docstring and target.docstring.value.strip()):
                undocumented.append(f"{module}.{name}")
            if target.is_class:
                undocumented += [f"{module}.{name}.{m.name}" for m in _members(target)
                                 if not (m.docstring and m.docstring.value.strip())]
    assert not undocumented, f"{len(undocumented)} public names without a docstring: " + (
        ", ".join(sorted(set(undocumented))))
