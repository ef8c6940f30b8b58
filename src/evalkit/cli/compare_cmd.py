"""``evalkit compare``: is each candidate's difference from the baseline real?

Per metric and candidate: both means, the difference (candidate - baseline), its 95% CI, p,
the verdict, wins/ties/losses, and with ``--top N`` the queries that moved most each way.
``--report FORMAT:PATH`` renders the same rows with the gate's reporters (console, json,
markdown, junit). Queries are paired by id. Library imports happen inside functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalkit.cli.errors import CliError
from evalkit.cli.eval_cmd import (
    DEFAULT_METRICS,
    Missing,
    canonical_metric,
    check_artifact,
    fmt,
    higher_is_better,
    is_artifact,
    is_count,
    load_or_evaluate,
    note,
    notes_of,
    progress,
    require_rows,
    split_metrics,
)
from evalkit.cli.inputs import check_report_targets, file_targets, require_alpha, require_file

if TYPE_CHECKING:
    from evalkit.reporters import Report
    from evalkit.results import RunResult

#: Two per-query values closer than this are a tie.
TIE_TOLERANCE = 1e-12

#: Fewest resamples accepted: with fewer, a resampling p cannot go below 1/(B+1) ~ 0.01 and
#: the tails of a 95% interval rest on a handful of resamples (the gate asks the same).
MIN_RESAMPLES = 100

#: Interval methods that only one test defines (others may go with any test).
CI_OF_TEST: dict[str, str] = {"inversion": "randomization"}


class Method(StrEnum):
    """The paired test (mirrors ``evalkit.stats.METHODS``; a test keeps them equal)."""

    auto = "auto"
    randomization = "randomization"
    t_test = "t-test"
    bootstrap_t = "bootstrap-t"
    bootstrap = "bootstrap"


class Correction(StrEnum):
    """Multiple-comparison adjustment (mirrors ``evalkit.stats.multiple.CORRECTIONS``)."""

    holm = "holm"
    bh = "bh"
    westfall_young = "westfall-young"
    none = "none"


class CIMethod(StrEnum):
    """Interval method (mirrors ``evalkit.stats.CI_METHODS``)."""

    percentile = "percentile"
    bca = "bca"
    bootstrap_t = "bootstrap-t"
    inversion = "inversion"
    t = "t"


class Alternative(StrEnum):
    """Which difference the test looks for."""

    two_sided = "two-sided"
    greater = "greater"
    less = "less"


#: The default test; equal to ``evalkit.stats.DEFAULT_METHOD`` (a test checks it), chosen
#: by the stats calibration benchmark (docs/statistics.md). Kept literal so that
#: ``evalkit --help`` does not import numpy.
DEFAULT_METHOD = Method.auto

METHOD_LABELS: dict[str, str] = {
    "auto": "auto (sign-flip randomization test; paired t-test on 0/1 metrics)",
    "randomization": "sign-flip randomization test",
    "t-test": "paired t-test",
    "bootstrap-t": "studentized bootstrap (bootstrap-t)",
    "bootstrap": "paired bootstrap (the seed's: percentile CI, p from the centred null)",
}
CORRECTION_LABELS: dict[str, str] = {
    "holm": "Holm", "bh": "Benjamini-Hochberg", "westfall-young": "Westfall-Young max-T",
    "none": "none",
}
CI_LABELS: dict[str, str] = {
    "percentile": "percentile", "bca": "BCa", "bootstrap-t": "bootstrap-t",
    "inversion": "test-inversion", "t": "t",
}


@dataclass
class Moved:
    """One query's values in the two runs."""

    id: str
    baseline: float
    candidate: float
    diff: float


@dataclass
class Comparison:
    """One (metric, candidate) row of the comparison.

    ``significant`` is the verdict: the adjusted p (or the raw p when nothing is
    adjusted) below alpha; the seed's bootstrap decides by its interval instead.
    """

    metric: str
    baseline: str
    candidate: str
    n_queries: int
    baseline_mean: float
    candidate_mean: float
    diff: float
    ci_low: float | None
    ci_high: float | None
    p_value: float
    p_adjusted: float | None
    significant: bool
    significant_unadjusted: bool
    wins: int
    ties: int
    losses: int
    higher_is_better: bool
    standardized_effect: float | None = None
    warnings: list[str] = field(default_factory=list)
    top_gains: list[Moved] = field(default_factory=list)
    top_losses: list[Moved] = field(default_factory=list)
    p_resamples: int | None = None
    method: str | None = None


@dataclass
class Settings:
    """How the comparison was tested."""

    method: str = DEFAULT_METHOD.value
    ci_method: str | None = None
    alpha: float = 0.05
    alternative: str = "two-sided"
    correction: str = "holm"
    n_resamples: int = 10_000
    seed: int = 42
    all_pairs: bool = False
    family_size: int = 0
    generator: str | None = None
    methods_used: list[str] = field(default_factory=list)
    ci_methods_used: list[str] = field(default_factory=list)
    allow_incomplete: bool = False
    notes: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------- inputs
def _settings_defaults(
    paths: Sequence[Path],
    relevance_level: int | None,
    missing: str | None,
    depth: int | None,
) -> tuple[int, str, int | None, RunResult | None]:
    """Settings for scoring TREC runs: the options given, else the first artifact's."""
    from evalkit.results import RunResult

    first: RunResult | None = None
    for p in paths:
        require_file(p, "run")
        if first is None and is_artifact(p):
            first = RunResult.load(p)
    header = first.header if first is not None else {}
    level = relevance_level if relevance_level is not None else header.get("relevance_level", 1)
    miss = missing if missing is not None else header.get("missing", "zero")
    dep = depth if depth is not None else header.get("depth")
    return int(level or 1), str(miss or "zero"), dep, first


def load_runs(
    paths: Sequence[Path],
    *,
    qrels: Path | None,
    requested: Sequence[str],
    relevance_level: int | None,
    missing: str | None,
    depth: int | None,
    allow_incomplete: bool = False,
) -> tuple[list[RunResult], list[str]]:
    """Every input as a :class:`RunResult` (TREC runs scored alike), and the metrics.

    An artifact that fails coverage (:meth:`RunResult.require_complete`) is refused
    unless ``allow_incomplete``; then the runs are paired on the cases they share."""
    from evalkit.results import RunResult, settings_differences

    level, miss, dep, _first = _settings_defaults(paths, relevance_level, missing, depth)
    # keyed by position: the same file given twice is two runs, renamed independently
    artifacts = {i: RunResult.load(p) for i, p in enumerate(paths) if is_artifact(p)}
    for i, a in artifacts.items():
        require_rows(a, paths[i])
        cov = a.require_complete("baseline" if i == 0 else "candidate",
                                 allow_incomplete=allow_incomplete)
        if not cov.complete:
            note(f"warning: {paths[i]}: {cov.message()}")
    counts = [m for m in requested if is_count(canonical_metric(m))]
    if counts:
        raise CliError(
            f"{', '.join(counts)}: a per-query count is reported by `evalkit eval`, not "
            "compared; compare a metric (ap, ndcg@10, ...)"
        )
    if requested:
        metrics = [canonical_metric(m) for m in requested]
    elif artifacts:
        common = [
            m for m in next(iter(artifacts.values())).metric_names()
            if all(m in a.metric_names() for a in artifacts.values())
        ]
        if not common:
            raise CliError("the run artifacts share no metric; name one with -m")
        metrics = common
    else:
        metrics = list(DEFAULT_METRICS)
    metrics = list(dict.fromkeys(metrics))
    runs: list[RunResult] = []
    for i, p in enumerate(paths):
        if i in artifacts:
            result = artifacts[i]
            check_artifact(result, p, qrels=qrels, relevance_level=relevance_level,
                           missing=missing, depth=depth)
        else:
            result = load_or_evaluate(p, qrels=qrels, metrics=metrics, relevance_level=level,
                                      missing=miss, depth=dep)
        runs.append(result)
    metrics = [canonical_metric(m) for m in metrics]
    for p, r in zip(paths, runs, strict=True):
        have = r.metric_names()
        if allow_incomplete:  # a metric that failed on some case is paired where present
            have = [*have, *r.metric_failures()]
        lacking = [m for m in metrics if m not in have]
        if lacking:
            raise CliError(
                f"{p}: run {r.name!r} has no {', '.join(lacking)} (it has: "
                f"{', '.join(have) or 'none'})"
            )
    _unique_names(runs, paths)
    base = runs[0]
    for p, r in zip(paths[1:], runs[1:], strict=True):
        diffs = settings_differences(base, r)
        if diffs:
            raise CliError(
                f"{paths[0]} and {p} were not evaluated alike: {'; '.join(diffs)}. "
                "Compare runs scored against the same qrels with the same settings"
            )
        if not allow_incomplete:
            _check_same_queries(base, r, paths[0], p)
    return runs, metrics


def _unique_names(runs: Sequence[RunResult], paths: Sequence[Path]) -> None:
    """Give runs distinct names: the first keeps its name; a later run whose name is taken
    gets its file stem, or the name with its position (``tfidf#2``)."""
    seen: set[str] = set()
    for i, (r, p) in enumerate(zip(runs, paths, strict=True)):
        if r.name in seen:
            r.name = p.stem if p.stem not in seen else f"{r.name}#{i + 1}"
        seen.add(r.name)


def input_warnings(runs: Sequence[RunResult], paths: Sequence[Path]) -> list[str]:
    """What each run's evaluation notes say about queries the comparison does not see as
    the file has them: judged queries the run lacks (scored 0 or skipped) and run topics
    without judgments (ignored), as ``evalkit eval`` reports them."""
    out: list[str] = []
    for r, p in zip(runs, paths, strict=True):
        n = notes_of(r)
        missing_count = n["missing_count"] or 0
        if missing_count:
            ids = ", ".join(str(x) for x in n["missing_ids"][:5])
            more = ", ..." if missing_count > len(n["missing_ids"][:5]) else ""
            how = ("scored 0 (--missing zero, trec_eval -c)" if n["missing"] == "zero"
                   else "left out (--missing skip)")
            judged = len(r.per_query) if n["missing"] == "zero" else (
                len(r.per_query) + missing_count)
            out.append(
                f"{p}: run {r.name!r} lacks {missing_count} of the {judged} judged "
                f"queries ({ids}{more}); they are {how}"
            )
        unjudged = n["unjudged_ignored"] or 0
        if unjudged:
            ids = ", ".join(str(x) for x in n["unjudged_ignored_ids"][:5])
            more = ", ..." if unjudged > len(n["unjudged_ignored_ids"][:5]) else ""
            out.append(
                f"{p}: {unjudged} topic(s) of run {r.name!r} have no judgments in the qrels "
                f"({ids}{more}) and are ignored"
            )
    return out


def _check_same_queries(a: RunResult, b: RunResult, pa: Path, pb: Path) -> None:
    ia, ib = set(a.ids()), set(b.ids())
    if ia == ib:
        return
    only_a, only_b = sorted(ia - ib), sorted(ib - ia)
    parts = []
    if only_a:
        parts.append(f"{len(only_a)} only in {pa} (e.g. {', '.join(only_a[:5])})")
    if only_b:
        parts.append(f"{len(only_b)} only in {pb} (e.g. {', '.join(only_b[:5])})")
    raise CliError(
        f"the runs cover different queries: {'; '.join(parts)}. A paired comparison needs "
        "the same queries in both (score TREC runs with --missing zero)"
    )


# ----------------------------------------------------------------------- statistics
def wins_ties_losses(
    base: dict[str, float], cand: dict[str, float], higher_better: bool
) -> tuple[int, int, int]:
    """Queries where the candidate is better, equal (within 1e-12), worse."""
    wins = ties = losses = 0
    for qid, b in base.items():
        d = cand[qid] - b
        if abs(d) <= TIE_TOLERANCE:
            ties += 1
        elif (d > 0) == higher_better:
            wins += 1
        else:
            losses += 1
    return wins, ties, losses


def moved(
    base: dict[str, float], cand: dict[str, float], top: int
) -> tuple[list[Moved], list[Moved]]:
    """The ``top`` queries whose value rose most and fell most (ties by query id)."""
    rows = [Moved(q, base[q], cand[q], cand[q] - base[q]) for q in base]
    ups = sorted((m for m in rows if m.diff > TIE_TOLERANCE), key=lambda m: (-m.diff, m.id))
    downs = sorted((m for m in rows if m.diff < -TIE_TOLERANCE), key=lambda m: (m.diff, m.id))
    return ups[:top], downs[:top]


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def compare_runs(
    runs: Sequence[RunResult],
    metrics: Sequence[str],
    settings: Settings,
    *,
    top: int = 0,
) -> list[Comparison]:
    """Every candidate (``runs[1:]``) against the baseline (``runs[0]``) on every metric,
    or every pair with ``settings.all_pairs``; one family of adjusted p-values.

    Fills in ``settings.ci_method``, ``settings.family_size``, ``settings.generator`` and
    the tests and intervals each metric actually used (``--test auto`` picks per metric).
    """
    from evalkit.numeric import exact_mean
    from evalkit.stats import compare_runs as stats_compare

    family = stats_compare(
        runs[0], list(runs[1:]), list(metrics), all_pairs=settings.all_pairs,
        method=settings.method, alpha=settings.alpha, alternative=settings.alternative,
        ci=settings.ci_method, correction=settings.correction,
        n_resamples=settings.n_resamples, seed=settings.seed,
        allow_incomplete=settings.allow_incomplete,
    )
    settings.notes = list(family.notes)
    by_name = {r.name: r for r in runs}
    out: list[Comparison] = []
    for res in family.results:
        cand, base, metric = by_name[res.name_a], by_name[res.name_b], res.metric
        b_scores, c_scores = _paired_scores(base, cand, metric, settings.allow_incomplete)
        hib = higher_is_better(metric)
        w, t, lo = wins_ties_losses(b_scores, c_scores, hib)
        gains, losses = moved(b_scores, c_scores, top) if top > 0 else ([], [])
        p_adj = res.p_adjusted if settings.correction != "none" else None
        if settings.method == "bootstrap" and settings.correction == "none":
            verdict = bool(res.ci_low > 0.0 or res.ci_high < 0.0)  # the seed's rule
        else:
            verdict = (p_adj if p_adj is not None else res.p_value) < settings.alpha
        if res.degenerate and res.method == "bootstrap":  # constant: the sign-flip rule
            verdict = verdict and res.significant
        effect = res.effect
        out.append(Comparison(
            metric=metric, baseline=base.name, candidate=cand.name,
            n_queries=int(res.n_queries),
            baseline_mean=exact_mean(list(b_scores.values())),
            candidate_mean=exact_mean(list(c_scores.values())),
            diff=float(res.observed), ci_low=_finite(res.ci_low), ci_high=_finite(res.ci_high),
            p_value=float(res.p_value), p_adjusted=p_adj, significant=bool(verdict),
            significant_unadjusted=bool(res.p_value < settings.alpha),
            wins=w, ties=t, losses=lo, higher_is_better=hib,
            standardized_effect=_finite(effect.standardized) if effect is not None else None,
            warnings=list(res.warnings), top_gains=gains, top_losses=losses,
            p_resamples=None if res.method == "t-test" or getattr(res, "exact", False)
            else int(res.n_resamples) or None,
            method=res.method,
        ))
        settings.ci_method = res.ci_method
        for used, seen in ((res.method, settings.methods_used),
                           (res.ci_method, settings.ci_methods_used)):
            if used not in seen:
                seen.append(used)
        settings.generator = settings.generator or res.generator
    settings.family_size = family.family_size
    return out


def _paired_scores(base: RunResult, cand: RunResult, metric: str, allow_incomplete: bool
                   ) -> tuple[dict[str, float], dict[str, float]]:
    """Both runs' values of ``metric``: all of them, or with ``allow_incomplete`` those of
    the cases both have (what the test paired)."""
    if not allow_incomplete:
        return base.scores(metric), cand.scores(metric)
    b, c = base.available_scores(metric), cand.available_scores(metric)
    shared = b.keys() & c.keys()
    return ({k: v for k, v in b.items() if k in shared},
            {k: v for k, v in c.items() if k in shared})


# ----------------------------------------------------------------------- output
def _signed(x: float | None, open_end: str) -> str:
    from evalkit.formatting import signed

    return open_end if x is None else signed(x)


def _ci(c: Comparison) -> str:
    return f"[{_signed(c.ci_low, '-inf')}, {_signed(c.ci_high, '+inf')}]"


def describe(settings: Settings) -> str:
    """One line saying how the comparison was tested."""
    methods = settings.methods_used or [settings.method]
    label = " and ".join(METHOD_LABELS.get(m, m) for m in methods)
    if settings.method == "auto" and settings.methods_used:
        label += " (--test auto)"
    parts = [label]
    cis = settings.ci_methods_used or ([settings.ci_method] if settings.ci_method else [])
    if cis:
        parts.append(" and ".join(CI_LABELS.get(c, c) for c in cis) + " CI")
    if settings.alternative != "two-sided":
        parts.append(f"one-sided ({settings.alternative})")
    if any(m != "t-test" for m in methods) or any(c != "t" for c in cis):
        parts.append(f"{settings.n_resamples:,} resamples, seed {settings.seed}")
    if settings.correction != "none":
        tests = "test" if settings.family_size == 1 else "tests"
        parts.append(f"p adjusted by {CORRECTION_LABELS[settings.correction]} over "
                     f"{settings.family_size} {tests}")
    parts.append(f"alpha {settings.alpha:g}")
    return "; ".join(parts)


def result_notes(
    rows: Sequence[Comparison], input_notes: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The statistics' notes on the comparisons (skewed differences, few queries...) as
    ``(label, note)``: each note once, in row order, labelled with the metric and pair it
    belongs to (``"ap (tfidf vs bm25)"``; ``"ap, rr (tfidf vs bm25); ap (run2 vs bm25)"``
    when several share it word for word). Notes on the inputs (``input_notes``, printed
    as warnings already) are left out."""
    on_inputs = set(input_notes)
    where: dict[str, dict[tuple[str, str], list[str]]] = {}
    for c in rows:
        for text in c.warnings:
            if text in on_inputs:
                continue
            metrics = where.setdefault(text, {}).setdefault((c.candidate, c.baseline), [])
            if c.metric not in metrics:
                metrics.append(c.metric)
    return [
        ("; ".join(f"{', '.join(metrics)} ({cand} vs {base})"
                   for (cand, base), metrics in pairs.items()), text)
        for text, pairs in where.items()
    ]


def as_json(
    runs: Sequence[RunResult],
    paths: Sequence[Path],
    rows: Sequence[Comparison],
    settings: Settings,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """The machine-readable comparison; ``warnings`` are the notes on the inputs (each
    comparison's own ``warnings`` repeat those of its two runs)."""
    return {
        "baseline": {"name": runs[0].name, "source": str(paths[0])},
        "candidates": [
            {"name": r.name, "source": str(p)} for r, p in zip(runs[1:], paths[1:], strict=True)
        ],
        "difference": "candidate - baseline",
        "confidence": 1.0 - settings.alpha,
        **asdict(settings),
        "warnings": list(warnings),
        "comparisons": [asdict(c) for c in rows],
    }


def to_report(
    runs: Sequence[RunResult],
    paths: Sequence[Path],
    rows: Sequence[Comparison],
    settings: Settings,
    warnings: Sequence[str] = (),
) -> Report:
    """The comparison as the reporters' :class:`~evalkit.reporters.Report` (what
    ``--report`` renders): one row per metric and candidate, the candidate as system A and
    the baseline as B, the notes on the inputs, and :func:`as_json` as its ``data``.

    With ``--all-pairs`` the rows do not share one baseline: each is named
    ``metric (candidate vs baseline)``, the subject lists every run and there is no
    ``reference``.
    """
    from dataclasses import replace

    from evalkit.reporters import Report, report_from_comparison

    def items(group: Sequence[Comparison]) -> list[dict[str, Any]]:
        # alpha travels with each row: the report states the interval's confidence and
        # decides nothing itself (``significant`` is the comparison's verdict)
        return [{**asdict(c), "alpha": settings.alpha} for c in group]

    title = "evalkit compare"
    data = as_json(runs, paths, rows, settings, warnings)
    notes = [*warnings, *(f"{label}: {text}" for label, text in result_notes(rows, warnings))]
    # the column and the details name the correction ("p (Holm)")
    correction = (CORRECTION_LABELS[settings.correction] if settings.correction != "none"
                  else None)
    pairs = list(dict.fromkeys((c.candidate, c.baseline) for c in rows))
    if not settings.all_pairs or len({b for _, b in pairs}) <= 1:
        report = report_from_comparison(items(rows), name_b=runs[0].name, title=title,
                                        notes=notes, correction=correction)
        return replace(report, data=data)
    report_rows = []
    for cand, base in pairs:
        part = report_from_comparison(
            items([c for c in rows if (c.candidate, c.baseline) == (cand, base)]),
            name_a=cand, name_b=base, title=title, correction=correction)
        report_rows += [replace(r, name=f"{r.metric} ({cand} vs {base})") for r in part.rows]
    n_sig = sum(1 for r in report_rows if r.status != "no significant difference")
    names = [r.name for r in runs]
    # no one reference: the table's second value column is each row's baseline
    return Report(
        kind="compare", title=title, subject=", ".join(names), reference=None,
        rows=tuple(report_rows), status="done",
        summary=f"every pair of {', '.join(names)}: {n_sig} of {len(report_rows)} "
        "comparison(s) differ significantly",
        notes=tuple(notes), data=data, correction=correction,
    )


def print_table(
    runs: Sequence[RunResult],
    paths: Sequence[Path],
    rows: Sequence[Comparison],
    settings: Settings,
    *,
    top: int,
    input_notes: Sequence[str] = (),
    stderr: bool = False,
) -> None:
    """The human-readable comparison, on stdout (on stderr with ``stderr``, when a report
    holds stdout)."""
    from rich.table import Table

    from evalkit.cli.errors import output_console
    from evalkit.formatting import p_cell

    console = output_console(highlight=False, stderr=stderr)
    if not console.is_terminal:
        console.width = max(console.width, 160)
    several = len(runs) > 2
    adjusted = settings.correction != "none"
    console.print(f"baseline [bold]{runs[0].name}[/bold] ({paths[0]})", soft_wrap=True)
    for r, p in zip(runs[1:], paths[1:], strict=True):
        console.print(f"candidate [bold]{r.name}[/bold] ({p})", soft_wrap=True)
    n = rows[0].n_queries if rows else 0
    console.print(f"{n} queries paired by id; diff = candidate - baseline", soft_wrap=True)
    console.print(describe(settings), soft_wrap=True)
    conf = f"{100 * (1 - settings.alpha):g}% CI"
    if several:
        headers = ["metric", "candidate", "baseline", "baseline mean", "candidate mean"]
        left = {"metric", "candidate", "baseline", "significant"}
    else:
        headers = ["metric", "baseline", "candidate"]
        left = {"metric", "significant"}
    headers += ["diff", conf, "p"]
    if adjusted:
        headers.append(f"p ({CORRECTION_LABELS[settings.correction]})")
    headers += ["significant", "W/T/L"]
    table = Table(*headers, box=None, pad_edge=False)
    for col in table.columns:
        col.no_wrap = True
        col.justify = "left" if col.header in left else "right"
    for c in rows:
        cells = [c.metric]
        if several:
            cells += [c.candidate, c.baseline, fmt(c.baseline_mean), fmt(c.candidate_mean)]
        else:
            cells += [fmt(c.baseline_mean), fmt(c.candidate_mean)]
        cells += [_signed(c.diff, ""), _ci(c), p_cell(c.p_value, c.p_resamples)]
        if adjusted:
            cells.append(p_cell(c.p_adjusted, c.p_resamples))
        cells += ["yes" if c.significant else "no", f"{c.wins}/{c.ties}/{c.losses}"]
        table.add_row(*cells, style="bold" if c.significant else None)
    console.print(table)
    rule = "adjusted p" if adjusted else "p"
    if settings.method == "bootstrap" and not adjusted:
        rule = "the CI excluding 0 (the seed's rule)"
        console.print(f"significant: {rule}. W/T/L: queries where the candidate is better "
                      "/ equal / worse.", soft_wrap=True)
    else:
        console.print(f"significant: {rule} < {settings.alpha:g}. W/T/L: queries where the "
                      "candidate is better / equal / worse.", soft_wrap=True)
    for label, text in result_notes(rows, input_notes):
        console.print(f"note: {label}: {text}", soft_wrap=True)
    if top > 0:
        for c in rows:
            title = c.metric + (f", {c.candidate} vs {c.baseline}" if several else "")
            # the title is a line of its own: as a table title it would wrap at the
            # table's (narrow) width
            console.print(f"queries that moved most ({title})", soft_wrap=True)
            t = Table("", "query", "baseline", "candidate", "diff", box=None, pad_edge=False)
            for col in t.columns[2:]:
                col.justify = "right"
            for label, items in (("up", c.top_gains), ("down", c.top_losses)):
                for m in items:
                    t.add_row(label, m.id, fmt(m.baseline), fmt(m.candidate),
                              _signed(m.diff, ""))
            if not c.top_gains and not c.top_losses:
                t.add_row("", "(no query moved)", "", "", "")
            console.print(t)


# ----------------------------------------------------------------------- command
def command(
    runs: Annotated[list[Path], typer.Argument(
        metavar="BASELINE CANDIDATE...",
        help="The baseline, then one or more candidates: TREC run files (scored with --qrels) "
        "or run artifacts saved by `evalkit eval --save`.",
        show_default=False,
    )],
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels; required when an input is a TREC run file.",
        show_default=False,
    )] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m",
        help="Metric to compare, repeatable or comma-separated. Default: ap, ndcg@10, "
        "precision@10, recall@100, rr; for artifacts, the metrics they all hold.",
        show_default=False,
    )] = None,
    as_json_flag: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    top: Annotated[int, typer.Option(
        "--top", min=0, help="Also list the N queries that moved most up and down."
    )] = 0,
    test: Annotated[Method, typer.Option(
        "--test",
        help="The paired test: auto (the default, chosen by the calibration study in "
        "docs/statistics.md: the sign-flip randomization test, or the paired t-test on a "
        "0/1 metric), randomization, t-test, bootstrap-t, or bootstrap (the seed's paired "
        "bootstrap).",
    )] = DEFAULT_METHOD,
    correction: Annotated[Correction, typer.Option(
        "--correction",
        help="Adjust p over every metric and candidate tested: holm, bh "
        "(Benjamini-Hochberg), westfall-young (max-T on the shared resamples) or none.",
    )] = Correction.holm,
    alpha: Annotated[float, typer.Option(
        "--alpha",
        help="Significance level; the interval has confidence 1 - alpha.",
    )] = 0.05,
    ci: Annotated[CIMethod | None, typer.Option(
        "--ci", help="Interval method (default: the test's own, which agrees with its p): "
        "percentile, bca, bootstrap-t, t, or inversion (inverts the randomization test, so "
        "only with --test randomization).",
        show_default=False,
    )] = None,
    alternative: Annotated[Alternative, typer.Option(
        "--alternative", help="two-sided, greater (candidate better) or less.",
    )] = Alternative.two_sided,
    all_pairs: Annotated[bool, typer.Option(
        "--all-pairs", help="Compare every pair of runs, not only each with the baseline.",
    )] = False,
    resamples: Annotated[int, typer.Option(
        "--resamples", "-B",
        help=f"Resamples of the randomization or bootstrap test (at least {MIN_RESAMPLES}).",
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
        help="Judged queries a TREC run lacks: 'zero' or 'skip'. (default: zero, or the "
        "artifacts' setting)",
        show_default=False,
    )] = None,
    report: Annotated[list[str] | None, typer.Option(
        "--report",
        help="Also write a report, FORMAT:PATH (console, json, markdown, junit; PATH - is "
        "standard output, and then the table goes to standard error). Repeatable.",
        show_default=False,
    )] = None,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete",
        help="Compare run artifacts that are incomplete (cases without a row, a file cut "
        "short, a metric that failed on some case) on the cases every run has; without "
        "it they are refused.",
    )] = False,
) -> None:
    """Compare candidates with a baseline on the same queries, metric by metric.

    For each metric and candidate: both means, the difference (candidate - baseline) with
    its confidence interval, the p-value (raw, and adjusted over all the tests), the
    verdict, and how many queries the candidate wins, ties and loses. Runs scored against
    different qrels or with different settings are refused.
    """
    if len(runs) < 2:
        raise CliError("compare needs a baseline and at least one candidate run")
    require_alpha(alpha)
    check_test_options(test.value, ci.value if ci is not None else None, resamples)
    targets = list(report or [])
    to_stdout = check_report_targets(targets, as_json=as_json_flag, inputs=[*runs, qrels])
    results, metrics = load_runs(
        runs, qrels=qrels, requested=split_metrics(metric), relevance_level=relevance_level,
        missing=missing.value if missing is not None else None, depth=depth,
        allow_incomplete=allow_incomplete,
    )
    if any(not r.per_query for r in results):
        raise CliError("a run has no evaluated query; nothing to compare")
    settings = Settings(
        method=test.value, ci_method=ci.value if ci is not None else None, alpha=alpha,
        alternative=alternative.value, correction=correction.value, n_resamples=resamples,
        seed=seed, all_pairs=all_pairs, allow_incomplete=allow_incomplete,
    )
    with progress(f"testing {len(metrics)} metric(s) x {len(results) - 1} candidate(s)"):
        rows = compare_runs(results, metrics, settings, top=top)
    per_run = [input_warnings([r], [p]) for r, p in zip(results, runs, strict=True)]
    warnings = [w for ws in per_run for w in ws] + settings.notes
    by_name = dict(zip((r.name for r in results), per_run, strict=True))
    for c in rows:
        c.warnings = by_name[c.baseline] + by_name[c.candidate] + c.warnings
    for w in warnings:
        note(f"warning: {w}")
    from evalkit.reporters import write_reports

    # files first: a report that cannot be written stops the command before any result
    # is printed, so nothing printed is contradicted by the exit code
    to_files, to_std = file_targets(targets)
    rendered = to_report(results, runs, rows, settings, warnings) if targets else None
    write_reports(rendered, to_files)
    if as_json_flag:
        from evalkit.formatting import json_ready

        typer.echo(json.dumps(json_ready(as_json(results, runs, rows, settings, warnings)),
                              indent=2, allow_nan=False))
    else:
        # a report on stdout must be the only thing there (json:- is parsed by scripts)
        print_table(results, runs, rows, settings, top=top, input_notes=warnings,
                    stderr=to_stdout)
    if to_std:
        write_reports(rendered, to_std)


def check_test_options(method: str, ci: str | None, resamples: int) -> None:
    """Refuse a resample count too small to test with, and an interval that belongs to
    another test."""
    if resamples < MIN_RESAMPLES:
        raise CliError(
            f"--resamples {resamples} is too few: with B resamples no p-value can go below "
            f"1/(B+1) and the interval's tails rest on a handful of draws (B = 1 gives "
            f"[-inf, +inf]). Use at least {MIN_RESAMPLES}; the default is 10,000"
        )
    owner = CI_OF_TEST.get(ci or "")
    if owner is not None and method != owner:
        raise CliError(
            f"--ci {ci} inverts the {owner} test and goes only with --test {owner} (where "
            f"it is the default). With --test {method}, leave --ci out to get the test's own "
            "interval, or pick percentile, bca, bootstrap-t or t"
        )
