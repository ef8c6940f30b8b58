"""A :class:`~evalkit.comparison.Comparison` as the reporters' :class:`~evalkit.report.
Report`: one row per (metric, candidate) carrying every field of the comparison, so the
console, JSON, Markdown and JUnit reports (and any plugin's) show the same facts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evalkit.comparison.records import ComparisonRecord
from evalkit.comparison.serialize import to_json
from evalkit.comparison.text import result_notes
from evalkit.data.summaries import is_log_scale
from evalkit.report.comparison_rows import (
    NO_DIFFERENCE,
    comparison_row,
    log_scale_note,
    row_label,
    row_unit,
)
from evalkit.report.formatting import CORRECTION_LABELS
from evalkit.report.model import Report, ReportRow, ReportRun

TITLE = "evalkit compare"


def to_report(c: ComparisonRecord) -> Report:
    """The report of ``c``: the candidate is system A, the baseline B; the notes are the
    warnings on the inputs, then the statistics' notes labelled with their metric and
    pair; ``data`` is its JSON (:func:`evalkit.comparison.serialize.to_json`).

    Rows are named by their metric; with several candidates ``metric (candidate)``; with
    ``all_pairs`` over more than two runs ``metric (candidate vs baseline)``, and then the
    subject lists every run and there is no ``reference``.
    """
    s = c.settings
    correction = CORRECTION_LABELS[s.correction] if s.adjusted else None
    pairs = list(dict.fromkeys((r.candidate, r.baseline) for r in c.results))
    several_baselines = s.all_pairs and len({b for _, b in pairs}) > 1
    cands = list(dict.fromkeys(r.candidate for r in c.results))
    unit = row_unit({run.name: run.provenance for run in c.runs})
    rows: list[ReportRow] = []
    for r in c.results:
        if several_baselines:
            name = f"{r.metric} ({r.candidate} vs {r.baseline})"
        elif len(cands) > 1:
            name = f"{r.metric} ({r.candidate})"
        else:
            name = r.metric
        name = row_label(name, r.metric)  # gm_map: "gm_map [diff: mean ln]"
        rows.append(comparison_row(
            name=name, metric=r.metric, a=r.candidate, b=r.baseline, diff=r.diff,
            p_value=r.p_value, p_adjusted=r.p_adjusted, alpha=s.alpha,
            significant=r.significant, higher_is_better=r.higher_is_better,
            value=r.candidate_mean, reference_value=r.baseline_mean, ci_low=r.ci_low,
            ci_high=r.ci_high, n_queries=r.n_queries, n_resamples=r.p_resamples,
            method=r.method, correction=correction, wins=r.wins, ties=r.ties,
            losses=r.losses, effect_size=r.standardized_effect, ci_method=r.ci_method,
            warnings=r.warnings, top_gains=r.top_gains, top_losses=r.top_losses,
            query_ids=r.query_ids, differences=r.differences, distribution=r.distribution,
            details=r.details, baseline_values=r.baseline_values,
            candidate_values=r.candidate_values, spread=r.spread, unit=unit,
            p_note=r.p_note,
        ))
    n_sig = sum(1 for r in rows if r.status != NO_DIFFERENCE)
    names = [run.name for run in c.runs]
    if several_baselines:
        subject, reference = ", ".join(names), None
        summary = (f"every pair of {', '.join(names)}: {n_sig} of {len(rows)} "
                   "comparison(s) differ significantly")
    else:
        subject, reference = ", ".join(cands) or c.candidates[0].name, c.baseline.name
        summary = (f"{subject} vs {reference}: {n_sig} of {len(rows)} comparison(s) differ "
                   "significantly" if rows else f"{subject} vs {reference}: nothing compared")
    notes = [*c.warnings, *(f"{label}: {text}"
                            for label, text in result_notes(c.results, c.warnings))]
    notes += [f"{row.name}: {r.spread.line()}" for row, r in zip(rows, c.results, strict=True)
              if r.spread is not None]
    with_ppi = [(row, r.ppi) for row, r in zip(rows, c.results, strict=True)
                if r.ppi is not None]
    if with_ppi:  # the labels' modules (pydantic models) only then
        from evalkit.data.ppi_labels import ppi_sentence

        notes += [f"{row.name}: {ppi_sentence(ppi)}" for row, ppi in with_ppi]
    notes += [log_scale_note(row.name, r.metric, r.diff, r.ci_low, r.ci_high)
              for row, r in zip(rows, c.results, strict=True) if is_log_scale(r.metric)]
    return Report(
        kind="compare", title=TITLE, subject=subject, reference=reference,
        rows=tuple(rows), status="done", summary=summary, exit_code=None,
        notes=tuple(notes), data=_JsonOnDemand(c),
        correction=correction if any(r.p_adjusted is not None for r in rows) else None,
        description=c.description, settings=s.to_dict(),
        provenance={**c.provenance,
                    "runs": {run.name: dict(run.provenance) for run in c.runs}},
        runs=tuple(ReportRun(run.name, run.source, "baseline" if i == 0 else "candidate")
                   for i, run in enumerate(c.runs)),
        warnings=c.warnings, queries=dict(c.queries), slices=c.slices,
    )


class _JsonOnDemand(Mapping[str, Any]):
    """``to_json(c)``, built the first time a key is read: the console table never reads
    it, and for many systems it holds every per-query value of every comparison."""

    def __init__(self, c: ComparisonRecord) -> None:
        self._c = c
        self._doc: dict[str, Any] | None = None

    def _built(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = to_json(self._c)
        return self._doc

    def __getitem__(self, key: str) -> Any:
        return self._built()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


__all__ = ["TITLE", "to_report"]
