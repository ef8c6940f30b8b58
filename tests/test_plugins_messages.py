"""What evalkit says about local plugins: one that fails to load is reported on stderr by
every command that loads plugins (with file and line for a syntax error), a module listed
twice is refused, and a clash with a built-in name says what each provides and who must
rename.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from evalkit.core.pyproject_config import ConfigError, plugin_selection
from evalkit.core.registry import Registry, RegistryError
from evalkit.data.results import QueryResult, RunResult
from evalkit.plugins import default as registry_module
from evalkit.plugins.loading import PluginLoadWarning, load_plugins
from evalkit.testing.child_runs import EVALKIT_COMMAND

runner = CliRunner()
BUILTINS = f"paired-evalkit-core {evalkit.__version__} (evalkit.builtins)"

BROKEN = "import evalkit\n\ndef broken(:\n    pass\n"  # line 3 is not Python

ENTROPY_AGGREGATE = """
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import AggregateSpec


@hookimpl
def evalkit_register_aggregates():
    return [AggregateSpec("entropy", lambda rows: 0.0, higher_is_better=True)]
"""

ENTROPY_METRIC = """
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("entropy", lambda r, c: 0.0, higher_is_better=True)]
"""


def project(tmp_path: Path, modules: dict[str, str], listed: list[str] | None = None) -> Path:
    """A project folder whose pyproject lists ``modules`` (written beside it)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    names = ", ".join(f'"{n}"' for n in (listed if listed is not None else modules))
    (folder / "pyproject.toml").write_text(f"[tool.evalkit]\nlocal_plugins = [{names}]\n")
    return folder


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """sys.path restored, and a default registry discovered afresh (then put back)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(registry_module, "_default", None)
    monkeypatch.delenv("EVALKIT_PLUGINS", raising=False)
    return monkeypatch


def load(folder: Path) -> Registry:
    reg = Registry()
    load_plugins(reg, selection=plugin_selection(folder / "pyproject.toml", environ={}),
                 entry_points=[], warn=False)
    return reg


# ------------------------------------------------------------------ failed plugins
def test_a_syntax_error_names_file_and_line(tmp_path: Path, isolated: pytest.MonkeyPatch
                                            ) -> None:
    folder = project(tmp_path, {"evalkit_msg_broken_a": BROKEN})
    reg = load(folder)
    (info,) = [p for p in reg.plugins if p.name == "evalkit_msg_broken_a"]
    assert info.status == "failed"
    assert info.error == f"{folder / 'evalkit_msg_broken_a.py'}:3: invalid syntax"


def test_loading_warns_once_per_failed_plugin(tmp_path: Path, isolated: pytest.MonkeyPatch
                                              ) -> None:
    folder = project(tmp_path, {"evalkit_msg_broken_b": BROKEN},
                     listed=["evalkit_msg_broken_b", "evalkit_msg_not_there"])
    with pytest.warns(PluginLoadWarning) as caught:
        load_plugins(Registry(), entry_points=[],
                     selection=plugin_selection(folder / "pyproject.toml", environ={}))
    assert [str(w.message) for w in caught] == [
        f"local plugin module 'evalkit_msg_broken_b' failed to load: "
        f"{folder / 'evalkit_msg_broken_b.py'}:3: invalid syntax; commands run without it "
        "(see `evalkit plugins list`)",
        "local plugin module 'evalkit_msg_not_there' failed to load: ModuleNotFoundError: No "
        "module named 'evalkit_msg_not_there'; commands run without it (see `evalkit plugins "
        "list`)",
    ]


def test_a_command_prints_one_warning_line_per_failed_plugin(
    tmp_path: Path, isolated: pytest.MonkeyPatch
) -> None:
    folder = project(tmp_path, {"evalkit_msg_broken_c": BROKEN},
                     listed=["evalkit_msg_broken_c", "evalkit_msg_missing_c"])
    art = RunResult("r", [QueryResult("q1", ["d1"], {"ap": 0.25})]).save(tmp_path / "r.jsonl")
    isolated.chdir(folder)
    res = runner.invoke(app, ["eval", str(art), "-m", "ap"])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: local plugin module 'evalkit_msg_broken_c' failed to load: "
        f"{folder / 'evalkit_msg_broken_c.py'}:3: invalid syntax; commands run without it "
        "(see `evalkit plugins list`)",
        "warning: local plugin module 'evalkit_msg_missing_c' failed to load: "
        "ModuleNotFoundError: No module named 'evalkit_msg_missing_c'; commands run without "
        "it (see `evalkit plugins list`)",
    ]
    assert "0.2500" in res.stdout  # the command itself went on
    # the listing shows the failure in its table and prints no warning line
    isolated.setattr(registry_module, "_default", None)
    listing = runner.invoke(app, ["plugins", "list"])
    assert "warning:" not in listing.output
    assert (f"! evalkit_msg_broken_c (evalkit_msg_broken_c): "
            f"{folder / 'evalkit_msg_broken_c.py'}:3: invalid syntax") in listing.stdout


@pytest.mark.parametrize("listed", [["evalkit_msg_twice", "evalkit_msg_twice"],
                                    ["evalkit_msg_twice", "other", "evalkit_msg_twice"]])
def test_a_local_plugin_listed_twice_is_refused(tmp_path: Path, listed: list[str]) -> None:
    folder = project(tmp_path, {}, listed=listed)
    cfg = folder / "pyproject.toml"
    with pytest.raises(ConfigError) as err:
        plugin_selection(cfg, environ={})
    assert str(err.value) == (f"{cfg.resolve()} [tool.evalkit] local_plugins: "
                              "'evalkit_msg_twice' is listed twice; list each module once")


# ------------------------------------------------------------------ clashes with built-ins
def test_an_aggregate_clashing_with_a_builtin_is_refused_and_the_builtin_kept(
    tmp_path: Path, isolated: pytest.MonkeyPatch
) -> None:
    reg = load(project(tmp_path, {"evalkit_msg_entropy_agg": ENTROPY_AGGREGATE}))
    assert reg.provider_of("entropy").distribution == BUILTINS.split()[0]
    (conflict,) = [c for c in reg.conflicts() if c.name == "entropy"]
    assert conflict.message() == (
        f"aggregate name 'entropy' is provided by {BUILTINS} and module "
        "evalkit_msg_entropy_agg; the kernel's built-in keeps the name, and the aggregate of "
        "module evalkit_msg_entropy_agg is not used until its plugin renames it (see "
        "`evalkit plugins list`)")


def test_a_metric_clashing_with_a_builtin_aggregate_says_which_is_which(
    tmp_path: Path, isolated: pytest.MonkeyPatch
) -> None:
    reg = load(project(tmp_path, {"evalkit_msg_entropy_metric": ENTROPY_METRIC}))
    (conflict,) = [c for c in reg.conflicts() if c.name == "entropy"]
    assert conflict.message() == (
        f"name 'entropy' is provided by {BUILTINS} (as an aggregate) and module "
        "evalkit_msg_entropy_metric (as a metric); the kernel's built-in keeps the name, and "
        "the metric of module evalkit_msg_entropy_metric is not used until its plugin "
        "renames it (see `evalkit plugins list`)")


def test_a_clash_between_two_plugins_can_be_solved_by_disabling_one(
    tmp_path: Path, isolated: pytest.MonkeyPatch
) -> None:
    source = textwrap.dedent("""
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import AggregateSpec


        @hookimpl
        def evalkit_register_aggregates():
            return [AggregateSpec("team_cost", lambda rows: 1.0, higher_is_better=False)]
        """)
    reg = load(project(tmp_path, {"evalkit_msg_one": source, "evalkit_msg_two": source}))
    (conflict,) = [c for c in reg.conflicts() if c.name == "team_cost"]
    assert conflict.message() == (
        "aggregate name 'team_cost' is provided by module evalkit_msg_one and module "
        "evalkit_msg_two; it is blocked until one of them renames its aggregate, or is "
        "disabled or uninstalled (see `evalkit plugins list`)")


def test_an_unknown_metric_message_is_punctuated() -> None:
    reg = Registry()
    reg.register_metric("precision_at_one", higher_is_better=True)(lambda r, c: 1.0)
    with pytest.raises(RegistryError) as err:
        reg.resolve("zzz")
    assert str(err.value).startswith("unknown metric 'zzz'. Known: precision_at_one. ")
    with pytest.raises(RegistryError) as err:
        reg.resolve("precision_at_on")
    assert str(err.value).startswith("unknown metric 'precision_at_on'; did you mean "
                                     "'precision_at_one'? Known: precision_at_one. ")


def test_one_plugin_registering_a_name_twice_is_told_so(
    tmp_path: Path, isolated: pytest.MonkeyPatch
) -> None:
    source = textwrap.dedent("""
        from evalkit.core.hookspecs import hookimpl
        from evalkit.core.specs import AggregateSpec


        @hookimpl
        def evalkit_register_aggregates():
            return [AggregateSpec("twice", lambda rows: 1.0, higher_is_better=False),
                    AggregateSpec("twice", lambda rows: 2.0, higher_is_better=False)]
        """)
    reg = load(project(tmp_path, {"evalkit_msg_twice": source}))
    (conflict,) = [c for c in reg.conflicts() if c.name == "twice"]
    assert conflict.message() == (
        "module evalkit_msg_twice registers aggregate name 'twice' more than once; give each "
        "record its own name (the name is blocked until then; see `evalkit plugins list`)")


def test_a_trec_eval_measure_name_resolves_to_its_evalkit_metric() -> None:
    """trec_eval prints ndcg_cut_10 and P_5 (and takes -m ndcg_cut.10): each is an alias of
    the evalkit metric; a misspelt one is still answered with the name and its cut-off, not
    the family template."""
    from evalkit.plugins.default import default_registry

    reg = default_registry()
    for given, canonical in [("ndcg_cut_10", "ndcg@10"), ("P_5", "precision@5"),
                             ("ndcg_cut.10", "ndcg@10"), ("P.5", "precision@5")]:
        assert reg.resolve(given).name == canonical
    for given, first in [("ndgc_cut_10", "ndcg_cut@10"), ("PP_5", "P@5")]:
        with pytest.raises(RegistryError) as err:
            reg.resolve(given)
        assert f"unknown metric {given!r}; did you mean {first!r}" in str(err.value)


HITS_METRIC = """
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("hits", lambda r, c: float(len(r.ranked_ids)), True)]
"""


@pytest.mark.parametrize("qrels", ["qrels.txt", "qrels.tsv"])
def test_a_trec_file_with_the_retrieval_plugin_disabled_says_how_to_enable_it(
        tmp_path: Path, qrels: str) -> None:
    (tmp_path / "hits_plugin.py").write_text(HITS_METRIC)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-judge"]\nlocal_plugins = ["hits_plugin"]\n')
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 1.0 r\n")
    (tmp_path / "run2.trec").write_text("q1 Q0 d2 1 1.0 s\n")
    (tmp_path / qrels).write_text("q1\t0\td1\t1\n")  # TREC's four columns, no BEIR header
    (tmp_path / "beir.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}

    def evalkit(command: str, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*EVALKIT_COMMAND, command, *args, "-m", "hits"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120,
                              env={**env, **extra})

    disabled = (f"which is installed but disabled by {tmp_path / 'pyproject.toml'} "
                '[tool.evalkit] plugins; add "evalkit-retrieval" to that list (or remove '
                "the list to load every plugin)")
    # the kernel's commands reach the TREC readers through the plugin's run evaluator
    got = evalkit("compare", "run.trec", "run2.trec", "--qrels", qrels)
    assert got.returncode == 2
    assert got.stderr == (f"error: {qrels}: the TREC qrels loader that reads it is provided "
                          f"by the 'evalkit-retrieval' plugin, {disabled}\n")
    # BEIR qrels are the retrieval plugin's too
    got = evalkit("compare", "run.trec", "run2.trec", "--qrels", "beir.tsv")
    assert got.returncode == 2
    assert got.stderr == ("error: beir.tsv: the TREC qrels loader that reads it is provided "
                          f"by the 'evalkit-retrieval' plugin, {disabled}\n")
    got = evalkit("compare", "run.trec", "run2.trec", "--qrels", qrels,
                  EVALKIT_PLUGINS="hits_plugin")
    assert got.stderr.endswith("which is installed but disabled by "
                               "EVALKIT_PLUGINS='hits_plugin'; add evalkit-retrieval to "
                               "EVALKIT_PLUGINS (or unset it)\n")
    # `evalkit eval` is the plugin's command: disabled, it says so
    got = evalkit("eval", "run.trec", "--qrels", qrels)
    assert got.returncode == 2
    assert got.stderr == ("error: `evalkit eval` is provided by the 'evalkit-retrieval' "
                          f"plugin, {disabled} (see `evalkit --help`)\n")
    # enabled, the same files are read
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-retrieval"]\nlocal_plugins = ["hits_plugin"]\n')
    got = evalkit("eval", "run.trec", "--qrels", qrels, "--json")
    assert got.returncode == 0, got.stderr


def test_a_disabled_reporters_plugin_is_named_with_how_to_enable_it(tmp_path: Path) -> None:
    from evalkit.data.results import RunResult
    from evalkit.data.rows import CaseResult
    from evalkit.data.targets import TargetResponse

    for name, score in (("a", 0.2), ("b", 0.8)):
        rows = [CaseResult(f"c{i}", TargetResponse(text="x"), {"m": score + i / 10})
                for i in range(3)]
        RunResult(name, rows, {"kind": "target"}).save(tmp_path / f"{name}.jsonl")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-retrieval"]\n')
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    got = subprocess.run([*EVALKIT_COMMAND, "compare", "a.jsonl", "b.jsonl", "--report",
                          "latex:t.tex"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env=env)
    assert got.returncode == 2, got.stderr
    assert ("The 'latex' reporter is provided by the 'evalkit-report-tables' plugin, which "
            f"is installed but disabled by {tmp_path / 'pyproject.toml'} [tool.evalkit] "
            'plugins; add "evalkit-report-tables" to that list (or remove the list to load '
            "every plugin)") in got.stderr, got.stderr
    assert "pip install" not in got.stderr and not (tmp_path / "t.tex").exists()
