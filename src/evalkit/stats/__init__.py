"""Paired statistics over per-query differences.

Entry points:

* :func:`paired_bootstrap` — the seed's paired bootstrap (issue #2 contract).
* :func:`paired_test` — every paired test of a mean difference (default
  :data:`DEFAULT_METHOD` = "auto": the sign-flip randomization test, or the paired
  t-test for binary differences).
* :func:`compare_runs` — many metrics and systems in one call, shared resamples,
  Holm / Benjamini-Hochberg / Westfall-Young adjusted p-values (a
  :class:`PairedTestFamily`; the statistics core of :func:`evalkit.compare`).
* :func:`aggregate_bootstrap` — paired bootstrap of a whole-run aggregate.
* power: :func:`t_power`, :func:`minimum_detectable_effect`, :func:`required_n`,
  :func:`simulate_power`, :func:`plan_from_pilot`.

Submodules are imported on first use, so ``import evalkit.stats`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalkit.stats.bootstrap import BootstrapResult as BootstrapResult
from evalkit.stats.bootstrap import paired_bootstrap as paired_bootstrap

_LAZY: dict[str, str] = {
    "paired_test": "evalkit.stats.paired",
    "DEFAULT_METHOD": "evalkit.stats.paired",
    "PairedTestResult": "evalkit.stats.results",
    "EffectSizes": "evalkit.stats.results",
    "format_p_value": "evalkit.stats.results",
    "effect_sizes": "evalkit.stats.effects",
    "compare_runs": "evalkit.stats.family",
    "PairedTestFamily": "evalkit.stats.family",
    "Histogram": "evalkit.stats.histogram",
    "aggregate_bootstrap": "evalkit.stats.aggregate",
    "holm": "evalkit.stats.multiple",
    "benjamini_hochberg": "evalkit.stats.multiple",
    "westfall_young": "evalkit.stats.multiple",
    "t_power": "evalkit.stats.power",
    "minimum_detectable_effect": "evalkit.stats.power",
    "required_n": "evalkit.stats.power",
    "simulate_power": "evalkit.stats.power",
    "plan_from_pilot": "evalkit.stats.power",
    "PowerPlan": "evalkit.stats.power",
    "SimulatedPower": "evalkit.stats.power",
    "METHODS": "evalkit.stats.engine",
    "CI_METHODS": "evalkit.stats.engine",
    "CI_OF_METHOD": "evalkit.stats.engine",
    "GENERATOR_NAME": "evalkit.stats._rng",
}

__all__ = sorted(["BootstrapResult", "paired_bootstrap", *_LAZY])


def __getattr__(name: str) -> Any:
    if name == "Comparison":  # deprecated: the family's name before 0.4
        import warnings

        warnings.warn(
            "evalkit.stats.Comparison is now evalkit.stats.PairedTestFamily (what "
            "compare_runs returns); the name Comparison belongs to the object of "
            "evalkit.compare (evalkit.comparison.Comparison)",
            DeprecationWarning, stacklevel=2,
        )
        from evalkit.stats.family import PairedTestFamily

        return PairedTestFamily
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalkit.stats' has no attribute {name!r}")


if TYPE_CHECKING:
    from evalkit.stats._rng import GENERATOR_NAME as GENERATOR_NAME
    from evalkit.stats.aggregate import aggregate_bootstrap as aggregate_bootstrap
    from evalkit.stats.effects import effect_sizes as effect_sizes
    from evalkit.stats.engine import CI_METHODS as CI_METHODS
    from evalkit.stats.engine import CI_OF_METHOD as CI_OF_METHOD
    from evalkit.stats.engine import METHODS as METHODS
    from evalkit.stats.family import PairedTestFamily as PairedTestFamily
    from evalkit.stats.family import compare_runs as compare_runs
    from evalkit.stats.histogram import Histogram as Histogram
    from evalkit.stats.multiple import benjamini_hochberg as benjamini_hochberg
    from evalkit.stats.multiple import holm as holm
    from evalkit.stats.multiple import westfall_young as westfall_young
    from evalkit.stats.paired import DEFAULT_METHOD as DEFAULT_METHOD
    from evalkit.stats.paired import paired_test as paired_test
    from evalkit.stats.power import PowerPlan as PowerPlan
    from evalkit.stats.power import SimulatedPower as SimulatedPower
    from evalkit.stats.power import minimum_detectable_effect as minimum_detectable_effect
    from evalkit.stats.power import plan_from_pilot as plan_from_pilot
    from evalkit.stats.power import required_n as required_n
    from evalkit.stats.power import simulate_power as simulate_power
    from evalkit.stats.power import t_power as t_power
    from evalkit.stats.results import EffectSizes as EffectSizes
    from evalkit.stats.results import PairedTestResult as PairedTestResult
    from evalkit.stats.results import format_p_value as format_p_value
