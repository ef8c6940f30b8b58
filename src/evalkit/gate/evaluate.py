"""The gate: evaluate checks against a run (and a baseline) and decide an exit code.

Verdicts, per check:

* ``pass``: the threshold holds, or the baseline comparison shows no significant move in
  the worse direction (noise and significant improvements both pass);
* ``fail``: a blocking check whose threshold does not hold, or whose metric moved
  significantly in the worse direction (its polarity decides which direction is worse);
* ``warn``: what would be ``fail`` on a check with ``level: warn``;
* ``error``: the check could not be judged: NaN value, metric missing on some case, a
  scoped case without a row, any errored case in the run (covered or not: a run with
  errored cases is incomplete), unknown metric, a baseline check with no baseline, a
  baseline over other cases or with a different fingerprint, a metric with no declared
  polarity or one opposite to the one its runs were scored with (their headers record it),
  a run or baseline scored without some of its judged queries (``--missing skip``: its
  means are not over the judged set) or whose ids match none of them, a baseline whose
  samples are reduced otherwise than the run's, a run a sequential rule stopped early
  (every check but the rule's own comparison), and any unscoped check of a run holding
  fewer cases than its header records (:func:`held_to_header`). An error is never a pass.

Exit code (:attr:`GateReport.exit_code`): 2 if any blocking check is ``error``, else 1 if
any blocking check is ``fail``, else 0. Warn-level checks never change it.

Statistics of baseline checks: per-case metrics use :func:`evalkit.stats.paired_test`
(its default method, two-sided, confidence ``1 - alpha``) on the per-case values of the
covered cases; whole-run aggregates use a paired bootstrap over case ids (the same ids
resampled in both runs). The p-values of the blocking baseline checks that reached a test
are Holm-adjusted as one family, and each adjusted p is compared with its own check's
alpha; warn-level checks are judged on their unadjusted p. A move counts as significant
when ``p < alpha``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any

from evalkit.core.registry import Registry
from evalkit.data.case_clusters import ClustersArg
from evalkit.data.coverage import Coverage, coverage_of, sequential_stop, skipped_judged
from evalkit.data.judged_match import judged_problems
from evalkit.data.labels import HumanLabels
from evalkit.data.results import RunResult
from evalkit.data.run_origin import RunOrigin
from evalkit.data.samples import sample_rows, samples_note
from evalkit.gate.baseline import Baseline, refuse_the_run_itself
from evalkit.gate.baseline_checks import baseline_result, decide, polarity_notes, sequential_result
from evalkit.gate.check_verdicts import (
    BaselineComparison,
    CheckResult,
    Verdict,
    fmt_value,
)
from evalkit.gate.checks import CheckError, CheckSpec, row_id
from evalkit.gate.fingerprint import Fingerprint, case_set_difference, fingerprint
from evalkit.gate.holm_floors import family_floors, holm_floor
from evalkit.gate.observed import (
    CheckFailure,
    check_coverage,
    error_result,
    observed_value,
    require_no_errors,
    resolve_check_metric,
    rests_on,
)
from evalkit.gate.verdicts import GateReport
from evalkit.plugins.default import default_registry

#: Resamples of the baseline checks' resampling tests (``evalkit gate --resamples``).
DEFAULT_RESAMPLES = 10_000
#: Seed of their resampling (``--seed``): fixed, so that a gate is reproducible.
DEFAULT_SEED = 42


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in input order (:func:`evalkit.stats.holm`):
    ``p_adj(i) = max over j <= rank(i) of min(1, (m - j + 1) * p_(j))``, ``p_(j)`` sorted
    ascending (Holm 1979)."""
    if not p_values:
        return []
    from evalkit.stats import holm as stats_holm

    return [float(x) for x in stats_holm(list(p_values))]


# --------------------------------------------------------------------- gate
def _as_run(run: RunResult | Any) -> RunResult:
    if isinstance(run, RunResult):
        return run
    raise TypeError(f"expected a RunResult, got {type(run).__name__}")


def _threshold_result(
    check: CheckSpec, run: RunResult, reg: Registry, cov: tuple[int, int]
) -> CheckResult:
    try:
        rows = check.select(run.per_query)
        require_no_errors(run.per_query, f"run {run.name!r}")
        res = resolve_check_metric(check, reg, rows)
        # a whole-run aggregate sees every sample row (latency is per call)
        used = sample_rows(run, rows) if res.kind == "aggregate" else rows
        observed = observed_value(res, used, f"run {run.name!r}")
    except (CheckError, CheckFailure) as exc:
        return error_result(check, cov, str(exc))
    basis = rests_on(res, used)
    if check.passes(observed):
        return CheckResult(check, "pass", observed, cov[0], cov[1], "", res.kind,
                           rests_on=basis)
    verdict: Verdict = "fail" if check.blocking else "warn"
    word = "mean " if res.kind == "metric" else ""
    broken = {">=": "<", "<=": ">", "==": "!="}[str(check.op)]
    msg = (f"{word}{check.metric} {fmt_value(observed)} {broken} {check.threshold:g} (required "
           f"{check.op} {check.threshold:g})")
    return CheckResult(check, verdict, observed, cov[0], cov[1], msg, res.kind,
                       rests_on=basis)


def _gate_clusters(clusters: ClustersArg | bool | None, run: RunResult,
                   base: Baseline | None) -> Mapping[str, Hashable] | None:
    """``clusters`` as ``{case id: cluster}`` (None: not clustered), its ids checked
    against the run's and the baseline's. Raises ClustersError."""
    from evalkit.data import case_clusters as cc

    if clusters is None or clusters is False:
        return None
    given = cc.clusters_from_runs([run.header]) if clusters is True else \
        cc.agreed_clusters(cc.as_case_clusters(clusters), [run.header])
    known = set(run.ids()) | (set(base.run.ids()) if base is not None else set())
    extra = sorted(i for i in given if i not in known)
    if extra:
        shown = ", ".join(repr(i) for i in extra[:10])
        raise cc.ClustersError(
            f"clusters: {len(extra)} id(s) are not cases of the run or the baseline "
            f"({shown}{' ...' if len(extra) > 10 else ''}); check that the clusters belong "
            "to this run")
    return given


def _clusters_notes(clusters: Mapping[str, Hashable], run: RunResult) -> list[str]:
    """How many clusters the run's cases fall in (the unit of the baseline checks'
    tests) and their effective number ``G*``
    (:func:`evalkit.stats.clusters.effective_clusters`), and the warning when either is
    below :data:`evalkit.stats.clusters.FEW_CLUSTERS`."""
    from evalkit.stats.clusters import count_clusters, few_clusters_note

    g, eff = count_clusters(clusters[i] for i in run.ids() if i in clusters)
    star = "" if eff is None else f", effective number G* = {eff:.1f}"
    notes = [f"clustered: the baseline checks' tests take the cluster as their unit "
             f"({g} clusters over the run's {len(run.ids())} cases{star})"]
    few = few_clusters_note(g, eff)
    return notes + ([few] if few else [])


def evaluate_gate(
    checks: Sequence[CheckSpec],
    run: RunResult,
    baseline: RunResult | Baseline | None = None,
    *,
    registry: Registry | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    case_tags: Mapping[str, Sequence[str]] | None = None,
    labels: HumanLabels | None = None,
    clusters: ClustersArg | bool | None = None,
    ppi: bool = False,
    baseline_labels: HumanLabels | None = None,
    origin: RunOrigin | None = None,
) -> GateReport:
    """Judge every check on ``run`` (and ``baseline`` for baseline checks).

    Args:
        checks: from :func:`evalkit.load_checks`; ids must be unique.
        run: the candidate run (rows of ``QueryResult`` or ``CaseResult``).
        baseline: a :class:`~evalkit.gate.baseline.Baseline` (from ``load_baseline``), or a
            plain run used as one (its fingerprint is computed from its header).
        registry: where metric names are resolved (default: the process registry).
        n_resamples: resamples of the baseline checks' tests: the sign-flip
            randomization test of a per-case metric (and the bootstrap-t joining it on
            skewed differences), the bootstrap of an aggregate.
        seed: seed of the resampling (fixed by default, so a gate is reproducible).
        case_tags: ``{case id: tags}`` of every case of the golden set, for checks scoped
            by tag (``scope: {tags: [...]}``); None: the tags of the golden sets the run
            and the baseline were made from (read when a check is scoped by tag). A tag
            scope covers the cases carrying its tags, and like an id scope, a covered
            case the run lacks makes the check ``error``, never ``pass``; unknown tags
            (no golden set, or one gone or changed) make it ``error`` too.
        labels: the human labels that agreement aggregates
            (``krippendorff_alpha(correctness)``) read; by default the ``labels`` of the
            golden file the run's header names (:func:`evalkit.data.labels.run_golden_labels`).
        clusters: clustered cases: ``{case id: cluster}``, the path of a clusters file
            (``query id<TAB>cluster``) or of a golden set naming each case's
            ``cluster``, or True for the clusters of the golden set the run was made
            from. The test of every baseline check on a per-case metric then takes the
            cluster as its unit (:mod:`evalkit.stats.clusters`; its comparison's
            ``n_clusters``); a note says how many clusters and their effective number
            ``G*``, and warns when either is below 20. A
            whole-run aggregate's bootstrap still resamples cases.
        ppi: decide each baseline check on a per-case metric that has human labels in
            the run and in the baseline by the PPI++ interval of the human difference on
            the cases labelled in both (:func:`evalkit.data.ppi_labels.paired_ppi`):
            its estimate, interval and normal p (Holm-adjusted with the other checks)
            replace the paired test's; ``comparison.ppi`` says on how many human labels
            it rests. A check on a metric without labels keeps its test; labels that
            cannot give an interval make the check ``error``.
        baseline_labels: the baseline's human labels for ``ppi``; by default those of
            the golden file the baseline's header names.
        origin: what ``run`` must have been made from (an eval config's settings and
            golden set as they are now: :func:`evalkit.execute.gate_options.run_origin`);
            a run whose header differs (:meth:`RunOrigin.mismatch`, the comparison
            ``evalkit run --resume`` makes) is incomplete evidence: no check is judged.

    Returns:
        A :class:`GateReport`; its ``exit_code`` is 0, 1 or 2.

    Raises:
        CheckError: ``checks`` is empty or has duplicate ids.
        TypeError: ``run`` is not a RunResult.
        BaselineError: a baseline that is ``run`` itself (:func:`refuse_the_run_itself`).
        ClustersError: a clusters file that cannot be read, ids the run and baseline do
            not have, or (True) a run made from no golden set, or one gone or changed.
    """
    run = _as_run(run)
    _require_ids(checks)
    reg = registry or default_registry()
    base: Baseline | None
    if baseline is None or isinstance(baseline, Baseline):
        base = baseline
    else:
        base = Baseline.from_run(_as_run(baseline))
    refuse_the_run_itself(run, base, any(c.kind == "baseline" for c in checks))
    run_cov = coverage_of(run)
    stopped = sequential_stop(run.header or {})
    notes, incomplete, lacking = _coverage_notes(run, run_cov, base)
    _not_made_from(origin, run, incomplete, lacking)
    case_clusters = _gate_clusters(clusters, run, base)
    if case_clusters is not None:
        notes.extend(_clusters_notes(case_clusters, run))
    skipped = skipped_judged(run)
    expected = run_cov.expected if skipped is None else skipped.judged
    run_fp: Fingerprint | None = None
    if base is not None and any(c.kind == "baseline" for c in checks):
        run_fp = fingerprint(run, aggregates=False)
        notes.extend(polarity_notes(checks, run, base, reg))
        if run_fp.ids_sha256 != base.fingerprint.ids_sha256:
            notes.append(case_set_difference(base.run.ids(), run.ids()))
    results: list[CheckResult] = []
    from evalkit.data.labels import labels_in_effect, noting_off_scale

    resolve = _tag_scopes(checks, run, base, case_tags)
    ppi_labels = _ppi_labels(ppi, labels, baseline_labels, run, base, checks, notes)

    with labels_in_effect(noting_off_scale(labels, run.header, notes)):
        for check in checks:
            try:
                check = resolve(check)
            except CheckError as exc:
                results.append(error_result(check, (0, 0), str(exc)))
                continue
            cov = check_coverage(check, run.per_query, reg, expected)
            try:
                if check.kind == "threshold":
                    results.append(_threshold_result(check, run, reg, cov))
                elif stopped is not None:
                    results.append(sequential_result(check, run, base, reg, cov, stopped))
                else:
                    results.append(baseline_result(check, run, base, reg, cov, n_resamples,
                                                   seed, run_fp, case_clusters, ppi_labels))
            except Exception as exc:  # a bug or a plugin failure: cannot judge, never a pass
                results.append(error_result(
                    check, cov, f"the check raised {type(exc).__name__}: {exc}"))
    if not incomplete:  # an incomplete run: every check is not judged, below
        results = [held_to_header(r, run, run_cov) for r in results]
    # a check that could not fail whatever the data judged nothing: an error
    results, floors = _decided(results, n_resamples)
    notes.extend(floors)
    if incomplete:  # no verdict rests on evidence the gate did not fully see
        which = " and ".join(lacking)
        why = f"{which} {'are' if len(lacking) > 1 else 'is'} incomplete (see below)"
        results = [replace(r, not_judged=True) if r.verdict == "error"
                   and not _lacked(r.check, run, base) else replace(
            r, verdict="error", observed=None, comparison=None, not_judged=True,
            message=f"not judged: {_lacked(r.check, run, base)}{why}") for r in results]
    return GateReport(
        results=tuple(results), run_name=run.name,
        baseline_name=None if base is None else base.name, notes=tuple(notes),
        incomplete=tuple(incomplete), run=run,
    )


def held_to_header(result: CheckResult, run: RunResult, cov: Coverage) -> CheckResult:
    """``result``, or an ``error`` (not judged: the gate exits 2 whatever its level) when
    the run holds fewer cases than its header records and the check would rest on them.

    This is where the gate holds every verdict to the cases the run should have: a run
    whose header records more golden cases than it has rows, for whatever reason, never
    gives an unscoped check a verdict (its coverage already counts the cases the header
    records: ``107/240``). A run a sequential rule stopped early (:attr:`Coverage.partial`)
    gives no check a verdict but the one the rule decided: the ``vs_baseline`` check of
    the sequence's metric over every case, judged by the sequence's anytime-valid interval
    (:func:`evalkit.gate.baseline_checks.sequential_result`); its rows are the cases the
    rule drew for that one comparison.
    """
    comp = result.comparison
    if comp is not None and comp.method.startswith("sequential:") \
            and result.verdict != "error":
        return result  # the rule's own decision, valid for the whole golden set
    rows = len({row_id(r) for r in run.per_query})
    if cov.partial is not None:
        why = f"run {run.name!r}{_where(run)} {cov.partial}"
    elif result.check.scope is None and result.covered > rows:
        why = (f"run {run.name!r}{_where(run)} holds rows for {rows} of the "
               f"{result.covered} cases its header records, and an unscoped check covers "
               "them all; run the missing cases (`evalkit run --resume`)")
    else:
        return result
    if result.verdict == "error":
        return replace(result, not_judged=True)
    return replace(result, verdict="error", observed=None, comparison=None, not_judged=True,
                   rests_on=None, message=f"not judged: {why}")


def _where(run: RunResult) -> str:
    return f" ({run.integrity.path})" if run.integrity is not None else ""


def _lacked(check: CheckSpec, run: RunResult, base: Baseline | None) -> str:
    """``"run 'r' (file) lacks case '12' of the check's scope; "``: the scoped cases the
    run (and the baseline, for a baseline check) holds no row for, or ``""``."""
    if check.scope is None:
        return ""
    out = ""
    for role, r in (("run", run), ("baseline", None if base is None or check.kind !=
                                   "baseline" else base.run)):
        if r is None:
            continue
        have = set(r.ids())
        gone = [i for i in check.scope if i not in have]
        if gone:
            where = f" ({r.integrity.path})" if r.integrity is not None else ""
            ids = ", ".join(repr(i) for i in gone[:10]) + (
                f" and {len(gone) - 10} more" if len(gone) > 10 else "")
            out += (f"{role} {r.name!r}{where} lacks case{'s' if len(gone) > 1 else ''} "
                    f"{ids} of the check's scope; ")
    return out


def _ppi_labels(ppi: bool, labels: HumanLabels | None, baseline_labels: HumanLabels | None,
                run: RunResult, base: Baseline | None, checks: Sequence[CheckSpec],
                notes: list[str]) -> tuple[HumanLabels, HumanLabels] | None:
    """``(run labels, baseline labels)`` for PPI intervals (given, else the golden files'
    labels), or None: no ``ppi``, no baseline check, or labels missing (said in
    ``notes``). The selection warning of each is added to ``notes``."""
    from evalkit.data.labels import run_golden_labels

    if not ppi or base is None or not any(c.kind == "baseline" for c in checks):
        return None
    mine = labels if labels is not None else run_golden_labels(run.header)
    theirs = baseline_labels if baseline_labels is not None else run_golden_labels(
        base.run.header)
    if mine is None or theirs is None:
        which = " and ".join(w for w, x in (("the run", mine), ("the baseline", theirs))
                             if x is None)
        notes.append(f"--ppi: {which} has no human labels (pass --labels and "
                     "--baseline-labels, or label the golden files), so the baseline "
                     "checks use their paired tests")
        return None
    n = len(run.ids())
    for lab in (mine, theirs):
        warning = lab.selection_warning(n)
        if warning and warning not in notes:
            notes.append(warning)
    return mine, theirs


def _tag_scopes(checks: Sequence[CheckSpec], run: RunResult, base: Baseline | None,
                case_tags: Mapping[str, Sequence[str]] | None
                ) -> Callable[[CheckSpec], CheckSpec]:
    """``check -> check`` with a tag scope made the ids of its cases
    (:meth:`CheckSpec.with_case_tags`), the tags read once, when a check needs them.

    The function raises :class:`CheckError` when the tags are unknown or no case carries
    the check's tags."""
    found: list[Mapping[str, Sequence[str]]] = []

    def tags() -> Mapping[str, Sequence[str]]:
        if not found:
            from evalkit.data.case_tags import TagsError, agreed_tags, tags_from_runs

            headers = [run.header] + ([base.run.header] if base is not None else [])
            try:  # a tags file never silently instead of the golden set's own tags
                known = tags_from_runs(headers) if case_tags is None \
                    else agreed_tags(case_tags, headers)
            except TagsError as exc:
                raise CheckError(f"scoped by tag, but {exc}") from None
            if known is None:
                raise CheckError(
                    "scoped by tag, but the run records no golden set, so its cases' tags "
                    "are unknown: pass the tags with --tags FILE (query id<TAB>tag lines)")
            found.append(known)
        return found[0]

    def resolve(check: CheckSpec) -> CheckSpec:
        if check.scope_tags is None:
            return check
        try:
            return check.with_case_tags(tags())
        except CheckError as exc:
            text = str(exc)
            raise CheckError(text if text.startswith("check ") else
                             f"check {check.id!r}: {text}") from None

    return resolve


def _require_ids(checks: Sequence[CheckSpec]) -> None:
    """Raises :class:`CheckError` when there is no check or two share an id."""
    if not checks:
        raise CheckError("no checks to evaluate; a gate without checks gates nothing")
    seen: set[str] = set()
    for c in checks:
        if c.id in seen:
            raise CheckError(f"duplicate check id {c.id!r}")
        seen.add(c.id)


def _coverage_notes(run: RunResult, run_cov: Coverage, base: Baseline | None
                    ) -> tuple[list[str], list[str], list[str]]:
    """``(notes, incomplete, lacking)``: the coverage notes of the run and the baseline
    (and on their samples), a line for each that is incomplete, and which are
    (``"the run"``, ``"the baseline"``)."""
    notes: list[str] = list(run_cov.notes)
    incomplete: list[str] = []
    lacking: list[str] = []
    if not run_cov.complete or judged_problems(run):
        incomplete.append(_incomplete(run, run_cov, "run"))
        lacking.append("the run")
    if base is not None:
        base_cov = coverage_of(base.run)
        if not base_cov.complete or judged_problems(base.run) \
                or base_cov.partial is not None:
            incomplete.append(_incomplete(base.run, base_cov, "baseline"))
            lacking.append("the baseline")
        notes.extend(base_cov.notes)
    notes.extend(samples_note(run, base.run if base is not None else None))
    return notes, incomplete, lacking


def _in_family(r: CheckResult) -> bool:
    """Whether ``r`` is in the family Holm's correction adjusts: a blocking baseline check
    that reached its test (not a sequential one)."""
    return (r.comparison is not None and r.blocking and r.verdict != "error"
            and not r.comparison.method.startswith("sequential:"))
def _not_made_from(origin: RunOrigin | None, run: RunResult, incomplete: list[str],
                   lacking: list[str]) -> None:
    """Add to ``incomplete`` the line saying ``run`` was not made from ``origin`` as it is
    now (another golden set, target or metrics), if it was not."""
    if origin is None:
        return
    where = f" ({run.integrity.path})" if run.integrity is not None else ""
    line = origin.mismatch(run.header or {}, f"run {run.name!r}{where}")
    if line is not None:
        incomplete.append(line)
        if "the run" not in lacking:
            lacking.append("the run")


def _decided(results: list[CheckResult], n_resamples: int
             ) -> tuple[list[CheckResult], list[str]]:
    """Every baseline check's verdict, its p Holm-adjusted over the blocking baseline
    checks that were judged; each of those that cannot fail whatever the data an
    ``error`` (not judged), and the notes saying why (:mod:`evalkit.gate.holm_floors`):
    one for the family when none of them can, else one per check that cannot; a check
    on one case is outside Holm's ``m`` (:func:`evalkit.gate.holm_floors.family_floors`)."""
    family = [i for i, r in enumerate(results) if _in_family(r)]
    comparisons = [c for c in (results[i].comparison for i in family) if c is not None]
    adjusted, per_check = family_floors(comparisons, n_resamples)
    adj_by_index = dict(zip(family, adjusted, strict=True))
    decided = [decide(r, adj_by_index.get(i)) if i in adj_by_index or (
        r.comparison is not None and r.verdict != "error"
        and not r.comparison.method.startswith("sequential:")) else r
        for i, r in enumerate(results)]
    cannot = {i: why for i, why in zip(family, per_check, strict=True) if why is not None}
    if not cannot:
        return decided, []
    whole = holm_floor(comparisons, n_resamples) if len(cannot) == len(family) else None
    notes = [whole] if whole is not None else [
        f"check {results[i].check.id!r} {why.lead}: {why.why}" for i, why in cannot.items()]
    return [replace(r, verdict="error", not_judged=True,
                    message=f"not judged: this check {cannot[i].lead} "
                            "(the note says why, and what can)")
            if i in cannot else r for i, r in enumerate(decided)], notes


def _incomplete(run: RunResult, cov: Coverage, role: str) -> str:
    where = f" ({run.integrity.path})" if run.integrity is not None else ""
    partial = [] if cov.partial is None else [f"it {cov.partial}"]
    problems = [*cov.problems, *judged_problems(run), *partial]
    return f"{role} {run.name!r}{where} is incomplete: " + "; ".join(problems)


def checks_source(path: Path) -> Path:
    """The checks file to read for ``-c PATH``: any path that is not a directory;
    ``-`` (and ``/dev/stdin``) is standard input. Another pipe or a device is refused
    when the file is read (:func:`evalkit.gate.checks.load_checks`).

    Raises:
        InputError: a directory (the message names the checks files it holds), a missing
            file, or ``-`` on a system without ``/dev/stdin``.
    """
    from evalkit.io.input_files import InputError, require_file

    if str(path) == "-":
        stdin = Path("/dev/stdin")
        if not stdin.exists():
            raise InputError("-c -: this system has no /dev/stdin to read the checks from; "
                             "write them to a file and pass its path")
        return stdin
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.y*ml"))
        hint = f" (it holds {', '.join(found[:5])})" if found else ""
        raise InputError(
            f"checks {path}: is a directory{hint}; pass the checks file itself, e.g. "
            f"-c {path / (found[0] if found else 'checks.yaml')}")
    if not path.exists():
        require_file(path, "checks")  # a symbolic link loop, else "no such file"
    return path


def _known_case_ids(run: RunResult, base: Baseline | None) -> set[str] | None:
    """The case ids a checks file's ``scope`` may name: those of the run's and the
    baseline's rows, and those their headers record they should hold
    (:func:`~evalkit.data.coverage.recorded_case_ids`: a row lost from a run is a case
    it lacks, reported as incomplete evidence, not a typo in the scope). None (no id is
    refused at load) when a run lacks rows its header counts without listing their ids:
    then an unknown id may be one of them, and the gate reports the run incomplete."""
    from evalkit.data.coverage import recorded_case_ids

    known: set[str] = set()
    for r in [run] + ([base.run] if base is not None else []):
        ids = r.ids()
        known.update(ids)
        expected = coverage_of(r).expected
        short = expected is not None and expected > len(ids)
        goldens = (r.header or {}).get("goldens")
        # a target run's golden cases are in its header (one a sequential rule never
        # reached included); a scored run's judged queries are read only when rows are lost
        if short or (isinstance(goldens, Mapping) and "case_digests" in goldens):
            recorded = recorded_case_ids(r)
            if recorded is None and short:
                return None
            known.update(recorded or ())
    return known


def gate_from_files(
    checks_path: str | Path, run_path: str | Path, baseline_path: str | Path | None = None,
    **kwargs: Any,
) -> GateReport:
    """:func:`evaluate_gate` on files: a checks file, a run artifact and optionally a
    baseline file. Scope ids are checked at load against the cases of the run and the
    baseline, those they hold and those their headers record (an id in none is a typo;
    one they lack is incomplete evidence, reported by the gate). ``kwargs`` go to
    :func:`evaluate_gate`; ``case_tags`` may be a tags file's path (``query id<TAB>tag``
    lines). The labels the checks file names (``labels``, ``baseline_labels``) are read
    when ``labels`` / ``baseline_labels`` are not given.

    Raises:
        CheckError, ArtifactError, BaselineError, TagsError, LabelError: unusable input
            (file named).
    """
    from evalkit.data.labels import read_labels
    from evalkit.gate.baseline import load_baseline
    from evalkit.gate.checks import load_checks_file

    run = RunResult.load(run_path)
    base = load_baseline(baseline_path) if baseline_path else None
    doc = load_checks_file(checks_path, known_case_ids=_known_case_ids(run, base))
    tags = kwargs.pop("case_tags", None)
    if isinstance(tags, str | PathLike):
        from evalkit.data.case_tags import load_tags

        tags = load_tags(tags)
    for key, path in (("labels", doc.labels), ("baseline_labels", doc.baseline_labels)):
        if kwargs.get(key) is None and path is not None:
            kwargs[key] = read_labels(path)
    return evaluate_gate(doc.checks, run, base, case_tags=tags, **kwargs)


__all__ = [
    "BaselineComparison",
    "CheckResult",
    "GateReport",
    "checks_source",
    "evaluate_gate",
    "gate_from_files",
    "holm",
]
