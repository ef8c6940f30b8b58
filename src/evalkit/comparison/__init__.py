"""The comparison: ``evalkit.compare(...)`` and the :class:`Comparison` it returns.

Holds the function (:mod:`.compute`; no module here is named ``compare``, which would
shadow the function), the object (:mod:`.model`) and its parts and fields
(:mod:`.records`), its JSON (:mod:`.serialize`), its report (:mod:`.report`), its columns
and DataFrames (:mod:`.tables`), its description and notes in words (:mod:`.text`), the
checks of its options (:mod:`.options`), the reading of its inputs (:mod:`.inputs`) and
power planning from a pilot pair (:mod:`.planning`, printed by :mod:`.power_table`); and
``evalkit.meta_compare`` over several collections (:mod:`.meta_compute`), its
:class:`MetaComparison` and its report (:mod:`.meta_model`), and the
collections file of ``evalkit compare --collections`` (:mod:`.collections_file`).

May import: io, stats, core, plugins, data, execute, report, tables. The execute floor
scores a TREC run given by path; the report floor holds the model a :class:`Comparison`
becomes, and the tables floor the generic DataFrames its columns are drawn as.
Never the gate or the command line; a reporter is found in the registry by name
(:meth:`Comparison.to_html`). Names are loaded on first use, so ``import
evalkit.comparison`` imports no numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY: dict[str, str] = {
    "compare": "evalkit.comparison.compute",
    "Comparison": "evalkit.comparison.model",
    "ComparisonError": "evalkit.comparison.records",
    "MetricComparison": "evalkit.comparison.records",
    "QueryDelta": "evalkit.comparison.records",
    "RunInfo": "evalkit.comparison.records",
    "Settings": "evalkit.comparison.records",
    "SCHEMA_VERSION": "evalkit.comparison.serialize",
    "PowerPlan": "evalkit.comparison.planning",
    "plan_power": "evalkit.comparison.planning",
    "meta_compare": "evalkit.comparison.meta_compute",
    "MetaComparison": "evalkit.comparison.meta_model",
    "MetaSettings": "evalkit.comparison.meta_model",
    "CollectionInfo": "evalkit.comparison.meta_model",
    "PooledEffect": "evalkit.report.pooled",
    "CollectionEffect": "evalkit.report.pooled",
    "CollectionsFileError": "evalkit.comparison.collections_file",
    "load_collections": "evalkit.comparison.collections_file",
    "load_collections_file": "evalkit.comparison.collections_file",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalkit.comparison' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from evalkit.comparison.collections_file import CollectionsFileError as CollectionsFileError
    from evalkit.comparison.collections_file import load_collections as load_collections
    from evalkit.comparison.collections_file import (
        load_collections_file as load_collections_file,
    )
    from evalkit.comparison.compute import compare as compare
    from evalkit.comparison.meta_compute import meta_compare as meta_compare
    from evalkit.comparison.meta_model import CollectionInfo as CollectionInfo
    from evalkit.comparison.meta_model import MetaComparison as MetaComparison
    from evalkit.comparison.meta_model import MetaSettings as MetaSettings
    from evalkit.comparison.model import Comparison as Comparison
    from evalkit.comparison.planning import PowerPlan as PowerPlan
    from evalkit.comparison.planning import plan_power as plan_power
    from evalkit.comparison.records import ComparisonError as ComparisonError
    from evalkit.comparison.records import MetricComparison as MetricComparison
    from evalkit.comparison.records import QueryDelta as QueryDelta
    from evalkit.comparison.records import RunInfo as RunInfo
    from evalkit.comparison.records import Settings as Settings
    from evalkit.comparison.serialize import SCHEMA_VERSION as SCHEMA_VERSION
    from evalkit.report.pooled import CollectionEffect as CollectionEffect
    from evalkit.report.pooled import PooledEffect as PooledEffect
