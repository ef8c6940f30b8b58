"""A name that a registered family or measure already resolves (``ndcg@10`` of the
``ndcg@k`` family, ``nDCG@10``, ``P@10`` through an alias, trec_eval's ``ndcg_cut_10``,
``ap(rel=2)`` of a parameterised measure) is a conflict like a plain duplicate: blocked
between two plugins, refused from client code, in either order of registration, and
named by ``evalkit plugins list --check``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.testing.child_runs import EVALKIT_COMMAND

FAMILY = Provider(module="pkg_family.plugin", distribution="dist-family", version="1.0")
OTHER = Provider(module="pkg_other.plugin", distribution="dist-other", version="2.0")


def _zero(response: Any, case: Any) -> float:
    return 0.0


def _member(k: int) -> MetricSpec:
    return MetricSpec(f"gain@{k}", _zero, higher_is_better=True)


def _family() -> MetricFamily:
    return MetricFamily("gain", _member, higher_is_better=True, aliases=("G",))


def _plain(name: str) -> MetricSpec:
    return MetricSpec(name, _zero, higher_is_better=True)


# every spelling below resolves to gain@10 of the family
SPELLINGS = ["gain@10", "Gain@10", "G@10", "gain_10", "gain.10"]


@pytest.mark.parametrize("name", SPELLINGS)
@pytest.mark.parametrize("family_first", [True, False])
def test_two_plugins_claiming_a_family_member_block_it(name: str, family_first: bool) -> None:
    reg = Registry()
    records: list[tuple[MetricFamily | MetricSpec, Provider]] = [
        (_family(), FAMILY), (_plain(name), OTHER)]
    for spec, provider in records if family_first else records[::-1]:
        reg.add(spec, provider, from_plugin=True)
    [conflict] = reg.conflicts()
    assert conflict.name == name
    message = conflict.message()
    assert "dist-family 1.0" in message and "dist-other 2.0" in message
    assert "member of the gain@k family" in message
    with pytest.raises(RegistryError, match="dist-other"):
        reg.resolve(name)
    # the family's other members are untouched
    assert reg.resolve("gain@5").name == "gain@5"


@pytest.mark.parametrize("name", SPELLINGS)
def test_a_client_name_a_family_resolves_is_refused(name: str) -> None:
    reg = Registry()
    reg.add(_family(), FAMILY)
    with pytest.raises(RegistryError, match=f"metric {name!r} already resolves to the "
                                            "gain@k family provided by dist-family 1.0"):
        reg.register_metric(name, higher_is_better=True)(_zero)
    assert reg.resolve(name).name == "gain@10"


def test_a_family_covering_a_clients_name_is_refused() -> None:
    reg = Registry()
    reg.register_metric("G@10", higher_is_better=True)(_zero)
    with pytest.raises(RegistryError, match=r"metric family 'gain@k' from dist-family 1.0 "
                                            r"\(pkg_family.plugin\) would take the name 'G@10'"):
        reg.add(_family(), FAMILY)
    assert reg.registered() == ["G@10"] and reg.resolve("G@10").fn is _zero


def test_a_parameterised_measures_variant_is_covered() -> None:
    reg = Registry()
    measure = MetricSpec("hits", _zero, higher_is_better=True, params=("rel",),
                         variant=lambda rel=1: MetricSpec(f"hits(rel={rel})", _zero,
                                                          higher_is_better=True))
    reg.add(measure, FAMILY, from_plugin=True)
    reg.add(_plain("hits(rel=2)"), OTHER, from_plugin=True)
    assert [c.name for c in reg.conflicts()] == ["hits(rel=2)"]


def test_names_no_family_resolves_are_not_conflicts() -> None:
    reg = Registry()
    reg.add(_family(), FAMILY, from_plugin=True)
    for name in ("gain", "gainful@10", "GAIN", "word_count"):
        reg.add(_plain(name), OTHER, from_plugin=True)
    assert reg.conflicts() == []


SCRIPT = Path(sys.executable).with_name("evalkit")
COMMAND = (str(SCRIPT),) if SCRIPT.exists() else EVALKIT_COMMAND

PLUGIN = '''
from evalkit import hookimpl
from evalkit.core.specs import MetricSpec


def zero(response, case):
    return 0.0


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("ndcg@10", zero, higher_is_better=True)]
'''


def test_plugins_list_check_names_a_member_of_the_retrieval_family(tmp_path: Path) -> None:
    """The installed retrieval plugin's ndcg@k family against a local plugin's
    ``ndcg@10``."""
    pytest.importorskip("evalkit_retrieval")
    (tmp_path / "ndcg_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["ndcg_plugin"]\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    env["EVALKIT_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([*COMMAND, "plugins", "list", "--check"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    assert ("name 'ndcg@10' is provided by evalkit-retrieval" in text
            and "(as a member of the ndcg@k family) and module ndcg_plugin (as a metric)"
            in text), text
    assert "1 conflict(s)" in text
