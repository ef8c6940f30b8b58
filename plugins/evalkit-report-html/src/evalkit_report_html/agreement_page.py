"""The agreement page: what the template shows for ``evalkit agreement --report
html:PATH``, built from the report's dictionary
(:meth:`evalkit_judge.agreement.AgreementReport.to_dict`).

Per labelled metric: the number of labelled cases, Cohen's kappa (three weightings),
Krippendorff's alpha (three levels), Spearman's rho, the mean bias judge minus human with
its interval, the PPI++ line (the human mean, its interval, on how many human labels and
judge-only cases, lambda), the labelling plan when one was asked, and the confusion
matrix. Numbers are written as on the other pages (:mod:`evalkit_report_html.page`);
every name is text for jinja2's autoescaping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit_report_html.page import num


def _percent(confidence: Any) -> str:
    return f"{round(float(confidence) * 100):d}%"


def _ppi_line(m: Mapping[str, Any]) -> str:
    p = m.get("ppi")
    if not isinstance(p, Mapping):
        return f"none: {m.get('ppi_note') or 'not computed'}"
    return (f"{num(p['estimate'])}, {_percent(p['confidence'])} CI "
            f"[{num(p['ci_low'])}, {num(p['ci_high'])}] on {p['n_labels']} human labels "
            f"and {p['n_unlabelled']} judge-only cases (lambda {float(p['lambda']):.3f}; "
            f"judge mean {num(p['judge_mean'])}, labels mean {num(p['labels_mean'])}"
            + (f", {p['adjustment']} interval for pass/fail labels" if p.get("adjustment")
               else "") + ")"
            + (f"; note: {m['ppi_note']}" if m.get("ppi_note") else ""))


def _plan_line(m: Mapping[str, Any]) -> str:
    p = m.get("plan")
    if not isinstance(p, Mapping):
        return ""
    need = (f"more than the {p['n_cases']} cases hold" if p["n_labels"] is None
            else f"{p['n_labels']} of {p['n_cases']} cases labelled")
    return (f"a {_percent(p['confidence'])} PPI++ interval of width {p['target_width']:g} "
            f"needs {need} (width {num(p['width'])}); labels alone: {p['labels_only_n']}")


def _metric(m: Mapping[str, Any]) -> dict[str, Any]:
    bias = m.get("bias") or {}
    kappa, alpha = m.get("cohen_kappa") or {}, m.get("krippendorff_alpha") or {}
    confusion = m.get("confusion") or {}
    return {
        "metric": str(m.get("metric", "")), "n": m.get("n"),
        "kappa": [(w, num(kappa.get(k))) for w, k in
                  (("unweighted", "none"), ("linear", "linear"), ("quadratic", "quadratic"))],
        "alpha": [(lv, num(alpha.get(lv))) for lv in ("nominal", "ordinal", "interval")],
        "spearman": num(m.get("spearman_rho")),
        "bias": num(bias.get("mean"), True),
        "bias_ci": f"[{num(bias.get('ci_low'), True)}, {num(bias.get('ci_high'), True)}]",
        "bias_confidence": _percent(bias.get("confidence", 0.95)),
        "ppi": _ppi_line(m), "plan": _plan_line(m),
        "values": [f"{float(v):g}" for v in confusion.get("values") or ()],
        "confusion": [[int(c) for c in row] for row in confusion.get("counts") or ()],
    }


def agreement_context(report: Any) -> dict[str, Any]:
    """The template's variables for an agreement report (see the module docstring)."""
    data: Mapping[str, Any] = report.to_dict()
    selection = data.get("selection") or "not declared"
    if data.get("selection") == "random":
        selection += f" (seed {data.get('seed')})"
    return {
        "kind": "agreement", "title": "evalkit agreement", "subject": str(data["run"]),
        "reference": None, "n_cases": data.get("n_cases"),
        "labels": str(data.get("labels") or ""), "selection": selection,
        "metrics": [_metric(m) for m in data.get("metrics") or ()],
        "notes": ([str(data["warning"])] if data.get("warning") else [])
        + [f"{m.get('metric', '')}: {note}" for m in data.get("metrics") or ()
           for note in m.get("notes") or ()],
        "charts": [],
    }


__all__ = ["agreement_context"]
