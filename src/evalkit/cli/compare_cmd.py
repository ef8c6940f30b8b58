"""``evalkit compare``: is each candidate's difference from the baseline real?

It calls :func:`evalkit.compare` and hands the :class:`~evalkit.comparison.Comparison` to
the table (:mod:`evalkit.report.compare_table`), ``--json``/``--format json``
(``Comparison.to_json``) and ``--report FORMAT:PATH``. With ``--collections FILE`` it
reads the collections file, compares the candidate with the baseline in each collection
and pools the differences (:func:`evalkit.meta_compare`), printed as tables
(:mod:`evalkit.report.pooled_table`), JSON (``MetaComparison.to_json``) or ``--report``.
Every refusal is the library's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from evalkit.cli.output import TableOrJson, compared_metrics, note, pick_format, progress
from evalkit.cli.usage import given_options, refuse_ignored
from evalkit.comparison.options import (
    DEFAULT_METHOD,
    Alternative,
    By,
    CIMethod,
    Correction,
    Method,
    Tau2,
)
from evalkit.execute.run_files import Missing

__all__ = ["DEFAULT_METHOD", "Alternative", "CIMethod", "Correction", "Method", "command"]


def command(
    ctx: typer.Context,
    runs: Annotated[list[Path] | None, typer.Argument(
        metavar="BASELINE CANDIDATE...",
        help="The baseline, then one or more candidates: TREC run files (scored with --qrels) "
        "or run artifacts saved by `evalkit eval --save`; folders of them or quoted glob "
        "patterns ('runs/*.txt') give every file they hold or match.",
        show_default=False,
    )] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", show_default=False,
        help="The baseline; then every RUN is a candidate (folders and patterns too, the "
        "baseline left out of them). A candidate that fails is named and left out.")] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels (or irds:DATASET_ID); required when an input is a TREC "
        "run file.",
        show_default=False,
    )] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m",
        help="Metric to compare, repeatable or comma-separated. Default: ap, ndcg@10, "
        "precision@10, recall@100, rr; for artifacts, the metrics they all hold on every "
        "case (each other metric they hold is named in a warning, with the reason).",
        show_default=False,
    )] = None,
    as_json_flag: Annotated[bool, typer.Option(
        "--json", help="Print the comparison's own JSON document for scripts ('type': "
        "'comparison', or 'meta_comparison' with --collections; what "
        "Comparison.from_json reads back); the same as --format json. --report json:- "
        "prints instead the report every command shares ('type': 'report', 'kind': "
        "'compare': rows, counts, notes), which holds this document as 'data'.")] = False,
    output: Annotated[TableOrJson | None, typer.Option(
        "--format", "-f", show_default=False,
        help="table (for people, the default) or json (Comparison.to_json, as --json)."
    )] = None,
    top: Annotated[int, typer.Option(
        "--top", min=0, help="Also list the N queries that moved most up and down."
    )] = 0,
    test: Annotated[Method, typer.Option(
        "--test",
        help="The paired test: auto (the default, chosen per metric by the calibration "
        "study in docs/statistics.md: the paired t-test on a 0/1 metric, else the sign-flip "
        "randomization test, joined by the bootstrap-t on skewed differences), "
        "randomization, t-test, bootstrap-t, bootstrap (paired_bootstrap's percentile "
        "bootstrap), or randomization+bootstrap-t (both must reject).",
    )] = DEFAULT_METHOD,
    correction: Annotated[Correction, typer.Option(
        "--correction",
        help="Adjust p over every metric and candidate tested: holm, bh "
        "(Benjamini-Hochberg), westfall-young (min-P on the shared resamples) or none.",
    )] = Correction.holm,
    alpha: Annotated[float, typer.Option(
        "--alpha",
        help="Significance level; the interval has confidence 1 - alpha.",
    )] = 0.05,
    ci: Annotated[CIMethod | None, typer.Option(
        "--ci", help="Interval method (default: the test's own, which agrees with its p): "
        "percentile, bca, bootstrap-t, t, inversion (inverts the randomization test, so "
        "only with --test randomization), or inversion+bootstrap-t (the union of both, "
        "only with --test randomization+bootstrap-t).",
        show_default=False,
    )] = None,
    alternative: Annotated[Alternative, typer.Option(
        "--alternative", help="two-sided, greater (candidate better) or less.",
    )] = Alternative.two_sided,
    all_pairs: Annotated[bool, typer.Option(
        "--all-pairs", help="Compare every pair of runs, not only each with the baseline.",
    )] = False,
    resamples: Annotated[int, typer.Option(
        "--resamples", "-B", min=100, max=1_000_000,  # MIN_RESAMPLES, MAX_RESAMPLES
        help="Resamples of the randomization or bootstrap test, bootstrap interval or "
        "westfall-young (at least 100; refused with --seed where nothing is resampled: "
        "--test t-test with its own interval).",
    )] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the resampling.")] = 42,
    relevance_level: Annotated[int | None, typer.Option(
        "--relevance-level", "-l", min=1,
        help="Relevance level for scoring TREC runs (trec_eval -l). (default: 1, or the "
        "artifacts' setting)",
        show_default=False,
    )] = None,
    depth: Annotated[int | None, typer.Option(
        "--depth", "-M", min=1, help="Depth limit for scoring TREC runs (trec_eval -M).",
        show_default=False,
    )] = None,
    missing: Annotated[Missing | None, typer.Option(
        "--missing",
        help="Judged queries a TREC run lacks: 'zero' scores them 0 (trec_eval -c), 'skip' "
        "leaves them out, 'refuse' stops with an error. (default: zero, or the artifacts' "
        "setting)",
        show_default=False,
    )] = None,
    report: Annotated[list[str] | None, typer.Option(
        "--report",
        help="Also write a report, FORMAT:PATH (console, json, markdown, junit, latex, and html "
        "from the evalkit-report-html plugin; PATH - is standard output, and then the "
        "table goes to standard error). Repeatable. The json report is the report "
        "shape `gate` writes too ('type': 'report'); --json prints the comparison's own "
        "document, which the report holds as 'data'.",
        show_default=False,
    )] = None,
    topics: Annotated[Path | None, typer.Option(
        "--topics",
        help="Query text for the reports (the movers, the HTML report's hover): a TREC "
        "topic file (<top> <num> <title>), plain or gzipped, qid<TAB>text TSV, or "
        "irds:DATASET_ID.",
        show_default=False,
    )] = None,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete",
        help="Pair only the queries every run has (and say which were left out) instead of "
        "refusing runs over different queries.",
    )] = False,
    by: Annotated[By | None, typer.Option(
        "--by", show_default=False,
        help="Also compare on each slice of the cases: tag (each tag's cases, from the "
        "golden cases' tags or --tags), with the correction over slices x metrics x "
        "candidates (docs/statistics.md#slices).")] = None,
    tags: Annotated[Path | None, typer.Option(
        "--tags", show_default=False,
        help="With --by tag: the cases' tags, one 'query id<TAB>tag' per line (a query "
        "with several tags on several lines); needed for TREC runs.")] = None,
    cluster: Annotated[bool, typer.Option(
        "--cluster", help="Clustered cases: take each golden case's 'cluster' (of the "
        "golden sets the runs were made from) as the unit of the tests: whole-cluster "
        "sign flips and bootstrap, the CR1 t-test (docs/statistics.md#clustered-cases).",
    )] = False,
    clusters_file: Annotated[Path | None, typer.Option(
        "--clusters", show_default=False,
        help="Clustered cases from a file: 'query id<TAB>cluster' lines (for TREC runs), "
        "or a golden set whose cases name their 'cluster'; implies --cluster.")] = None,
    ppi: Annotated[bool, typer.Option(
        "--ppi", help="For a metric with human labels in both runs (a judge's grade): "
        "the interval of the difference is the PPI++ interval of the human difference on "
        "the cases labelled in both (docs/judge.md#prediction-powered-intervals).",
    )] = False,
    labels: Annotated[list[Path] | None, typer.Option(
        "--labels", show_default=False,
        help="With --ppi: one run's human labels (a labels file, JSON Lines {\"id\", "
        "\"labels\"}, or a labelled golden file), once per run in the order of the runs, "
        "baseline first. Default: the labels of the golden file each run's header names.",
    )] = None,
    collections: Annotated[Path | None, typer.Option(
        "--collections", show_default=False,
        help="Instead of runs: a YAML or JSON file listing collections (name, baseline, "
        "candidate, qrels, and optionally the collection's own relevance_level, depth, "
        "missing); the differences of each are pooled by a random-effects model "
        "(docs/comparison.md#several-collections).")] = None,
    tau2: Annotated[Tau2, typer.Option(
        "--tau2", help="With --collections: the estimator of the between-collection "
        "variance, pm (Paule-Mandel) or dl (DerSimonian-Laird).")] = Tau2.pm,
    hartung_knapp: Annotated[bool, typer.Option(
        "--hartung-knapp", help="With --collections: the Hartung-Knapp-Sidik-Jonkman "
        "interval and p (t on k-1 df) instead of the normal ones.")] = False,
) -> None:
    """Compare candidates with a baseline on the same queries, metric by metric.

    For each metric and candidate: both means, the difference (candidate - baseline) with
    its confidence interval, the p-value (raw, and adjusted over all the tests), the
    verdict, and how many queries the candidate wins, ties and loses. Runs scored against
    different qrels or with different settings are refused. With --by tag: the same on
    each tag's cases, in a slice table. With --collections: the difference in each
    collection and pooled over them, with tau^2 and I^2.
    """
    from evalkit.cli.process_env import collector_held
    from evalkit.comparison.meta_compute import check_collections_options

    ctx.with_resource(collector_held())  # the runs' rows live to the end of the command
    as_json_flag = pick_format(as_json_flag, output and output.value) == "json"
    runs = runs or []
    check_collections_options(given_options(ctx), collections is not None, len(runs))
    missing_value = missing.value if missing is not None else None
    if collections is not None:
        from evalkit.comparison.collections_file import load_collections_file
        from evalkit.comparison.meta_compute import meta_compare
        from evalkit.report.pooled_table import print_pooled_table

        sets, own_scoring = load_collections_file(collections)
        return _compare_and_show(
            lambda names: _located(collections, lambda: meta_compare(
                sets, metrics=names, tau2=tau2.value, hartung_knapp=hartung_knapp,
                alpha=alpha, correction=correction.value, relevance_level=relevance_level,
                missing=missing_value, depth=depth, allow_incomplete=allow_incomplete,
                scoring=own_scoring)),
            f"comparing {len(sets)} collections", metric=metric, report=report,
            inputs=[collections, *(Path(str(p)) for entry in sets.values() for p in entry)],
            as_json=as_json_flag, table=print_pooled_table)
    from evalkit.cli.run_folders import finish, leaving_out_bad, runs_to_compare
    from evalkit.comparison import compare
    from evalkit.comparison.options import check_request, resamples_used
    from evalkit.report.compare_table import print_compare_table

    runs, many = runs_to_compare(baseline, runs)
    ci_method = ci.value if ci is not None else None
    # the options first, then the report targets, then the work
    check_request(len(runs), alpha=alpha, method=test.value, ci=ci_method,
                  n_resamples=resamples, top=top)
    if not resamples_used(test.value, ci_method, correction.value):
        refuse_ignored(ctx, ("--resamples", "--seed"), f"--test {test.value} with its own "
                       f"interval and --correction {correction.value} draw no resample "
                       "(analytic p and interval); leave them out, or choose a resampling "
                       "test, a bootstrap --ci or --correction westfall-young")
    def compare_runs(some: list[Path], names: list[str] | None) -> Any:
        return compare(
            *some, metrics=names, qrels=qrels, method=test.value,
            correction=correction.value, alpha=alpha, alternative=alternative.value,
            ci=ci_method, n_resamples=resamples, seed=seed,
            all_pairs=all_pairs, top=top, relevance_level=relevance_level,
            missing=missing_value, depth=depth, topics=topics,
            allow_incomplete=allow_incomplete, by=by.value if by is not None else None,
            tags=tags,
            clusters=clusters_file if clusters_file is not None else (cluster or None),
            ppi=ppi, labels=labels)

    left_out: list[Path] = []
    _compare_and_show(
        lambda names: leaving_out_bad(runs, lambda some: compare_runs(some, names),
                                      left_out) if many else compare_runs(runs, names),
        f"comparing {len(runs)} runs", metric=metric, report=report,
        inputs=[*runs, qrels, topics, tags, clusters_file, *(labels or [])],
        as_json=as_json_flag,
        table=print_compare_table)
    return finish(left_out, len(runs) - 1)


def _located(file: Path, work: Callable[[], Any]) -> Any:
    """``work()``, a refusal of two collections that are the same evidence prefixed with
    the collections file and the line of the second (``suite.yaml:3: collections 'a' and
    'b' ... (also line 2)``)."""
    from evalkit.comparison.collections_file import collection_lines
    from evalkit.comparison.meta_compute import SameEvidenceError

    try:
        return work()
    except SameEvidenceError as exc:
        lines = collection_lines(file)
        second, first = lines.get(exc.second), lines.get(exc.first)
        where = f"{file}" + ("" if second is None else f":{second}")
        also = "" if first is None else f" (also line {first})"
        raise SameEvidenceError(f"{where}: {exc}{also}", exc.first, exc.second) from None


def _compare_and_show(work: Callable[[list[str] | None], Any], doing: str, *,
                      metric: list[str] | None, report: list[str] | None,
                      inputs: list[Path | None], as_json: bool, table: Any) -> None:
    """The ``--report`` targets checked (none over an input), then ``work(metrics)``
    under a spinner, its warnings noted and its result shown (:func:`show_result`); a
    Ctrl-C names the outputs written and those not (:class:`evalkit.io.interrupts.Outputs`)."""
    from evalkit.cli.output import show_result
    from evalkit.io.interrupts import STDOUT_DOCUMENT, Outputs, report_label
    from evalkit.report.writing import check_report_targets

    targets = list(report or [])
    to_stdout = check_report_targets(targets, as_json=as_json, inputs=inputs)
    names = compared_metrics(metric)
    # a Ctrl-C names the outputs written and those not
    with Outputs([*map(report_label, targets), *([STDOUT_DOCUMENT] if as_json else [])]
                 ) as outputs:
        with progress(doing):
            result = work(names)
        for w in result.warnings:
            note(f"warning: {w}")
        show_result(result, targets, as_json=as_json, to_stdout=to_stdout, table=table,
                    outputs=outputs)
