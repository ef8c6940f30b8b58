"""Whole-run cost and token aggregates, read from what targets and the judge record.

A target reports what one call cost in its response's ``meta`` under documented keys:

* ``cost_usd``: the call's cost in US dollars (a number >= 0);
* ``tokens_in``, ``tokens_out``: the prompt and completion tokens of the call (integers
  >= 0).

(``HttpTarget(meta_keys=("cost_usd", "tokens_in", "tokens_out"))`` copies them from a
JSON body; a Python target returns ``TargetResponse(meta={...})``.) The aggregates, all
lower-is-better:

* ``cost_total`` (USD): the sum over every row, every sample of a run with repeated
  samples included (each is a call that was paid for);
* ``cost_per_case`` (USD): the mean over cases of each case's cost, a case's cost being
  the mean over its samples (its only row without samples);
* ``tokens_in_total``, ``tokens_out_total`` (tokens): sums over every row;
* ``judge_cost_total`` (USD): what the metrics that grade with a paid model (the LLM
  judge) spent for the run's rows: the sum of ``cost_usd`` in the rows' per-case
  ``details``, where every reply the API billed is on the row that requested it, a
  rejected one (no grade, a score off the scale: the metric failed on that case)
  included; grades served from the cache (``cached: true``), shared with another case
  that asked for the same grade at the same time included, were paid for where they
  were requested and are left out. A resumed run's kept rows keep what their replies
  cost. It equals the header's ``details[metric]["cost_usd"]`` summed over the judges.
  It is kept apart from the target's cost so a gate can bound each.

Each raises :class:`~evalkit.execute.aggregates.AggregateError`, never returns 0, when
its value is undefined: an empty run, an errored row, a row whose response does not
report the key (naming the case and how to report it), a value that is not a number
>= 0, a requested judge grade without a price, or a run where no metric records a
cost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.core.specs import AggregateSpec
from evalkit.data.usage_keys import COST_KEY, TOKENS_IN_KEY, TOKENS_OUT_KEY
from evalkit.execute.aggregates import AggregateError, checked_rows
from evalkit.stats.numeric import finite_real, value_text


def _meta_value(row: Any, key: str, name: str, *, integer: bool) -> float:
    response = getattr(row, "response", None)
    meta: Mapping[str, Any] = getattr(response, "meta", None) or {}
    if key not in meta:
        raise AggregateError(
            f"{name}: the response of case {row.query_id!r} does not report {key!r} in its "
            f"meta; a target reports it there (HttpTarget(meta_keys=({key!r},)) copies it "
            f"from the body, a Python target returns TargetResponse(meta={{{key!r}: ...}}))"
        )
    value = meta[key]
    v = finite_real(value)  # None for a str, a bool, NaN, an int beyond the float range
    if v is None or v < 0 or (integer and not v.is_integer()):
        kind = "an integer" if integer else "a number"
        raise AggregateError(f"{name}: case {row.query_id!r} reports {key}={value_text(value)}; "
                             f"it must be {kind} >= 0 that a float holds")
    return v



def _meta_sum(rows: Sequence[Any], key: str, name: str, *, integer: bool) -> float:
    return math.fsum(_meta_value(r, key, name, integer=integer)
                     for r in checked_rows(rows, name))


def cost_total(rows: Sequence[Any]) -> float:
    """Total target cost in US dollars: the sum of ``meta["cost_usd"]`` over every row
    (every sample)."""
    return _meta_sum(rows, COST_KEY, "cost_total", integer=False)


def cost_per_case(rows: Sequence[Any]) -> float:
    """Mean target cost of a case in US dollars; a case's cost is the mean of
    ``meta["cost_usd"]`` over its samples."""
    by_case: dict[str, list[float]] = {}
    for r in checked_rows(rows, "cost_per_case"):
        by_case.setdefault(str(r.query_id), []).append(
            _meta_value(r, COST_KEY, "cost_per_case", integer=False))
    return math.fsum(math.fsum(v) / len(v) for v in by_case.values()) / len(by_case)


def tokens_in_total(rows: Sequence[Any]) -> float:
    """Total prompt tokens: the sum of ``meta["tokens_in"]`` over every row."""
    return _meta_sum(rows, TOKENS_IN_KEY, "tokens_in_total", integer=True)


def tokens_out_total(rows: Sequence[Any]) -> float:
    """Total completion tokens: the sum of ``meta["tokens_out"]`` over every row."""
    return _meta_sum(rows, TOKENS_OUT_KEY, "tokens_out_total", integer=True)


def judge_cost_total(rows: Sequence[Any]) -> float:
    """What graders (the LLM judge) spent for the run's rows in US dollars: ``cost_usd``
    of the rows' per-case ``details``, rejected replies included (they were billed),
    grades served from the cache (or shared in flight) left out."""
    name = "judge_cost_total"
    costs: list[float] = []
    seen = False
    for r in checked_rows(rows, name):
        details = getattr(r, "details", None) or {}
        for metric, detail in sorted(details.items()):
            if not isinstance(detail, Mapping) or COST_KEY not in detail:
                continue
            seen = True
            if detail.get("cached") is True:
                continue
            cost = finite_real(detail[COST_KEY])
            if cost is None or cost < 0:
                raise AggregateError(
                    f"{name}: the {metric} grade of case {r.query_id!r} has no price "
                    f"(cost_usd={value_text(detail[COST_KEY])}); give the judge prices= for "
                    "its model")
            costs.append(cost)
    if not seen:
        raise AggregateError(f"{name}: no metric of this run records a cost (an LLM judge "
                             "records cost_usd in each case's details)")
    return math.fsum(costs)


def cost_aggregates() -> list[AggregateSpec]:
    """The records of this module, which the plugin registers (``evalkit_register_aggregates``)."""
    return [
        AggregateSpec("cost_total", cost_total, False,
                      "sum of the target's meta cost_usd over every row and sample (USD)"),
        AggregateSpec("cost_per_case", cost_per_case, False,
                      "mean over cases of the mean meta cost_usd of a case's samples (USD)"),
        AggregateSpec("tokens_in_total", tokens_in_total, False,
                      "sum of the target's meta tokens_in over every row and sample"),
        AggregateSpec("tokens_out_total", tokens_out_total, False,
                      "sum of the target's meta tokens_out over every row and sample"),
        AggregateSpec("judge_cost_total", judge_cost_total, False,
                      "cost_usd of every judge reply requested for the run's rows, rejected "
                      "ones included (cached grades cost 0), in USD"),
    ]
