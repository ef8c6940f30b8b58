"""paired-evalkit: per-query evaluation rows, paired significance tests and CI gates.

The import name is ``evalkit``; the kernel's distribution is ``paired-evalkit-core``
(``pip install paired-evalkit`` installs it with the retrieval, HTTP and judge plugins).
The names below are imported from their floors on first use (:mod:`evalkit.layers`;
docs/architecture.md), so that ``import evalkit`` (and ``evalkit --help``) load no numpy,
pydantic or plugin; ``HttpTarget`` is the ``evalkit-http`` plugin's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit._lazy import lazy_exports
from evalkit._version import __version__ as __version__

_EXPORTS: dict[str, str] = {
    "register_metric": "evalkit.plugins.default",
    "register_aggregate": "evalkit.plugins.default",
    "register_loader": "evalkit.plugins.default",
    "polarity": "evalkit.plugins.default",
    "registered": "evalkit.plugins.default",
    "resolve": "evalkit.plugins.default",
    "RegistryError": "evalkit.core.registry",
    "Registry": "evalkit.core.registry",
    "run": "evalkit.execute.run_retriever",
    "METRICS": "evalkit.execute.run_retriever",
    "evaluate_run": "evalkit.execute.run_evaluator",
    "QueryResult": "evalkit.data.results",
    "RunResult": "evalkit.data.results",
    "GoldenCase": "evalkit.data.cases",
    "TargetResponse": "evalkit.data.targets",
    "Target": "evalkit.data.targets",
    "TargetError": "evalkit.data.targets",
    "CallableTarget": "evalkit.data.targets",
    "GoldenSet": "evalkit.data.goldens",
    "load_goldens": "evalkit.data.goldens",
    "CaseResult": "evalkit.data.rows",
    "rescore": "evalkit.execute.rescore",
    "evaluate": "evalkit.execute.target_runner",
    "RankedRun": "evalkit.data.ranked_ids",
    "compare": "evalkit.comparison",
    "Comparison": "evalkit.comparison",
    "meta_compare": "evalkit.comparison",
    "MetaComparison": "evalkit.comparison",
    "paired_bootstrap": "evalkit.stats",
    "BootstrapResult": "evalkit.stats",
    "hookimpl": "evalkit.core.hookspecs",
    "MetricSpec": "evalkit.core.specs",
    "MetricFamily": "evalkit.core.specs",
    "AggregateSpec": "evalkit.core.specs",
    "LoaderSpec": "evalkit.core.specs",
    "TargetSpec": "evalkit.core.specs",
    "ReporterSpec": "evalkit.core.specs",
    "load_checks": "evalkit.gate.checks",
    "CheckSpec": "evalkit.gate.checks",
    "CheckError": "evalkit.gate.checks",
    "evaluate_gate": "evalkit.gate.evaluate",
    "GateReport": "evalkit.gate.verdicts",
}

__all__ = sorted([*_EXPORTS, "HttpTarget", "__version__"])


_lazy_getattr, _ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    if name == "HttpTarget":  # a facade: the HTTP target is the evalkit-http plugin's
        try:
            from evalkit_http import HttpTarget
        except ImportError as exc:
            from evalkit.plugins.loading import missing_plugin

            raise missing_plugin("evalkit-http", name, exc) from exc
        return HttpTarget
    return _lazy_getattr(name)


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from evalkit.comparison import Comparison as Comparison
    from evalkit.comparison import MetaComparison as MetaComparison
    from evalkit.comparison import compare as compare
    from evalkit.comparison import meta_compare as meta_compare
    from evalkit.core.hookspecs import hookimpl as hookimpl
    from evalkit.core.registry import Registry as Registry
    from evalkit.core.registry import RegistryError as RegistryError
    from evalkit.core.specs import AggregateSpec as AggregateSpec
    from evalkit.core.specs import LoaderSpec as LoaderSpec
    from evalkit.core.specs import MetricFamily as MetricFamily
    from evalkit.core.specs import MetricSpec as MetricSpec
    from evalkit.core.specs import ReporterSpec as ReporterSpec
    from evalkit.core.specs import TargetSpec as TargetSpec
    from evalkit.data.cases import GoldenCase as GoldenCase
    from evalkit.data.goldens import GoldenSet as GoldenSet
    from evalkit.data.goldens import load_goldens as load_goldens
    from evalkit.data.ranked_ids import RankedRun as RankedRun
    from evalkit.data.results import QueryResult as QueryResult
    from evalkit.data.results import RunResult as RunResult
    from evalkit.data.rows import CaseResult as CaseResult
    from evalkit.data.targets import CallableTarget as CallableTarget
    from evalkit.data.targets import Target as Target
    from evalkit.data.targets import TargetError as TargetError
    from evalkit.data.targets import TargetResponse as TargetResponse
    from evalkit.execute.rescore import rescore as rescore
    from evalkit.execute.run_evaluator import evaluate_run as evaluate_run
    from evalkit.execute.run_retriever import METRICS as METRICS
    from evalkit.execute.run_retriever import run as run
    from evalkit.execute.target_runner import evaluate as evaluate
    from evalkit.gate.checks import CheckError as CheckError
    from evalkit.gate.checks import CheckSpec as CheckSpec
    from evalkit.gate.checks import load_checks as load_checks
    from evalkit.gate.evaluate import evaluate_gate as evaluate_gate
    from evalkit.gate.verdicts import GateReport as GateReport
    from evalkit.plugins.default import polarity as polarity
    from evalkit.plugins.default import register_aggregate as register_aggregate
    from evalkit.plugins.default import register_loader as register_loader
    from evalkit.plugins.default import register_metric as register_metric
    from evalkit.plugins.default import registered as registered
    from evalkit.plugins.default import resolve as resolve
    from evalkit.stats import BootstrapResult as BootstrapResult
    from evalkit.stats import paired_bootstrap as paired_bootstrap
