"""Plugin discovery, the registry's conflict rules, [tool.evalkit] selection and
`evalkit plugins list`, against fake distributions made in a temporary folder.

A fake distribution is a ``<name>-<version>.dist-info`` folder (METADATA and
entry_points.txt) beside its plugin module; the folder is put on ``sys.path`` for one test
(monkeypatch restores it) and the fake modules are removed from ``sys.modules`` after it.
Every test uses its own ``Registry``; none touches the process-wide one, or restores it.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.core.pyproject_config import (
    ConfigError,
    PluginSelection,
    plugin_selection,
    read_tool_config,
    split_env_list,
)
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import MetricSpec
from evalkit.plugins.default import default_registry, set_config, use_registry
from evalkit.plugins.discovery import ENTRY_POINT_GROUP, PluginSelectionError
from evalkit.plugins.listing import plugin_report
from evalkit.plugins.loading import load_plugins

REPO = Path(__file__).resolve().parents[1]

# These tests load broken plugins on purpose and read their status from the registry; the
# warning each failed plugin also raises is tested in test_plugins_messages.py.
pytestmark = pytest.mark.filterwarnings("ignore::evalkit.plugins.PluginLoadWarning")
EXAMPLE = REPO / "examples" / "evalkit-example-plugin"

PLUGIN_SOURCE = """
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec


def shared(response, case):
    return {shared_value}


def own(response, case):
    return 0.5


@hookimpl
def evalkit_register_metrics():
    return [
        MetricSpec("overlap", shared, higher_is_better=True),
        MetricSpec("{own_name}", own, higher_is_better=False, version="{definition}"),
    ]
"""


class Fakes:
    """Makes fake distributions under one temporary folder per test."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.modules: list[str] = []
        self.on_path: set[Path] = set()

    def dist(
        self,
        name: str,
        version: str,
        entry_points: dict[str, str],
        modules: dict[str, str],
        *,
        folder: str = "site",
        editable: Path | None = None,
    ) -> Path:
        site = self.root / folder
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = [f"[{ENTRY_POINT_GROUP}]"] + [f"{k} = {v}" for k, v in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if editable is not None:
            (info / "direct_url.json").write_text(
                json.dumps({"url": editable.as_uri(), "dir_info": {"editable": True}}),
                encoding="utf-8",
            )
        for module, source in modules.items():
            (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
            self.modules.append(module)
        if site not in self.on_path:
            self.monkeypatch.syspath_prepend(str(site))
            self.on_path.add(site)
        return site

    def plugin(self, dist: str, version: str, module: str, *, own_name: str,
               shared_value: float = 1.0, ep_name: str | None = None,
               folder: str = "site", definition: str = "1") -> Path:
        source = PLUGIN_SOURCE.format(own_name=own_name, shared_value=shared_value,
                                      definition=definition)
        return self.dist(dist, version, {ep_name or module: module}, {module: source},
                         folder=folder)

    def entry_points(self, *folders: str) -> list[metadata.EntryPoint]:
        """Entry points of the fake folders only (no dedupe), in folder order."""
        paths = [str(self.root / f) for f in folders or ("site",)]
        return [ep for d in metadata.distributions(path=paths)
                for ep in d.entry_points.select(group=ENTRY_POINT_GROUP)]

    def cleanup(self) -> None:
        for module in self.modules:
            sys.modules.pop(module, None)


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fakes]:
    monkeypatch.delenv("EVALKIT_PLUGINS", raising=False)
    f = Fakes(tmp_path, monkeypatch)
    yield f
    f.cleanup()


def by_name(reg: Registry) -> dict[str, Any]:
    return {p.name: p for p in reg.plugins}


EVERYTHING = PluginSelection.everything()


# --------------------------------------------------------------- discovery rules
def test_broken_import_is_reported_with_distribution_version_and_error(fakes: Fakes) -> None:
    fakes.plugin("fake-good", "1.0", "fake_good", own_name="good_only")
    fakes.dist("fake-broken", "2.3.4", {"broken": "fake_broken"},
               {"fake_broken": "import fake_dependency_that_is_absent\n"})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    plugins = by_name(reg)
    broken = plugins["broken"]
    assert (broken.status, broken.distribution, broken.version) == ("failed", "fake-broken",
                                                                   "2.3.4")
    assert broken.error == "ModuleNotFoundError: No module named 'fake_dependency_that_is_absent'"
    assert plugins["fake_good"].status == "loaded"
    assert reg.resolve("good_only").higher_is_better is False
    assert plugins["builtins"].status == "loaded"


def test_a_broken_plugin_does_not_break_the_listing_command(fakes: Fakes) -> None:
    fakes.dist("fake-broken", "2.3.4", {"broken": "fake_broken"},
               {"fake_broken": "raise RuntimeError('boom at import')\n"})
    result = CliRunner().invoke(app, ["plugins", "list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    [row] = [p for p in data["plugins"] if p["name"] == "broken"]
    assert row["status"] == "failed" and row["version"] == "2.3.4"
    assert row["error"] == "RuntimeError: boom at import"
    assert data["ok"] is False
    checked = CliRunner().invoke(app, ["plugins", "list", "--check"])
    assert checked.exit_code == 1
    assert "fake-broken" in checked.output and "boom at import" in checked.output


def test_check_pending_refuses_an_unknown_hook_implementation(fakes: Fakes) -> None:
    fakes.dist("fake-typo", "1.0", {"typo": "fake_typo"}, {"fake_typo": """
        from evalkit.core.hookspecs import hookimpl

        @hookimpl
        def evalkit_register_metric():
            return []
        """})
    fakes.dist("fake-unmarked", "1.0", {"unmarked": "fake_unmarked"}, {"fake_unmarked": """
        def evalkit_register_metrics():
            return []
        """})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    typo, unmarked = by_name(reg)["typo"], by_name(reg)["unmarked"]
    assert typo.status == "failed"
    assert typo.error == ("evalkit_register_metric is not an evalkit hook; did you mean "
                          "evalkit_register_metrics?")
    assert unmarked.status == "failed"
    assert unmarked.error == "evalkit_register_metrics is not decorated with @evalkit.hookimpl"


def test_a_failing_hook_registers_none_of_the_plugins_names(fakes: Fakes) -> None:
    fakes.dist("fake-half", "1.0", {"half": "fake_half"}, {"fake_half": """
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import MetricSpec

        @hookimpl
        def evalkit_register_metrics():
            return [MetricSpec("half_metric", lambda r, c: 1.0, higher_is_better=True)]

        @hookimpl
        def evalkit_register_loaders():
            raise RuntimeError("loader table missing")
        """})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    half = by_name(reg)["half"]
    assert half.status == "failed"
    assert half.error == "evalkit_register_loaders: RuntimeError: loader table missing"
    assert "half_metric" not in reg.registered()


def test_a_hook_returning_a_bare_record_is_told_to_return_a_list(fakes: Fakes) -> None:
    """Records are named tuples, so a bare record is iterable: it must still be refused
    as a whole, not walked field by field."""
    fakes.dist("fake-bare", "1.0", {"bare": "fake_bare"}, {"fake_bare": """
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import MetricSpec

        @hookimpl
        def evalkit_register_metrics():
            return MetricSpec("bare_metric", lambda r, c: 1.0, higher_is_better=True)
        """})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    info = by_name(reg)["bare"]
    assert info.status == "failed"
    assert info.error == ("evalkit_register_metrics returned MetricSpec; expected a list of "
                          "MetricSpec or MetricFamily")
    assert "bare_metric" not in reg.registered()


@pytest.mark.parametrize(("body", "error"), [
    ("return [MetricSpec(f, 'swapped', True)]",
     "evalkit_register_metrics: MetricSpec: name must be a non-empty string, got <function"),
    ("return [MetricSpec('v', f, True, version=2)]",
     "evalkit_register_metrics: MetricSpec 'v': version must be a string, got 2"),
    ("return [MetricSpec(b'b', f, True)]",
     "evalkit_register_metrics: MetricSpec: name must be a non-empty string, got b'b'"),
    ("return [MetricSpec('al', f, True, aliases='alen')]",
     "evalkit_register_metrics: MetricSpec 'al': aliases must be a tuple of strings, got the "
     "string 'alen'; write aliases=('alen',)"),
    ("return [MetricSpec('hib', f, 1)]",
     "evalkit_register_metrics: MetricSpec 'hib': higher_is_better must be True or False, "
     "got 1"),
    ("return [MetricSpec('k', f, True, kind='gauge')]",
     "evalkit_register_metrics: MetricSpec 'k': kind must be one of metric, count, got 'gauge'"),
    ("pass", "evalkit_register_metrics returned None; return a list of records ([] to "
     "register nothing)"),
    ("return [MetricSpec('nopol', f)]", "evalkit_register_metrics: TypeError: MetricSpec() "
     "missing 1 required positional argument: 'higher_is_better'"),
])
def test_a_record_with_a_wrong_field_fails_its_plugin_by_name(
    fakes: Fakes, body: str, error: str
) -> None:
    """Every field is checked before anything is registered: the plugin is listed as
    failed with the record and field named, and no command crashes."""
    fakes.dist("fake-fields", "1.0", {"fields": "fake_fields"}, {"fake_fields": f"""
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import MetricSpec

        def f(response, case):
            return 1.0

        @hookimpl
        def evalkit_register_metrics():
            {body}
        """})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    info = by_name(reg)["fields"]
    assert info.status == "failed"
    assert info.error is not None and info.error.startswith(error), info.error
    assert info.names == []
    assert "a" not in reg.registered() and "al" not in reg.registered()


def test_a_hook_with_a_wrong_signature_is_reported_on_one_line(fakes: Fakes) -> None:
    fakes.dist("fake-sig", "1.0", {"sig": "fake_sig"}, {"fake_sig": """
        from evalkit.core.hookspecs import hookimpl

        @hookimpl
        def evalkit_register_metrics(config):
            return []
        """})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    info = by_name(reg)["sig"]
    assert info.status == "failed" and info.error is not None
    assert "\n" not in info.error and "evalkit_register_metrics" in info.error
    assert "config" in info.error


def test_a_client_registration_refuses_a_string_for_a_tuple_of_names() -> None:
    reg = Registry()
    with pytest.raises(RegistryError, match=r"'mine': aliases must be a tuple of strings, got "
                       r"the string 'mn'; write aliases=\('mn',\)"):
        reg.register_metric("mine", higher_is_better=True, aliases="mn")(lambda r, c: 1.0)
    with pytest.raises(RegistryError, match="suffixes must be a tuple of strings"):
        reg.register_loader("pq", kind="goldens", suffixes=".pq")(lambda p: None)
    assert "m" not in reg.registered() and "mine" not in reg.registered()


def test_a_plugin_metric_without_polarity_is_refused(fakes: Fakes) -> None:
    fakes.dist("fake-nopol", "1.0", {"nopol": "fake_nopol"}, {"fake_nopol": """
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import MetricSpec

        @hookimpl
        def evalkit_register_metrics():
            return [MetricSpec("undirected", lambda r, c: 1.0, higher_is_better=None)]
        """})
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    info = by_name(reg)["nopol"]
    assert info.status == "failed"
    assert "'undirected' declares no polarity" in info.error


def test_two_plugins_providing_one_name_block_it_and_name_both(fakes: Fakes) -> None:
    fakes.plugin("fake-alpha", "1.0", "fake_alpha", own_name="alpha_only", shared_value=1.0)
    fakes.plugin("fake-beta", "2.5", "fake_beta", own_name="beta_only", shared_value=0.0)
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    assert {p.status for p in reg.plugins} == {"loaded"}
    with pytest.raises(RegistryError) as err:
        reg.resolve("overlap")
    assert "fake-alpha 1.0" in str(err.value) and "fake-beta 2.5" in str(err.value)
    # the rest of both plugins is usable, and the blocked name is not silently listed
    assert reg.polarity("alpha_only") is False and reg.polarity("beta_only") is False
    assert "overlap" not in reg.registered()
    [conflict] = reg.conflicts()
    assert conflict.name == "overlap"
    assert [e.provider.distribution for e in conflict.entries] == ["fake-alpha", "fake-beta"]


def test_the_listing_shows_a_name_conflict_and_check_fails(fakes: Fakes) -> None:
    fakes.plugin("fake-alpha", "1.0", "fake_alpha", own_name="alpha_only")
    fakes.plugin("fake-beta", "2.5", "fake_beta", own_name="beta_only")
    result = CliRunner().invoke(app, ["plugins", "list", "--json", "--check"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    [conflict] = [c for c in data["conflicts"] if c["name"] == "overlap"]
    assert [(p["distribution"], p["version"]) for p in conflict["providers"]] == [
        ("fake-alpha", "1.0"), ("fake-beta", "2.5")]
    text = CliRunner().invoke(app, ["plugins", "list"]).output
    assert "metric name 'overlap' is provided by fake-alpha 1.0" in text
    assert "and fake-beta 2.5" in text


def test_names_registered_by_configure_are_listed_and_a_clash_is_a_conflict(
        fakes: Fakes) -> None:
    fakes.plugin("fake-alpha", "1.0", "fake_alpha", own_name="alpha_only")
    client = Provider(module="project.judges", distribution="fake-judges", version="0.1")

    def configure(registry: Registry) -> str:
        # registered through the default registry's API, as a plugin's section does
        assert default_registry() is registry
        registry.add(MetricSpec("declared", _m1, higher_is_better=False), client)
        registry.add(MetricSpec("alpha_only", _m2, higher_is_better=True), client)
        return "evalkit.yaml"

    report = plugin_report(entry_points=fakes.entry_points(), configure=configure)
    names = {n.name: n for n in report.names}
    assert (names["declared"].kind, names["declared"].polarity) == ("metric", "lower")
    assert names["declared"].provider == str(client)
    assert "alpha_only" not in names  # blocked, naming both providers
    [conflict] = report.conflicts
    assert [e.provider.distribution for e in conflict.entries] == ["fake-alpha",
                                                                   "fake-judges"]
    assert report.eval_config == "evalkit.yaml" and not report.ok

    def broken(registry: Registry) -> str:
        raise ValueError("evalkit.yaml:3: key 'judges[0].model': missing (required)")

    failed = plugin_report(entry_points=fakes.entry_points(), configure=broken)
    assert failed.eval_config is None and not failed.ok and not failed.conflicts
    assert failed.eval_config_error == "evalkit.yaml:3: key 'judges[0].model': missing " \
        "(required)"


def test_the_same_distribution_found_twice_on_the_path_loads_once(fakes: Fakes) -> None:
    for folder in ("site", "site2"):
        fakes.plugin("fake-twice", "1.0", "fake_twice", own_name="twice_only", folder=folder)
    doubled = fakes.entry_points("site", "site2")
    assert len(doubled) == 2  # the fake really is on the path twice
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=doubled)
    assert [p.name for p in reg.plugins] == ["builtins", "fake_twice"]
    assert reg.conflicts() == [] and reg.entry_point_conflicts == []
    # and through the real discovery, with both folders on sys.path
    report = plugin_report(environ={})
    assert [p.name for p in report.plugins].count("fake_twice") == 1
    assert not [c for c in report.conflicts if c.name == "twice_only"]


def test_two_distributions_declaring_one_entry_point_name_are_reported(fakes: Fakes) -> None:
    fakes.plugin("fake-one", "1.0", "fake_one", own_name="one_only", ep_name="shared_ep")
    fakes.plugin("fake-two", "3.1", "fake_two", own_name="two_only", ep_name="shared_ep",
                 folder="site2")
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points("site", "site2"))
    assert reg.entry_point_conflicts == [
        "entry point 'shared_ep' of group 'evalkit.plugins' is declared by fake-one 1.0 and "
        "fake-two 3.1"
    ]
    # nothing is shadowed: both were loaded
    assert reg.polarity("one_only") is False and reg.polarity("two_only") is False
    report = CliRunner().invoke(app, ["plugins", "list", "--check"])
    assert report.exit_code == 1
    assert "declared by fake-one 1.0 and fake-two 3.1" in report.output


# ------------------------------------------------------------------ registry rules
def _m1(response: Any, case: Any) -> float:
    return 1.0


def _m2(response: Any, case: Any) -> float:
    return 2.0


def test_same_function_and_polarity_again_is_a_no_op() -> None:
    reg = Registry()
    reg.register_metric("again", higher_is_better=True)(_m1)
    reg.register_metric("again", higher_is_better=True)(_m1)
    assert reg.registered() == ["again"]
    assert reg.resolve("again").fn is _m1


def test_a_loop_over_the_entries_leaves_the_registry_free_for_other_threads() -> None:
    reg = Registry()
    reg.register_metric("first", higher_is_better=True)(_m1)
    looping = reg.entries()
    assert next(looping)[1] == "first"  # the caller's loop is under way
    adding = threading.Thread(
        target=lambda: reg.register_metric("meanwhile", higher_is_better=True)(_m2),
        daemon=True)
    adding.start()
    adding.join(timeout=60)  # a registry held by the loop would keep it waiting
    assert not adding.is_alive()
    assert reg.registered() == ["first", "meanwhile"]
    assert list(looping) == []  # the loop sees the entries as they were when it began


def test_a_second_client_registration_raises_naming_both_providers() -> None:
    reg = Registry()
    reg.register_metric("taken", higher_is_better=True)(_m1)
    with pytest.raises(RegistryError) as err:
        reg.register_metric("taken", higher_is_better=True)(_m2)
    assert f"already provided by module {__name__}" in str(err.value)
    assert f"a second registration from module {__name__}" in str(err.value)
    with pytest.raises(RegistryError, match="already provided"):
        reg.register_metric("taken", higher_is_better=False)(_m1)  # polarity differs


def test_a_client_registration_over_a_plugin_name_names_the_distribution(fakes: Fakes) -> None:
    fakes.plugin("fake-alpha", "1.0", "fake_alpha", own_name="alpha_only")
    reg = Registry()
    load_plugins(reg, selection=EVERYTHING, entry_points=fakes.entry_points())
    with pytest.raises(RegistryError) as err:
        reg.register_metric("alpha_only", higher_is_better=False)(_m1)
    assert "fake-alpha 1.0 (fake_alpha)" in str(err.value)
    assert f"module {__name__}" in str(err.value)


def test_higher_is_better_is_required() -> None:
    reg = Registry()
    with pytest.raises(RegistryError, match="higher_is_better must be True or False"):
        reg.register_metric("x", higher_is_better=None)  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match="higher_is_better must be True or False"):
        reg.register_aggregate("y", higher_is_better="yes")  # type: ignore[arg-type]
    assert reg.registered() == []


def test_polarity_answers_and_raises_for_an_unknown_name() -> None:
    reg = Registry()
    reg.register_metric("cost", higher_is_better=False)(_m1)
    assert reg.polarity("cost") is False
    with pytest.raises(RegistryError, match="unknown metric 'nope'"):
        reg.polarity("nope")


# ---------------------------------------------------------- [tool.evalkit] selection
def write_pyproject(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


@pytest.fixture
def two_plugins(fakes: Fakes) -> Fakes:
    fakes.plugin("fake-alpha", "1.0", "fake_alpha", own_name="alpha_only")
    fakes.plugin("fake-beta", "2.5", "fake_beta", own_name="beta_only", shared_value=1.0)
    return fakes


def test_only_listed_plugins_are_imported(two_plugins: Fakes, tmp_path: Path) -> None:
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        plugins = ["Fake_Alpha>=1.0"]
        """)
    reg = Registry()
    load_plugins(reg, selection=plugin_selection(cfg, environ={}),
                 entry_points=two_plugins.entry_points())
    plugins = by_name(reg)
    assert plugins["fake_alpha"].status == "loaded"
    assert (plugins["fake_beta"].status, plugins["fake_beta"].enabled) == ("disabled", False)
    assert "fake_beta" not in sys.modules  # filtered before import
    assert reg.polarity("overlap") is True  # no conflict: beta was never loaded


def test_a_listed_plugin_at_the_wrong_version_is_a_clear_error(
    two_plugins: Fakes, tmp_path: Path
) -> None:
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        plugins = ["fake-alpha", "fake-beta>=3,<4"]
        """)
    selection = plugin_selection(cfg, environ={})
    with pytest.raises(PluginSelectionError) as err:
        load_plugins(Registry(), selection=selection, entry_points=two_plugins.entry_points())
    msg = str(err.value)
    assert f"{cfg} [tool.evalkit] plugins lists 'fake-beta>=3,<4'" in msg
    assert "but fake-beta 2.5 is installed" in msg
    assert "fake_alpha" not in sys.modules  # refused before any import
    # the listing does not raise: it lists the plugin as failed
    reg = Registry()
    load_plugins(reg, selection=selection, entry_points=two_plugins.entry_points(),
                 strict=False)
    beta = by_name(reg)["fake_beta"]
    assert beta.status == "failed" and "but fake-beta 2.5 is installed" in beta.error
    assert "beta_only" not in reg.registered()


@pytest.mark.parametrize("kernel", ["paired-evalkit-core", "paired-evalkit", "Paired_Evalkit"])
def test_listing_the_kernel_checks_the_running_version(
    two_plugins: Fakes, tmp_path: Path, kernel: str
) -> None:
    """The kernel's distribution, and the one users install (at the same version), stand
    for the running kernel in the selection: its version is checked, nothing is loaded."""
    running = metadata.version("paired-evalkit-core")
    cfg = write_pyproject(tmp_path / "ok", f"""
        [tool.evalkit]
        plugins = ["{kernel}>={running}", "fake-alpha"]
        """)
    reg = Registry()
    load_plugins(reg, selection=plugin_selection(cfg, environ={}),
                 entry_points=two_plugins.entry_points())
    assert by_name(reg)["fake_alpha"].status == "loaded"
    cfg = write_pyproject(tmp_path / "newer", f"""
        [tool.evalkit]
        plugins = ["{kernel}>99"]
        """)
    with pytest.raises(PluginSelectionError) as err:
        load_plugins(Registry(), selection=plugin_selection(cfg, environ={}),
                     entry_points=two_plugins.entry_points())
    assert f"lists '{kernel}>99', but paired-evalkit-core {running} is running" in str(err.value)


def test_a_listed_plugin_that_is_missing_names_what_is_installed(
    two_plugins: Fakes, tmp_path: Path
) -> None:
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        plugins = ["fake-gamma>=0.3", "pluggy"]
        """)
    with pytest.raises(PluginSelectionError) as err:
        load_plugins(Registry(), selection=plugin_selection(cfg, environ={}),
                     entry_points=two_plugins.entry_points())
    msg = str(err.value)
    assert ("lists 'fake-gamma>=0.3', but fake-gamma is not installed (installed plugins: "
            "fake-alpha 1.0, fake-beta 2.5)") in msg
    pluggy_version = metadata.version("pluggy")
    assert (f"lists 'pluggy', but pluggy {pluggy_version} is installed but declares no "
            "'evalkit.plugins' entry point") in msg


def test_no_table_loads_every_installed_plugin(two_plugins: Fakes, tmp_path: Path) -> None:
    cfg = write_pyproject(tmp_path / "proj", "[project]\nname = 'client'\n")
    selection = plugin_selection(cfg, environ={})
    assert selection.requirements is None
    reg = Registry()
    load_plugins(reg, selection=selection, entry_points=two_plugins.entry_points())
    assert {by_name(reg)[n].status for n in ("fake_alpha", "fake_beta")} == {"loaded"}


def test_an_empty_list_loads_no_plugin(two_plugins: Fakes, tmp_path: Path) -> None:
    cfg = write_pyproject(tmp_path / "proj", "[tool.evalkit]\nplugins = []\n")
    reg = Registry()
    load_plugins(reg, selection=plugin_selection(cfg, environ={}),
                 entry_points=two_plugins.entry_points())
    assert [(p.name, p.status) for p in reg.plugins] == [
        ("builtins", "loaded"), ("fake_alpha", "disabled"), ("fake_beta", "disabled")]


def test_the_environment_variable_overrides_the_table(two_plugins: Fakes,
                                                      tmp_path: Path) -> None:
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        plugins = ["fake-alpha"]
        """)
    eps = two_plugins.entry_points()
    cases = {"": set(), "fake-beta>=2,<3": {"fake_beta"},
             "fake-alpha, fake-beta": {"fake_alpha", "fake_beta"}}
    for value, expected in cases.items():
        selection = plugin_selection(cfg, environ={"EVALKIT_PLUGINS": value})
        assert selection.source == f"EVALKIT_PLUGINS={value!r}"
        reg = Registry()
        load_plugins(reg, selection=selection, entry_points=eps)
        loaded = {p.name for p in reg.plugins if p.status == "loaded"} - {"builtins"}
        assert loaded == expected, value


def test_split_env_list_keeps_specifier_commas_together() -> None:
    assert split_env_list("a>=1,<2, b ,c~=1.4,!=1.4.2,") == ["a>=1,<2", "b", "c~=1.4,!=1.4.2"]
    assert split_env_list("") == []


def test_the_table_is_found_upward_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        plugins = ["evalkit-retrieval"]
        suite = "goldens.yaml"
        """)
    deep = tmp_path / "proj" / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    tool = read_tool_config()
    assert tool.path == cfg.resolve()
    assert tool.table == {"plugins": ["evalkit-retrieval"], "suite": "goldens.yaml"}
    # an explicit path, or the folder holding it, wins over the search
    other = write_pyproject(tmp_path / "other", "[tool.evalkit]\nplugins = []\n")
    assert read_tool_config(other).table == {"plugins": []}
    assert read_tool_config(other.parent).path == other.resolve()
    # the nearest pyproject.toml is used even when it has no table
    inner = write_pyproject(deep, "[project]\nname = 'inner'\n")
    tool = read_tool_config()
    assert (tool.path, tool.table) == (inner.resolve(), None)


@pytest.mark.parametrize(("body", "message"), [
    ("[tool.evalkit\n", "not valid TOML"),
    ("[tool]\nevalkit = 3\n", "tool.evalkit must be a table"),
    ("[tool.evalkit]\nplugins = 'evalkit-judge'\n", "plugins must be a list of strings"),
    ("[tool.evalkit]\nplugins = ['evalkit-judge>>0.3']\n", "invalid version specifier"),
    ("[tool.evalkit]\nplugins = ['evalkit-judge[extra]']\n", "no extras, markers or URLs"),
    ("[tool.evalkit]\nplugins = ['a', 'A>=1']\n", "'a' is listed twice"),
    ("[tool.evalkit]\nlocal_plugins = ['my-project.x']\n", "is not a module name"),
    # a misspelt key must not quietly load every installed plugin
    ("[tool.evalkit]\nplugin = ['evalkit-nosuch']\n",
     "unknown key 'plugin'; did you mean 'plugins'? (the keys are aggregates, baseline,"),
    ("[tool.evalkit]\nlocal_plugin = ['x']\n",
     "unknown key 'local_plugin'; did you mean 'local_plugins'?"),
])
def test_a_malformed_table_names_the_file_and_key(tmp_path: Path, body: str,
                                                  message: str) -> None:
    cfg = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        plugin_selection(cfg, environ={})
    assert message in str(err.value) and str(tmp_path) in str(err.value)


def test_a_missing_config_file_is_a_clear_cli_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    result = CliRunner().invoke(app, ["plugins", "list", "--config", str(missing)])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: config file {missing} does not exist"


LOCAL_SOURCE = """
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec


@hookimpl
def evalkit_register_metrics():
    return [
        MetricSpec("local_metric", lambda r, c: 0.25, higher_is_better=True),
        MetricSpec("alpha_only", lambda r, c: 0.75, higher_is_better=False),
    ]
"""


def test_local_plugins_go_through_the_same_hooks_and_conflict_checks(
    two_plugins: Fakes, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    cfg = write_pyproject(project, """
        [tool.evalkit]
        plugins = ["fake-alpha"]
        local_plugins = ["fake_local_plugins"]
        """)
    (project / "fake_local_plugins.py").write_text(LOCAL_SOURCE, encoding="utf-8")
    two_plugins.modules.append("fake_local_plugins")
    two_plugins.monkeypatch.setattr(sys, "path", list(sys.path))  # restored after the test
    reg = Registry()
    load_plugins(reg, selection=plugin_selection(cfg, environ={}),
                 entry_points=two_plugins.entry_points())
    local = by_name(reg)["fake_local_plugins"]
    assert (local.status, local.origin, local.distribution) == ("loaded", "local", None)
    assert local.hooks == ["evalkit_register_metrics"]
    assert reg.polarity("local_metric") is True
    with pytest.raises(RegistryError) as err:
        reg.resolve("alpha_only")
    assert "fake-alpha 1.0" in str(err.value) and "module fake_local_plugins" in str(err.value)
    # EVALKIT_PLUGINS="" loads none, not even local ones; naming the module enables it
    none = plugin_selection(cfg, environ={"EVALKIT_PLUGINS": ""})
    assert none.local_plugins == () and none.requirements == ()
    # ... and lists it as disabled, as it lists a distribution it leaves out
    reg_none = Registry()
    load_plugins(reg_none, selection=none, entry_points=two_plugins.entry_points())
    left_out = by_name(reg_none)["fake_local_plugins"]
    assert (left_out.status, left_out.origin, left_out.enabled) == ("disabled", "local", False)
    assert "local_metric" not in reg_none.registered()
    only_local = plugin_selection(cfg, environ={"EVALKIT_PLUGINS": "fake_local_plugins"})
    assert only_local.local_plugins == ("fake_local_plugins",)
    assert only_local.requirements == ()


def test_a_local_plugin_that_fails_to_import_is_listed_as_failed(
    fakes: Fakes, tmp_path: Path
) -> None:
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        local_plugins = ["fake_missing_local_module"]
        """)
    fakes.monkeypatch.setattr(sys, "path", list(sys.path))
    reg = Registry()
    load_plugins(reg, selection=plugin_selection(cfg, environ={}), entry_points=[])
    info = by_name(reg)["fake_missing_local_module"]
    assert info.status == "failed"
    assert info.error == "ModuleNotFoundError: No module named 'fake_missing_local_module'"


def test_set_config_points_the_default_registry_at_a_file(
    two_plugins: Fakes, tmp_path: Path
) -> None:
    cfg = write_pyproject(tmp_path / "proj", "[tool.evalkit]\nplugins = ['fake-beta']\n")
    with use_registry(Registry()):  # restores the process-wide registry afterwards
        try:
            set_config(cfg)
            reg = default_registry()
            assert by_name(reg)["fake_alpha"].status == "disabled"
            assert by_name(reg)["fake_beta"].status == "loaded"
            # a listed plugin that is missing stops the default registry, naming it
            missing = write_pyproject(tmp_path / "bad", "[tool.evalkit]\nplugins = ['nope-x']\n")
            set_config(missing)
            with pytest.raises(PluginSelectionError, match="lists 'nope-x', but nope-x is not"):
                default_registry()
        finally:
            set_config(None)


# ---------------------------------------------------------------- the listing
def test_the_listing_describes_plugins_and_names(two_plugins: Fakes, tmp_path: Path) -> None:
    two_plugins.plugin("fake-gamma", "0.9", "fake_gamma", own_name="gamma_only",
                       definition="3")
    cfg = write_pyproject(tmp_path / "proj", """
        [tool.evalkit]
        plugins = ["fake-alpha", "fake-gamma"]
        """)
    result = CliRunner().invoke(app, ["plugins", "list", "--json", "--config", str(cfg)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["config"] == str(cfg.resolve())
    assert data["selection"] == f"{cfg.resolve()} [tool.evalkit] plugins"
    rows = {p["name"]: p for p in data["plugins"]}
    site = str(two_plugins.root / "site")
    assert rows["fake_alpha"] == {
        "name": "fake_alpha", "distribution": "fake-alpha", "version": "1.0",
        "module": "fake_alpha", "origin": "third-party", "location": site,
        "editable": False, "enabled": True, "status": "loaded", "error": None,
        "hooks": ["evalkit_register_metrics"], "names": ["overlap", "alpha_only"],
    }
    assert (rows["fake_beta"]["enabled"], rows["fake_beta"]["status"]) == (False, "disabled")
    assert rows["fake_beta"]["hooks"] == []
    assert rows["builtins"]["origin"] == "kernel"
    names = {n["name"]: n for n in data["names"]}
    assert names["gamma_only"] == {
        "name": "gamma_only", "kind": "metric", "loader_kind": None, "polarity": "lower",
        "provider": "fake-gamma 0.9 (fake_gamma)", "distribution": "fake-gamma",
        "version": "0.9", "definition_version": "3", "description": "", "aliases": [],
    }
    assert "overlap" not in names  # alpha and gamma both provide it: listed as a conflict
    assert [c["name"] for c in data["conflicts"]] == ["overlap"]
    assert data["ok"] is False


def test_a_family_is_listed_once(fakes: Fakes) -> None:
    fakes.dist("fake-fam", "1.0", {"fam": "fake_fam"}, {"fake_fam": """
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import MetricFamily, MetricSpec

        def factory(k):
            return MetricSpec(f"hits@{k}", lambda r, c: 0.0, higher_is_better=True)

        @hookimpl
        def evalkit_register_metrics():
            return [MetricFamily("hits", factory, higher_is_better=True, version="2")]
        """})
    report = plugin_report(environ={"EVALKIT_PLUGINS": "fake-fam"})
    reg_names = [n for n in report.names if n.name.startswith("hits")]
    assert [(n.name, n.polarity, n.definition_version) for n in reg_names] == [
        ("hits@k", "higher", "2")]
    [info] = [p for p in report.plugins if p.name == "fam"]
    assert info.names == ["hits@k"]


def test_an_editable_install_shows_its_project_folder(fakes: Fakes, tmp_path: Path) -> None:
    project = tmp_path / "checkout" / "evalkit-judge"
    fakes.dist("evalkit-judge", "0.0.1.dev0", {"fake_judge": "fake_judge_mod"},
               {"fake_judge_mod": "from evalkit.core.hookspecs import hookimpl\n"},
               folder="devsite", editable=project)
    report = plugin_report(environ={}, entry_points=fakes.entry_points("devsite"))
    [info] = [p for p in report.plugins if p.name == "fake_judge"]
    assert (info.origin, info.location, info.editable) == ("in-repo", str(project), True)
    text = CliRunner().invoke(app, ["plugins", "list"], env={"EVALKIT_PLUGINS": ""}).output
    assert "selection: EVALKIT_PLUGINS=''" in text


# --------------------------------------------------------- the example plugin
def test_the_example_plugin_appears_in_the_listing_once_installed(fakes: Fakes) -> None:
    """Simulate `pip install ./examples/evalkit-example-plugin`: a dist-info built from the
    example's own pyproject.toml, with its source folder on the path."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    meta = project["project"]
    eps = meta["entry-points"][ENTRY_POINT_GROUP]
    fakes.dist(meta["name"], meta["version"], eps, {}, folder="example-site", editable=EXAMPLE)
    fakes.monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    fakes.modules += ["evalkit_example_plugin", "evalkit_example_plugin.plugin"]
    result = CliRunner().invoke(app, ["plugins", "list", "--json", "--check"],
                                env={"EVALKIT_PLUGINS": "evalkit-example-plugin"})
    data = json.loads(result.output)
    [row] = [p for p in data["plugins"] if p["distribution"] == "evalkit-example-plugin"]
    assert row == {
        "name": "example", "distribution": "evalkit-example-plugin", "version": "0.1.0",
        "module": "evalkit_example_plugin.plugin", "origin": "third-party",
        "location": str(EXAMPLE), "editable": True, "enabled": True, "status": "loaded",
        "error": None,
        "hooks": ["evalkit_register_metrics", "evalkit_register_aggregates",
                  "evalkit_register_reporters", "evalkit_register_commands",
                  "evalkit_register_config_sections"],
        "names": ["keyword_recall", "answered_share", "tsv-summary", "keywords",
                  "keyword_metrics"],
    }
    names = {n["name"]: (n["kind"], n["polarity"]) for n in data["names"]}
    assert names["keyword_recall"] == ("metric", "higher")
    assert names["answered_share"] == ("aggregate", "higher")
    assert names["tsv-summary"] == ("reporter", None)
    assert names["keywords"] == ("command", None)
    assert names["keyword_metrics"] == ("config section", None)
    assert result.exit_code == 0, result.output


# ------------------------------------------------- aliases and spellings: no shadowing
def _spec(name: str, fn: Any = _m1, aliases: tuple[str, ...] = ()) -> Any:
    from evalkit.core.specs import MetricSpec

    return MetricSpec(name, fn, higher_is_better=True, aliases=aliases)


A = Provider(module="pkg_a.plugin", distribution="dist-a", version="1.0")
B = Provider(module="pkg_b.plugin", distribution="dist-b", version="2.0")


@pytest.mark.parametrize("a_first", [True, False])
def test_a_plugin_name_equal_to_another_plugins_alias_is_blocked(a_first: bool) -> None:
    reg = Registry()
    adds = [(_spec("rr", _m1, ("mrr",)), A), (_spec("mrr", _m2), B)]
    for spec, provider in adds if a_first else adds[::-1]:
        reg.add(spec, provider, from_plugin=True)
    with pytest.raises(RegistryError) as err:
        reg.resolve("mrr")
    assert "dist-a 1.0" in str(err.value) and "dist-b 2.0" in str(err.value)
    assert reg.resolve("rr").fn is _m1
    assert [c.name for c in reg.conflicts()] == ["mrr"]


def test_two_plugins_sharing_an_alias_block_only_the_alias() -> None:
    reg = Registry()
    reg.add(_spec("x_metric", _m1, ("shared_alias",)), A, from_plugin=True)
    reg.add(_spec("y_metric", _m2, ("shared_alias",)), B, from_plugin=True)
    with pytest.raises(RegistryError, match=r"'shared_alias' is provided by dist-a 1\.0"):
        reg.resolve("shared_alias")
    assert reg.resolve("x_metric").fn is _m1 and reg.resolve("y_metric").fn is _m2


def test_a_client_name_equal_to_a_plugin_alias_is_refused_naming_both() -> None:
    reg = Registry()
    reg.add(_spec("rr", _m1, ("mrr",)), A, from_plugin=True)
    with pytest.raises(RegistryError) as err:
        reg.register_metric("mrr", higher_is_better=True)(_m2)
    assert "'mrr' already names 'rr' (provided by dist-a 1.0 (pkg_a.plugin))" in str(err.value)
    assert f"module {__name__}" in str(err.value)
    assert reg.resolve("mrr").fn is _m1


def test_names_differing_only_in_case_are_not_resolved_by_guessing() -> None:
    reg = Registry()
    reg.add(_spec("ndcg", _m1), A, from_plugin=True)
    reg.add(_spec("NDCG", _m2), B, from_plugin=True)
    assert reg.resolve("ndcg").fn is _m1 and reg.resolve("NDCG").fn is _m2
    with pytest.raises(RegistryError, match="'Ndcg' matches 'NDCG', 'ndcg'"):
        reg.resolve("Ndcg")


def test_registered_names_list_cut_offs_in_numeric_order() -> None:
    """The built-in aggregates max_item_share@1, @3 and @10 (plain text order would put
    @10 before @3)."""
    from evalkit.plugins.default import default_registry

    names = [n for n in default_registry().registered() if n.startswith("max_item_share@")]
    assert names == ["max_item_share@1", "max_item_share@3", "max_item_share@10"]
