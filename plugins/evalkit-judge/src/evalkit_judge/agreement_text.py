"""The text of ``evalkit agreement``: per labelled metric the agreement statistics and
the PPI++ mean (:class:`evalkit_judge.agreement.AgreementReport`)."""

from __future__ import annotations

import math

from evalkit.stats.ppi import adjustment_text
from evalkit_judge.agreement import AgreementReport, MetricAgreement


def _num(x: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(x) else f"{x:.{digits}f}"


def _metric_lines(m: MetricAgreement) -> list[str]:
    t = m.table
    b = t.bias
    pct = f"{round(b.confidence * 100):d}%"
    lines = [
        f"{t.metric}: {t.n} labelled cases",
        f"  cohen_kappa          unweighted {_num(t.kappa['none'])}  linear "
        f"{_num(t.kappa['linear'])}  quadratic {_num(t.kappa['quadratic'])}",
        f"  krippendorff_alpha   nominal {_num(t.alpha['nominal'])}  ordinal "
        f"{_num(t.alpha['ordinal'])}  interval {_num(t.alpha['interval'])}",
        f"  spearman_rho         {_num(t.spearman)}",
        f"  bias (judge - human) {b.mean:+.4f}  {pct} CI [{_num(b.ci_low)}, {_num(b.ci_high)}]",
    ]
    lines.extend(f"  note                 {note}" for note in t.notes)
    if m.ppi is not None:
        p = m.ppi
        lines.append(
            f"  human mean (PPI++)   {p.estimate:.4f}  {round(p.confidence * 100):d}% CI "
            f"[{p.ci_low:.4f}, {p.ci_high:.4f}]  on {p.n_labels} human labels and "
            f"{p.n_unlabelled} judge-only cases (lambda {p.lam:.3f}; judge mean "
            f"{p.judge_mean:.4f}, labels mean {p.labels_mean:.4f}"
            f"{adjustment_text(p.adjustment)})")
        if m.ppi_note:
            lines.append(f"  note                 {m.ppi_note}")
    else:
        lines.append(f"  human mean (PPI++)   none: {m.ppi_note}")
    if m.plan is not None:
        lines.append(plan_line(m))
    labels = [f"{v:g}" for v in t.values]
    w_row = max(len(label) for label in labels)
    w_col = max([4, *map(len, labels), *(len(str(c)) for row in t.confusion for c in row)])
    lines.append("  confusion (rows judge, columns human):")
    lines.append("    " + " " * w_row + " | " + " ".join(x.rjust(w_col) for x in labels))
    for label, row in zip(labels, t.confusion, strict=True):
        lines.append("    " + label.rjust(w_row) + " | "
                     + " ".join(str(c).rjust(w_col) for c in row))
    return lines


def plan_line(m: MetricAgreement) -> str:
    """``  plan: a 95% PPI++ interval of width 0.2 needs 57 of 100 cases labelled ...``
    (empty when the metric was not planned)."""
    p = m.plan
    if p is None:
        return ""
    head = f"  plan                 a {round(p.confidence * 100):d}% PPI++ interval of width " \
        f"{p.target_width:g} needs "
    if p.n_labels is None:
        head += (f"more than the {p.n_cases} cases hold (width {p.width:.4f} with all but "
                 "one labelled)")
    else:
        head += f"{p.n_labels} of {p.n_cases} cases labelled (width {p.width:.4f})"
    return (f"{head}; labels alone: {p.labels_only_n}; labelled now: {m.table.n} "
            "(from these labels as a pilot)")


def agreement_lines(report: AgreementReport) -> list[str]:
    """The lines ``evalkit agreement`` prints for ``report``."""
    sel = report.selection or "not declared"
    if report.selection == "random":
        sel += f" (seed {report.seed})"
    lines = [f"run {report.run!r}: {report.n_cases} cases; labels {report.labels_source} "
             f"(selection: {sel})"]
    for m in report.metrics:
        lines.extend(_metric_lines(m))
    lines.extend(f"warning: {m.warning}" for m in report.metrics if m.warning)
    if report.warning:
        lines.append(f"warning: {report.warning}")
    return lines


__all__ = ["agreement_lines", "plan_line"]
