"""The comparison page: what the template shows, built from a ``kind="compare"`` report.

For the whole comparison the contents and the filter (by metric and candidate), the
summary table (with repeated samples, K > 1 in some run: also each pair's K and its
within-case spread), each distinct warning once with the rows it concerns, the notes and
the forest plot; per row (metric and candidate) the sorted per-query differences, the
scatter (or its density), the null or resampling distribution and the movers; a table of
every query; and what a hover over a per-query bar or a scatter's point shows
(:func:`hover`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from evalkit.report.formatting import CORRECTION_LABELS, METHOD_LABELS
from evalkit.report.samples_cells import has_samples, samples_cells, samples_per_run
from evalkit_report_html import charts
from evalkit_report_html.page import Charts, ci_cell, movers, num, p_text, sort_key

#: Characters of query text kept in a hover (the table of every query has it all).
HOVER_TEXT = 160

_DISTRIBUTION = {
    "null": "Null distribution of the {statistic} (sign-flip randomization{how})",
    "bootstrap": "Bootstrap distribution of the {statistic} ({how} resamples of the queries)",
}


def _label(row: Any, several_baselines: bool) -> str:
    """A forest plot's row: the candidate (and its baseline with ``all_pairs``)."""
    name = row.candidate or row.name
    return f"{name} vs {row.baseline}" if several_baselines else name


def _samples_cells(row: Any, k: Mapping[str, int]) -> dict[str, str]:
    """The repeated-samples cells of a summary row, as the other reporters write them
    (:mod:`evalkit.report.samples_cells`)."""
    return dict(zip(("k", "within_share", "se_now", "se_limit"), samples_cells(row, k),
                    strict=True))


def _summary_row(row: Any) -> dict[str, Any]:
    return {
        "name": row.name, "metric": row.metric, "candidate": row.candidate or "",
        "baseline": row.baseline or "", "value": num(row.value),
        "reference": num(row.reference_value), "diff": num(row.difference, True),
        "ci": ci_cell(row.ci_low, row.ci_high, row.difference),
        "p": row.p_display(),
        "p_adjusted": row.p_display(adjusted=True),
        "status": row.status, "significant": bool(row.significant),
        "wtl": row.wins_ties_losses, "n": "" if row.n_queries is None else str(row.n_queries),
        "effect": num(row.effect_size), "method": row.method or "",
        "direction": "" if row.higher_is_better is None else (
            "higher is better" if row.higher_is_better else "lower is better"),
        "warnings": list(row.warnings), "sort": {
            "diff": sort_key(row.difference), "p": sort_key(row.p_value),
            "p_adjusted": sort_key(row.p_adjusted), "effect": sort_key(row.effect_size)},
    }


def _distribution_title(dist: Any) -> str:
    if dist.kind == "null":
        how = (f", all {dist.n_resamples:,} sign patterns" if dist.exact
               else f", {dist.n_resamples:,} random sign patterns")
    else:
        how = f"{dist.n_resamples:,}"
    template = _DISTRIBUTION.get(dist.kind, "Distribution of the {statistic}{how}")
    return template.format(statistic=dist.statistic, how=how)


def _series(row: Any) -> charts.Series | None:
    ids = row.query_ids
    if not ids or len(row.differences) != len(ids):
        return None
    nan = [math.nan] * len(ids)
    return charts.Series(
        ids=ids, diffs=row.differences,
        baseline=row.baseline_values if len(row.baseline_values) == len(ids) else nan,
        candidate=row.candidate_values if len(row.candidate_values) == len(ids) else nan,
        higher_is_better=row.higher_is_better is not False,
        baseline_name=row.baseline or "baseline", candidate_name=row.candidate or "candidate",
        metric=row.metric)


def _section(row: Any, texts: Mapping[str, str], page: Charts, index: int,
             limit: int, drawn: dict[str, tuple[int, list[int]]]) -> dict[str, Any]:
    """A row's section; ``drawn[chart id]`` gets ``(index - 1, the row's queries in the
    order of the chart's marks)`` for its per-query plot and scatter."""
    s = _series(row)
    out: dict[str, Any] = {"id": f"row-{index}", "name": row.name, "metric": row.metric,
                           "candidate": row.candidate or "", "baseline": row.baseline or "",
                           "n": len(row.query_ids), "per_query": None, "scatter": None,
                           "distribution": None, "sampled": False, "shown": 0,
                           "has_values": False}
    if s is not None:
        spec, bars = charts.per_query(s, limit)
        out["per_query"] = page.add("per-query", spec, len(bars))
        drawn[out["per_query"]] = (index - 1, bars)
        out["shown"], out["sampled"] = len(bars), len(bars) < len(s.ids)
        out["has_values"] = len(row.baseline_values) == len(s.ids)
        if out["has_values"]:
            if len(s.ids) <= limit:
                spec, points = charts.scatter(s)
                out["scatter"] = page.add("scatter", spec, len(points))
                drawn[out["scatter"]] = (index - 1, points)
            else:
                spec, cells = charts.density(s)
                out["scatter"] = page.add("density", spec, cells)
    dist = row.distribution
    if dist is not None and dist.counts:
        unit = row.metric if dist.statistic == "mean difference" else "t"
        out["distribution"] = page.add("distribution", charts.null_distribution(
            dist.edges, dist.counts, dist.observed, _distribution_title(dist),
            f"{dist.statistic} ({unit})"))
        out["distribution_note"] = (
            f"observed {num(dist.observed, True)}; p {p_text(row.p_value, row.n_resamples)}")
    gains, losses = movers(row, texts)
    out["gains"], out["losses"] = gains, losses
    out["reasons"] = any(m["baseline_reason"] or m["candidate_reason"]
                         for m in gains + losses)
    return out


def _query_table(rows: tuple[Any, ...], texts: Mapping[str, str]) -> dict[str, Any]:
    """Every paired query: per metric each baseline's value, then each row's difference."""
    ids: list[str] = []
    seen: set[str] = set()
    for r in rows:
        for q in r.query_ids:
            if q not in seen:
                seen.add(q)
                ids.append(q)
    groups: list[dict[str, Any]] = []
    columns: list[tuple[Any, str, str]] = []  # (row, "baseline" | "diff", header)
    for metric in dict.fromkeys(r.metric for r in rows):
        mine = [r for r in rows if r.metric == metric and r.query_ids]
        cols: list[tuple[Any, str, str]] = []
        for base in dict.fromkeys(r.baseline for r in mine):
            first = next(r for r in mine if r.baseline == base)
            if len(first.baseline_values) == len(first.query_ids):
                cols.append((first, "baseline", str(base)))
        cols += [(r, "diff", f"Δ {r.candidate}") for r in mine]
        if cols:
            groups.append({"metric": metric, "span": len(cols)})
            columns += cols
    # one column at a time: (text, class) per query id
    filled: list[dict[str, tuple[str, str]]] = []
    for r, what, _ in columns:
        col: dict[str, tuple[str, str]] = {}
        if what == "baseline":
            for q, v in zip(r.query_ids, r.baseline_values, strict=True):
                col[q] = (num(v), "")
        else:
            up = r.higher_is_better is not False
            for q, d in zip(r.query_ids, r.differences, strict=True):
                cls = "tie" if d == 0.0 else ("win" if (d > 0) == up else "loss")
                col[q] = (num(d, True), cls)
        filled.append(col)
    empty = ("", "")
    body = [[col.get(q, empty) for col in filled] for q in ids]
    headers = [{"text": h, "metric": r.metric,
                "candidate": "" if what == "baseline" else (r.candidate or "")}
               for r, what, h in columns]
    return {"groups": groups, "headers": headers, "ids": ids,
            "texts": [texts.get(q, "") for q in ids], "rows": body,
            "has_text": any(texts.get(q) for q in ids)}


def hover(rows: tuple[Any, ...], ids: list[str], texts: Mapping[str, str],
          drawn: Mapping[str, tuple[int, list[int]]]) -> dict[str, Any]:
    """What the page's script shows over a per-query bar or a scatter's point: the query
    id, its text and the row's baseline value, candidate value and difference (written
    as the tables write them).

    Returns:
        ``ids`` and ``texts`` (every query once, text cut to
        :data:`HOVER_TEXT`); ``series``: lists of cells,
        each list once however many rows share it (a baseline's values); ``rows``:
        ``{row index: [metric, baseline name, candidate name, baseline series, candidate
        series, difference series, positions in ids or None for ids' own order]}``;
        ``charts``: ``{chart id: [row index, the row's query positions in the order of
        the chart's marks, or None for the row's own order]}``.
    """
    where = {q: i for i, q in enumerate(ids)}
    series: dict[tuple[str, ...], int] = {}

    def ref(cells: list[str]) -> int:
        return series.setdefault(tuple(cells), len(series))

    out_rows: dict[str, list[Any]] = {}
    for r, _ in drawn.values():
        row = rows[r]
        n = len(row.query_ids)
        base = ([num(v) for v in row.baseline_values] if len(row.baseline_values) == n
                else [""] * n)
        cand = ([num(v) for v in row.candidate_values] if len(row.candidate_values) == n
                else [""] * n)
        at = [where[q] for q in row.query_ids]
        out_rows[str(r)] = [row.metric, row.baseline or "baseline",
                            row.candidate or "candidate", ref(base), ref(cand),
                            ref([num(d, True) for d in row.differences]),
                            None if at == list(range(n)) else at]
    def short(text: str) -> str:
        return text if len(text) <= HOVER_TEXT else text[: HOVER_TEXT - 1] + "…"

    return {"ids": ids, "texts": [short(texts.get(q, "")) for q in ids],
            "series": [list(cells) for cells in series], "rows": out_rows,
            "charts": {chart: [r, None if order == list(range(len(rows[r].query_ids)))
                               else order] for chart, (r, order) in drawn.items()}}


def grouped_warnings(rows: tuple[Any, ...], labels: list[str]) -> list[dict[str, Any]]:
    """Each distinct warning of the rows once, in row order, with the rows it concerns:
    ``{"text", "where"}``; ``where`` reads ``run2: ap, rr; run3: every metric``,
    ``every metric and candidate``, or nothing when there is one row; ``labels[i]`` names
    row ``i``'s pair."""
    found: dict[str, dict[str, list[str]]] = {}
    for row, label in zip(rows, labels, strict=True):
        for text in row.warnings:
            metrics = found.setdefault(text, {}).setdefault(label, [])
            if row.metric not in metrics:
                metrics.append(row.metric)
    every = {r.metric for r in rows}
    out = []
    for text, pairs in found.items():
        concerned = sum(len(m) for m in pairs.values())
        if concerned < len(rows):
            where = "; ".join(f"{label}: {'every metric' if set(m) == every else ', '.join(m)}"
                              for label, m in pairs.items())
        elif len(set(labels)) > 1:
            where = "every metric and candidate"
        else:  # one pair: nothing to tell apart
            where = "every metric" if len(every) > 1 else ""
        out.append({"text": text, "where": where})
    return out


def slice_context(report: Any, page: Charts) -> dict[str, Any] | None:
    """The slice table and forest plot of a comparison made by tag (``Report.slices``):
    ``{"table": [...], "headers": [...], "forest": chart id, "size": tests adjusted
    together}``; None without slices. The forest plot has a panel per metric (or a row
    per metric and slice on one scale) and a row per slice (and candidate)."""
    from evalkit.report.slices import slice_cells, slice_family_size

    slices = report.slices
    if not slices:
        return None
    headers, cells = slice_cells(slices, report.correction)
    several = len({(x.candidate, x.baseline) for x in slices}) > 1
    items = [{"group": x.metric,
              "label": f"{x.slice} · {x.candidate}" if several else x.slice,
              "diff": x.diff, "lo": x.ci_low if math.isfinite(x.ci_low) else None,
              "hi": x.ci_high if math.isfinite(x.ci_high) else None,
              "significant": x.significant,
              "p": x.p_display(adjusted=x.p_adjusted is not None)} for x in slices]
    conf = 1 - slices[0].alpha
    forest = page.add("forest", charts.forest(
        items, f"By tag: differences (candidate − baseline) on each tag's cases, "
        f"{conf:.0%} intervals"))
    size = (report.settings or {}).get("slice_family_size", slice_family_size(slices))
    return {"headers": headers,
            "table": [{"cells": line, "significant": x.significant, "metric": x.metric,
                       "candidate": x.candidate} for x, line in zip(slices, cells,
                                                                   strict=True)],
            "forest": forest, "size": size,
            "untested": any(x.n_queries < 2 for x in slices),
            "adjusted": any(x.p_adjusted is not None for x in slices)}


def collections_forest(report: Any, page: Charts) -> str | None:
    """The forest plot of a comparison over several collections (``Report.pooled``): per
    metric a row per collection (its effect and interval) and the pooled effect with its
    interval (a diamond); None without pooled metrics."""
    items: list[dict[str, Any]] = []
    for p in report.pooled:
        for c in p.collections:
            items.append({"group": p.metric, "label": c.collection, "diff": c.effect,
                          "lo": c.ci_low, "hi": c.ci_high,
                          "significant": c.ci_low > 0 or c.ci_high < 0,
                          "p": f"weight {100 * c.weight:.1f}%"
                          + (f", scored at {c.scoring}" if c.scoring else "")})
        items.append({"group": p.metric, "label": charts.POOLED, "diff": p.estimate,
                      "lo": p.ci_low, "hi": p.ci_high, "significant": p.significant,
                      "p": p_text(p.p_adjusted if p.p_adjusted is not None else p.p_value,
                                  None), "pooled": True})
    if not items:
        return None
    conf = 1 - report.pooled[0].alpha
    return page.add("forest", charts.forest(
        items, f"Each collection's difference and the pooled difference, {conf:.0%} "
        "intervals"))


def compare_context(report: Any, limit: int = charts.MAX_MARKS) -> dict[str, Any]:
    """The template's variables for a comparison report (see the module docstring)."""
    page = Charts()
    texts: Mapping[str, str] = report.queries or {}
    rows = report.rows
    several_baselines = len({r.baseline for r in rows}) > 1
    one_pair = len({(r.candidate, r.baseline) for r in rows}) == 1
    forest_items = [{"group": r.metric,
                     "label": r.metric if one_pair else _label(r, several_baselines),
                     "diff": r.difference,
                     "lo": r.ci_low, "hi": r.ci_high, "significant": bool(r.significant),
                     "p": r.p_display(adjusted=r.p_adjusted is not None)}
                    for r in rows if r.difference is not None]
    forest = None
    conf = next((r.confidence for r in rows if r.confidence), 0.95)
    if forest_items:
        forest = page.add("forest", charts.forest(
            forest_items, f"Differences (candidate − baseline) with {conf:.0%} intervals"))
    slices = slice_context(report, page)
    collections = collections_forest(report, page)
    settings: Mapping[str, Any] = report.settings or {}
    correction = report.correction or (
        CORRECTION_LABELS.get(str(settings.get("correction")), "")
        if settings.get("correction") not in (None, "none") else "")
    drawn: dict[str, tuple[int, list[int]]] = {}
    sections = [_section(r, texts, page, i, limit, drawn) for i, r in enumerate(rows, 1)]
    labels = [_label(r, several_baselines) for r in rows]
    for section, label in zip(sections, labels, strict=True):
        section["label"] = label
    warned = grouped_warnings(rows, labels)
    said = {w["text"] for w in warned}
    # a note that only repeats a row's warning (alone, or after its rows' label) is
    # shown once, in the warnings
    notes = [n for n in report.notes
             if n not in said and not any(n.endswith(": " + t) for t in said)]
    queries = _query_table(rows, texts)
    k = samples_per_run(report)
    return {
        "kind": "compare", "title": report.title, "subject": report.subject,
        "reference": report.reference, "summary": report.summary,
        "description": report.description or ", ".join(
            METHOD_LABELS.get(m, m) for m in dict.fromkeys(r.method for r in rows if r.method)),
        "runs": [{"name": r.name, "source": r.source or "", "role": r.role}
                 for r in report.runs],
        "correction": correction, "adjusted": any(r.p_adjusted is not None for r in rows),
        "table": [{**_summary_row(r), **_samples_cells(r, k)} for r in rows],
        "samples": has_samples(report), "notes": notes, "warnings": warned,
        "ci_label": f"{conf:.0%} CI",
        "forest": forest, "sections": sections, "queries": queries,
        "slices": slices, "collections_forest": collections,
        "metrics": list(dict.fromkeys(r.metric for r in rows)),
        # the summary's fixed metric column: the longest name, with room for wide letters
        "metric_width": math.ceil(1.05 * max((len(r.metric) for r in rows), default=6)) + 1,
        "candidates": list(dict.fromkeys(r.candidate or "" for r in rows)),
        "max_marks": limit, "sampled": any(s["sampled"] for s in sections),
        "charts": page.items, "hover": hover(rows, queries["ids"], texts, drawn),
    }


__all__ = ["HOVER_TEXT", "collections_forest", "compare_context", "grouped_warnings", "hover",
           "slice_context"]
