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
"""

from __future__ import annotations

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import AggregateSpec


@hookimpl
def evalkit_register_aggregates() -> list[AggregateSpec]:
    """``cost_total``, ``cost_per_case``, ``tokens_in_total``, ``tokens_out_total`` and
    ``judge_cost_total`` (US dollars and tokens, lower is better)."""
    from evalkit_judge.cost_aggregates import cost_aggregates

    return cost_aggregates()
