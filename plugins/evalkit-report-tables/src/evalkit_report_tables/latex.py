"""LaTeX reporter: a comparison as the results table of an IR paper.

One row per system and one column per metric (the mean over the paired queries, four
decimals), ``booktabs`` rules, the best value of each column in bold (by the metric's
polarity; every system that ties it at the printed precision), and the verdicts of the
tests at the corrected p:

* against a baseline (the default): ``$^{\\dagger}$`` after a mean significantly better
  than the baseline's, ``$^{\\nabla}$`` after one significantly worse;
* every pair (``all_pairs=True``): each system gets a letter (a, b, c, ...; the ``#``
  column), and a mean carries, as superscript, the letters of the systems it is
  significantly better than, as ranx's ``to_latex`` does.

The caption says what was compared and how: the metrics, the systems, the number of
paired queries, the legend of the marks, the test (per metric when ``auto`` chose two),
one- or two-sided, the resamples and seed (or that the p is analytic), the correction
and the size of its family, and alpha. Run and metric names are escaped (:func:`escape`,
which is :func:`evalkit.report.escaping.latex_text`);
known metrics get the names papers print (:func:`paper_name`: ``AP``, ``nDCG@10``,
``P@10``, ``R@100``, ``RR``).

A comparison by tag (``by="tag"``) is followed by a second table, its slices
(``tab:evalkit-slices``): a row per slice, metric and candidate with the slice's cases,
both means, the difference marked by its verdict, its interval and adjusted p.

The table needs ``\\usepackage{booktabs}`` and nothing else; it compiles with pdflatex
(the suite compiles it where pdflatex is installed). A gate becomes a table of its
checks. Rendering is plain string work: nothing is imported beyond the report model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.report.escaping import latex_text as escape
from evalkit.report.formatting import (
    CORRECTION_LABELS,
    METHOD_LABELS,
    decimal,
    figure,
    signed,
)
from evalkit.report.model import Report, ReportRow, as_report

#: Metrics whose printed name differs from the canonical one (``name`` or ``name@k``).
_PAPER = {"ap": "AP", "ndcg": "nDCG", "rr": "RR", "err": "ERR", "rbp": "RBP",
          "infap": "infAP", "r_precision": "R-Prec", "precision": "P", "recall": "R",
          "success": "Success", "judged": "Judged", "set_p": "Set-P", "set_f": "Set-F",
          "set_recall": "Set-R", "bpref": "bpref"}

#: The mark after a mean significantly better than the baseline's.
BETTER = r"$^{\dagger}$"
#: The mark after a mean significantly worse than the baseline's.
WORSE = r"$^{\nabla}$"


def paper_name(metric: str) -> str:
    """The name an IR paper prints for ``metric`` (a canonical evalkit name), escaped:
    ``ap`` -> ``AP``, ``ndcg@10`` -> ``nDCG@10``, ``precision@10`` -> ``P@10``,
    ``recall@100`` -> ``R@100``, ``rr`` -> ``RR``; other names as they are."""
    base, at, k = metric.partition("@")
    return escape(_PAPER.get(base, base) + at + k)


def _number(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "--"
    if math.isinf(x):
        return r"$\infty$" if x > 0 else r"$-\infty$"
    text = decimal(x)
    return "$-$" + text[1:] if text.startswith("-") and float(text) != 0.0 else (
        text.lstrip("-"))


def _letter(i: int) -> str:
    """a, b, ..., z, aa, ab, ...: the label of the ``i``-th system."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def _systems(report: Report) -> list[str]:
    names = [r.name for r in report.runs]
    for row in report.rows:
        for name in (row.baseline, row.candidate):
            if name is not None and name not in names:
                names.append(name)
    return names


def _better(row: ReportRow) -> str | None:
    """The system of ``row`` that is significantly better, or None."""
    if not row.significant or not row.difference or row.candidate is None:
        return None
    up = row.difference > 0
    return row.candidate if up == (row.higher_is_better is not False) else row.baseline


def _means(report: Report) -> dict[tuple[str, str], float | None]:
    out: dict[tuple[str, str], float | None] = {}
    for row in report.rows:
        if row.candidate is not None:
            out.setdefault((row.candidate, row.metric), row.value)
        if row.baseline is not None:
            out.setdefault((row.baseline, row.metric), row.reference_value)
    return out


def _bold(cells: Mapping[str, str], higher: bool) -> set[str]:
    """The systems whose printed value is the best of the column."""
    values = {s: float(c.replace("$-$", "-")) for s, c in cells.items()
              if c not in ("--",) and "infty" not in c}
    if not values:
        return set()
    best = max(values.values()) if higher else min(values.values())
    return {s for s, v in values.items() if v == best}


#: ``auto``'s two procedures: the sign-flip test alone, and joined by the bootstrap-t
#: where the differences are skewed (:data:`evalkit.stats.methods.SKEW_GUARD`)
_AUTO_PAIR = frozenset({"randomization", "randomization+bootstrap-t"})


def _methods(report: Report, metrics: Sequence[str]) -> tuple[str, bool]:
    """The tests in words, and whether there are several: then each is preceded by the
    metrics it backs. A metric whose comparisons ran different tests (``auto``: the
    sign-flip test, joined by the bootstrap-t on a pair with skewed differences) is
    described as such, per pair (or per candidate), so that no metric is listed under
    two tests (``auto`` runs the t-test on 0/1 metrics)."""
    each = "pair" if report.settings.get("all_pairs") else "candidate"
    return _tests_used([(r.metric, r.method) for r in report.rows], metrics, each)


def _tests_used(tests: Sequence[tuple[str, str | None]], metrics: Sequence[str], each: str
                ) -> tuple[str, bool]:
    """:func:`_methods` of ``(metric, method)`` pairs, ``each`` naming what a test ran on
    (``"pair"``, ``"candidate"``, ``"slice"``)."""
    used: dict[str, list[str]] = {}
    for metric, method in sorted(tests, key=lambda t: metrics.index(t[0])):
        methods = used.setdefault(paper_name(metric), [])
        if (method or "") not in methods:
            methods.append(method or "")
    by: dict[str, list[str]] = {}
    for metric, methods in used.items():
        if len(methods) == 1:
            label = METHOD_LABELS.get(methods[0], methods[0] or "paired test").split(" (")[0]
            phrase = escape(label)
        elif set(methods) == _AUTO_PAIR:
            phrase = ("sign-flip randomization test, joined per " + each + " by the "
                      "bootstrap-t (both must reject) where that " + each + "'s "
                      "differences are skewed ($|G_1| \\geq 1$)")
        else:
            phrase = " or ".join(
                escape(METHOD_LABELS.get(m, m or "paired test").split(" (")[0])
                for m in methods) + f", by {each}"
        by.setdefault(phrase, []).append(metric)
    if len(by) == 1:
        return next(iter(by)), False
    return "; ".join(f"{', '.join(ms)}: {phrase}" for phrase, ms in by.items()), True


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _how(report: Report, metrics: Sequence[str]) -> str:
    """The test, sidedness, resamples, correction and alpha, as one parenthesis."""
    s: Mapping[str, Any] = report.settings
    alternative = s.get("alternative", "two-sided")
    sided = "two-sided" if alternative == "two-sided" else (
        f"one-sided ({escape(str(alternative))})")
    methods, several = _methods(report, metrics)
    parts = [f"{sided} tests ({methods})" if several else f"{methods}, {sided}"]
    resampled = [r.n_resamples for r in report.rows if r.n_resamples]
    if resampled or any(r.method not in (None, "t-test") for r in report.rows):
        n = int(s.get("n_resamples") or max(resampled or [0]))
        seed = s.get("seed")
        parts.append(_count(n, "resample") + ("" if seed is None else f", seed {seed}"))
    else:
        parts.append("analytic p, no resampling")
    correction = s.get("correction")
    label = CORRECTION_LABELS.get(str(correction), report.correction) if correction else (
        report.correction)
    if correction == "none" or label is None:
        parts.append("p not adjusted for multiplicity")
    else:
        family = s.get("family_size") or len(report.rows)
        parts.append(f"p adjusted by {escape(label)} over {_count(int(family), 'test')}")
    alpha = s.get("alpha")
    if alpha is None:
        confidence = next((r.confidence for r in report.rows if r.confidence), 0.95)
        alpha = round(1 - confidence, 10)
    parts.append(rf"$\alpha = {float(alpha):g}$")
    return "; ".join(parts)


def _queries(report: Report) -> str:
    ns = sorted({r.n_queries for r in report.rows if r.n_queries is not None})
    if not ns:
        return ""
    if len(ns) == 1:
        return " over " + _count(ns[0], "query", "queries")
    return f" over {ns[0]:,} to {ns[-1]:,} queries"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _compare_table(report: Report) -> str:
    systems = _systems(report)
    metrics = list(dict.fromkeys(r.metric for r in report.rows))
    pairwise = bool(report.settings.get("all_pairs")) or (
        len({r.baseline for r in report.rows}) > 1)
    letters = {s: _letter(i) for i, s in enumerate(systems)}
    means = _means(report)
    marks: dict[tuple[str, str], list[str]] = {}
    for row in report.rows:
        winner = _better(row)
        if winner is None:
            continue
        loser = row.baseline if winner == row.candidate else row.candidate
        assert loser is not None
        if pairwise:
            marks.setdefault((winner, row.metric), []).append(letters[loser])
        elif row.candidate is not None:
            marks.setdefault((row.candidate, row.metric), []).append(
                BETTER if winner == row.candidate else WORSE)
    cells: dict[str, dict[str, str]] = {m: {s: _number(means.get((s, m))) for s in systems}
                                        for m in metrics}
    hib = {m: next(r.higher_is_better for r in report.rows if r.metric == m) is not False
           for m in metrics}
    bold = {m: _bold(cells[m], hib[m]) for m in metrics}
    head = (["\\#"] if pairwise else []) + ["System", *(paper_name(m) for m in metrics)]
    lines = [" & ".join(head) + r" \\"]
    for s in systems:
        line = [letters[s]] if pairwise else []
        line.append(escape(s))
        for m in metrics:
            text = cells[m][s]
            if s in bold[m]:
                text = rf"\textbf{{{text}}}"
            found = marks.get((s, m), [])
            if pairwise and found:
                text += "$^{" + "".join(sorted(found, key=lambda x: (len(x), x))) + "}$"
            elif found:
                text += found[0]
            line.append(text)
        lines.append(" & ".join(line) + r" \\")
    baseline = report.reference or systems[0]
    names = _and([escape(s) for s in systems])
    caption = (f"Mean {_and([paper_name(m) for m in metrics])} of {names}"
               f"{_queries(report)}; the best value per column is in bold. ")
    if pairwise:
        legend = ", ".join(f"{letters[s]}: {escape(s)}" for s in systems)
        caption += ("Superscript letters name the systems a mean is significantly better "
                    f"than ({legend}).")
    else:
        caption += (f"{BETTER} marks a mean significantly better than the baseline's "
                    f"({escape(baseline)}), {WORSE} one significantly worse.")
    caption += f" Paired by query: {_how(report, metrics)}."
    spec = ("c" if pairwise else "") + "l" + "r" * len(metrics)
    table = _table(report, caption, "tab:evalkit-compare", spec, lines)
    return table + ("\n" + _slice_table(report) if report.slices else "")


def _slice_table(report: Report) -> str:
    """The comparison on each tag's cases (``--by tag``): a row per slice, metric (and
    candidate, when there are several) with the slice's cases, both means, the difference
    marked by its verdict, its interval and the adjusted p; the caption says how the
    slices were tested and adjusted."""
    from evalkit.report.slices import slice_family_size

    slices = report.slices
    metrics = list(dict.fromkeys(s.metric for s in slices))
    several = len({(s.candidate, s.baseline) for s in slices}) > 1
    adjusted = any(s.p_adjusted is not None for s in slices)
    correction = escape(report.correction or "Holm")
    head = ["Tag", "Metric", *(["Candidate"] if several else []), "$n$", "Baseline",
            "Candidate" + (" mean" if several else ""), "Difference",
            f"{100 * (1 - slices[0].alpha):g}\\% CI",
            f"p ({correction})" if adjusted else "p"]
    lines = [" & ".join(head) + r" \\"]
    for s in slices:
        mark = ""
        if s.significant:
            better = (s.diff > 0) == (s.higher_is_better is not False)
            mark = BETTER if better else WORSE
        p = s.p_display(adjusted=adjusted)
        line = [escape(s.slice), paper_name(s.metric), *([escape(s.candidate)] if several
                                                          else []),
                f"{s.n_queries:,}", _number(s.baseline_mean), _number(s.candidate_mean),
                _signed(s.diff) + mark,
                f"[{_end(s.ci_low)}, {_end(s.ci_high)}]" if s.n_queries >= 2 else "--",
                escape(p).replace("<", "$<$")]
        lines.append(" & ".join(line) + r" \\")
    tests, _ = _tests_used([(s.metric, s.method) for s in slices], metrics, "slice")
    family = slice_family_size(slices)
    verdict = (f"p adjusted by {correction} over {_count(family, 'slice test')}, a slice of "
               "one case having no test" if adjusted else "p not adjusted for multiplicity")
    cand = escape(slices[0].candidate) if not several else "each candidate"
    caption = (
        f"Difference {cand} minus {escape(slices[0].baseline)} on each tag's cases "
        f"(a case with several tags is in each of their rows). Paired by query: {tests}. "
        f"{BETTER} marks a difference significantly in the candidate's favour, {WORSE} one "
        f"significantly against it, at $\\alpha = {slices[0].alpha:g}$ ({verdict}).")
    spec = "ll" + ("l" if several else "") + "rrrrrr"
    return _table(report, caption, "tab:evalkit-slices", spec, lines)


def _end(x: float) -> str:
    """An interval end: signed, or $\\pm\\infty$ when open."""
    if math.isinf(x):
        return r"$\infty$" if x > 0 else r"$-\infty$"
    return _signed(x)


def _table(report: Report, caption: str, label: str, spec: str, lines: list[str]) -> str:
    subject = escape(report.subject) + (f" vs {escape(report.reference)}"
                                        if report.reference else "")
    body = [f"    {lines[0]}", r"    \midrule", *(f"    {x}" for x in lines[1:])]
    return "\n".join([
        f"% {escape(report.title)}: {subject} (paired-evalkit)",
        r"% needs \usepackage{booktabs} in the preamble",
        r"\begin{table}[t]",
        r"  \centering",
        rf"  \caption{{{caption}}}",
        rf"  \label{{{label}}}",
        rf"  \begin{{tabular}}{{{spec}}}",
        r"    \toprule",
        *body,
        r"    \bottomrule",
        r"  \end{tabular}",
        r"\end{table}",
        "",
    ])


def _gate_table(report: Report) -> str:
    stats = any(r.has_comparison for r in report.rows)
    head = ["Check", "Metric", "Rule", "Value"]
    if stats:
        head += ["Baseline", "Difference", f"p ({escape(report.correction or 'Holm')})"]
    head.append("Verdict")
    lines = [" & ".join(head) + r" \\"]
    for r in report.rows:
        line = [escape(r.name), paper_name(r.metric), escape(r.rule), _number(r.value)]
        if stats:
            diff = "" if r.difference is None else _number(r.difference)
            if r.difference is not None and r.difference > 0:
                diff = "+" + diff
            line += [_number(r.reference_value) if r.reference_value is not None else "",
                     diff, escape(r.p_display(adjusted=r.p_adjusted is not None))]
        line.append(escape(r.status))
        lines.append(" & ".join(line) + r" \\")
    against = f" against the baseline {escape(report.reference)}" if report.reference else ""
    caption = (f"Gate of run {escape(report.subject)}{against}: {escape(report.summary)}.")
    spec = "lllr" + ("rrr" if stats else "") + "l"
    return _table(report, caption, "tab:evalkit-gate", spec, lines)


def _signed(x: float) -> str:
    text = signed(x)
    return ("$-$" if text.startswith("-") else "$+$") + text[1:]


def _pooled_table(report: Report) -> str:
    """A comparison over several collections: a row per collection and a pooled row, a
    column pair (difference, interval) per metric; the caption says how the effects were
    pooled, the verdicts and each metric's heterogeneity."""
    from evalkit.stats.meta import TAU2_LABELS

    pooled = report.pooled
    first = pooled[0]
    confidence = f"{100 * (1 - first.alpha):g}\\% CI"
    scored = any(c.scoring for c in first.collections)  # the level each row was scored at
    head = ["Collection", *(["Scored"] if scored else []), "$n$"]
    for p in pooled:
        head += [paper_name(p.metric), confidence]
    lines = [" & ".join(head) + r" \\"]
    for i, c in enumerate(first.collections):
        line = [escape(c.collection), *([escape(c.scoring)] if scored else []),
                f"{c.n_queries:,}"]
        for p in pooled:
            row = p.collections[i]
            line += [_signed(row.effect), f"[{_signed(row.ci_low)}, {_signed(row.ci_high)}]"]
        lines.append(" & ".join(line) + r" \\")
    lines.append(r"\midrule")
    line = ["Pooled", *([""] if scored else []), f"{first.n_queries:,}"]
    for p in pooled:
        better = (p.estimate > 0) == (p.higher_is_better is not False)
        mark = "" if not p.significant else BETTER if better else WORSE
        line += [_signed(p.estimate) + mark, f"[{_signed(p.ci_low)}, {_signed(p.ci_high)}]"]
    lines.append(" & ".join(line) + r" \\")
    metrics = _and([paper_name(p.metric) for p in pooled])
    how = ("Hartung-Knapp-Sidik-Jonkman interval, $t$ on $k-1$ df"
           if first.interval == "hartung-knapp" else "normal interval")
    adjusted = any(p.p_adjusted is not None for p in pooled)
    label = report.correction or "Holm"
    verdict = (f"p adjusted by {escape(label)} over {_count(len(pooled), 'metric')}"
               if adjusted and len(pooled) > 1 else "p not adjusted")
    hetero = "; ".join(
        f"{paper_name(p.metric)} $\\tau^2 = {figure(p.tau2)}$"
        + ("" if p.i2 is None else f", $I^2 = {100 * p.i2:.1f}\\%$, $Q = {p.q:.2f}$")
        for p in pooled)
    caption = (
        f"Difference {escape(report.subject)} minus {escape(report.reference or '')} in "
        f"{metrics} on each of {_count(len(first.collections), 'collection')} (the mean "
        "over its queries, paired by query; interval $\\pm z\\,s/\\sqrt{n}$) and pooled "
        f"by a random-effects model ({TAU2_LABELS.get(first.method, first.method)} "
        f"$\\tau^2$, {how}). {BETTER} marks a pooled difference significantly in the "
        f"candidate's favour, {WORSE} one significantly against it, at "
        f"$\\alpha = {first.alpha:g}$ ({verdict}). Heterogeneity: {hetero}.")
    if scored:
        caption += (" Scored: the settings each collection's runs were scored with "
                    "(relevance level, depth limit).")
    spec = "l" + ("l" if scored else "") + "r" + "rr" * len(pooled)
    return _table(report, caption, "tab:evalkit-collections", spec, lines)


def render_latex(obj: Any) -> str:
    """The report (a comparison, a gate, or a :class:`~evalkit.report.Report`) as a
    LaTeX ``table`` environment with ``booktabs`` rules (see the module docstring).

    Raises:
        TypeError: ``obj`` is not a report and has no ``to_report()``.
    """
    report = as_report(obj)
    if report.kind == "gate":
        return _gate_table(report)
    if report.pooled:
        return _pooled_table(report)
    return _compare_table(report)


__all__ = ["BETTER", "WORSE", "escape", "paper_name", "render_latex"]
