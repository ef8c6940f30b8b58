"""paired-evalkit: per-query evaluation rows, paired significance tests and CI gates.

The import name is ``evalkit``; the distribution is ``paired-evalkit``. Names are
resolved lazily so that ``import evalkit`` (and ``evalkit --help``) stay cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalkit._version import __version__ as __version__

_EXPORTS: dict[str, str] = {
    "register_metric": "evalkit.registry",
    "register_aggregate": "evalkit.registry",
    "register_loader": "evalkit.registry",
    "polarity": "evalkit.registry",
    "registered": "evalkit.registry",
    "resolve": "evalkit.registry",
    "RegistryError": "evalkit.registry",
    "Registry": "evalkit.registry",
    "run": "evalkit.runner",
    "METRICS": "evalkit.runner",
    "evaluate_run": "evalkit.precomputed",
    "QueryResult": "evalkit.results",
    "RunResult": "evalkit.results",
    "GoldenCase": "evalkit.cases",
    "TargetResponse": "evalkit.targets",
    "Target": "evalkit.targets",
    "TargetError": "evalkit.targets",
    "CallableTarget": "evalkit.targets",
    "GoldenSet": "evalkit.goldens",
    "load_goldens": "evalkit.goldens",
    "load_topics": "evalkit.topics",
    "CaseResult": "evalkit.rows",
    "rescore": "evalkit.evaluation",
    "evaluate": "evalkit.evaluation",
    "RankedRun": "evalkit.ranking",
    "compare": "evalkit.comparison",
    "Comparison": "evalkit.comparison",
    "paired_bootstrap": "evalkit.stats",
    "BootstrapResult": "evalkit.stats",
    "hookimpl": "evalkit.hookspecs",
    "MetricSpec": "evalkit.specs",
    "MetricFamily": "evalkit.specs",
    "AggregateSpec": "evalkit.specs",
    "LoaderSpec": "evalkit.specs",
    "TargetSpec": "evalkit.specs",
    "ReporterSpec": "evalkit.specs",
    "load_checks": "evalkit.checks",
    "CheckSpec": "evalkit.checks",
    "CheckError": "evalkit.checks",
    "evaluate_gate": "evalkit.gate",
    "GateReport": "evalkit.gate",
}

# Provided by optional plugin distributions: (module, distribution).
_PLUGIN_EXPORTS: dict[str, tuple[str, str]] = {
    "HttpTarget": ("evalkit_http", "evalkit-http"),
}

__all__ = sorted([*_EXPORTS, *_PLUGIN_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    if name in _PLUGIN_EXPORTS:
        from evalkit.plugins import import_optional

        module, dist = _PLUGIN_EXPORTS[name]
        return getattr(import_optional(module, dist, name), name)
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from evalkit.cases import GoldenCase as GoldenCase
    from evalkit.checks import CheckError as CheckError
    from evalkit.checks import CheckSpec as CheckSpec
    from evalkit.checks import load_checks as load_checks
    from evalkit.comparison import Comparison as Comparison
    from evalkit.comparison import compare as compare
    from evalkit.evaluation import evaluate as evaluate
    from evalkit.evaluation import rescore as rescore
    from evalkit.gate import GateReport as GateReport
    from evalkit.gate import evaluate_gate as evaluate_gate
    from evalkit.goldens import GoldenSet as GoldenSet
    from evalkit.goldens import load_goldens as load_goldens
    from evalkit.hookspecs import hookimpl as hookimpl
    from evalkit.precomputed import evaluate_run as evaluate_run
    from evalkit.ranking import RankedRun as RankedRun
    from evalkit.registry import Registry as Registry
    from evalkit.registry import RegistryError as RegistryError
    from evalkit.registry import polarity as polarity
    from evalkit.registry import register_aggregate as register_aggregate
    from evalkit.registry import register_loader as register_loader
    from evalkit.registry import register_metric as register_metric
    from evalkit.registry import registered as registered
    from evalkit.registry import resolve as resolve
    from evalkit.results import QueryResult as QueryResult
    from evalkit.results import RunResult as RunResult
    from evalkit.rows import CaseResult as CaseResult
    from evalkit.runner import METRICS as METRICS
    from evalkit.runner import run as run
    from evalkit.specs import AggregateSpec as AggregateSpec
    from evalkit.specs import LoaderSpec as LoaderSpec
    from evalkit.specs import MetricFamily as MetricFamily
    from evalkit.specs import MetricSpec as MetricSpec
    from evalkit.specs import ReporterSpec as ReporterSpec
    from evalkit.specs import TargetSpec as TargetSpec
    from evalkit.stats import BootstrapResult as BootstrapResult
    from evalkit.stats import paired_bootstrap as paired_bootstrap
    from evalkit.targets import CallableTarget as CallableTarget
    from evalkit.targets import Target as Target
    from evalkit.targets import TargetError as TargetError
    from evalkit.targets import TargetResponse as TargetResponse
    from evalkit.topics import load_topics as load_topics
