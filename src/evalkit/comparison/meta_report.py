"""A :class:`~evalkit.comparison.MetaComparison` as the reporters'
:class:`~evalkit.report.Report`: a row per metric with the pooled difference (so a
reporter that knows only rows, JUnit or a plugin's, shows the pooled verdicts), and
``pooled`` with each metric's collections, which the console, Markdown, JSON and LaTeX
reporters print as forest tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.report.comparison_rows import NO_DIFFERENCE, comparison_row, row_label
from evalkit.report.formatting import CORRECTION_LABELS
from evalkit.report.model import Report, ReportRow, ReportRun

if TYPE_CHECKING:
    from evalkit.comparison.meta_model import MetaComparison

TITLE = "evalkit compare --collections"


def _method(tau2: str, interval: str) -> str:
    from evalkit.stats.meta import TAU2_LABELS

    how = "Hartung-Knapp" if interval == "hartung-knapp" else "z"
    return f"random effects ({TAU2_LABELS.get(tau2, tau2)} tau^2, {how})"


def to_report(m: MetaComparison) -> Report:
    """The report of ``m``: the candidate is system A, the baseline B; the notes are the
    collections' warnings, then each metric's heterogeneity."""
    from evalkit.report.pooled import heterogeneity

    s = m.settings
    correction = CORRECTION_LABELS[s.correction] if s.adjusted else None
    rows: list[ReportRow] = []
    for p in m.results:
        rows.append(comparison_row(
            name=row_label(p.metric, p.metric), metric=p.metric, a=p.candidate,
            b=p.baseline, diff=p.estimate, p_value=p.p_value, p_adjusted=p.p_adjusted,
            alpha=p.alpha, significant=p.significant, higher_is_better=p.higher_is_better,
            value=None, reference_value=None, ci_low=p.ci_low, ci_high=p.ci_high,
            n_queries=p.n_queries, n_resamples=None, method=_method(p.method, p.interval),
            correction=correction,
        ))
    n_sig = sum(1 for r in rows if r.status != NO_DIFFERENCE)
    cand = m.results[0].candidate if m.results else ""
    base = m.results[0].baseline if m.results else ""
    k = len(m.collections)
    summary = (f"{cand} vs {base} over {k} collection{'s' if k != 1 else ''}: {n_sig} of "
               f"{len(rows)} pooled difference(s) significant")
    notes = [*m.warnings, *(f"{p.metric}: {heterogeneity(p)}" for p in m.results)]
    runs: list[ReportRun] = []
    for c in m.collections:
        runs.append(ReportRun(c.baseline.name, c.baseline.source, f"baseline ({c.name})"))
        runs.append(ReportRun(c.candidate.name, c.candidate.source, f"candidate ({c.name})"))
    return Report(
        kind="compare", title=TITLE, subject=cand, reference=base, rows=tuple(rows),
        status="done", summary=summary, exit_code=None, notes=tuple(notes),
        data=m.to_json(), correction=correction, description=m.description,
        settings=s.to_dict(), provenance=dict(m.provenance), runs=tuple(runs),
        warnings=m.warnings, pooled=m.results,
    )


__all__ = ["TITLE", "to_report"]
