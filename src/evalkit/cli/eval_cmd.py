"""``evalkit eval``: score one run against qrels and print means and per-query values.

Also holds the input helpers that ``evalkit compare`` shares: reading a TREC run or a run
artifact, metric-name resolution, the trec_eval names and layout. Library imports happen
inside functions so that ``evalkit --help`` stays light.
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
from evalkit.cli.inputs import (
    no_rows_message,
    not_a_run_message,
    not_qrels_message,
    require_file,
    require_writable,
    sniff,
)

if TYPE_CHECKING:
    from evalkit.results import RunResult

#: Metrics used when none is named: the usual trec_eval summary of a ranked run.
DEFAULT_METRICS: tuple[str, ...] = ("ap", "ndcg@10", "precision@10", "recall@100", "rr")

#: Per-query counts trec_eval prints before the measures (summed in the ``all`` block).
COUNT_NAMES: tuple[str, ...] = ("num_ret", "num_rel", "num_rel_ret")

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


def canonical_metric(name: str) -> str:
    """The name rows store for ``name`` (aliases resolved); ``name`` if unknown here."""
    from evalkit.registry import RegistryError, default_registry

    try:
        return default_registry().resolve(name).name
    except RegistryError:
        return name


def higher_is_better(metric: str) -> bool:
    """A metric's declared polarity; higher is better when it is unknown or undeclared."""
    from evalkit.registry import RegistryError, default_registry

    try:
        return default_registry().polarity(metric)
    except RegistryError:
        return True


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


def is_artifact(path: Path) -> bool:
    from evalkit.results import is_artifact as _is_artifact

    return _is_artifact(path)


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


def load_or_evaluate(
    path: Path,
    *,
    qrels: Path | None,
    metrics: Sequence[str],
    relevance_level: int,
    missing: str,
    depth: int | None,
    name: str | None = None,
) -> RunResult:
    """A run artifact as saved, or a TREC run file scored against ``qrels``."""
    from evalkit.precomputed import evaluate_run
    from evalkit.results import RunResult

    require_file(path, "run")
    if is_artifact(path):
        result = RunResult.load(path)
        require_rows(result, path)
        if name:
            result.name = name
        return result
    found = sniff(path)
    if qrels is None or found.kind not in ("run", "text"):
        raise CliError(not_a_run_message(path, found, qrels_given=qrels is not None))
    require_file(qrels, "qrels")
    wrong = not_qrels_message(qrels, sniff(qrels))
    if wrong:
        raise CliError(wrong)
    with progress(f"evaluating {path.name}"):
        return evaluate_run(
            path, qrels, list(metrics), relevance_level=relevance_level,
            missing=missing,  # type: ignore[arg-type]
            depth=depth, name=name,
        )


def require_rows(result: RunResult, path: Path) -> None:
    """Refuse a run artifact that holds a header and no row."""
    if not result.per_query:
        raise CliError(no_rows_message(path))


def qrels_sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_artifact(
    result: RunResult,
    path: Path,
    *,
    qrels: Path | None,
    relevance_level: int | None,
    missing: str | None,
    depth: int | None,
) -> None:
    """Refuse options that contradict how an artifact was evaluated (it is not re-scored)."""
    header = result.header
    problems: list[str] = []
    stored = (header.get("qrels") or {}).get("sha256")
    if qrels is not None and stored:
        require_file(qrels, "qrels")
        if qrels_sha256(qrels) != stored:
            problems.append(f"it was scored against other qrels (sha256 {stored[:12]})")
    wanted = {"relevance_level": relevance_level, "missing": missing, "depth": depth}
    for key, value in wanted.items():
        if value is not None and key in header and header[key] != value:
            problems.append(f"it was scored with {key}={header[key]!r}, not {value!r}")
    if problems:
        raise CliError(
            f"{path}: {'; '.join(problems)}. An artifact keeps the values it was saved with; "
            "evaluate the TREC run file again to change them"
        )


def is_count(name: str) -> bool:
    """Whether ``name`` is a per-query count (num_ret, num_rel, num_rel_ret, ...)."""
    from evalkit.registry import RegistryError, default_registry
    from evalkit.specs import MetricSpec

    if name in COUNT_NAMES:
        return True
    try:
        spec = default_registry().resolve(name)
    except RegistryError:
        return False
    return isinstance(spec, MetricSpec) and spec.kind == "count"


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
        failed = result.metric_failures().get(canon)
        if failed:
            raise CliError(f"{path}: metric {canon} failed on {len(failed)} case(s) "
                           f"({', '.join(list(failed)[:5])}); its mean is not defined. "
                           f"First failure: {next(iter(failed.values()))}")
        known = have + counts_have
        raise CliError(
            f"{path}: no metric {name!r} in this run (it has: {', '.join(known) or 'none'})"
        )
    return out, counts


def notes_of(result: RunResult) -> dict[str, Any]:
    """The evaluation notes of a run header, with the counts the CLI reports."""
    notes: dict[str, Any] = dict(result.header.get("notes") or {})
    missing_policy = result.header.get("missing")
    if "missing_scored_zero" in notes:
        missing_count = notes["missing_scored_zero"]
    else:
        missing_count = notes.get("missing_skipped")
    return {
        "unjudged_ignored": notes.get("unjudged_ignored"),
        "unjudged_ignored_ids": notes.get("unjudged_ignored_ids", []),
        "missing": missing_policy,
        "missing_count": missing_count,
        "missing_ids": notes.get("missing_ids", []),
    }


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
