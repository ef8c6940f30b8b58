"""Numbers as people read them, written one way by every command, reporter and example.

* p-values go through :func:`evalkit.stats.format_p_value`: at or below the floor of a
  resampling test, ``1/(B+1)``, they print as ``p < 0.0001`` (B = 10,000) or ``p < 0.001``
  (B = 1,000), never as ``0.0001`` or ``0.0000``; :func:`p_cell` is the same text for a
  table cell (``0.0123`` or ``< 0.0001``) and :func:`p_phrase` for a sentence
  (``p = 0.0123``, ``p < 0.0001``).
* :func:`signed` writes a difference or an interval bound with its sign, and never prints a
  value that rounds to zero as ``-0.0000``; :func:`decimal` writes a mean or any other
  table value with 4 decimals (both from :mod:`evalkit.tables.cells`, re-exported here).
* :func:`figure` writes a planning figure with 4 decimals, or 4 significant digits below
  1e-3, so that a small effect is never shown as ``0.0000``. Every one of them switches
  to scientific notation with 4 significant digits at :data:`LARGE` (1e6) and above, so a
  huge value is ``1e+308``, not 309 digits cut by the table.
* :func:`interval` writes a confidence interval, ``[+0.0434, +0.0747]``, its open ends as
  ``-inf``/``+inf``.
* :func:`~evalkit.stats.numeric.json_ready` (re-exported here) turns NaN and infinities
  into ``null`` for JSON output, which has no token for them (Python would write a bare
  ``NaN`` that JSON parsers refuse).
* :data:`METHOD_LABELS`, :data:`CI_LABELS` and :data:`CORRECTION_LABELS` are the names of
  the tests, intervals and corrections of :mod:`evalkit.stats` as reports print them.

The statistics are imported only when a p-value is formatted.
"""

from __future__ import annotations

import math
from typing import Any

from evalkit.stats.numeric import json_ready as json_ready
from evalkit.tables.cells import LARGE as LARGE
from evalkit.tables.cells import decimal as decimal
from evalkit.tables.cells import signed as signed


def p_phrase(p: float, n_resamples: int | None = None) -> str:
    """``"p = 0.0123"``, or ``"p < 0.0001"`` at the floor of a test of ``n_resamples``
    resamples (pass None for an analytic or exact p)."""
    from evalkit.stats.results import format_p_value

    return format_p_value(p, n_resamples or None)


def p_cell(p: float | None, n_resamples: int | None = None) -> str:
    """The p-value for a table cell: ``"0.0123"`` or ``"< 0.0001"``; empty for None."""
    if p is None:
        return ""
    if math.isnan(p):
        return "NaN"
    return p_phrase(p, n_resamples).removeprefix("p = ").removeprefix("p ")


_with_sign = signed  # ``figure``'s argument ``signed`` hides the function


def figure(x: float, signed: bool = False, digits: int = 4) -> str:
    """A planning figure (an effect, a detectable difference, a spread) for a table:
    ``digits`` decimals (``0.0404``, ``+0.0200``), or ``digits`` significant digits when
    it is below ``1e-3`` in size, so that a small value is never shown as ``0.0000``
    (``1.26e-05``, ``+1e-05``). Zero, infinities and NaN are written as by :func:`signed`.
    """
    if math.isfinite(x) and x != 0 and abs(x) < 1e-3:
        return f"{x:+.{digits}g}" if signed else f"{x:.{digits}g}"
    return _with_sign(x, digits) if signed else decimal(x, digits)


def interval(low: float | None, high: float | None) -> str:
    """``[+0.0434, +0.0747]``; an end that is None or infinite is ``unbounded``
    (``[-0.0309, unbounded]``: the test cannot bound the difference on that side at this
    n, although the difference of a bounded metric lies in [-1, 1]), and an interval with
    no finite end is ``unbounded``."""
    def end(x: float | None) -> str:
        return "unbounded" if x is None or math.isinf(x) else signed(x)

    if end(low) == end(high) == "unbounded":
        return "unbounded"
    return f"[{end(low)}, {end(high)}]"


#: What a log-scale measure's row name adds (gm_map, gm_bpref): its difference and
#: interval are of mean ln values, its means geometric means (docs/metrics.md).
LOG_SCALE_LABEL = " [diff: mean ln]"


def ratio_text(diff: float) -> str:
    """``exp(diff)``, the ratio of geometric means a difference of mean logs stands for,
    to 4 significant digits (``"1.463"``; ``"inf"`` past the float range)."""
    try:
        return f"{math.exp(diff):.4g}"
    except OverflowError:
        return "inf"


def row_label(name: str, metric: str) -> str:
    """``name`` with :data:`LOG_SCALE_LABEL` when ``metric``'s per-query values are logs
    (:func:`evalkit.data.summaries.is_log_scale`)."""
    from evalkit.data.summaries import is_log_scale

    return name + LOG_SCALE_LABEL if is_log_scale(metric) else name


def log_scale_note(name: str, metric: str, diff: float, ci_low: float | None,
                   ci_high: float | None) -> str:
    """The note under a comparison that explains a log-scale row (gm_map)."""
    ci = "" if ci_low is None or ci_high is None else (
        f", CI [{ratio_text(ci_low)}, {ratio_text(ci_high)}]")
    return (f"{name}: the means are geometric means, exp of the mean per-query "
            f"ln(max(value, 1e-5)) as trec_eval prints {metric}; diff and CI are "
            f"differences of mean ln values; the ratio of geometric means is exp(diff) = "
            f"{ratio_text(diff)}{ci}")


def log_scale_notes(rows: Any) -> list[str]:
    """:func:`log_scale_note` of each report row (``name``, ``metric``, ``difference``,
    ``ci_low``, ``ci_high``) with a difference whose metric's per-case values are logs."""
    from evalkit.data.summaries import is_log_scale

    return [log_scale_note(r.name, r.metric, r.difference, r.ci_low, r.ci_high)
            for r in rows if r.difference is not None and is_log_scale(r.metric)]


#: The paired tests (``method=``), as a sentence names them.
METHOD_LABELS: dict[str, str] = {
    "auto": "auto (sign-flip randomization test, with the bootstrap-t on skewed "
            "differences; paired t-test on 0/1 metrics)",
    "randomization": "sign-flip randomization test",
    "t-test": "paired t-test",
    "bootstrap-t": "studentized bootstrap (bootstrap-t)",
    "bootstrap": "paired bootstrap (percentile CI, p from the centred null)",
    "randomization+bootstrap-t": "sign-flip randomization test and bootstrap-t (both must "
                                 "reject)",
}
#: The multiple-comparison corrections (``correction=``), as a column heading names them.
CORRECTION_LABELS: dict[str, str] = {
    "holm": "Holm", "bh": "Benjamini-Hochberg", "westfall-young": "Westfall-Young min-P",
    "none": "none",
}
#: The interval methods (``ci=``).
CI_LABELS: dict[str, str] = {
    "percentile": "percentile", "bca": "BCa", "bootstrap-t": "bootstrap-t",
    "inversion": "test-inversion", "t": "t",
    "inversion+bootstrap-t": "test-inversion and bootstrap-t (their union)",
}


__all__ = ["CI_LABELS", "CORRECTION_LABELS", "METHOD_LABELS", "figure", "interval",
           "json_ready", "p_cell", "p_phrase", "signed"]
