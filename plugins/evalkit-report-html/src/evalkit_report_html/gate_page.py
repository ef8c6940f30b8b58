"""The gate page: what the template shows, built from a ``kind="gate"`` report.

Every check with its verdict, level, coverage (``4/4 cases``) and its rule (a threshold)
or its baseline comparison (both values, the difference, its interval, p and the
Holm-adjusted p); a forest plot of the baseline comparisons; the cases that errored, with
their messages; and for metrics that publish per-case details (an LLM judge) each case's
grade and the judge's reason. Fields a gate may gain (why the evidence is incomplete,
missing cases) are read from the gate's own dictionary (``report.data``) when present.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit_report_html import charts
from evalkit_report_html.page import Charts, ci_cell, num, p_text

_GRADE_KEYS = ("score", "grade", "label")


def _check(row: Any, data: Mapping[str, Any]) -> dict[str, Any]:
    kind = data.get("kind") or ("baseline" if row.has_comparison else "threshold")
    return {
        "id": row.name, "status": row.status, "level": row.level, "metric": row.metric,
        "kind": kind, "value": num(row.value), "rule": row.rule, "coverage": row.coverage,
        "baseline": num(row.reference_value), "diff": num(row.difference, True),
        "ci": ci_cell(row.ci_low, row.ci_high, row.difference),
        "p": p_text(row.p_value, row.n_resamples),
        "p_adjusted": p_text(row.p_adjusted, row.n_resamples),
        "outcome": (data.get("comparison") or {}).get("outcome", ""),
        "method": row.method or "", "detail": row.detail, "message": data.get("message", ""),
        "blocking": row.failed or row.errored,
    }


def _text_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v]
    return []


def _grades(cases: tuple[Any, ...], metrics: list[str]) -> list[dict[str, Any]]:
    """Per metric whose cases carry details with a grade or a reason: one row per case."""
    out: list[dict[str, Any]] = []
    for metric in metrics:
        rows = []
        for case in cases:
            found = case.details.get(metric)
            if not isinstance(found, Mapping):
                continue
            grade = next((found[k] for k in _GRADE_KEYS if found.get(k) is not None), None)
            reason = found.get("reason")
            if grade is None and reason is None:
                continue
            value = case.values.get(metric)
            rows.append({"id": case.id, "value": num(value), "grade": "" if grade is None
                         else str(grade), "reason": "" if reason is None else str(reason),
                         "model": str(found.get("served_model") or found.get("model") or ""),
                         "cached": bool(found.get("cached"))})
        if rows:
            out.append({"metric": metric, "cases": rows})
    return out


def gate_context(report: Any) -> dict[str, Any]:
    """The template's variables for a gate report (see the module docstring)."""
    page = Charts()
    data: Mapping[str, Any] = report.data or {}
    by_id = {str(c.get("id")): c for c in data.get("checks") or () if isinstance(c, Mapping)}
    checks = [_check(r, by_id.get(r.name, {})) for r in report.rows]
    items = [{"group": r.name, "label": r.metric, "diff": r.difference, "lo": r.ci_low,
              "hi": r.ci_high, "significant": bool(r.significant),
              "p": p_text(r.p_adjusted if r.p_adjusted is not None else r.p_value,
                          r.n_resamples)}
             for r in report.rows if r.difference is not None]
    forest = page.add("forest", charts.forest(
        items, "Baseline checks: run − baseline with its interval")) if items else None
    cases = tuple(report.cases)
    errored = [{"id": c.id, "error": c.error or "", "metric_errors": dict(c.metric_errors)}
               for c in cases if c.error or c.metric_errors]
    metrics = list(dict.fromkeys([*(r.metric for r in report.rows),
                                  *(m for c in cases for m in c.details)]))
    counts = report.counts()
    return {
        "kind": "gate", "title": report.title, "subject": report.subject,
        "reference": report.reference, "summary": report.summary, "status": report.status,
        "exit_code": report.exit_code, "checks": checks, "forest": forest,
        "counts": {k: counts.get(k, 0) for k in ("pass", "fail", "warn", "error")},
        "adjusted": any(r.p_adjusted is not None for r in report.rows),
        "has_baseline": any(c["kind"] == "baseline" for c in checks),
        "errored": errored, "grades": _grades(cases, metrics), "n_cases": len(cases),
        "notes": list(report.notes), "incomplete": _text_list(data.get("incomplete")),
        "missing": _text_list(data.get("missing")), "charts": page.items,
    }


__all__ = ["gate_context"]
