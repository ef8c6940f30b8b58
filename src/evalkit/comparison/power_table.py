"""The tables ``evalkit power`` prints: a :class:`~evalkit.comparison.PowerPlan` as the
pilot's spread, the minimum detectable effects, the queries each effect needs, and the
notes (skewed differences, effects no n detects)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit.report.formatting import figure

if TYPE_CHECKING:
    from evalkit.comparison.planning import Plan, PowerPlan


def _pct(x: float | None, se: float | None = None) -> str:
    if x is None:
        return ""
    return f"{100 * x:.1f}%" + (f" ± {100 * se:.1f}" if se is not None else "")


def print_power_plans(result: PowerPlan, console: Any) -> None:
    """Print ``result`` on ``console`` (a :class:`rich.console.Console`; one that is not a
    terminal is widened to 140 columns so that rows never wrap)."""
    from evalkit.report.escaping import terminal_text

    plans = result.plans
    if not console.is_terminal:
        console.width = max(console.width, 140)
    console.print(terminal_text(result.header), soft_wrap=True, markup=False)
    simulated = result.simulated
    settings = (f"alpha {result.alpha:g}, {result.alternative}, target power "
                f"{100 * result.power:g}%" + ("; ± is the simulation's standard error"
                                              if simulated else ""))
    if result.clustered:
        g = next((p.n_clusters for p in plans if p.n_clusters), None)
        star = next((p.effective_clusters for p in plans if p.effective_clusters), None)
        console.print(
            f"clustered ({g} clusters in the pilot"
            + (f", effective number G* = {star:.1f}" if star is not None else "")
            + "): power of the cluster sign-flip test with its skew guard, what compare "
            + ("runs by default with clusters (simulated over whole clusters, "
               f"B = {result.n_resamples}); " if simulated else
               "runs by default with clusters, is not simulated (--no-simulate); ")
            + "smallest detectable diffs and clusters needed: CR1 t-test approximation; "
            + settings, soft_wrap=True)
    elif any(p.n_pilot for p in plans):
        name = _test_name(plans)
        console.print(
            f"power of {'the ' if name != _MIXED else ''}{name}, what compare runs by "
            "default" + (f" (simulated, B = {result.n_resamples}); " if simulated
                         and result.n_resamples else " (simulated); " if simulated
                         else ", is not simulated (--no-simulate); ")
            + "smallest detectable diffs and queries needed: paired t-test"
            + (" approximation; " if name != "paired t-test" else "; ") + settings,
            soft_wrap=True)
    else:
        console.print(f"paired t-test, {settings}", soft_wrap=True)
    with_metric = any(p.metric for p in plans)
    pilot = any(p.n_pilot for p in plans)
    if pilot:
        _pilot_table(plans, console)
    # the simulated power's column only when something was simulated (not --no-simulate)
    _detectable_table(plans, with_metric, pilot and simulated, console)
    _samples_tables(plans, with_metric, console)
    if any(p.needed for p in plans):
        _needed_table(plans, with_metric, pilot and simulated, console)
    _notes(plans, simulated, console)


def _unit(plans: Sequence[Plan]) -> str:
    """What n counts: "clusters" for a clustered plan, else "queries"."""
    return "clusters" if any(p.n_clusters for p in plans) else "queries"


def _pilot_table(plans: Sequence[Plan], console: Any) -> None:
    """The pilot's n, mean difference, spread and skewness, per metric."""
    from evalkit.report.rich_tables import new_table as Table

    n_head = "pilot n" if _unit(plans) == "queries" else "pilot n (clusters)"
    t = Table("metric", n_head, "mean diff", "sd of diffs", "skewness",
              box=None, pad_edge=False, title="pilot", title_justify="default")
    for p in plans:
        t.add_row(p.metric or "", str(p.n_pilot), figure(p.mean_diff or 0.0, signed=True),
                  figure(p.sd_diff), f"{p.skewness:+.2f}")
    _right(t, 1)
    console.print(t)


def _detectable_table(plans: Sequence[Plan], with_metric: bool, pilot: bool, console: Any) -> None:
    """The smallest detectable difference at each planned n (and its simulated power,
    with a pilot); nothing when no n was planned and there is no pilot."""
    from evalkit.report.rich_tables import new_table as Table

    t = Table(*(["metric"] if with_metric else []), _unit(plans),
              "smallest detectable diff" + _approx(plans),
              *([_simulated_head(plans)] if pilot else []),
              title="minimum detectable effect", title_justify="default")
    for p in plans:
        for d in p.detectable:
            cells = ([p.metric or ""] if with_metric else []) + [str(d.n), figure(d.mde)]
            if pilot:
                cells.append(_pct(d.simulated_power, d.simulated_se))
            t.add_row(*cells)
    _right(t, 1 if with_metric else 0)
    if t.row_count:
        console.print(t)


def _needed_table(plans: Sequence[Plan], with_metric: bool, pilot: bool, console: Any) -> None:
    """The queries each effect needs, with the power at the first planned n."""
    from evalkit.report.rich_tables import new_table as Table

    unit = _unit(plans)
    approx = _approx(plans)
    n_label = next((f"power at {x.n} {unit}{approx}" for p in plans for x in p.needed
                    if x.n), None)
    t = Table(*(["metric"] if with_metric else []), "diff", f"{unit} needed{approx}",
              *([n_label] if n_label else []),
              *([_simulated_head(plans)] if pilot else []),
              title=f"{unit} needed", title_justify="default")
    for p in plans:
        for x in p.needed:
            cells = ([p.metric or ""] if with_metric else []) + [
                figure(x.effect, signed=True),
                str(x.n_required) if x.n_required is not None else "n/a",
                *([_pct(x.power_at_n)] if n_label else []),
            ]
            if pilot:
                cells.append(_pct(x.simulated_power, x.simulated_se))
            t.add_row(*cells)
    _right(t, 1 if with_metric else 0)
    console.print(t)


#: :func:`_test_name` of plans whose metrics run different tests.
_MIXED = ("the test compare runs for each metric (the paired t-test for a binary one, "
          "else the sign-flip test with its skew guard)")


def _test_name(plans: Sequence[Plan]) -> str:
    """The test a pilot's plans simulate, as the table names it: what ``compare`` runs
    (``pilot_test`` is "t-test" only for an unclustered metric declared binary)."""
    if _unit(plans) == "clusters":
        return "cluster sign-flip test"
    binary = {p.pilot_test == "t-test" for p in plans if p.n_pilot}
    if binary == {True}:
        return "paired t-test"
    return "sign-flip test with its skew guard" if binary == {False} else _MIXED


def _approx(plans: Sequence[Plan]) -> str:
    """" (t approx.)" after the analytic figures' headings, unless the test run is the
    paired t-test (a plan from an sd, or a pilot's binary metrics)."""
    if not any(p.n_pilot for p in plans):
        return ""
    return "" if _test_name(plans) == "paired t-test" else " (t approx.)"


def _simulated_head(plans: Sequence[Plan]) -> str:
    """The heading of the simulated power's column, naming the test simulated."""
    name = _test_name(plans)
    if name == _MIXED:
        name = "compare's test"
    elif name == "sign-flip test with its skew guard":
        name = "sign-flip test"
    return f"power, {name} (simulated)"


def _notes(plans: Sequence[Plan], simulated: bool, console: Any) -> None:
    """Each note once, labelled with the metric(s) it is about when there is a pilot,
    then which metrics' differences are skewed."""
    from evalkit.report.escaping import terminal_text

    remarks: dict[str, list[str]] = {}
    for p in plans:
        texts = [x.error for x in p.needed if x.error] + [p.skewness_warning or ""]
        for text in filter(None, texts):
            metrics = remarks.setdefault(text, [])
            if p.metric and p.metric not in metrics:
                metrics.append(p.metric)
    for text, metrics in remarks.items():
        label = f"{', '.join(metrics)}: " if metrics else ""
        console.print(terminal_text(f"note: {label}{text}"), soft_wrap=True, markup=False)
    skewed = [p.metric for p in plans if p.skewness is not None and abs(p.skewness) > 1]
    if skewed:
        console.print(terminal_text(f"note: the differences of {', '.join(map(str, skewed))} "
                                    "are skewed; " + ("trust the simulated power over the "
                                    "analytic figures" if simulated else "simulate the power "
                                    "(leave out --no-simulate) rather than trust the analytic "
                                    "figures")), soft_wrap=True, markup=False)


def _samples_tables(plans: Sequence[Plan], with_metric: bool, console: Any) -> None:
    """The n x K table of a pilot with repeated samples, and where more samples stop
    helping."""
    from evalkit.report.escaping import terminal_text
    from evalkit.report.rich_tables import new_table as Table

    if not any(p.samples for p in plans):
        return
    t = Table(*(["metric"] if with_metric else []), "queries", "samples per case (K)",
              "sd of diffs", "smallest detectable diff",
              title="cases x samples (paired t-test on per-case means)",
              title_justify="default")
    for p in plans:
        for d in p.samples.detectable if p.samples else ():
            t.add_row(*([p.metric or ""] if with_metric else []), str(d.n), str(d.k),
                      figure(d.sd_diff), figure(d.mde))
    _right(t, 1 if with_metric else 0)
    console.print(t)
    for p in plans:
        s = p.samples
        if s is None:
            continue
        label = f"{p.metric}: " if with_metric else ""
        where = (f"more samples stop helping beyond K = {s.enough_k} (the smallest "
                 f"detectable diff is then within {100 * s.tolerance:g}% of its value with "
                 "unlimited samples; add cases instead)" if s.enough_k is not None else
                 "the pilot shows no between-case variance: more samples keep helping")
        console.print(terminal_text(
            f"note: {label}pilot K = {s.k_baseline} and {s.k_candidate}; "
            f"{100 * s.within_share:.1f}% of the per-case variance comes from "
            f"resampling; {where}"), soft_wrap=True, markup=False)


def _right(table: Any, first: int) -> None:
    for col in table.columns[first:]:
        col.justify = "right"


__all__ = ["print_power_plans"]
