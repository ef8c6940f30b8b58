"""The ``evalkit.plugins`` entry point of evalkit-judge: the ``judges:`` section of the
eval config and the cost and token aggregates.

A judge is a metric the client defines (provider, model, rubric, scale) and names:
in the eval config's ``judges:`` section (:mod:`evalkit_judge.declared`, which this
plugin declares and registers when ``evalkit run`` reads the config, and registers
again from a run's header when a command reads the run without its config), or in
Python with ``register_metric``. It also registers the whole-run aggregates of what LLM calls cost
(:mod:`evalkit_judge.cost_aggregates`: ``cost_total``, ``cost_per_case``,
``tokens_in_total``, ``tokens_out_total``, ``judge_cost_total``). The entry point also lets
``evalkit plugins list`` show the distribution and its version, the project's plugin
selection (``plugins = ["evalkit-judge>=0.3"]``) require it, and run headers record its
version.

It also adds two commands, each imported only when it runs: ``evalkit pairwise``
(:mod:`evalkit_judge.pairwise_cmd`), pairwise verdicts of a judge between the stored
answers of two or more runs, and ``evalkit agreement`` (:mod:`evalkit_judge.agreement_cmd`),
how far a judge agrees with human labels, with the agreement aggregates a gate can bound
(:mod:`evalkit_judge.agreement_aggregates`).
"""

from __future__ import annotations

from typing import Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import AggregateSpec, CommandSpec, ConfigSectionSpec


def _apply(section: Any, config: Any) -> None:
    from evalkit_judge.declared import apply_judges

    apply_judges(section, config)


def _preflight(section: Any, config: Any) -> None:
    from evalkit_judge.declared import check_environment

    check_environment(section, config)


def _restore(header: Any) -> None:
    from evalkit_judge.declared import restore_judges

    restore_judges(header)


@hookimpl
def evalkit_register_config_sections() -> list[ConfigSectionSpec]:
    """``judges``: LLM judges declared in the eval config, each a metric."""
    return [ConfigSectionSpec(
        "judges", "evalkit_judge.declared:Judges", apply=_apply, restore=_restore,
        preflight=_preflight,
        description="LLM judges, each a metric: name, provider, model, rubric, scale, "
        "higher_is_better, cache, prices (docs/judge.md).")]


@hookimpl
def evalkit_register_aggregates() -> list[AggregateSpec]:
    """``cost_total``, ``cost_per_case``, ``tokens_in_total``, ``tokens_out_total`` and
    ``judge_cost_total`` (US dollars and tokens, lower is better), and the agreement of a
    judged metric with human labels (``krippendorff_alpha(correctness)``, ``cohen_kappa``,
    ``spearman_rho``, ``judge_abs_bias``, ``labelled_cases``...)."""
    from evalkit_judge.agreement_aggregates import agreement_aggregates
    from evalkit_judge.cost_aggregates import cost_aggregates

    return cost_aggregates() + agreement_aggregates()


@hookimpl
def evalkit_register_commands() -> list[CommandSpec]:
    """``evalkit pairwise RUN_A RUN_B [MORE ...] --judge NAME`` and ``evalkit agreement
    RUN --labels FILE``."""
    return [CommandSpec(
        name="pairwise",
        help="Judge runs' stored answers pairwise, in both orders.",
        load="evalkit_judge.pairwise_cmd:command"),
        CommandSpec(
        name="agreement",
        help="Judge-human agreement (kappa, alpha) and PPI means from labels.",
        load="evalkit_judge.agreement_cmd:command")]
