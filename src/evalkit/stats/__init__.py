"""Paired statistics over per-query differences.

Entry points:

* :func:`paired_bootstrap` — the paired bootstrap of version 0.2 (percentile interval,
  centred null, ``(k + 1) / (B + 1)`` p-value).
* :func:`paired_test` — every paired test of a mean difference (default
  :data:`DEFAULT_METHOD` = "auto": the paired t-test on a metric declared binary, else
  the sign-flip randomization test, joined by the bootstrap-t on skewed differences).
* :func:`compare_runs` — many metrics and systems in one call, shared resamples,
  Holm / Benjamini-Hochberg / Westfall-Young adjusted p-values (a
  :class:`PairedTestFamily`; the statistics core of :func:`evalkit.compare`).
* :func:`compare_slices` — the same comparison on each slice of the cases (a tag's
  cases), adjusted over slices x metrics x systems (a :class:`SliceFamily`).
* :func:`aggregate_bootstrap` — paired bootstrap of a whole-run aggregate.
* several collections: :func:`random_effects` pools per-collection effects
  (:func:`paired_effect`) with a random-effects model, ``tau^2`` by
  :func:`paule_mandel` or :func:`dersimonian_laird` (the statistics of
  :func:`evalkit.meta_compare`).
* clustered cases: ``clusters=`` on :func:`paired_test` and :func:`compare_runs`
  (:mod:`.clusters`; :func:`cr1_se`, :func:`cluster_index`).
* anytime-valid confidence sequences (stopping early): :func:`paired_confidence_sequence`,
  :func:`eb_confidence_sequence`, :func:`decide`, :func:`random_order` (:mod:`.sequential`).
* power: :func:`t_power`, :func:`minimum_detectable_effect`, :func:`required_n`,
  :func:`simulate_power`, :func:`plan_from_pilot`.

Also the exact sums and means of :mod:`.numeric`, and the intervals, kernels and random
streams the tests share. Submodules are imported on first use, so ``import evalkit.stats``
stays cheap.

May import: io (its message helpers: a run's name quoted as the tables print it); and
numpy, scipy and numba. Pure functions over arrays of per-query values, usable on their
own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "paired_bootstrap": "evalkit.stats.bootstrap",
    "BootstrapResult": "evalkit.stats.bootstrap",
    "paired_test": "evalkit.stats.paired",
    "DEFAULT_METHOD": "evalkit.stats.paired",
    "PairedTestResult": "evalkit.stats.results",
    "EffectSizes": "evalkit.stats.results",
    "format_p_value": "evalkit.stats.results",
    "effect_sizes": "evalkit.stats.effects",
    "compare_runs": "evalkit.stats.family",
    "PairedTestFamily": "evalkit.stats.family",
    "compare_slices": "evalkit.stats.slices",
    "SliceFamily": "evalkit.stats.slices",
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
    "METHODS": "evalkit.stats.methods",
    "CI_METHODS": "evalkit.stats.methods",
    "CI_OF_METHOD": "evalkit.stats.methods",
    "GENERATOR_NAME": "evalkit.stats._rng",
    "random_effects": "evalkit.stats.meta",
    "RandomEffects": "evalkit.stats.meta",
    "paired_effect": "evalkit.stats.meta",
    "PairedEffect": "evalkit.stats.meta",
    "dersimonian_laird": "evalkit.stats.meta",
    "paule_mandel": "evalkit.stats.meta",
    "MetaAnalysisError": "evalkit.stats.meta",
    "cr1_se": "evalkit.stats.clusters",
    "cluster_index": "evalkit.stats.clusters",
    "ClusterIndex": "evalkit.stats.clusters",
    "eb_confidence_sequence": "evalkit.stats.sequential",
    "paired_confidence_sequence": "evalkit.stats.sequential",
    "ConfidenceSequence": "evalkit.stats.sequential",
    "decide": "evalkit.stats.sequential",
    "Decision": "evalkit.stats.sequential",
    "random_order": "evalkit.stats.sequential",
    "DEFAULT_TRUNCATION": "evalkit.stats.sequential",
}

__all__ = sorted(_LAZY)
# numpy loads with the first test, not with the exact sums or the formatting of a p-value
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


if TYPE_CHECKING:
    from evalkit.stats._rng import GENERATOR_NAME as GENERATOR_NAME
    from evalkit.stats.aggregate import aggregate_bootstrap as aggregate_bootstrap
    from evalkit.stats.bootstrap import BootstrapResult as BootstrapResult
    from evalkit.stats.bootstrap import paired_bootstrap as paired_bootstrap
    from evalkit.stats.clusters import ClusterIndex as ClusterIndex
    from evalkit.stats.clusters import cluster_index as cluster_index
    from evalkit.stats.clusters import cr1_se as cr1_se
    from evalkit.stats.effects import effect_sizes as effect_sizes
    from evalkit.stats.family import PairedTestFamily as PairedTestFamily
    from evalkit.stats.family import compare_runs as compare_runs
    from evalkit.stats.histogram import Histogram as Histogram
    from evalkit.stats.meta import MetaAnalysisError as MetaAnalysisError
    from evalkit.stats.meta import PairedEffect as PairedEffect
    from evalkit.stats.meta import RandomEffects as RandomEffects
    from evalkit.stats.meta import dersimonian_laird as dersimonian_laird
    from evalkit.stats.meta import paired_effect as paired_effect
    from evalkit.stats.meta import paule_mandel as paule_mandel
    from evalkit.stats.meta import random_effects as random_effects
    from evalkit.stats.methods import CI_METHODS as CI_METHODS
    from evalkit.stats.methods import CI_OF_METHOD as CI_OF_METHOD
    from evalkit.stats.methods import METHODS as METHODS
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
    from evalkit.stats.sequential import DEFAULT_TRUNCATION as DEFAULT_TRUNCATION
    from evalkit.stats.sequential import ConfidenceSequence as ConfidenceSequence
    from evalkit.stats.sequential import Decision as Decision
    from evalkit.stats.sequential import decide as decide
    from evalkit.stats.sequential import eb_confidence_sequence as eb_confidence_sequence
    from evalkit.stats.sequential import (
        paired_confidence_sequence as paired_confidence_sequence,
    )
    from evalkit.stats.sequential import random_order as random_order
    from evalkit.stats.slices import SliceFamily as SliceFamily
    from evalkit.stats.slices import compare_slices as compare_slices
