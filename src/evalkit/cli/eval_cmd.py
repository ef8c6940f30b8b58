"""``evalkit eval``: score one run against qrels and print means and per-query values.

Reading a TREC run or a run artifact and metric-name resolution come from the library
(:mod:`evalkit.run_files`, :mod:`evalkit.metric_info`); the trec_eval layout of
``--format trec`` comes from the retrieval plugin. Library imports that pull in numpy
happen inside functions so that ``evalkit --help`` stays light.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalkit.cli.errors import CliError
from evalkit.cli.inputs import require_writable
from evalkit.cli.table_outputs import check_table_outputs, write_table_outputs
from evalkit.metric_info import COUNT_NAMES, canonical_metric, is_count
from evalkit.run_files import DEFAULT_METRICS, check_artifact, is_artifact, notes_of

if TYPE_CHECKING:
    from evalkit.measure_args import MeasureRequest
    from evalkit.precomputed import LoadedQrels
    from evalkit.results import RunResult


class OutputFormat(StrEnum):
    """How ``eval`` prints its result."""

    table = "table"
    json = "json"
    trec = "trec"


class Missing(StrEnum):
    """What a judged query absent from the run counts as."""

    zero = "zero"
    skip = "skip"
    refuse = "refuse"


# ----------------------------------------------------------------------- helpers
def split_metrics(values: Sequence[str] | None) -> list[str]:
    """``-m a -m b,c`` -> ``["a", "b", "c"]`` (order kept, repeats dropped), with
    trec_eval's nicknames and parameter lists expanded (:mod:`evalkit.measure_args`).

    Raises:
        CliError: a ``-m`` value names no metric (``-m ""`` or ``-m ,``) or holds a bad
            trec_eval parameter list.
    """
    return read_metrics(values).names


def read_metrics(values: Sequence[str] | None) -> MeasureRequest:
    """What ``-m`` values ask for (see :func:`evalkit.measure_args.read_measure_args`).

    Raises:
        CliError: as :func:`split_metrics`.
    """
    from evalkit.measure_args import read_measure_args
    from evalkit.metric_names import MetricNameError

    try:
        return read_measure_args(values)
    except MetricNameError as exc:
        raise CliError(str(exc)) from None




@contextmanager
def progress(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (only when stderr is a terminal)."""
    import sys

    if not sys.stderr.isatty():  # rich is not even imported
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


def note(message: str) -> None:
    """A remark for the reader on stderr (keeps stdout clean for machine formats)."""
    typer.echo(message, err=True)


def load_or_evaluate(path: Path, **options: Any) -> RunResult:
    """:func:`evalkit.run_files.load_or_evaluate`, with a spinner while it works."""
    from evalkit.run_files import load_or_evaluate as load

    with progress(f"evaluating {path.name}"):
        return load(path, **options)


def count_names(result: RunResult) -> list[str]:
    """Counts present on every row, in first-row order."""
    if not result.per_query:
        return []
    first = list(getattr(result.per_query[0], "counts", {}) or {})
    return [c for c in first
            if all(c in (getattr(r, "counts", {}) or {}) for r in result.per_query)]


def select_metrics(
    result: RunResult, requested: Sequence[str], path: Path
) -> tuple[list[str], list[str]]:
    """The metrics and the counts to show: the requested ones (resolved), or every
    metric the run has (and no count)."""
    have = result.metric_names()
    counts_have = count_names(result)
    if not requested:
        if not have:
            raise CliError(
                f"{path}: the run has no metric present on every row"
                + (f" (it has the counts {', '.join(counts_have)}; name one with -m)"
                   if counts_have else "")
            )
        return have, []
    out: list[str] = []
    counts: list[str] = []
    for name in requested:
        canon = canonical_metric(name)
        if canon not in have and name in have:
            canon = name
        if canon in have:
            if canon not in out:
                out.append(canon)
            continue
        if is_count(canon) or canon in counts_have:
            if canon not in counts_have:
                raise CliError(
                    f"{path}: {name!r} is a per-query count, and this run stores no "
                    f"{canon} (it has: {', '.join(counts_have) or 'no counts'})"
                )
            if canon not in counts:
                counts.append(canon)
            continue
        if canon in result.metric_failures():
            result.mean(canon)  # MetricFailedError: names the run, the metric, the cases
        known = have + counts_have
        raise CliError(
            f"{path}: no metric {name!r} in this run (it has: {', '.join(known) or 'none'})"
        )
    return out, counts


def summary_line(result: RunResult) -> str:
    """One sentence: queries evaluated, unjudged topics ignored, judged queries missing."""
    n = notes_of(result)
    parts = [f"{_count(len(result.per_query), 'query', 'queries')} evaluated"]
    if n["unjudged_ignored"] is not None:
        parts.append(f"{_count(n['unjudged_ignored'], 'run topic', 'run topics')} without "
                     "judgments ignored")
    if n["missing_count"] is not None:
        how = "scored 0" if n["missing"] == "zero" else "skipped"
        parts.append(f"{_count(n['missing_count'], 'judged query', 'judged queries')} "
                     f"missing from the run ({how})")
    return "; ".join(parts)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def fmt(value: float) -> str:
    return f"{value:.4f}"


# ----------------------------------------------------------------------- output
def print_trec(result: RunResult, request: MeasureRequest, metrics: Sequence[str],
               counts: Sequence[str], per_query: bool, qrels: Path | None,
               loaded: dict[Path, LoadedQrels] | None = None) -> None:
    """trec_eval's layout, from the retrieval plugin (:mod:`evalkit_retrieval.trec_output`);
    ``loaded``: qrels already read, by path."""
    from evalkit.plugins import import_optional

    trec = import_optional("evalkit_retrieval.trec_output", "evalkit-retrieval",
                           "--format trec")
    judgments = None
    if qrels is not None:
        from evalkit.precomputed import load_qrels_input

        judgments = ((loaded or {}).get(qrels) or load_qrels_input(qrels)).judgments
    wanted = list(metrics) + [c for c in counts if c not in metrics]
    if request.header:  # evalkit's names: trec_eval's counts are printed, as it prints them
        wanted = [c for c in COUNT_NAMES if c in count_names(result) and c not in wanted] + wanted
    labels = {canonical_metric(k): v for k, v in request.labels.items()}
    lines = trec.trec_lines(
        result, wanted, per_query=per_query, labels=labels,
        relstring_len=request.relstring, judgments=judgments,
        complete=result.header.get("missing") == "zero", header=request.header,
    )
    typer.echo("\n".join(lines))


def _count_cell(value: float) -> str:
    return str(int(value)) if value.is_integer() else fmt(value)


def _count_text(result: RunResult, name: str) -> str:
    total = summary_value(result, name, count=True)
    return str(int(total)) if summary_kind(name, count=True) == "sum" else fmt(total)


def count_total(result: RunResult, name: str) -> int:
    """A count summed over the queries (trec_eval's ``all`` line)."""
    return sum(int(r.counts[name]) for r in result.per_query)


def as_json(
    result: RunResult, metrics: Sequence[str], per_query: bool, source: Path,
    counts: Sequence[str] = (),
) -> dict[str, Any]:
    """The machine-readable form of an evaluation (``counts``: totals over queries)."""
    header = result.header
    out: dict[str, Any] = {
        "run": result.name,
        "source": str(source),
        "metrics": list(metrics),
        "means": {m: summary_value(result, m) for m in metrics},
        "counts": {c: summary_value(result, c, count=True) for c in counts},
        "num_queries": len(result.per_query),
        **notes_of(result),
        "relevance_level": header.get("relevance_level"),
        "depth": header.get("depth"),
        "qrels": header.get("qrels"),
    }
    if per_query:
        out["per_query"] = [
            {
                "id": r.query_id,
                "metrics": {m: float(r.metrics[m]) for m in metrics},
                "counts": dict(getattr(r, "counts", {}) or {}),
            }
            for r in result.per_query
        ]
    return out


def summary_value(result: RunResult, name: str, *, count: bool = False) -> float:
    from evalkit import summaries

    return summaries.summary_value(result, name, count=count)


def summary_kind(name: str, *, count: bool) -> str:
    from evalkit import summaries

    return summaries.summary_kind(name, count=count)


def print_table(
    result: RunResult, metrics: Sequence[str], per_query: bool, source: Path,
    counts: Sequence[str] = (),
) -> None:
    """Means (and with ``per_query`` every query's values); counts as integers, summed
    over the queries in the total line."""
    from rich.table import Table

    from evalkit.cli.errors import output_console

    console = output_console(highlight=False)
    console.print(f"run [bold]{result.name}[/bold] ({source})")
    console.print(summary_line(result), soft_wrap=True)
    if per_query:
        table = Table("query", *metrics, *counts, box=None, pad_edge=False)
        for col in table.columns[1:]:
            col.justify = "right"
        for r in result.per_query:
            table.add_row(str(r.query_id), *(fmt(float(r.metrics[m])) for m in metrics),
                          *(_count_cell(float(r.counts[c])) for c in counts))
        table.add_section()
        label = "mean" if not counts else ("total" if not metrics else "mean / total")
        table.add_row(label, *(fmt(summary_value(result, m)) for m in metrics),
                      *(_count_text(result, c) for c in counts), style="bold")
        console.print(table)
        return
    if metrics:
        table = Table("metric", "mean", box=None, pad_edge=False)
        table.columns[1].justify = "right"
        for m in metrics:
            table.add_row(m, fmt(summary_value(result, m)))
        console.print(table)
    if counts:
        table = Table("count", "total", "per query", box=None, pad_edge=False)
        table.columns[1].justify = table.columns[2].justify = "right"
        n = len(result.per_query)
        for c in counts:
            total = summary_value(result, c, count=True)
            if summary_kind(c, count=True) == "sum":
                table.add_row(c, str(int(total)), f"{total / n:.2f}")
            else:
                table.add_row(c, fmt(total) + " (mean)", fmt(total))
        console.print(table)


# ----------------------------------------------------------------------- command
RUN_HELP = (
    "A TREC run file (qid Q0 docno rank score tag; ranked by score, ties by docno "
    "descending, as trec_eval) or a run artifact saved with --save."
)


def command(
    run: Annotated[Path, typer.Argument(metavar="RUN", help=RUN_HELP, show_default=False)],
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels (qid 0 docno label). Required for a TREC run file.",
        show_default=False,
    )] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m",
        help="Metric to compute, repeatable or comma-separated (ap, ndcg@10, P@10, R@100, "
        "rr, ...), or a per-query count (num_ret, num_rel, num_rel_ret; printed as "
        "integers and summed). Default: ap, ndcg@10, precision@10, recall@100, rr; for an "
        "artifact, every metric it holds.",
        show_default=False,
    )] = None,
    per_query: Annotated[bool, typer.Option(
        "--per-query", "-q", help="Also print every query's values (trec_eval -q)."
    )] = False,
    as_json_flag: Annotated[bool, typer.Option(
        "--json", help="Print JSON (same as --format json)."
    )] = False,
    output: Annotated[OutputFormat, typer.Option(
        "--format", "-f",
        help="table (for people), json (for scripts) or trec (trec_eval's exact layout).",
    )] = OutputFormat.table,
    relevance_level: Annotated[int | None, typer.Option(
        "--relevance-level", "-l", min=1,
        help="Smallest label binary measures count as relevant (trec_eval -l). (default: 1)",
        show_default=False,
    )] = None,
    depth: Annotated[int | None, typer.Option(
        "--depth", "-M", min=1,
        help="Score only the first DEPTH documents of each ranking (trec_eval -M).",
        show_default=False,
    )] = None,
    missing: Annotated[Missing | None, typer.Option(
        "--missing",
        help="A judged query absent from the run: 'zero' scores it 0 (trec_eval -c), "
        "'skip' leaves it out (trec_eval 9.0.8 without -c), 'refuse' stops with an error "
        "(trec_eval 10.0 without -c). (default: zero)",
        show_default=False,
    )] = None,
    complete: Annotated[bool, typer.Option(
        "-c", help="Same as --missing zero (trec_eval -c), the default.",
    )] = False,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Write the per-query rows to this run artifact (JSON Lines).",
        show_default=False,
    )] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="Name of the run (default: the run tag of the file).",
        show_default=False,
    )] = None,
    csv: Annotated[Path | None, typer.Option(
        "--csv", help="Write the per-query table (qid, each metric and count shown, error, "
        "latency_ms) to this CSV file.", show_default=False,
    )] = None,
    parquet: Annotated[Path | None, typer.Option(
        "--parquet", help="Write the per-query table to this Parquet file (needs "
        "paired-evalkit[pandas]).", show_default=False,
    )] = None,
) -> None:
    """Score a run against qrels: means, and with --per-query every query's values.

    Reports how many run topics had no judgments (ignored, as trec_eval does) and how many
    judged queries the run lacks (scored 0 unless --missing skip).
    """
    fmt_out = output
    if as_json_flag:
        if output not in (OutputFormat.table, OutputFormat.json):
            raise CliError("--json and --format trec exclude each other; pick one")
        fmt_out = OutputFormat.json
    request = read_metrics(metric)
    requested = request.names
    if complete and missing not in (None, Missing.zero):
        raise CliError(f"-c is --missing zero; it contradicts --missing {missing.value}")
    missing_value = missing.value if missing is not None else ("zero" if complete else None)
    if save is not None:
        require_writable(save, "--save", f"{run.stem}.jsonl", inputs=[run, qrels])
    check_table_outputs(csv, parquet, [run, qrels, save])
    loaded: dict[Path, LoadedQrels] = {}
    result = load_or_evaluate(
        run, qrels=qrels, metrics=requested or DEFAULT_METRICS,
        relevance_level=relevance_level or 1, missing=missing_value or "zero", depth=depth,
        name=name, loaded=loaded,
    )
    if is_artifact(run):
        check_artifact(result, run, qrels=qrels, relevance_level=relevance_level,
                       missing=missing_value, depth=depth)
        from evalkit.coverage import completeness_lines

        for line in completeness_lines(result):
            note(line)
    if not result.per_query:
        raise CliError(
            f"{run}: no query was evaluated (none of the run's topics is judged in the qrels, "
            "and --missing skip drops the judged ones the run lacks)"
        )
    metrics, counts = select_metrics(result, requested, run)
    judged_overlap = len(result.per_query) - (notes_of(result)["missing_count"] or 0)
    if notes_of(result)["missing"] == "zero" and judged_overlap == 0:
        note(f"warning: none of the run's topics appears in {qrels}; every query scores 0. "
             "Are these the right files?")
    if save is not None:
        saved = result.save(save)
        note(f"saved run artifact {saved}")
    for table in write_table_outputs(result, metrics, counts, csv, parquet):
        note(f"wrote the per-query table {table}")
    if fmt_out is OutputFormat.json:
        from evalkit.formatting import json_ready

        typer.echo(json.dumps(json_ready(as_json(result, metrics, per_query, run, counts)),
                              indent=2, allow_nan=False))
    elif fmt_out is OutputFormat.trec:
        n = notes_of(result)
        if n["unjudged_ignored"] or n["missing_count"]:
            note(summary_line(result))
        print_trec(result, request, metrics, counts, per_query, qrels, loaded)
    else:
        print_table(result, metrics, per_query, run, counts)
