"""A comparison in words: the one-line description of its test, and its notes labelled
with the metrics and pairs they concern."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.comparison.records import MetricComparison, Settings
from evalkit.report.formatting import CI_LABELS, CORRECTION_LABELS, METHOD_LABELS


def describe(settings: Settings) -> str:
    """One line saying how the comparison was tested: ``"sign-flip randomization test
    (--test auto); test-inversion CI; 10,000 resamples, seed 42; p adjusted by Holm over
    2 tests; alpha 0.05"``."""
    methods = list(settings.methods_used) or [settings.method]
    cis = list(settings.ci_methods_used) or (
        [settings.ci_method] if settings.ci_method else [])
    guarded = "randomization+bootstrap-t"
    joined = settings.method == "auto" and guarded in methods and "randomization" in methods
    labels = [
        ("sign-flip randomization test, with the bootstrap-t (both must reject) on skewed "
         "differences") if joined and m == "randomization" else METHOD_LABELS.get(m, m)
        for m in methods if not (joined and m == guarded)]
    united = joined and "inversion+bootstrap-t" in cis
    if united:  # one procedure: the sign-flip test, joined by the bootstrap-t where skewed
        cis = [c for c in cis if c != "inversion+bootstrap-t"]
    label = " and ".join(labels)
    if settings.method == "auto" and settings.methods_used:
        label += " (--test auto)"
    parts = [label]
    if cis:
        parts.append(" and ".join(CI_LABELS.get(c, c) for c in cis) + " CI" + (
            " (with the bootstrap-t interval's ends where those are wider)" if united else ""))
    if settings.clusters is not None:
        from evalkit.stats.clusters import clusters_phrase

        parts.append("clustered: the unit is the cluster ("
                     f"{clusters_phrase(settings.clusters, settings.effective_clusters)}; "
                     "CR1 standard error, whole-cluster sign flips and bootstrap)")
    if settings.alternative != "two-sided":
        parts.append(f"one-sided ({settings.alternative})")
    if any(m != "t-test" for m in methods) or any(c != "t" for c in cis):
        parts.append(f"{settings.n_resamples:,} resamples, seed {settings.seed}")
    if settings.adjusted:
        tests = "test" if settings.family_size == 1 else "tests"
        parts.append(f"p adjusted by {CORRECTION_LABELS[settings.correction]} over "
                     f"{settings.family_size} {tests}")
    parts.append(f"alpha {settings.alpha:g}")
    return "; ".join(parts)


def result_notes(
    rows: Iterable[MetricComparison], input_notes: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The statistics' notes on the comparisons (skewed differences, few queries...) as
    ``(label, note)``: each note once, in row order, labelled with the metric and pair it
    belongs to (``"ap (tfidf vs bm25)"``; ``"ap, rr (tfidf vs bm25); ap (run2 vs bm25)"``
    when several share it word for word). Notes on the inputs (``input_notes``, which
    every row repeats) are left out."""
    on_inputs = set(input_notes)
    where: dict[str, dict[tuple[str, str], list[str]]] = {}
    for c in rows:
        for text in c.warnings:
            if text in on_inputs:
                continue
            metrics = where.setdefault(text, {}).setdefault((c.candidate, c.baseline), [])
            if c.metric not in metrics:
                metrics.append(c.metric)
    return [
        ("; ".join(f"{', '.join(metrics)} ({cand} vs {base})"
                   for (cand, base), metrics in pairs.items()), text)
        for text, pairs in where.items()
    ]


__all__ = ["describe", "result_notes"]
