"""``pairwise``: which of two (or more) systems' answers a judge prefers, case by case, in
both orders, from the runs' stored responses (no target is called).

For every case, every sample number and every pair of systems (X, Y) the judge is asked
twice: X's answer shown first (as A), then Y's first. Each verdict is one forced, strict
tool call (:mod:`evalkit_judge.pairwise_prompt`), asked through the judge's cache and
budget (:func:`evalkit_judge.pairwise_ask.ask_verdict`): a verdict already in the cache is
never paid again, so a comparison stopped by Ctrl-C, a kill or a spending limit continues
where it stopped when run again. The statistics are :mod:`evalkit_judge.pairwise_stats`'
and :mod:`evalkit_judge.bradley_terry`'s; the artifact :mod:`evalkit_judge.pairwise_artifact`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.io.setting_names import Setting, SettingError
from evalkit_judge.bradley_terry import BT_ALPHA
from evalkit_judge.budget import Budget, GradeNotRequested, JudgeError, use_budget
from evalkit_judge.judge import LLMJudge, SingleFlight
from evalkit_judge.pairwise_artifact import PairwiseResult
from evalkit_judge.pairwise_ask import Answer, RejectedVerdict, Task, ask_verdict
from evalkit_judge.pairwise_prompt import PairwisePrompt
from evalkit_judge.pairwise_stats import check_rules

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import GoldenSet
    from evalkit.data.results import RunResult
    from evalkit.data.targets import TargetResponse
    from evalkit.execute.target_runner import GoldensInput

#: Requests in flight at once, by default.
DEFAULT_CONCURRENCY = 4


class PairwiseError(SettingError):
    """The runs cannot be compared pairwise (the message says why and what to do)."""


def judge_of(metric: Any) -> LLMJudge:
    """The :class:`LLMJudge` behind a registered metric: the metric itself, or what its
    ``llm_judge()`` method returns (a metric that builds its judge on first use).

    Raises:
        PairwiseError: the metric is not an LLM judge.
    """
    if isinstance(metric, LLMJudge):
        return metric
    get = getattr(metric, "llm_judge", None)
    found = get() if callable(get) else None
    if isinstance(found, LLMJudge):
        return found
    raise PairwiseError(f"{metric!r} is not an LLM judge (an evalkit_judge.LLMJudge, or an "
                        "object whose llm_judge() returns one)")


def registered_judge(name: str, headers: Iterable[Mapping[str, Any]] = ()) -> LLMJudge:
    """The judge registered as the metric ``name`` (plugins, local plugins, the eval
    config's ``judges:`` when the config was applied), or else declared in the eval
    config of a run whose header is among ``headers`` (restored from the header's record
    of it: :func:`evalkit_judge.declared.restore_judges`).

    Raises:
        PairwiseError: no such metric, or it is not an LLM judge (the message names the
            judges registered).
    """
    from evalkit.core.providers import RegistryError
    from evalkit.execute.scoring import resolve_metrics
    from evalkit_judge.declared import restore_judges

    for header in headers:
        restore_judges(header)

    try:
        spec = resolve_metrics([name])[0]
    except RegistryError as exc:
        # the registry's own sentence (with its "did you mean"), without its list of every
        # metric: the judges are what this option takes
        why = str(exc).split(" Known: ")[0]
        end = "" if why.endswith((".", "?")) else "."
        raise PairwiseError(f"--judge {name}: {why}{end} {_known_judges()}") from None
    try:
        return judge_of(spec.fn)
    except PairwiseError:
        raise PairwiseError(f"--judge {name}: the metric {name!r} is not an LLM judge. "
                            f"{_known_judges()}") from None


def _known_judges() -> str:
    """One sentence naming the LLM-judge metrics registered now, or how to declare one."""
    from evalkit.core.specs import MetricSpec
    from evalkit.plugins.default import default_registry

    found = sorted(key for _, key, entry in default_registry().entries("metric")
                   if isinstance(entry.spec, MetricSpec) and _is_judge(entry.spec.fn))
    if found:
        return "The judges registered: " + ", ".join(found) + "."
    return ("No judge is registered: declare one in the eval config's judges: section and "
            "pass --config, or pass runs made by `evalkit run` with a judge")


def _is_judge(fn: Any) -> bool:
    try:
        judge_of(fn)
    except Exception:  # a metric whose llm_judge() fails is not a usable judge here
        return False
    return True


def _check_provider(judge: LLMJudge) -> None:
    """Refuse a judge whose provider cannot read a verdict (it overrides ``parse`` for
    grades but implements no ``tool_input``).

    Raises:
        PairwiseError: naming the provider and the missing method.
    """
    from evalkit_judge.providers import JudgeProvider

    provider = judge.provider
    if type(provider).tool_input is JudgeProvider.tool_input:
        raise PairwiseError(
            f"judge {judge.model!r}: its provider {provider.name!r} reads grades but not "
            "pairwise verdicts: it implements no tool_input(reply, name, fields) (see "
            "docs/judge.md, A provider of your own)")


def _load_runs(runs: Sequence[str | Path | RunResult]) -> list[tuple[str, RunResult, str | None]]:
    from evalkit.data.results import RunResult

    loaded: list[tuple[RunResult, str | None]] = []
    for run in runs:
        if isinstance(run, str | Path):
            loaded.append((RunResult.load(run), str(run)))
        else:
            loaded.append((run, None))
    if len(loaded) < 2:
        raise PairwiseError("pairwise needs at least two runs to compare")
    for run, path in loaded:
        if run.header.get("kind") != "target":
            raise PairwiseError(f"{path or run.name}: not a target run (written by evalkit "
                                "run or evaluate); pairwise compares stored responses")
    names = [run.name for run, _ in loaded]
    if len(set(names)) < len(names):
        stems = [Path(path).stem if path else run.name for run, path in loaded]
        if len(set(stems)) < len(stems):
            raise PairwiseError(_clash(loaded, names, stems))
        names = stems
    return [(name, run, path) for name, (run, path) in zip(names, loaded, strict=True)]


def _clash(loaded: Sequence[tuple[Any, str | None]], names: Sequence[str],
           stems: Sequence[str]) -> str:
    """Why the runs cannot be named apart: their header names clash, and so do their file
    name stems, which name them otherwise."""
    from collections import Counter

    twice = [n for n, k in Counter(names).items() if k > 1]
    which = [path or "(a loaded run)" for (_, path), n in zip(loaded, names, strict=True)
             if n in twice]
    stems_twice = [n for n, k in Counter(stems).items() if k > 1]
    return (f"runs {', '.join(which)} have the same name in their headers "
            f"({', '.join(map(repr, twice))}), and their file names, which would name them "
            f"otherwise, clash too ({', '.join(map(repr, stems_twice))}); give each run a "
            "distinct name (the config's name:) or file name")


def _goldens(run: RunResult, path: str | None, goldens: GoldensInput | None) -> GoldenSet:
    from evalkit.data.goldens import load_goldens
    from evalkit.execute.target_runner import as_golden_set

    if goldens is not None:
        return as_golden_set(goldens)
    recorded = (run.header.get("goldens") or {}).get("path")
    if not recorded:
        raise PairwiseError(f"{path or run.name}: the header records no golden file; pass ",
                            Setting("goldens"), " with the golden set the runs answered")
    gpath = Path(recorded)
    if not gpath.is_absolute() and path is not None:
        gpath = Path(path).parent / gpath
    loader = (run.header.get("goldens") or {}).get("loader") or \
        (run.header.get("config") or {}).get("goldens_loader")
    return load_goldens(gpath, loader)


def _responses(run: RunResult) -> dict[tuple[str, int | None], TargetResponse]:
    rows = run.samples or run.per_query
    return {(row.case_id, row.sample): row.response for row in rows
            if getattr(row, "response", None) is not None}


def plan_tasks(systems: Sequence[tuple[str, RunResult]], gset: GoldenSet,
               prompt: PairwisePrompt, judge: LLMJudge, *, resample_key: bool = False,
               allow_incomplete: bool = False) -> tuple[list[Task], list[str]]:
    """Every verdict to ask, case by case, and the notes on what could not be compared.

    Sample ``i`` of one system is paired with sample ``i`` of the other. A (case, sample)
    that either run lacks a response for (an errored case, a run stopped before it) is
    refused, or, with ``allow_incomplete``, left out of that pair and noted.

    Raises:
        PairwiseError: the runs hold different numbers of samples per case, a case that
            the golden set lacks, or (without ``allow_incomplete``) a (case, sample) one
            run answered and another did not.
    """
    epochs = {name: run.epochs for name, run in systems}
    if len(set(epochs.values())) > 1:
        shown = ", ".join(f"{n}: {k}" for n, k in epochs.items())
        raise PairwiseError(f"the runs hold different numbers of samples per case ({shown}); "
                            "sample i is paired with sample i, so run them with the same "
                            "epochs")
    answers = {name: _responses(run) for name, run in systems}
    slots = sorted({slot for found in answers.values() for slot in found},
                   key=lambda s: (s[0], -1 if s[1] is None else s[1]))
    for case_id, _ in slots:
        if case_id not in gset:
            raise PairwiseError(f"case {case_id!r} is not in the golden set "
                                f"{gset.path or ''}; pass the golden set the runs answered")
    order = {c.id: i for i, c in enumerate(gset)}
    slots.sort(key=lambda s: (order[s[0]], -1 if s[1] is None else s[1]))
    tasks: list[Task] = []
    notes: list[str] = []
    for a, b in combinations([name for name, _ in systems], 2):
        missing = [s for s in slots if s not in answers[a] or s not in answers[b]]
        if missing:
            shown = ", ".join(repr(c) for c, _ in missing[:5])
            if not allow_incomplete:
                raise PairwiseError(
                    f"{a} vs {b}: {len(missing)} (case, sample) pair(s) lack a response "
                    f"from one run (case {shown}): a win rate over the rest would not be "
                    "the systems'. Finish the runs (evalkit run CONFIG --resume), or pass "
                    "--allow-incomplete to compare the cases both answered")
            notes.append(f"{a} vs {b}: {len(missing)} (case, sample) pair(s) without a "
                         f"response from both, left out (case {shown})")
    for case_id, sample in slots:
        case: GoldenCase = gset.get(case_id)
        for a, b in combinations([name for name, _ in systems], 2):
            ra, rb = answers[a].get((case_id, sample)), answers[b].get((case_id, sample))
            if ra is None or rb is None:
                continue
            for first, second, r1, r2 in ((a, b, ra, rb), (b, a, rb, ra)):
                body = prompt.request(judge.provider, case, r1, r2)
                key = prompt.key(body, sample if resample_key else None, judge.scope())
                tasks.append(Task(case_id, sample, first, second, body, key))
    return tasks, notes


#: a verdict, a billed reply that held none, or the message of why there is none
Outcome = Answer | RejectedVerdict | str


def ask_all(judge: LLMJudge, tasks: Sequence[Task], *, max_concurrency: int = DEFAULT_CONCURRENCY,
            budget: Budget | None = None,
            progress: Callable[[int, int], None] | None = None,
            note: Callable[[str], None] | None = None) -> list[Outcome | None]:
    """The verdict of every task, ``max_concurrency`` requests at a time (in task order);
    a task whose verdict could not be had holds its error message (a billed reply that
    held no verdict, its :class:`~evalkit_judge.pairwise_ask.RejectedVerdict`), one left
    unasked in a dry run ``None``. The requests run in daemon threads
    (:func:`evalkit.execute.calls.call_all`): the first Ctrl-C or SIGTERM starts no new one
    and waits for those in flight up to 10 s
    (:data:`~evalkit.execute.executor.MAX_DEFAULT_GRACE_S`; ``note`` gets the line saying
    so), a second one stops waiting at once.

    Raises:
        BudgetExhausted: a spending limit stopped the comparison (verdicts already
            received stay in the cache); CallsInterrupted (a ``KeyboardInterrupt``):
            Ctrl-C or SIGTERM (likewise).
        JudgeUnavailable: the judge has no usable credentials, or its requests fail the
            same way (:mod:`evalkit_judge.systemic`).
    """
    from evalkit.execute.calls import call_all
    from evalkit.execute.executor import MAX_DEFAULT_GRACE_S
    from evalkit.execute.scoring import RunAborted

    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) \
            or max_concurrency < 1:
        raise ValueError(f"max_concurrency must be an integer >= 1, got {max_concurrency!r}")
    inflight: SingleFlight[Answer] = SingleFlight()

    def one(i: int) -> Outcome | None:
        task = tasks[i]
        what = (f"judge {judge.model!r}, case {task.case!r}"
                + ("" if task.sample is None else f" sample {task.sample}")
                + f", {task.first!r} shown first against {task.second!r}")
        try:
            return ask_verdict(judge, task.body, task.key, case_id=task.case, what=what,
                               inflight=inflight, budget=budget)
        except GradeNotRequested:
            return None
        except RejectedVerdict as exc:  # billed: its row keeps what it cost
            return exc
        except JudgeError as exc:
            return str(exc)

    done = 0

    def take(i: int, outcome: Outcome | None) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(tasks))

    try:
        return call_all(one, len(tasks), max_concurrency=max_concurrency,
                        grace_s=MAX_DEFAULT_GRACE_S, take=take, note=note)
    except RunAborted as exc:
        raise exc.error from None


def pairwise(
    runs: Sequence[str | Path | RunResult],
    judge: LLMJudge | str,
    *,
    goldens: GoldensInput | None = None,
    flips: str = "tie",
    ties: str = "half",
    alpha: float = 0.05,
    method: str = "auto",
    n_resamples: int = 10_000,
    seed: int = 42,
    bt_penalty: float = BT_ALPHA,
    bt_resamples: int = 1000,
    max_concurrency: int = DEFAULT_CONCURRENCY,
    budget: Budget | None = None,
    output: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    allow_incomplete: bool = False,
    note: Callable[[str], None] | None = None,
) -> PairwiseResult:
    """Compare the systems of ``runs`` pairwise with ``judge``, both orders per pair.

    Args:
        runs: two or more target runs (artifact paths or loaded runs), named by their
            header's name (by file stem when two names agree).
        judge: the judge, or the name of the metric it is registered as (looked up after
            the runs are read, so a judge declared in the eval config and recorded in
            the runs' headers is found: :func:`registered_judge`); its provider, model,
            cache, prices, budget, ``max_tokens``, ``system`` and ``temperature`` are
            used, and its rubric says what "better" means. With ``judge_resamples`` the
            sample number is in each verdict's key.
        goldens: the golden set: a file, a :class:`~evalkit.data.goldens.GoldenSet` or
            cases (default: the file the first run's header records); the query and
            reference answers of each case are shown to the judge.
        flips: a verdict that changes with the order: ``"tie"`` (default), ``"average"``
            or ``"drop"`` (:mod:`evalkit_judge.pairwise_stats`).
        ties: ``"half"`` (default: a tie is half a win) or ``"drop"``.
        alpha: the level of the intervals and of the tests after Holm's correction.
        method: the kernel's paired test (:func:`evalkit.stats.paired_test`).
        n_resamples, seed: of the paired tests.
        bt_penalty: the L2 weight of the Bradley-Terry fit (three systems or more).
        bt_resamples: bootstrap resamples of cases for the strengths' intervals.
        max_concurrency: verdict requests in flight at once.
        budget: spending limits (:class:`~evalkit_judge.budget.Budget`); a dry run asks
            nothing and leaves unasked verdicts out.
        output: write the pairwise artifact here.
        progress: called with ``(verdicts done, verdicts in all)``.
        note: called with the line printed after a first Ctrl-C (:func:`ask_all`).
        allow_incomplete: compare the (case, sample) pairs both runs answered when one
            run lacks a response somewhere (noted in the result); by default that is
            refused.

    Returns:
        :class:`PairwiseResult`.

    Raises:
        PairwiseError: fewer than two runs, not target runs, samples per case that
            differ, a case the golden set lacks, a case one run answered and another
            did not (unless ``allow_incomplete``), a duplicate name, a judge whose
            provider reads no verdicts.
        ValueError: an unknown ``flips``, ``ties`` or ``method``.
        BudgetExhausted: a spending limit stopped the comparison (run it again with a
            larger limit: the verdicts received are in the cache).
        JudgeUnavailable: the judge has no usable credentials, or its requests fail the
            same way (:mod:`evalkit_judge.systemic`).
    """
    from evalkit_judge.pairwise_artifact import build_header, verdict_row

    check_rules(flips, ties)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    loaded = _load_runs(runs)
    if isinstance(judge, str):
        judge = registered_judge(judge, [run.header for _, run, _ in loaded])
    _check_provider(judge)
    gset = _goldens(loaded[0][1], loaded[0][2], goldens)
    prompt = PairwisePrompt(judge.rubric, judge.model, judge.max_tokens, judge.temperature,
                            judge.system)
    tasks, notes = plan_tasks([(n, r) for n, r, _ in loaded], gset, prompt, judge,
                              resample_key=judge.judge_resamples,
                              allow_incomplete=allow_incomplete)
    if budget is not None:
        with use_budget(budget):
            outcomes = ask_all(judge, tasks, max_concurrency=max_concurrency, budget=budget,
                               progress=progress, note=note)
    else:
        outcomes = ask_all(judge, tasks, max_concurrency=max_concurrency, progress=progress,
                           note=note)
    rows = [verdict_row(t, o) for t, o in zip(tasks, outcomes, strict=True) if o is not None]
    header = build_header(loaded, gset, judge, prompt, rows, notes,
                          options={"flips": flips, "ties": ties, "alpha": alpha,
                                   "method": method, "n_resamples": n_resamples,
                                   "seed": seed, "bt_penalty": bt_penalty,
                                   "bt_resamples": bt_resamples},
                          unasked=sum(o is None for o in outcomes))
    result = PairwiseResult(header, rows)
    if output is not None:
        result.save(output)
    return result

