"""What the comparison and gate pages share: the list of charts a page embeds, the cells
of its tables, and the queries that moved most.

Numbers are written as the other reporters write them (:mod:`evalkit.report.formatting`): four
decimals, a sign on differences, ``< 0.0001`` for a p-value at the resampling floor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.report.formatting import decimal, interval, p_cell, signed

#: Queries that moved most, each way, when the report carries none of its own.
MOVERS = 10


def num(x: float | None, with_sign: bool = False) -> str:
    """A table cell: 4 decimals (and a sign for a difference); empty for None."""
    if x is None:
        return ""
    if math.isnan(x):
        return "NaN"
    return signed(x) if with_sign else decimal(x)


def ci_cell(low: float | None, high: float | None, diff: float | None) -> str:
    """``[+0.0434, +0.0747]``; empty when the row has no difference."""
    return "" if diff is None else interval(low, high)


def p_text(p: float | None, n_resamples: int | None) -> str:
    return p_cell(p, n_resamples)


def sort_key(x: float | None) -> str:
    """The ``data-sort`` value of a numeric cell (empty sorts last)."""
    return "" if x is None or not math.isfinite(x) else repr(float(x))


@dataclass
class Charts:
    """The charts of one page, in page order: each has an element id, a kind (``forest``,
    ``per-query``, ``scatter``, ``density``, ``distribution``), its Vega-Lite
    specification and how many data marks it draws (per-query plots: one per query
    shown)."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, kind: str, spec: Mapping[str, Any], marks: int | None = None) -> str:
        chart_id = f"chart-{len(self.items) + 1}"
        self.items.append({"id": chart_id, "kind": kind, "spec": spec, "marks": marks})
        return chart_id


def _reason(details: Any, side: str) -> str:
    found = details.get(side) if isinstance(details, Mapping) else None
    value = found.get("reason") if isinstance(found, Mapping) else None
    return "" if value is None else str(value)


def mover_cells(items: Any, texts: Mapping[str, str]) -> list[dict[str, str]]:
    """Rows of a movers table from :class:`~evalkit.report.QueryDelta` items."""
    return [{"id": m.id, "text": m.text or texts.get(m.id, ""), "baseline": num(m.baseline),
             "candidate": num(m.candidate), "diff": num(m.diff, True),
             "baseline_reason": _reason(m.details, "baseline"),
             "candidate_reason": _reason(m.details, "candidate")} for m in items]


def movers(row: Any, texts: Mapping[str, str], n: int = MOVERS
           ) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """``(rose most, fell most)`` of a comparison row: the row's own movers
    (``top_gains`` / ``top_losses``, which carry a judge's reasons) when it has them, else
    the ``n`` largest differences each way from its per-query arrays (ties by id)."""
    if row.top_gains or row.top_losses:
        return mover_cells(row.top_gains, texts), mover_cells(row.top_losses, texts)
    ids, diffs = row.query_ids, row.differences
    if not ids or len(diffs) != len(ids):
        return [], []
    base = row.baseline_values if len(row.baseline_values) == len(ids) else None
    cand = row.candidate_values if len(row.candidate_values) == len(ids) else None

    def cells(picked: list[int]) -> list[dict[str, str]]:
        out = []
        for i in picked:
            q = ids[i]
            details = row.details.get(q)
            out.append({"id": q, "text": texts.get(q, ""),
                        "baseline": "" if base is None else num(base[i]),
                        "candidate": "" if cand is None else num(cand[i]),
                        "diff": num(diffs[i], True),
                        "baseline_reason": _reason(details, "baseline"),
                        "candidate_reason": _reason(details, "candidate")})
        return out

    up = sorted((i for i in range(len(ids)) if diffs[i] > 1e-12),
                key=lambda i: (-diffs[i], ids[i]))[:n]
    down = sorted((i for i in range(len(ids)) if diffs[i] < -1e-12),
                  key=lambda i: (diffs[i], ids[i]))[:n]
    return cells(up), cells(down)


__all__ = ["MOVERS", "Charts", "ci_cell", "mover_cells", "movers", "num", "p_text",
           "sort_key"]
