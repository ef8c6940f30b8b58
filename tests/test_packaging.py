"""Our distributions, and what ``pip install paired-evalkit`` installs.

The first tests read the ``pyproject.toml`` files: every distribution of the repository
carries one version and depends on the others at exactly that version; the distribution
users install (``packages/paired-evalkit``) brings the kernel and the default plugins and
its extras the others, as the READMEs and the kernel's messages say.

The wheel tests build our wheels (``pip wheel --no-deps``), install ``paired-evalkit``
from them into a fresh virtual environment (never editable) and run from it ``evalkit
--version``, ``evalkit plugins list --check``, the snippets of the 0.2.0 README
(``tests/test_seed_snippets.py`` and ``tests/test_seed_checks.py``, after adding pytest and
pytrec_eval), the main job (``examples/vaswani/main.py``, after ``pip install
'paired-evalkit[html]'``) and last ``paired-evalkit[all]``. Our distributions come only
from the local wheels: a constraints file pins each to its wheel's file URL, and each one
installed must record that URL. The package index pip is configured with is used for
third-party packages only (the dependencies, a current pip and the build backend,
hatchling), as for a user; pip's cache makes a second run faster, and ``--no-compile``
skips writing bytecode for the thousands of modules of numpy, scipy, pandas and the
others (nothing here depends on it). One environment serves the whole module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: the wheel tests take minutes (one environment, built step by step): under pytest-xdist
#: they start before the others (tests/conftest.py) instead of finishing last
pytestmark = pytest.mark.schedule_first

REPO = Path(__file__).resolve().parents[1]
USER_DIST = REPO / "packages" / "paired-evalkit"
#: Every distribution of the repository: the kernel at the root, the plugins, and the one
#: users install.
PROJECTS = [REPO, *sorted(p.parent for p in REPO.glob("plugins/*/pyproject.toml")), USER_DIST]
OURS = {
    "paired-evalkit", "paired-evalkit-core", "evalkit-retrieval", "evalkit-http",
    "evalkit-judge", "evalkit-report-html", "evalkit-report-tables", "evalkit-text",
    "evalkit-dask", "evalkit-history", "evalkit-mlflow",
}
DEFAULT_INSTALL = {"paired-evalkit", "paired-evalkit-core", "evalkit-retrieval",
                   "evalkit-http", "evalkit-judge", "evalkit-report-tables", "evalkit-history"}
EXTRAS = {"html": "evalkit-report-html", "text": "evalkit-text", "dask": "evalkit-dask",
          "mlflow": "evalkit-mlflow"}


# ------------------------------------------------------------------ the pyproject files
def project(folder: Path) -> dict[str, Any]:
    with (folder / "pyproject.toml").open("rb") as f:
        table: dict[str, Any] = tomllib.load(f)
    return table


def declared_version(folder: Path) -> str:
    """``[project] version``, or the ``__version__`` of the file hatchling reads it from."""
    table = project(folder)
    if "version" in table["project"]:
        return str(table["project"]["version"])
    assert "version" in table["project"]["dynamic"], folder
    source = folder / table["tool"]["hatch"]["version"]["path"]
    m = re.search(r'^__version__ = "([^"]+)"$', source.read_text(encoding="utf-8"), re.M)
    assert m is not None, source
    return m.group(1)


def requirements(folder: Path) -> dict[str, list[Requirement]]:
    """``{"": dependencies, extra: its requirements}`` of one project."""
    meta = project(folder)["project"]
    out = {"": [Requirement(r) for r in meta.get("dependencies", [])]}
    for extra, reqs in meta.get("optional-dependencies", {}).items():
        out[extra] = [Requirement(r) for r in reqs]
    return out


def name_of(folder: Path) -> str:
    return canonicalize_name(project(folder)["project"]["name"])


def test_every_distribution_of_the_repository_carries_one_version() -> None:
    versions = {name_of(folder): declared_version(folder) for folder in PROJECTS}
    assert set(versions) == OURS
    assert len(set(versions.values())) == 1, versions


def test_our_distributions_depend_on_each_other_at_exactly_that_version() -> None:
    version = declared_version(REPO)
    for folder in PROJECTS:
        for extra, reqs in requirements(folder).items():
            for req in reqs:
                if canonicalize_name(req.name) not in OURS:
                    continue
                if canonicalize_name(req.name) == name_of(folder):  # [all]: its own extras
                    assert not req.specifier and req.extras, (folder, extra, str(req))
                else:
                    assert str(req.specifier) == f"=={version}", (folder, extra, str(req))


def test_the_plugins_depend_on_the_kernel_not_on_what_users_install() -> None:
    for folder in PROJECTS[1:-1]:
        names = {canonicalize_name(r.name) for r in requirements(folder)[""]}
        assert "paired-evalkit-core" in names and "paired-evalkit" not in names, folder


def test_paired_evalkit_brings_the_kernel_and_the_default_plugins_and_extras_the_rest() -> None:
    reqs = requirements(USER_DIST)
    assert {canonicalize_name(r.name) for r in reqs[""]} == DEFAULT_INSTALL - {"paired-evalkit"}
    for extra, dist in EXTRAS.items():
        assert [canonicalize_name(r.name) for r in reqs[extra]] == [dist]
    (pandas,) = reqs["pandas"]
    assert (pandas.name, pandas.extras) == ("paired-evalkit-core", {"pandas"})
    assert "pandas" in requirements(REPO)["pandas"][0].name
    (irds,) = reqs["irds"]
    assert (irds.name, irds.extras) == ("evalkit-retrieval", {"irds"})
    assert "irds" in requirements(REPO / "plugins" / "evalkit-retrieval")
    (everything,) = reqs["all"]
    assert everything.name == "paired-evalkit"
    assert everything.extras == set(reqs) - {"", "all"} == {*EXTRAS, "pandas", "irds"}
    # every plugin of the repository comes with one or the other
    plugins = {name_of(folder) for folder in PROJECTS[1:-1]}
    assert plugins == (DEFAULT_INSTALL - {"paired-evalkit", "paired-evalkit-core"}) | set(
        EXTRAS.values())


def test_the_user_distribution_holds_no_code() -> None:
    wheel = project(USER_DIST)["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel == {"bypass-selection": True}
    assert not [p for p in USER_DIST.rglob("*.py")]


def test_a_missing_plugin_names_the_command_that_installs_it() -> None:
    from evalkit.plugins.loading import missing_plugin

    for folder in PROJECTS[1:-1]:
        dist = name_of(folder)
        extra = next((e for e, d in EXTRAS.items() if d == dist), None)
        command = (f"pip install 'paired-evalkit[{extra}]'" if extra
                   else "pip install paired-evalkit")
        message = str(missing_plugin(dist, "x", ImportError("no module named y")))
        assert f"install it with `{command}` (or `pip install {dist}`" in message, message
        assert f"`pip install -e plugins/{dist}`" in message


@pytest.mark.parametrize("readme", [REPO / "README.md", USER_DIST / "README.md"],
                         ids=["README.md", "packages/paired-evalkit/README.md"])
def test_the_readmes_say_what_each_extra_brings(readme: Path) -> None:
    """The README's Install section, and the README of the distribution users install
    (its page on the package index)."""
    text = readme.read_text(encoding="utf-8")
    install = text.split("\n## Install\n", 1)[-1].split("\n## ", 1)[0]
    for extra in requirements(USER_DIST):
        if extra:
            assert f"`paired-evalkit[{extra}]`" in install, extra
    for dist in (*EXTRAS.values(), "evalkit-retrieval", "evalkit-http", "evalkit-judge",
                 "paired-evalkit-core"):
        assert f"`{dist}`" in install, dist
    assert "pip install paired-evalkit\n" in install


def test_requirements_install_every_distribution_of_the_repository_from_the_checkout() -> None:
    lines = (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
    editable = {(REPO / ln.removeprefix("-e ").strip()).resolve() for ln in lines
                if ln.startswith("-e ")}
    assert editable == {folder.resolve() for folder in PROJECTS}


# ------------------------------------------------------------------ the wheels, installed
def wheel_metadata(path: Path) -> Any:
    with zipfile.ZipFile(path) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(z.read(name).decode("utf-8"))


def run(cmd: list[str | Path], *, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd,
                          env=env)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def pip(tools: Path, python: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The pip of the ``tools`` interpreter acting on the environment of ``python``."""
    return run([tools, "-m", "pip", "--python", python, *args, "-q",
                "--disable-pip-version-check"])


def fresh_venv(path: Path) -> Path:
    # no pip of its own: the tools' pip installs into it (``pip --python``)
    run([sys.executable, "-m", "venv", "--without-pip", path])
    return path / "bin" / "python"


PROBE = """
import importlib.metadata as md, json, sys
from packaging.utils import canonicalize_name
ours = {}
for dist in md.distributions():
    name = canonicalize_name(dist.metadata["Name"])
    if name in OURS or name == "evalkit":
        url = json.loads(dist.read_text("direct_url.json") or "{}").get("url")
        ours[name] = {"version": dist.version, "url": url}
others = sorted(canonicalize_name(d.metadata["Name"]) for d in md.distributions())
import evalkit
print(json.dumps({"ours": ours, "others": others, "evalkit": evalkit.__file__,
                  "owner": md.packages_distributions()["evalkit"], "prefix": sys.prefix}))
"""


@dataclass
class UserEnv:
    """The fresh environment, our wheels, and what each install left in it."""

    python: Path
    tools: Path
    wheels: dict[str, Path]
    constraints: Path
    home: Path
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def bin(self) -> Path:
        return self.python.parent

    @property
    def env(self) -> dict[str, str]:
        """The environment of a user who activated it."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return env

    def install(self, requirement: str) -> dict[str, Any]:
        """``pip install REQUIREMENT``, ours pinned to our wheels; what is installed then."""
        self.pip("install", "--no-compile", "-c", self.constraints, requirement)
        self.snapshots[requirement] = self.probe()
        return self.snapshots[requirement]

    def pip(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return pip(self.tools, self.python, *args)

    def probe(self) -> dict[str, Any]:
        code = f"OURS = {sorted(OURS)!r}\n{PROBE}"
        out = run([self.python, "-c", code], cwd=REPO, env=self.env).stdout
        result: dict[str, Any] = json.loads(out)
        result["listing"] = self.evalkit("plugins", "list", "--check", "--json")
        return result

    def evalkit(self, *args: str) -> Any:
        """``evalkit ARGS`` from a folder without a pyproject.toml (the JSON it prints)."""
        out = run([self.bin / "evalkit", *args], cwd=self.home, env=self.env).stdout
        return json.loads(out) if "--json" in args else out


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An environment with a current pip (as a user's; pip 23.2 cannot combine a
    constraint's file URL with an extra) and every project's build requirements."""
    python = fresh_venv(tmp_path_factory.mktemp("tools") / "venv")
    build_requires = {r for folder in PROJECTS
                      for r in project(folder)["build-system"]["requires"]}
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile",
         "--disable-pip-version-check", "pip>=24", *sorted(build_requires)])
    return python


@pytest.fixture(scope="module")
def wheels(tools: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{distribution: wheel}``, built without build isolation in the tools' environment."""
    out = tmp_path_factory.mktemp("wheels")
    pip(tools, tools, "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", out,
        *PROJECTS)
    built = {str(canonicalize_name(wheel_metadata(w)["Name"])): w for w in out.glob("*.whl")}
    assert set(built) == OURS
    return built


@pytest.fixture(scope="module")
def user_env(tools: Path, wheels: dict[str, Path],
             tmp_path_factory: pytest.TempPathFactory) -> UserEnv:
    """A fresh environment after ``pip install paired-evalkit``."""
    root = tmp_path_factory.mktemp("user-env")
    constraints = root / "ours.txt"
    constraints.write_text("".join(f"{name} @ {path.as_uri()}\n"
                                   for name, path in sorted(wheels.items())))
    (root / "home").mkdir()
    env = UserEnv(fresh_venv(root / "venv"), tools, wheels, constraints, root / "home")
    env.install("paired-evalkit")
    return env


@pytest.fixture(scope="module")
def html_env(user_env: UserEnv) -> UserEnv:
    user_env.install("paired-evalkit[html]")
    return user_env


@pytest.fixture(scope="module")
def all_env(html_env: UserEnv) -> UserEnv:
    html_env.install("paired-evalkit[all]")
    return html_env


def assert_ours_from_the_wheels(env: UserEnv, snapshot: dict[str, Any], expected: set[str]
                                ) -> None:
    assert set(snapshot["ours"]) == expected  # and never PyPI's unrelated `evalkit`
    for name, info in snapshot["ours"].items():
        assert info["url"] == env.wheels[name].as_uri(), (name, info)
    assert Path(snapshot["evalkit"]).is_relative_to(snapshot["prefix"])
    assert snapshot["owner"] == ["paired-evalkit-core"]
    loaded = {p["distribution"]: p for p in snapshot["listing"]["plugins"]}
    assert set(loaded) == expected - {"paired-evalkit"}
    for dist, plugin in loaded.items():
        assert plugin["status"] == "loaded" and not plugin["editable"], plugin
        assert plugin["origin"] == ("kernel" if dist == "paired-evalkit-core" else "in-repo")
        assert Path(plugin["location"]).is_relative_to(snapshot["prefix"]), plugin


def test_the_wheels_carry_one_version_and_no_shared_file(wheels: dict[str, Path]) -> None:
    """No two wheels hold the same file, so installing or removing one never touches
    another's; the user distribution's wheel holds metadata only."""
    assert len({wheel_metadata(w)["Version"] for w in wheels.values()}) == 1
    owners: dict[str, str] = {}
    for name, path in wheels.items():
        with zipfile.ZipFile(path) as z:
            files = [n for n in z.namelist() if ".dist-info/" not in n]
        if name == "paired-evalkit":
            assert files == []
        for f in files:
            assert f not in owners, (f, name, owners.get(f))
            owners[f] = name
    assert {f.split("/")[0] for f, n in owners.items() if n == "paired-evalkit-core"} == {
        "evalkit"}


def test_pip_install_paired_evalkit_brings_the_kernel_and_the_default_plugins(
    user_env: UserEnv,
) -> None:
    snapshot = user_env.snapshots["paired-evalkit"]
    assert_ours_from_the_wheels(user_env, snapshot, DEFAULT_INSTALL)
    listing = snapshot["listing"]
    assert listing["conflicts"] == [] and listing["entry_point_conflicts"] == []
    names = {n["name"]: n["distribution"] for n in listing["names"]}
    assert names["recall@k"] == names["ndcg@k"] == "evalkit-retrieval"
    assert names["http"] == "evalkit-http"
    user_env.pip("check")
    version = project(USER_DIST)["project"]["version"]
    assert user_env.evalkit("--version") == f"evalkit {version} (paired-evalkit-core)\n"
    assert "plugins" in user_env.evalkit("--help")


def test_the_seed_snippets_run_from_the_wheels(user_env: UserEnv) -> None:
    # the test tools, from the index (pytrec_eval: the quickstart's independent numbers)
    # and pytest-xdist, which the repository's pytest options (pyproject.toml) name; the
    # two files run in one process (-n 0)
    user_env.pip("install", "--no-compile", "pytest>=8", "pytest-xdist>=3.5",
                 "pytrec-eval-terrier>=0.5.6")
    proc = run([user_env.python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                "-n", "0",
                "tests/test_seed_snippets.py", "tests/test_seed_checks.py"],
               cwd=REPO, env=user_env.env)
    assert " passed" in proc.stdout and "failed" not in proc.stdout, proc.stdout
    # nothing is skipped for want of a plugin or pytrec_eval (only the comparison with the
    # 0.2.0 README's text, when that file is not next to the repository)
    skipped = [ln for ln in proc.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert all("the seed README is not reachable" in ln for ln in skipped), skipped
    # what they imported was the environment's
    assert user_env.probe()["evalkit"] == user_env.snapshots["paired-evalkit"]["evalkit"]


def test_the_main_job_runs_from_the_wheels_with_the_html_extra(
    html_env: UserEnv, tmp_path: Path
) -> None:
    snapshot = html_env.snapshots["paired-evalkit[html]"]
    assert_ours_from_the_wheels(html_env, snapshot, DEFAULT_INSTALL | {"evalkit-report-html"})
    proc = run([html_env.python, "examples/vaswani/main.py", "--out", tmp_path],
               cwd=REPO, env=html_env.env)
    # the README's table (10,000 resamples, seed 42), line for line
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = re.search(r"```\n(paired bootstrap, 10,000 resamples.*?)```", readme, re.S)
    assert table is not None
    assert table.group(1) in proc.stdout, proc.stdout
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / "table.tex").is_file()


def test_paired_evalkit_all_installs_every_plugin(all_env: UserEnv) -> None:
    snapshot = all_env.snapshots["paired-evalkit[all]"]
    assert_ours_from_the_wheels(all_env, snapshot, OURS)
    assert {"pandas", "pyarrow"} <= set(snapshot["others"])
    all_env.pip("check")
