"""``evalkit eval``: score one run against qrels and print means and per-query values.

Reading a TREC run or a run artifact and metric-name resolution come from the library
(:mod:`evalkit.run_files`, :mod:`evalkit.metric_names`); the trec_eval names and layout
are here. Library imports that pull in numpy happen inside functions so that ``evalkit
--help`` stays light.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalkit.cli.errors import CliError
from evalkit.cli.inputs import require_writable
from evalkit.metric_names import COUNT_NAMES, canonical_metric, is_count
from evalkit.run_files import DEFAULT_METRICS, check_artifact, is_artifact, notes_of

if TYPE_CHECKING:
    from evalkit.results import RunResult

# canonical evalkit family -> (trec_eval name, position in trec_eval's all_trec order)
_TREC_FAMILIES: dict[str, tuple[str, int]] = {
    "ap": ("map", 0),
    "r_precision": ("Rprec", 2),
    "rr": ("recip_rank", 4),
    "precision": ("P", 10),
    "recall": ("recall", 11),
    "ndcg": ("ndcg", 20),
    "ndcg_cut": ("ndcg_cut", 21),
    "map_cut": ("map_cut", 22),
    "success": ("success", 24),
}
_TREC_CUTOFF_FAMILIES = frozenset({"precision", "recall", "ndcg_cut", "map_cut", "success"})
_AT_K = re.compile(r"^(?P<name>[^@]+)@(?P<k>\d+)$")


class OutputFormat(StrEnum):
    """How ``eval`` prints its result."""

    table = "table"
    json = "json"
    trec = "trec"


class Missing(StrEnum):
    """What a judged query absent from the run counts as."""

    zero = "zero"
    skip = "skip"


# ----------------------------------------------------------------------- helpers
def split_metrics(values: Sequence[str] | None) -> list[str]:
    """``-m a -m b,c`` -> ``["a", "b", "c"]`` (order kept, repeats dropped).

    Raises:
        CliError: a ``-m`` value names no metric (``-m ""`` or ``-m ,``).
    """
    out: list[str] = []
    for value in values or ():
        names = [part.strip() for part in value.split(",") if part.strip()]
        if not names:
            raise CliError(
                f"-m {value!r} names no metric; give one or more names (-m ap -m ndcg@10 or "
                "-m ap,ndcg@10)"
            )
        for name in names:
            if name not in out:
                out.append(name)
    return out


def trec_name(metric: str) -> tuple[str, tuple[int, float, str]]:
    """trec_eval's name of a canonical metric, and a key ordering it as trec_eval prints.

    ``ap`` -> ``map``, ``ap@k`` -> ``map_cut_k``, ``ndcg@k`` -> ``ndcg_cut_k``,
    ``precision@k`` -> ``P_k``, ``recall@k`` -> ``recall_k``, ``rr`` -> ``recip_rank``,
    ``success@k`` -> ``success_k``, ``r_precision`` -> ``Rprec``. Other names are kept and
    printed after these.
    """
    m = _AT_K.match(metric)
    family, k = (m.group("name"), int(m.group("k"))) if m else (metric, -1)
    if k >= 0 and family in ("ap", "ndcg"):
        family = {"ap": "map_cut", "ndcg": "ndcg_cut"}[family]
    with_k = family in _TREC_CUTOFF_FAMILIES
    if family in _TREC_FAMILIES and with_k == (k >= 0):
        base, pos = _TREC_FAMILIES[family]
        if with_k:
            return f"{base}_{k}", (pos, float(k), "")
        return base, (pos, -1.0, "")
    return metric, (1000, 0.0, metric)


@contextmanager
def progress(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (only when stderr is a terminal)."""
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
def trec_lines(result: RunResult, metrics: Sequence[str], per_query: bool) -> list[str]:
    """trec_eval's output (``-q`` when ``per_query``): ``%-22s\\t%s\\t%6.4f`` lines."""
    ordered = sorted(metrics, key=lambda m: trec_name(m)[1])
    names = {m: trec_name(m)[0] for m in ordered}
    rows = sorted(result.per_query, key=lambda r: str(r.query_id).encode())
    lines: list[str] = []
    if per_query:
        for row in rows:
            counts = getattr(row, "counts", {}) or {}
            lines.extend(
                f"{c:<22}\t{row.query_id}\t{int(counts[c])}" for c in COUNT_NAMES if c in counts
            )
            lines.extend(
                f"{names[m]:<22}\t{row.query_id}\t{float(row.metrics[m]):6.4f}" for m in ordered
            )
    lines.append(f"{'runid':<22}\tall\t{result.name}")
    lines.append(f"{'num_q':<22}\tall\t{len(rows)}")
    for c in COUNT_NAMES:
        if rows and all(c in (getattr(r, "counts", {}) or {}) for r in rows):
            lines.append(f"{c:<22}\tall\t{sum(int(r.counts[c]) for r in rows)}")
    lines.extend(f"{names[m]:<22}\tall\t{result.mean(m):6.4f}" for m in ordered)
    return lines


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
        "means": {m: result.mean(m) for m in metrics},
        "counts": {c: count_total(result, c) for c in counts},
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
                          *(str(int(r.counts[c])) for c in counts))
        table.add_section()
        label = "mean" if not counts else ("total" if not metrics else "mean / total")
        table.add_row(label, *(fmt(result.mean(m)) for m in metrics),
                      *(str(count_total(result, c)) for c in counts), style="bold")
        console.print(table)
        return
    if metrics:
        table = Table("metric", "mean", box=None, pad_edge=False)
        table.columns[1].justify = "right"
        for m in metrics:
            table.add_row(m, fmt(result.mean(m)))
        console.print(table)
    if counts:
        table = Table("count", "total", "per query", box=None, pad_edge=False)
        table.columns[1].justify = table.columns[2].justify = "right"
        n = len(result.per_query)
        for c in counts:
            total = count_total(result, c)
            table.add_row(c, str(total), f"{total / n:.2f}")
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
        "'skip' leaves it out. (default: zero)",
        show_default=False,
    )] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Write the per-query rows to this run artifact (JSON Lines).",
        show_default=False,
    )] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="Name of the run (default: the run tag of the file).",
        show_default=False,
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
    requested = split_metrics(metric)
    missing_value = missing.value if missing is not None else None
    if save is not None:
        require_writable(save, "--save", f"{run.stem}.jsonl", inputs=[run, qrels])
    result = load_or_evaluate(
        run, qrels=qrels, metrics=requested or DEFAULT_METRICS,
        relevance_level=relevance_level or 1, missing=missing_value or "zero", depth=depth,
        name=name,
    )
    if is_artifact(run):
        check_artifact(result, run, qrels=qrels, relevance_level=relevance_level,
                       missing=missing_value, depth=depth)
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
    if fmt_out is OutputFormat.json:
        from evalkit.formatting import json_ready

        typer.echo(json.dumps(json_ready(as_json(result, metrics, per_query, run, counts)),
                              indent=2, allow_nan=False))
    elif fmt_out is OutputFormat.trec:
        n = notes_of(result)
        if n["unjudged_ignored"] or n["missing_count"]:
            note(summary_line(result))
        typer.echo("\n".join(trec_lines(result, metrics, per_query)))
    else:
        print_table(result, metrics, per_query, run, counts)
