"""``evalkit power``: how small a difference can a comparison of n queries detect, and how
many queries does a given difference need?

The command parses its options, calls :func:`evalkit.comparison.plan_power` (a pilot
pair of runs, or a given sd of the per-query differences) and prints the
:class:`~evalkit.comparison.PowerPlan` (:mod:`evalkit.comparison.power_table`) or its JSON.
Only typer is imported at module level.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.output import compared_metrics, note, progress
from evalkit.comparison.options import Alternative
from evalkit.execute.run_files import Missing
from evalkit.io.limits import MAX_EPOCHS


def command(
    ctx: typer.Context,
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
    epochs: Annotated[list[int] | None, typer.Option(
        "--epochs", "-k", min=1, max=MAX_EPOCHS,
        help="Planned samples per case K, repeatable: with a pilot whose runs have K >= 2 "
        "samples per case, the smallest detectable diff at each (n, K) and the K beyond "
        "which more samples stop helping (default: 1, 2, 5, 10, 20 and the pilot's). "
        "Refused with --sd, which has no within-case spread.",
        show_default=False,
    )] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels (or irds:DATASET_ID), to score pilot runs given as TREC "
        "run files.",
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
        help="With a pilot, also simulate the power from its own differences (refused "
        "with --sd: nothing to simulate from): of the test compare runs by default, the "
        "sign-flip test with its skew guard (the t-test for a binary metric; clustered, "
        "the cluster sign-flip test over whole clusters of the pilot): the primary power "
        "figure.",
    )] = True,
    trials: Annotated[int, typer.Option(
        "--trials", min=100, max=1_000_000,  # evalkit.stats.power.MAX_TRIALS
        help="Simulated comparisons per figure (at least 100: the "
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
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete",
        help="Plan from the queries both pilot runs have (and say which were left out) "
        "instead of refusing an incomplete run or runs over different queries.",
    )] = False,
    cluster: Annotated[bool, typer.Option(
        "--cluster", help="Clustered cases: plan in clusters (each golden case's "
        "'cluster', of the golden sets the pilot runs were made from): every n counts "
        "clusters; the power is simulated for the cluster sign-flip test compare runs, "
        "the smallest detectable diffs and clusters needed are CR1 t-test "
        "approximations; fewer than 20 clusters warn (docs/statistics.md#clustered-cases)."
    )] = False,
    clusters_file: Annotated[Path | None, typer.Option(
        "--clusters", show_default=False,
        help="Clustered cases from a file: 'query id<TAB>cluster' lines, or a golden set "
        "whose cases name their 'cluster'; implies --cluster.")] = None,
    as_json_flag: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Plan a comparison: the smallest difference n queries can detect, and the queries a
    given difference needs.

    Give a pilot pair of runs (BASELINE CANDIDATE), or --sd, the standard deviation of
    the per-query differences. Examples: `evalkit power base.jsonl cand.jsonl -n 50 -n 200
    -e 0.02`; `evalkit power --sd 0.15 -n 100 -e 0.03`.
    """
    from evalkit.comparison import plan_power

    pilot = list(runs or [])
    if not pilot:
        _refuse_simulation_options(ctx, simulate)
    elif not simulate:
        from evalkit.cli.usage import refuse_ignored

        refuse_ignored(ctx, ("--trials", "--seed"), "with --no-simulate nothing is "
                       "simulated; leave them out, or leave out --no-simulate")
    names = compared_metrics(metric, of="plan")
    with progress("planning" + (" (simulating)" if simulate and pilot else "")):
        result = plan_power(
            *pilot, sd=sd, n=n or [], effects=effect or [], metrics=names,
            qrels=qrels, alpha=alpha, power=power, alternative=alternative.value,
            simulate=simulate, trials=trials, seed=seed, relevance_level=relevance_level,
            missing=missing.value if missing is not None else None, depth=depth,
            epochs=epochs or [], allow_incomplete=allow_incomplete,
            clusters=clusters_file if clusters_file is not None else (cluster or None),
        )
    for w in result.warnings:
        note(f"warning: {w}")
    if as_json_flag:
        from evalkit.cli.output import stdout_document

        stdout_document(json.dumps(result.to_json(), indent=2, allow_nan=False))
        return
    from evalkit.cli.output import output_console
    from evalkit.comparison.power_table import print_power_plans

    print_power_plans(result, output_console(highlight=False))


def _refuse_simulation_options(ctx: typer.Context, simulate: bool) -> None:
    """Without a pilot nothing is simulated (the plan is the t-test's closed form), so
    ``--simulate``, ``--trials`` and ``--seed`` given on the command line would be
    ignored: a usage error (exit 2) naming them. ``--no-simulate`` asks for nothing."""
    from evalkit.cli.errors import CliError
    from evalkit.cli.usage import given_options

    given = [o for o in given_options(ctx) if o in ("--trials", "--seed")
             or (o == "--simulate" and simulate)]
    if given:
        them = "it" if len(given) == 1 else "them"
        raise CliError(
            f"{' and '.join(given)}: the simulation draws from a pilot pair of runs "
            "(BASELINE CANDIDATE), and with --sd alone the plan is the paired t-test's "
            f"closed form with nothing simulated; drop {them}, or give the pilot runs")
