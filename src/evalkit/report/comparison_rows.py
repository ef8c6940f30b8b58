"""Report rows of a paired comparison: the verdict in words and the one-line detail.

:func:`comparison_row` is the one place that turns a difference, its interval and its
p-values into a :class:`~evalkit.report.model.ReportRow` (``"bm25 better"``, ``"bm25
minus tfidf = +0.0590, 95% CI [...], p < 0.0001, adjusted by Holm: p = 0.0002
(randomization)"``); :meth:`evalkit.comparison.Comparison.to_report` and
:func:`report_from_comparison` (for bare statistics results or row mappings) both build
their rows with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalkit.data.summaries import is_log_scale
from evalkit.report.formatting import (
    CORRECTION_LABELS,
    LOG_SCALE_LABEL,
    interval,
    log_scale_note,
    p_phrase,
    ratio_text,
    row_label,
    signed,
)
from evalkit.report.model import Report, ReportRow
from evalkit.stats.results import N_TOO_SMALL as N_TOO_SMALL
from evalkit.stats.results import p_note_for as p_note_for

NO_DIFFERENCE = "no significant difference"

def verdict_of(res: Any, *, correction: str, method: str, alpha: float
               ) -> tuple[float | None, bool, str | None]:
    """``(adjusted p or None, significant, p note)`` of one test result: the adjusted p
    below ``alpha`` (the raw p without correction; for the percentile bootstrap without
    correction, an interval excluding 0), the degenerate-input rule kept, and
    :func:`p_note_for`'s note."""
    p_adj = res.p_adjusted if correction != "none" else None
    if method == "bootstrap" and correction == "none":
        verdict = bool(res.ci_low > 0.0 or res.ci_high < 0.0)  # the interval decides
    else:
        verdict = bool((p_adj if p_adj is not None else res.p_value) < alpha)
    if res.degenerate and res.method == "bootstrap":  # constant: the sign-flip rule
        verdict = verdict and bool(res.significant)
    # p = 1/(B+1) beside "not significant": the reports say why instead of the p
    p_note = p_note_for(res.degenerate, bool(res.significant), float(res.p_value), alpha,
                        res.n_queries)
    return p_adj, verdict, p_note


def comparison_row(
    *,
    name: str,
    metric: str,
    a: str,
    b: str,
    diff: float,
    p_value: float,
    p_adjusted: float | None,
    alpha: float,
    significant: bool | None,
    higher_is_better: bool | None,
    value: float | None,
    reference_value: float | None,
    ci_low: float | None,
    ci_high: float | None,
    n_queries: int | None,
    n_resamples: int | None,
    method: str | None,
    correction: str | None,
    unit: str = "queries",
    p_note: str | None = None,
    **extra: Any,
) -> ReportRow:
    """One comparison as a report row; ``a`` is the candidate, ``b`` the baseline.

    ``significant`` is the comparison's own verdict; when None, the (adjusted) p below
    ``alpha`` decides. The status names the better system when the polarity is known
    (``"bm25 better"``), else the higher one, or says ``"no significant difference"``.
    ``n_resamples`` is the resampling floor of the p-values (None for an analytic or
    exact p); ``correction`` the label of the adjustment (``"Holm"``); ``unit`` what the
    paired rows are (``"queries"``, a target run's ``"cases"``); ``p_note`` why the
    p-values are not shown (:func:`p_note_for`), and then the detail says so instead of
    giving them. ``extra`` goes to the row as is (wins, movers, distribution...).
    """
    sig = bool(significant) if significant is not None else (
        float(p_adjusted if p_adjusted is not None else p_value) < alpha)
    if sig and diff != 0:
        higher = a if diff > 0 else b
        if higher_is_better is not None:
            status = f"{higher if higher_is_better else (b if higher == a else a)} better"
        else:
            status = f"{higher} higher"
    else:
        status = NO_DIFFERENCE
    # the row's name (the metric) heads the detail wherever a reporter shows it
    detail = f"{a} minus {b} = {signed(diff)}"
    if is_log_scale(metric):  # gm_map: the per-query values are logs
        detail = (f"mean ln {a} minus mean ln {b} = {signed(diff)} (ratio of geometric "
                  f"means {a}/{b} = {ratio_text(diff)})")
    if ci_low is not None and ci_high is not None:
        detail += f", {1 - alpha:.0%} CI {interval(ci_low, ci_high)}"
    if p_note and n_queries is not None and n_queries < 2:
        detail += (f", p not shown: {p_note} (one pair: no paired test is possible; "
                   "docs/statistics.md, degenerate input)")
    elif p_note:
        detail += (f", p not shown: {p_note} (too few queries for any paired test to reach "
                   f"p < {alpha:g}; docs/statistics.md, degenerate input)")
    else:
        detail += f", {p_phrase(p_value, n_resamples)}"
        if p_adjusted is not None:
            by = f" by {correction}" if correction else ""
            detail += f", adjusted{by}: {p_phrase(float(p_adjusted), n_resamples)}"
    if method:
        detail += f" ({method})"
    return ReportRow(
        name=name, status=status, metric=metric, level="info", value=value,
        reference_value=reference_value, difference=diff, ci_low=ci_low, ci_high=ci_high,
        confidence=1 - alpha, p_value=p_value, p_adjusted=p_adjusted,
        n_resamples=n_resamples, p_note=p_note,
        coverage="" if n_queries is None else unit_count(n_queries, unit),
        detail=detail, candidate=a, baseline=b, n_queries=n_queries, significant=sig,
        higher_is_better=higher_is_better, method=method, **extra,
    )


def unit_count(n: int, unit: str) -> str:
    """``"93 queries"``, ``"1 query"`` (``unit``: ``"queries"`` or ``"cases"``)."""
    return f"{n} {({'queries': 'query', 'cases': 'case'}.get(unit, unit) if n == 1 else unit)}"


def row_unit(runs_provenance: Mapping[str, Mapping[str, Any]]) -> str:
    """``"cases"`` when every compared run is a target run (its provenance says
    ``"rows": "cases"``), else ``"queries"``."""
    kinds = {str(p.get("rows", "queries")) for p in runs_provenance.values()}
    return "cases" if kinds == {"cases"} else "queries"


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _first(obj: Any, *names: str) -> Any:
    for name in names:
        value = _get(obj, name)
        if value is not None:
            return value
    return None


def _float(x: Any) -> float | None:
    return None if x is None else float(x)


def report_from_comparison(
    results: Iterable[Any],
    *,
    name_a: str | None = None,
    name_b: str | None = None,
    means: Mapping[str, tuple[float, float]] | None = None,
    polarity: Mapping[str, bool] | None = None,
    title: str = "evalkit compare",
    notes: Iterable[str] = (),
    correction: str | None = None,
) -> Report:
    """The :class:`Report` of a paired comparison, one row per (metric, candidate).

    For a whole :class:`evalkit.comparison.Comparison` use its ``to_report()``, which
    carries every field; this builds a report from bare results.

    Args:
        results: per-metric results, objects or mappings, in either of two shapes:
            the statistics' (``BootstrapResult`` / ``PairedTestResult``: ``metric``,
            ``observed`` = A minus B, ``ci_low``, ``ci_high``, ``p_value``,
            ``significant``, optional ``p_adjusted``, ``alpha``, ``name_a``, ``name_b``,
            ``n_queries``, ``method``) or ``evalkit compare``'s rows (``metric``,
            ``candidate``, ``baseline``, ``diff`` = candidate minus baseline,
            ``candidate_mean``, ``baseline_mean``, ``ci_low``, ``ci_high``, ``p_value``,
            ``significant``, ``higher_is_better``, optional ``p_adjusted``, ``wins``,
            ``ties``, ``losses``). A is the candidate, B the baseline. ``significant``,
            when present, is taken as the verdict; an interval bound may be ``None`` (not
            computed).
        name_a, name_b: system names (default: taken from the first result).
        means: ``{metric: (mean of A, mean of B)}``, when the results do not carry them.
        polarity: ``{metric: higher_is_better}``, when the results do not carry it; with
            a polarity the status says which system is better, without it which is higher.
        title: the heading.
        notes: remarks shown under the table.
        correction: the name of the correction behind ``p_adjusted``, as printed
            (``"Holm"``); default: the results' own ``correction`` (``"holm"``, ``"bh"``,
            ``"westfall-young"``, as :mod:`evalkit.stats` names them).

    Returns:
        A ``kind="compare"`` report; ``exit_code`` is ``None``. With several candidates the
        rows are named ``"metric (candidate)"`` and the subject lists the candidates.
    """
    items = list(results)
    cands = list(dict.fromkeys(str(_first(it, "name_a", "candidate") or name_a or "A")
                               for it in items))
    if items:
        name_a = name_a or _first(items[0], "name_a", "candidate")
        name_b = name_b or _first(items[0], "name_b", "baseline")
    several = len(cands) > 1
    a_default, b = str(name_a or "A"), str(name_b or "B")
    if correction is None:
        correction = _correction_of(items)
    rows = [_row_of(it, several=several, a_default=a_default, b=b, means=means,
                    polarity=polarity, correction=correction) for it in items]
    notes = [*notes, *(log_scale_note(r.name, r.metric, float(r.difference or 0.0),
                                      r.ci_low, r.ci_high)
                       for r in rows if is_log_scale(r.metric))]
    n_sig = sum(1 for r in rows if r.status != NO_DIFFERENCE)
    subject = ", ".join(cands) if several else a_default
    summary = (f"{subject} vs {b}: {n_sig} of {len(rows)} comparison(s) differ "
               "significantly" if rows else f"{subject} vs {b}: nothing compared")
    adjusted = any(r.p_adjusted is not None for r in rows)
    return Report(
        kind="compare", title=title, subject=subject, reference=b, rows=tuple(rows),
        status="done", summary=summary, exit_code=None, notes=tuple(notes),
        correction=correction if adjusted else None,
    )


def _correction_of(items: Sequence[Any]) -> str | None:
    """The label of the one correction the results name (``"holm"`` as ``"Holm"``), or
    None when they name none or several."""
    named = {str(c) for c in (_get(it, "correction") for it in items) if c}
    if len(named) != 1:
        return None
    only = named.pop()
    return CORRECTION_LABELS.get(only, only)


def _row_of(it: Any, *, several: bool, a_default: str, b: str,
            means: Mapping[str, tuple[float, float]] | None,
            polarity: Mapping[str, bool] | None, correction: str | None) -> ReportRow:
    """The row of one result, in either shape :func:`report_from_comparison` takes."""
    metric = str(_get(it, "metric"))
    a = str(_first(it, "name_a", "candidate") or a_default)
    hib = _get(it, "higher_is_better")
    if hib is None and polarity is not None:
        hib = polarity.get(metric)
    ma, mb = (means or {}).get(metric, (None, None))
    ma = _first(it, "candidate_mean", "mean_a") if ma is None else ma
    mb = _first(it, "baseline_mean", "mean_b") if mb is None else mb
    method = _get(it, "method")
    b_res = _first(it, "p_resamples", "n_resamples")
    if method == "t-test" or _get(it, "exact"):
        b_res = None  # an analytic or exact p has no resampling floor
    n = _get(it, "n_queries")
    verdict = _get(it, "significant")
    alpha = float(_get(it, "alpha", 0.05) or 0.05)
    p_value = float(_get(it, "p_value"))
    note = _get(it, "p_note") or (None if verdict is None else p_note_for(
        _get(it, "degenerate"), bool(verdict), p_value, alpha,
        None if n is None else int(n)))
    counts = {k: None if _get(it, k) is None else int(_get(it, k))
              for k in ("wins", "ties", "losses")}
    return comparison_row(
        name=row_label(f"{metric} ({a})" if several else metric, metric), metric=metric,
        a=a, b=b,
        diff=float(_first(it, "observed", "diff")), p_value=p_value,
        p_adjusted=_float(_get(it, "p_adjusted")), alpha=alpha, p_note=note,
        significant=None if verdict is None else bool(verdict), higher_is_better=hib,
        value=_float(ma), reference_value=_float(mb), ci_low=_float(_get(it, "ci_low")),
        ci_high=_float(_get(it, "ci_high")), n_queries=None if n is None else int(n),
        n_resamples=None if b_res is None else int(b_res), method=method,
        correction=correction, wins=counts["wins"], ties=counts["ties"],
        losses=counts["losses"],
    )


__all__ = [
    "LOG_SCALE_LABEL",
    "NO_DIFFERENCE",
    "N_TOO_SMALL",
    "comparison_row",
    "log_scale_note",
    "p_note_for",
    "ratio_text",
    "report_from_comparison",
    "row_label",
    "row_unit",
    "unit_count",
    "verdict_of",
]
