"""Where a plugin comes from and how to install it are read from distribution metadata
(evalkit.plugins.info): the extras of the installed ``paired-evalkit`` name a plugin the
kernel has never heard of, the smallest extra wins over ``all``, and without
``paired-evalkit`` a plugin pinned to this kernel's version is still first-party."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata

import pytest

from evalkit._version import __version__
from evalkit.plugins import info

USER_REQUIRES = [
    f"paired-evalkit-core=={__version__}",
    f"evalkit-retrieval=={__version__}",
    f'evalkit-gpu=={__version__}; extra == "all"',
    f'evalkit-viz=={__version__}; extra == "all"',
    f"evalkit-viz=={__version__}; extra == 'viz'",
    f'evalkit-gpu=={__version__}; python_version >= "3.11" and extra == "gpu"',
    f'paired-evalkit-core[pandas]=={__version__}; extra == "pandas"',
]
PLUGIN_REQUIRES = {
    "evalkit-gpu": [f"paired-evalkit-core=={__version__}", "cupy>=13"],
    "evalkit-far": ["paired-evalkit-core>=0.3"],
    "evalkit-old": ["paired-evalkit-core==0.0.1"],
}


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    """``importlib.metadata.requires`` answering from a table (a name missing from it is
    not installed); the cache of :func:`info.user_extras` emptied around the test."""
    table: dict[str, list[str]] = {"paired-evalkit": USER_REQUIRES, **PLUGIN_REQUIRES}

    def requires(name: str) -> list[str]:
        if name not in table:
            raise metadata.PackageNotFoundError(name)
        return table[name]

    monkeypatch.setattr(metadata, "requires", requires)
    info.user_extras.cache_clear()
    yield table
    info.user_extras.cache_clear()


def test_the_extras_of_paired_evalkit_name_a_plugin_the_kernel_does_not_know(
        installed: dict[str, list[str]]) -> None:
    # the default install, then the smallest extra: gpu (one plugin), not all (two)
    assert info.user_extras() == {"evalkit-retrieval": "", "evalkit-gpu": "gpu",
                                  "evalkit-viz": "viz"}
    assert info.install_hint("evalkit-gpu").startswith(
        "install it with `pip install 'paired-evalkit[gpu]'` (or `pip install evalkit-gpu`; "
        "from a clone of paired-evalkit: `pip install -e plugins/evalkit-gpu`")
    assert info.install_hint("evalkit-retrieval").startswith(
        "install it with `pip install paired-evalkit` (or")
    assert [info.origin_of(d) for d in ("evalkit-gpu", "evalkit_GPU", "evalkit-retrieval",
                                        "evalkit-far", "paired-evalkit-core", None)] == [
        "in-repo", "in-repo", "in-repo", "third-party", "kernel", "local"]


def test_without_paired_evalkit_a_plugin_pinned_to_this_kernel_is_first_party(
        installed: dict[str, list[str]]) -> None:
    del installed["paired-evalkit"]  # only the kernel and the plugins are installed
    assert info.user_extras() == {}
    assert [info.origin_of(d) for d in ("evalkit-gpu", "evalkit-far", "evalkit-old",
                                        "evalkit-absent")] == [
        "in-repo", "third-party", "third-party", "third-party"]
    assert info.install_hint("evalkit-gpu") == (
        "install it with `pip install evalkit-gpu` (from a clone of paired-evalkit: "
        "`pip install -e plugins/evalkit-gpu`, or `pip install -r requirements.txt` for "
        "every in-repo plugin)")


def test_the_installed_paired_evalkit_brings_each_repository_plugin() -> None:
    """This checkout's own metadata (requirements.txt installs packages/paired-evalkit)."""
    assert info.user_extras() == {
        "evalkit-retrieval": "", "evalkit-http": "", "evalkit-judge": "", "evalkit-history": "",
        "evalkit-report-tables": "", "evalkit-report-html": "html", "evalkit-text": "text",
        "evalkit-dask": "dask", "evalkit-mlflow": "mlflow"}
