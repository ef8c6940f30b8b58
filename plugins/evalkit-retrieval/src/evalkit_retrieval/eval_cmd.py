"""``evalkit eval``: score one run against qrels and print means and per-query values;
or every run of folders and glob patterns (:mod:`evalkit.io.run_paths`), in one process,
each saved with ``--save-dir``, with one summary table.

It reads the run (:func:`evalkit.execute.run_files.load_or_evaluate`) and prints it as
:mod:`evalkit_retrieval.run_scores` lays it out (a table, JSON, or a run format a plugin
registers, such as trec_eval's layout; ``--csv``/``--parquet``:
:mod:`evalkit_retrieval.table_outputs`). Imports that pull in numpy happen inside the
function, so ``evalkit --help`` stays light."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalkit.cli.errors import CliError
from evalkit.cli.output import note, pick_format, progress
from evalkit.execute.run_files import Missing

if TYPE_CHECKING:
    from evalkit.data.judgments import LoadedQrels
    from evalkit.data.results import RunResult


RUN_HELP = (
    "A TREC run file (qid Q0 docno rank score tag; ranked by score, ties by docno "
    "descending, as trec_eval) or a run artifact saved with --save; or several, folders "
    "of them, or quoted glob patterns ('runs/*.txt'): each is scored, with one summary table."
)


def command(
    runs: Annotated[list[Path], typer.Argument(metavar="RUN...", help=RUN_HELP,
                                               show_default=False)],
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels (qid 0 docno label; qid subtopic docno label for the "
        "diversity measures) or irds:DATASET_ID. Required for a TREC run file.",
        show_default=False,
    )] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m",
        help="Metric to compute, repeatable or comma-separated (ap, ndcg@10, P@10, R@100, "
        "rr, ...), or a per-query count (num_ret, num_rel, num_rel_ret; printed as "
        "integers and summed). Default: ap, ndcg@10, precision@10, recall@100, rr; for an "
        "artifact, every metric it holds; with --format trec on a TREC run file, "
        "trec_eval's own default set (official, as trec_eval without -m).",
        show_default=False,
    )] = None,
    per_query: Annotated[bool, typer.Option(
        "--per-query", "-q", help="Also print every query's values (trec_eval -q)."
    )] = False,
    as_json_flag: Annotated[bool, typer.Option(
        "--json", help="Print JSON (same as --format json)."
    )] = False,
    output: Annotated[str | None, typer.Option(
        "--format", "-f", metavar="FORMAT", show_default=False, help="table (for people, "
        "the default), json (for scripts), or a run format a plugin registers: trec "
        "(trec_eval's exact layout, evalkit-retrieval); `evalkit plugins list` shows them.",
    )] = None,
    relevance_level: Annotated[int | None, typer.Option(
        "--relevance-level", "-l", min=1,
        help="Smallest label binary measures count as relevant (trec_eval -l). (default: "
        "1; a run artifact keeps the setting it was scored with, which a value given must "
        "match)",
        show_default=False,
    )] = None,
    depth: Annotated[int | None, typer.Option(
        "--depth", "-M", min=1,
        help="Score only the first DEPTH documents of each ranking (trec_eval -M).",
        show_default=False,
    )] = None,
    judged_only: Annotated[bool, typer.Option(
        "--judged-only", "-J", help="Score every measure over each ranking without its "
        "unjudged documents (not in the qrels, or labelled < 0), taken out after --depth "
        "(trec_eval -J; condensed lists).",
    )] = False,
    missing: Annotated[Missing | None, typer.Option(
        "--missing",
        help="A judged query absent from the run: 'zero' scores it 0 (trec_eval -c), "
        "'skip' leaves it out (trec_eval 9.0.8 without -c), 'refuse' stops with an error "
        "(trec_eval 10.0 without -c). (default: zero, except that only -c or --missing "
        "zero given makes -f trec recount num_rel on the 'all' line as trec_eval -c does; "
        "a run artifact keeps the setting it was scored with, which a value given must "
        "match)",
        show_default=False,
    )] = None,
    complete: Annotated[bool, typer.Option(
        "-c", help="Same as --missing zero (trec_eval -c). The default scores missing "
        "queries 0 too, but -f trec recounts num_rel on the 'all' line from every qrels "
        "line as trec_eval -c does only with -c (without it, the sum of the queries' "
        "num_rel, as trec_eval without -c prints; they differ under -l 2 or more).",
    )] = False,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Write the per-query rows to this run artifact (JSON Lines).",
        show_default=False,
    )] = None,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete", help="Show the figures of a run artifact edited or damaged "
        "after it was written (its trailer does not match), with a warning.",
    )] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing artifact at --save (or in --save-dir); "
        "refused without either.",
    )] = False,
    name: Annotated[str | None, typer.Option(
        "--name", help="Name of the run (default: the run tag of the file).",
        show_default=False,
    )] = None,
    csv: Annotated[Path | None, typer.Option(
        "--csv", help="Write the per-query table (qid, each metric and count shown, error, "
        "latency_ms) to this CSV file. A text cell a spreadsheet would run as a formula "
        "(starting with =, +, -, @; not a number) gets a leading ' (see --csv-raw).",
        show_default=False,
    )] = None,
    csv_raw: Annotated[bool, typer.Option(
        "--csv-raw", help="With --csv: write text cells as they are, without the "
        "leading ' of the formula guard (for programs joining the CSV on query ids).",
    )] = False,
    parquet: Annotated[Path | None, typer.Option(
        "--parquet", help="Write the per-query table to this Parquet file (needs "
        "paired-evalkit[pandas]).", show_default=False,
    )] = None,
    save_dir: Annotated[Path | None, typer.Option(
        "--save-dir", help="Several runs: save each as a run artifact NAME.jsonl in this "
        "folder (created if needed; NAME the run's, made unique).", show_default=False,
    )] = None,
) -> None:
    """Score a run against qrels: means, and with --per-query every query's values.

    Reports how many run topics had no judgments (ignored, as trec_eval does) and how many
    judged queries the run lacks (scored 0 unless --missing skip). Several runs (folders,
    glob patterns): each scored in turn, a file that fails named and skipped (the exit
    status is then 2), and one table of every run's means.
    """
    from evalkit.cli.output import case_notes, stdout_document
    from evalkit.execute.measure_args import read_measure_args
    from evalkit.execute.run_files import is_artifact
    from evalkit.io.run_paths import is_many
    from evalkit.report.run_formats import ScoredRun, run_format
    from evalkit_retrieval import run_scores
    from evalkit_retrieval.run_evaluation import judgments_of

    fmt_out = pick_format(as_json_flag, output)
    if csv_raw and csv is None:
        raise CliError("--csv-raw goes with --csv PATH (it writes that file's text cells "
                       "without the formula guard)")
    if overwrite and save is None and save_dir is None:
        raise CliError("--overwrite does not apply: it replaces an existing artifact at "
                       "--save or in --save-dir, and neither is given; leave it out, or "
                       "add --save ARTIFACT")
    if len(runs) > 1 or is_many(runs[0]) or save_dir is not None:
        from evalkit_retrieval.eval_many import eval_many

        given = {"--save": save, "--csv": csv, "--csv-raw": csv_raw or None,
                 "--parquet": parquet, "--name": name, "--per-query": per_query or None}
        return eval_many(runs, qrels, metric, fmt_out, given, relevance_level=relevance_level,
                         missing=_missing_of(missing, complete), depth=depth,
                         judged_only=judged_only, save_dir=save_dir, overwrite=overwrite,
                         allow_incomplete=allow_incomplete, score=_score)
    run = runs[0]
    formatter = None if fmt_out in ("table", "json") else run_format(fmt_out)
    missing_value = _missing_of(missing, complete)
    _check_outputs(run, qrels, name=name, save=save, overwrite=overwrite, csv=csv,
                   parquet=parquet)
    if not metric and formatter is not None and not is_artifact(run):
        metric = list(formatter.default_measures) or None  # trec_eval's: "official"
    request = read_measure_args(metric)
    case_notes(request.names)
    loaded: dict[Path, LoadedQrels] = {}  # qrels read once, for --format trec too
    result = _score(run, qrels, request, fmt_out,
                    relevance_level=relevance_level, missing=missing_value, depth=depth,
                    name=name, loaded=loaded, allow_incomplete=allow_incomplete,
                    judged_only=judged_only)
    metrics, counts = _write_outputs(result, run, qrels, request, save=save, csv=csv,
                                     parquet=parquet, csv_raw=csv_raw)
    if fmt_out == "json":
        from evalkit.stats.numeric import json_ready

        stdout_document(json.dumps(json_ready(run_scores.as_json(
            result, metrics, per_query, run, counts)), indent=2, allow_nan=False))
    elif formatter is not None:
        if (remark := run_scores.format_remark(result)) is not None:
            note(remark)  # stdout holds the format's output only
        judgments = None if qrels is None else judgments_of(qrels, loaded)
        text = formatter.render(ScoredRun(
            result, request, metrics, counts, per_query, judgments,
            complete or missing is Missing.zero, run))
        if text:  # no line at all (relstring without -q) prints nothing, as trec_eval
            stdout_document(text)
    else:
        from evalkit.cli.output import output_console

        run_scores.print_table(output_console(highlight=False), result, metrics, per_query,
                               run, counts)


def _missing_of(missing: Missing | None, complete: bool) -> str | None:
    """``--missing``, or ``zero`` for ``-c``, or None (given neither).

    Raises:
        CliError: ``-c`` with another ``--missing``.
    """
    if complete and missing not in (None, Missing.zero):
        raise CliError(f"-c is --missing zero; it contradicts --missing {missing.value}")
    return missing.value if missing is not None else ("zero" if complete else None)


def _check_outputs(run: Path, qrels: Path | None, *, name: str | None, save: Path | None,
                   overwrite: bool, csv: Path | None, parquet: Path | None) -> None:
    """Refuse, before any scoring, a bad ``--name`` and an output that cannot be written
    (``--save``, ``--csv``, ``--parquet``: not over an input, not over a file unless
    ``--overwrite`` for ``--save``).

    Raises:
        CliError, OutputError: naming the option.
    """
    from evalkit.io.outputs import require_writable
    from evalkit_retrieval.table_outputs import check_table_outputs

    if name is not None:
        from evalkit.io.limits import check_name

        try:
            check_name(name)  # not blank (as the eval config's name), not too long
        except ValueError as exc:
            raise CliError(f"--name: {exc}") from None
    if save is not None:
        require_writable(save, "--save", f"{run.stem}.jsonl", inputs=[run, qrels],
                         overwrite=overwrite)
    check_table_outputs(csv, parquet, [run, qrels, save])


def _score(run: Path, qrels: Path | None, request: Any, fmt_out: str, *,
           relevance_level: int | None, missing: str | None, depth: int | None,
           name: str | None, loaded: dict[Path, LoadedQrels], allow_incomplete: bool,
           judged_only: bool = False) -> RunResult:
    """The run scored (a TREC run file) or read and checked against the settings given
    (a run artifact: refused when altered unless ``allow_incomplete``, or when ``-J`` is
    given for an artifact scored without it; its completeness noted)."""
    from evalkit.data.coverage import completeness_lines
    from evalkit.execute.run_files import (
        check_artifact,
        is_artifact,
        load_or_evaluate,
        refuse_altered,
    )
    from evalkit_retrieval.plugin import DEFAULT_METRICS

    with progress(f"evaluating {run.name}"):
        result = load_or_evaluate(
            run, qrels=qrels, metrics=request.to_score(DEFAULT_METRICS, fmt_out),
            relevance_level=relevance_level or 1, missing=missing or "zero",
            depth=depth, name=name, loaded=loaded, judged_only=judged_only)
    if is_artifact(run):
        refuse_altered(result, allow=allow_incomplete)
        if judged_only and not result.header.get("judged_only"):
            raise CliError(f"{run}: this run artifact was scored with every ranked "
                           "document; -J needs the run file scored again with -J (or "
                           "drop -J)")
        check_artifact(result, run, qrels=qrels, relevance_level=relevance_level,
                       missing=missing, depth=depth, alone=True)
        for line in completeness_lines(result):
            note(line)
    return result


def _write_outputs(result: RunResult, run: Path, qrels: Path | None, request: Any, *,
                   save: Path | None, csv: Path | None, parquet: Path | None,
                   csv_raw: bool = False) -> tuple[list[str], list[str]]:
    """``(metrics, counts)`` to show, after the warnings on the scoring are noted and the
    artifact (``--save``) and per-query tables (``--csv``, ``--parquet``) are written."""
    from evalkit_retrieval import run_scores
    from evalkit_retrieval.run_evaluation import check_scored
    from evalkit_retrieval.table_outputs import write_table_outputs

    warnings = check_scored(result, run, qrels)
    metrics, counts = run_scores.select_measures(result, request, run)
    for line in warnings:
        note(line)
    if save is not None:
        note(f"saved run artifact {result.save(save)}")
    for table in write_table_outputs(result, metrics, counts, csv, parquet, csv_raw):
        note(f"wrote the per-query table {table}")
    return metrics, counts
