"""The repeated-samples columns of a comparison's table: each pair's K and its within-case
spread, shown by every reporter (console, Markdown, HTML) when some compared run has
K > 1 samples per case, and not at all when every run has K = 1.

``K`` is written ``baseline / candidate`` (``"1 / 3"``); the spread
(:class:`evalkit.stats.spread.WithinCaseSpread`) as its share of the variance of the
per-case differences (``"15.0%"``), the standard error of the mean difference now and
with unlimited samples per case (four decimals). The spread cells are empty where a pair
has none (a run with K = 1, or samples not reduced by the mean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.report.formatting import decimal
from evalkit.report.model import Report, ReportRow

#: The headers of the columns, in table order.
SAMPLES_HEADERS = ("K (baseline / candidate)", "within-case share", "SE now", "SE limit")


def samples_per_run(report: Report) -> dict[str, int]:
    """``{run name: K}`` of a comparison report: from its provenance
    (``runs.<name>.samples.epochs``, as :func:`evalkit.comparison.tables.comparison_columns`
    reads a comparison), else a row's spread; a run neither names has K = 1."""
    runs: Mapping[str, Any] = (report.provenance or {}).get("runs") or {}
    out = {str(name): int(((prov or {}).get("samples") or {}).get("epochs") or 1)
           for name, prov in runs.items() if isinstance(prov, Mapping)}
    for r in report.rows:
        if r.spread is not None:
            out.setdefault(r.baseline or "", r.spread.k_baseline)
            out.setdefault(r.candidate or "", r.spread.k_candidate)
    return out


def has_samples(report: Report) -> bool:
    """Whether the table shows the columns: a comparison with a run of K > 1."""
    return report.kind == "compare" and any(v > 1 for v in samples_per_run(report).values())


def samples_cells(row: ReportRow, k: Mapping[str, int]) -> tuple[str, str, str, str]:
    """The cells of :data:`SAMPLES_HEADERS` for ``row``, with ``k`` from
    :func:`samples_per_run`."""
    s = row.spread
    pair = f"{k.get(row.baseline or '', 1)} / {k.get(row.candidate or '', 1)}"
    if s is None:
        return pair, "", "", ""
    return pair, f"{100 * s.within_share:.1f}%", decimal(s.se), decimal(s.se_limit)


__all__ = ["SAMPLES_HEADERS", "has_samples", "samples_cells", "samples_per_run"]
