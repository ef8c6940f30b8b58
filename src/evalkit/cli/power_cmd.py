"""``evalkit power``: how small a difference can a comparison of n queries detect, and how
many queries does a given difference need?

From a pilot pair of runs (the spread of their per-query differences) or from a given
standard deviation of those differences. Analytic figures use the paired t-test's
noncentral t; with a pilot, the power is also simulated by resampling the pilot's own
differences (trustworthy when they are skewed). Library imports happen inside functions.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from evalkit.cli.compare_cmd import Alternative, input_warnings, load_runs
from evalkit.cli.errors import CliError
from evalkit.cli.eval_cmd import Missing, note, progress, split_metrics


@dataclass
class Detectable:
    """The minimum detectable effect at ``n`` queries."""

    n: int
    mde: float
    simulated_power: float | None = None
    simulated_se: float | None = None


@dataclass
class Needed:
    """The queries needed to detect ``effect``, and the power at the pilot's n."""

    effect: float
    n_required: int | None
    power_at_n: float | None
    n: int | None
    simulated_power: float | None = None
    simulated_se: float | None = None
    error: str | None = None


@dataclass
class Plan:
    """Planning figures for one metric (or for a given sd)."""

    metric: str | None
    sd_diff: float
    n_pilot: int | None = None
    mean_diff: float | None = None
    skewness: float | None = None
    skewness_warning: str | None = None
    detectable: list[Detectable] = field(default_factory=list)
    needed: list[Needed] = field(default_factory=list)


def plan_from_sd(
    sd: float, ns: list[int], effects: list[float], *, alpha: float, power: float,
    alternative: str,
) -> Plan:
    from evalkit.stats import minimum_detectable_effect, required_n, t_power

    plan = Plan(metric=None, sd_diff=sd)
    for n in ns:
        plan.detectable.append(Detectable(n, minimum_detectable_effect(
            n, sd, alpha=alpha, power=power, alternative=alternative)))
    for e in effects:
        plan.needed.append(_needed(e, sd, ns[0] if ns else None, alpha=alpha, power=power,
                                   alternative=alternative, required_n=required_n,
                                   t_power=t_power))
    return plan


def _needed(
    effect: float, sd: float, n: int | None, *, alpha: float, power: float, alternative: str,
    required_n: Any, t_power: Any,
) -> Needed:
    try:
        n_req: int | None = int(required_n(effect, sd, alpha=alpha, power=power,
                                           alternative=alternative))
        error = None
    except ValueError as exc:  # e.g. an effect against a one-sided alternative
        n_req, error = None, str(exc)
    at_n = float(t_power(effect, sd, n, alpha, alternative)) if n is not None and n >= 2 else None
    return Needed(effect=effect, n_required=n_req, power_at_n=at_n, n=n, error=error)


def plans_from_pilot(
    baseline: Any, candidate: Any, metrics: list[str], ns: list[int], effects: list[float],
    *, alpha: float, power: float, alternative: str, simulate: bool, trials: int, seed: int,
) -> list[Plan]:
    from evalkit.stats import plan_from_pilot, required_n, simulate_power, t_power

    plans: list[Plan] = []
    for metric in metrics:
        base, cand = baseline.scores(metric), candidate.scores(metric)
        diffs = [cand[q] - base[q] for q in base]
        plan: Plan | None = None
        for n in ns or [len(diffs)]:
            p = plan_from_pilot(candidate, baseline, metric, n=n, alpha=alpha, power=power,
                                alternative=alternative, simulate=simulate, n_trials=trials,
                                seed=seed)
            if plan is None:
                plan = Plan(metric=metric, sd_diff=p.sd_diff, n_pilot=p.n_pilot,
                            mean_diff=p.mean_diff, skewness=p.skewness,
                            skewness_warning=p.skewness_warning)
            sim = p.simulated
            plan.detectable.append(Detectable(
                p.n, p.mde, sim.power if sim else None, sim.se if sim else None))
        assert plan is not None
        n_at = ns[0] if ns else plan.n_pilot
        for e in effects:
            need = _needed(e, plan.sd_diff, n_at, alpha=alpha, power=power,
                           alternative=alternative, required_n=required_n, t_power=t_power)
            if simulate and n_at is not None and n_at >= 2:
                sim = simulate_power(diffs, e, n_at, alpha=alpha, alternative=alternative,
                                     n_trials=trials, seed=seed)
                need.simulated_power, need.simulated_se = sim.power, sim.se
            plan.needed.append(need)
        plans.append(plan)
    return plans


# ----------------------------------------------------------------------- output
def _pct(x: float | None, se: float | None = None) -> str:
    if x is None:
        return ""
    return f"{100 * x:.1f}%" + (f" ± {100 * se:.1f}" if se is not None else "")


def print_plans(plans: list[Plan], *, alpha: float, power: float, alternative: str,
                header: str) -> None:
    from rich.table import Table

    from evalkit.cli.errors import output_console
    from evalkit.formatting import figure

    console = output_console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 140)
    console.print(header, soft_wrap=True)
    simulated = any(d.simulated_se is not None for p in plans for d in p.detectable) or any(
        x.simulated_se is not None for p in plans for x in p.needed)
    console.print(f"paired t-test, alpha {alpha:g}, {alternative}, target power "
                  f"{100 * power:g}%" + ("; ± is the simulation's standard error"
                                         if simulated else ""), soft_wrap=True)
    with_metric = any(p.metric for p in plans)
    pilot = any(p.n_pilot for p in plans)
    if pilot:
        t = Table("metric", "pilot n", "mean diff", "sd of diffs", "skewness",
                  box=None, pad_edge=False, title="pilot", title_justify="left")
        for p in plans:
            t.add_row(p.metric or "", str(p.n_pilot), figure(p.mean_diff or 0.0, signed=True),
                      figure(p.sd_diff), f"{p.skewness:+.2f}")
        _right(t, 1)
        console.print(t)
    t = Table(*(["metric"] if with_metric else []), "queries", "smallest detectable diff",
              *(["simulated power at it"] if pilot else []), box=None, pad_edge=False,
              title="minimum detectable effect", title_justify="left")
    for p in plans:
        for d in p.detectable:
            cells = ([p.metric or ""] if with_metric else []) + [str(d.n), figure(d.mde)]
            if pilot:
                cells.append(_pct(d.simulated_power, d.simulated_se))
            t.add_row(*cells)
    _right(t, 1 if with_metric else 0)
    if t.row_count:  # no -n and no pilot: only the queries-needed table has rows
        console.print(t)
    if any(p.needed for p in plans):
        n_label = next((f"power at {x.n} queries" for p in plans for x in p.needed if x.n),
                       None)
        t = Table(*(["metric"] if with_metric else []), "diff", "queries needed",
                  *([n_label] if n_label else []),
                  *(["simulated"] if pilot else []), box=None, pad_edge=False,
                  title="queries needed", title_justify="left")
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
    # each note once, labelled with the metric(s) it is about when there is a pilot
    remarks: dict[str, list[str]] = {}
    for p in plans:
        texts = [x.error for x in p.needed if x.error] + [p.skewness_warning or ""]
        for text in filter(None, texts):
            metrics = remarks.setdefault(text, [])
            if p.metric and p.metric not in metrics:
                metrics.append(p.metric)
    for text, metrics in remarks.items():
        label = f"{', '.join(metrics)}: " if metrics else ""
        console.print(f"note: {label}{text}", soft_wrap=True)
    skewed = [p.metric for p in plans if p.skewness is not None and abs(p.skewness) > 1]
    if skewed:
        console.print(f"note: the differences of {', '.join(str(m) for m in skewed)} are "
                      "skewed; trust the simulated power over the analytic figures",
                      soft_wrap=True)


def _right(table: Any, first: int) -> None:
    for col in table.columns[first:]:
        col.justify = "right"


def check_effects(effects: list[float], alternative: str) -> None:
    """Refuse an effect no test can be planned for: 0 (no sample size detects it), not a
    number, or one pointing against a one-sided alternative."""
    for e in effects:
        if not math.isfinite(e):
            raise CliError(f"--effect {e:g}: give a finite difference in metric units")
        if e == 0:
            raise CliError(
                "--effect 0: a difference of 0 cannot be detected at any number of queries; "
                "give the smallest true difference worth detecting, e.g. -e 0.02"
            )
        if (alternative == "greater" and e < 0) or (alternative == "less" and e > 0):
            sign, side = ("positive", "greater") if alternative == "greater" else (
                "negative", "less")
            raise CliError(
                f"--effect {e:g} points against --alternative {side}, which tests for a "
                f"{sign} difference (candidate - baseline); give a {sign} effect, or use "
                "--alternative two-sided"
            )


# ----------------------------------------------------------------------- command
def command(
    runs: Annotated[list[Path] | None, typer.Argument(
        metavar="[BASELINE CANDIDATE]",
        help="A pilot pair of runs (TREC run files with --qrels, or run artifacts); the "
        "spread of their per-query differences drives the plan. Omit them and give --sd.",
        show_default=False,
    )] = None,
    sd: Annotated[float | None, typer.Option(
        "--sd", help="Standard deviation of the per-query differences, instead of a pilot.",
        show_default=False,
    )] = None,
    n: Annotated[list[int] | None, typer.Option(
        "--queries", "-n", min=2,
        help="Planned number of queries, repeatable (default: the pilot's).",
        show_default=False,
    )] = None,
    effect: Annotated[list[float] | None, typer.Option(
        "--effect", "-e",
        help="A true difference (metric units) to plan for, repeatable: prints the queries "
        "it needs, and the power at the first planned n (or the pilot's).",
        show_default=False,
    )] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels, to score pilot runs given as TREC run files.",
        show_default=False,
    )] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m",
        help="Metric(s) to plan for (default: as for compare).", show_default=False,
    )] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Target power.")] = 0.8,
    alternative: Annotated[Alternative, typer.Option(
        "--alternative", help="two-sided, greater or less."
    )] = Alternative.two_sided,
    simulate: Annotated[bool, typer.Option(
        "--simulate/--no-simulate",
        help="With a pilot, also simulate the power from its own differences.",
    )] = True,
    trials: Annotated[int, typer.Option(
        "--trials", min=100, help="Simulated comparisons per figure (at least 100: the "
        "simulated power's standard error is up to 0.5/sqrt(trials))."
    )] = 2000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the simulation.")] = 42,
    relevance_level: Annotated[int | None, typer.Option(
        "--relevance-level", "-l", min=1, help="As for compare.", show_default=False,
    )] = None,
    depth: Annotated[int | None, typer.Option(
        "--depth", "-M", min=1, help="As for compare.", show_default=False,
    )] = None,
    missing: Annotated[Missing | None, typer.Option(
        "--missing", help="As for compare.", show_default=False,
    )] = None,
    as_json_flag: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Plan a comparison: the smallest difference n queries can detect, and the queries a
    given difference needs.

    Give a pilot pair of runs (BASELINE CANDIDATE), or --sd, the standard deviation of
    the per-query differences. Examples: `evalkit power base.jsonl cand.jsonl -n 50 -n 200
    -e 0.02`; `evalkit power --sd 0.15 -n 100 -e 0.03`.
    """
    paths = list(runs or [])
    ns = list(dict.fromkeys(n or []))
    effects = list(dict.fromkeys(effect or []))
    alt = alternative.value
    from evalkit.cli.inputs import require_alpha

    require_alpha(alpha)
    if not alpha < power < 1.0:
        raise CliError(f"--power must be between alpha ({alpha:g}) and 1, got {power:g}")
    if paths and sd is not None:
        raise CliError("give a pilot pair of runs or --sd, not both")
    if paths:
        if len(paths) != 2:
            raise CliError("a pilot is two runs: BASELINE CANDIDATE")
        check_effects(effects, alt)
        results, metrics = load_runs(
            paths, qrels=qrels, requested=split_metrics(metric),
            relevance_level=relevance_level,
            missing=missing.value if missing is not None else None, depth=depth,
        )
        for w in input_warnings(results, paths):
            note(f"warning: {w}")
        with progress("planning" + (" (simulating)" if simulate else "")):
            plans = plans_from_pilot(results[0], results[1], metrics, ns, effects,
                                     alpha=alpha, power=power, alternative=alt,
                                     simulate=simulate, trials=trials, seed=seed)
        header = (f"pilot: {results[1].name} - {results[0].name} ({paths[1]} vs {paths[0]}), "
                  "paired by query id")
    elif sd is not None:
        if not (sd > 0 and math.isfinite(sd)):
            raise CliError(f"--sd must be a positive number, got {sd:g}")
        check_effects(effects, alt)
        if not ns and not effects:
            raise CliError("with --sd, give the planned queries (-n) or an effect (-e)")
        plans = [plan_from_sd(sd, ns, effects, alpha=alpha, power=power, alternative=alt)]
        header = f"sd of the per-query differences: {sd:g}"
    else:
        raise CliError("give a pilot pair of runs (BASELINE CANDIDATE) or --sd")
    if as_json_flag:
        doc = {"alpha": alpha, "power": power, "alternative": alt, "test": "t-test",
               "pilot": [str(p) for p in paths] or None, "seed": seed if paths else None,
               "plans": [asdict(p) for p in plans]}
        from evalkit.formatting import json_ready

        typer.echo(json.dumps(json_ready(doc), indent=2, allow_nan=False))
        return
    print_plans(plans, alpha=alpha, power=power, alternative=alt, header=header)
