"""An alias is a spelling like a name: an alias that another record's family or measure
already resolves (``ndcg@10`` of ``ndcg@k``, ``P@10``, ``ap(rel=2)``) is a conflict as the
same spelling used as a name is. Between two plugins it is blocked (either order of
registration), from client code it is refused, ``registered_plugin(installed=True)``
raises on it, and ``evalkit plugins list --check`` exits 1.

Values: trec_eval 10.0's ``P_10 all 0.2817`` for the bundled Vaswani BM25 run
(``examples/vaswani/data/expected/trec_eval-10.0.all_trec.q.bm25.txt``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.testing.child_runs import EVALKIT_COMMAND

FAMILY = Provider(module="pkg_family.plugin", distribution="dist-family", version="1.0")
OTHER = Provider(module="pkg_other.plugin", distribution="dist-other", version="2.0")
ROOT = Path(__file__).resolve().parents[1]
VASWANI = ROOT / "examples" / "vaswani" / "data"


def _zero(response: Any, case: Any) -> float:
    return 0.0


def _member(k: int) -> MetricSpec:
    return MetricSpec(f"gain@{k}", _zero, higher_is_better=True)


def _family() -> MetricFamily:
    return MetricFamily("gain", _member, higher_is_better=True, aliases=("G",))


def _measure() -> MetricSpec:
    return MetricSpec("hits", _zero, higher_is_better=True, params=("rel",),
                      variant=lambda rel=1: MetricSpec(f"hits(rel={rel})", _zero,
                                                       higher_is_better=True))


def _aliased(alias: str) -> MetricSpec:
    """A lower-is-better metric whose alias is another record's spelling."""
    return MetricSpec("mine", _zero, higher_is_better=False, aliases=(alias,))


# every alias below is resolved by the gain@k family or the hits measure
ALIASES = ["gain@10", "Gain@10", "G@10", "gain_10", "gain.10", "hits(rel=2)"]


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("others_first", [True, False])
def test_two_plugins_block_an_alias_a_family_resolves(alias: str, others_first: bool) -> None:
    reg = Registry()
    records: list[tuple[Any, Provider]] = [
        (_family(), FAMILY), (_measure(), FAMILY), (_aliased(alias), OTHER)]
    for spec, provider in records if others_first else records[::-1]:
        reg.add(spec, provider, from_plugin=True)
    [conflict] = reg.conflicts()
    assert conflict.name == alias
    message = conflict.message()
    assert "dist-family 1.0" in message and "dist-other 2.0" in message
    assert "(as an alias of metric 'mine')" in message
    with pytest.raises(RegistryError, match="dist-other"):
        reg.resolve(alias)
    # the rest of each record keeps working, the polarity its own
    assert reg.resolve("mine").higher_is_better is False
    assert reg.resolve("gain@5").name == "gain@5"
    assert reg.resolve("gain@5").higher_is_better is True
    assert reg.resolve("hits(rel=3)").name == "hits(rel=3)"


@pytest.mark.parametrize("alias", ALIASES)
def test_a_client_alias_a_family_resolves_is_refused(alias: str) -> None:
    reg = Registry()
    reg.add(_family(), FAMILY)
    reg.add(_measure(), FAMILY)
    expected = f"metric {re.escape(repr(alias))} already resolves to .* provided by dist-family"
    with pytest.raises(RegistryError, match=expected):
        reg.register_metric("mine", higher_is_better=False, aliases=(alias,))(_zero)
    with pytest.raises(RegistryError, match="unknown"):
        reg.resolve("mine")
    assert reg.resolve(alias).higher_is_better is True


def test_a_family_covering_a_clients_alias_is_refused() -> None:
    reg = Registry()
    reg.register_metric("mine", higher_is_better=False, aliases=("G@10",))(_zero)
    with pytest.raises(RegistryError, match=r"metric family 'gain@k' from dist-family 1.0 "
                                            r"\(pkg_family.plugin\) would take the name 'G@10'"):
        reg.add(_family(), FAMILY)
    assert reg.resolve("G@10").name == "mine"


def test_plain_aliases_are_not_conflicts() -> None:
    reg = Registry()
    reg.add(_family(), FAMILY, from_plugin=True)
    reg.add(MetricSpec("mine", _zero, higher_is_better=True,
                       aliases=("gainful@10", "gain_rate", "GAINS")), OTHER, from_plugin=True)
    assert reg.conflicts() == []
    assert reg.resolve("gainful@10").name == "mine"


def _alias_plugin(alias: str) -> types.ModuleType:
    from evalkit import hookimpl

    module = types.ModuleType("alias_plugin_under_test")

    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [_aliased(alias)]

    module.evalkit_register_metrics = evalkit_register_metrics  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize("alias", ["ndcg@10", "P@10", "recall@5", "ap(rel=2)", "P_10",
                                   "ndcg_cut_10", "map"])
def test_registered_plugin_installed_raises_on_an_alias_of_the_retrieval_plugin(
        alias: str) -> None:
    pytest.importorskip("evalkit_retrieval")
    from evalkit.testing import PluginLoadError, registered_plugin

    with pytest.raises(PluginLoadError, match="evalkit-retrieval"), \
            registered_plugin(_alias_plugin(alias), installed=True):
        pass


def test_trec_eval_value_beside_an_alias_plugin() -> None:
    """An alias of another cut-off leaves P_10 the retrieval plugin's: trec_eval's
    0.2817; the alias ``precision@10`` blocks it (naming both) instead of taking it."""
    pytest.importorskip("evalkit_retrieval")
    import evalkit
    from evalkit.core.pyproject_config import PluginSelection
    from evalkit.plugins.default import use_registry
    from evalkit.plugins.loading import load_plugins

    run = VASWANI / "runs" / "run.vaswani.bm25.txt"
    qrels = VASWANI / "qrels"
    reg = Registry()
    load_plugins(reg, selection=PluginSelection.everything())
    reg.add(_aliased("precision@5"), OTHER, from_plugin=True)
    with use_registry(reg):
        result = evalkit.evaluate_run(str(run), str(qrels), ["P.10"])
        assert round(result.mean("precision@10"), 4) == 0.2817
    reg.add(MetricSpec("mine10", _zero, higher_is_better=False, aliases=("precision@10",)),
            OTHER, from_plugin=True)
    with use_registry(reg):
        with pytest.raises(RegistryError, match=r"evalkit-retrieval .* and dist-other 2\.0"):
            evalkit.evaluate_run(str(run), str(qrels), ["P.10"])
        result = evalkit.evaluate_run(str(run), str(qrels), ["P_20"])
        assert round(result.mean("precision@20"), 4) == 0.2263


SCRIPT = Path(sys.executable).with_name("evalkit")
COMMAND = (str(SCRIPT),) if SCRIPT.exists() else EVALKIT_COMMAND

PLUGIN = '''
from evalkit import hookimpl
from evalkit.core.specs import MetricSpec


def zero(response, case):
    return 0.0


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("myndcg", zero, higher_is_better=False, aliases=("ndcg@10",))]
'''


def test_plugins_list_check_names_an_alias_the_retrieval_family_resolves(
        tmp_path: Path) -> None:
    pytest.importorskip("evalkit_retrieval")
    (tmp_path / "alias_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["alias_plugin"]\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    env["EVALKIT_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([*COMMAND, "plugins", "list", "--check"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    assert ("name 'ndcg@10' is provided by evalkit-retrieval" in text
            and "(as a member of the ndcg@k family) and module alias_plugin (as an alias "
                "of metric 'myndcg')" in text), text
    assert "1 conflict(s)" in text


def test_the_conformance_suite_fails_an_alias_of_the_retrieval_family() -> None:
    pytest.importorskip("evalkit_retrieval")
    from evalkit.testing import check_conformance

    failures = check_conformance(_alias_plugin("ndcg@10"))
    assert [f.partition(": ")[0] for f in failures] == ["plugin:loads"]
    assert "metric 'ndcg@10' already resolves to the ndcg@k family provided by " \
           "evalkit-retrieval" in failures[0]
