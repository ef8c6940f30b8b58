"""The ``evalkit.plugins`` entry point of evalkit-judge: the cost and token aggregates.

The judge itself is a metric the client defines (rubric, model, scale) and registers
under a name of its choice, with ``register_metric`` or from its own plugin's
``evalkit_register_metrics``; there is no judge metric this package could register by
itself. What it registers is the whole-run aggregates of what LLM calls cost
(:mod:`evalkit_judge.cost_aggregates`: ``cost_total``, ``cost_per_case``,
``tokens_in_total``, ``tokens_out_total``, ``judge_cost_total``). The entry point also lets
``evalkit plugins list`` show the distribution and its version, the project's plugin
selection (``plugins = ["evalkit-judge>=0.3"]``) require it, and run headers record its
version.

It also adds the command ``evalkit pairwise`` (:mod:`evalkit_judge.pairwise_cmd`, imported
only when it runs): pairwise verdicts of a judge between the stored answers of two or more
runs.
"""

from __future__ import annotations

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import AggregateSpec, CommandSpec


@hookimpl
def evalkit_register_aggregates() -> list[AggregateSpec]:
    """``cost_total``, ``cost_per_case``, ``tokens_in_total``, ``tokens_out_total`` and
    ``judge_cost_total`` (US dollars and tokens, lower is better)."""
    from evalkit_judge.cost_aggregates import cost_aggregates

    return cost_aggregates()


@hookimpl
def evalkit_register_commands() -> list[CommandSpec]:
    """``evalkit pairwise RUN_A RUN_B [MORE ...] --judge NAME``."""
    return [CommandSpec(
        name="pairwise",
        help="Ask an LLM judge which run's stored answer is better, case by case, in both "
             "orders: win rates, position flips, tests, Bradley-Terry.",
        load="evalkit_judge.pairwise_cmd:command")]
