"""``evalkit compare --by tag``: the comparison on each tag's cases, as records.

:func:`case_tags_for` finds the tags (given, or the golden sets the runs were made
from); :func:`compare_by_tag` runs :func:`evalkit.stats.compare_slices` on the paired
runs and turns each (slice, metric, candidate) result into a
:class:`~evalkit.report.slices.SliceEffect` with both means, the verdict (the rule of the
overall rows, :func:`evalkit.report.comparison_rows.verdict_of`) and wins/ties/losses by
the metric's polarity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

from evalkit.comparison.records import ComparisonError
from evalkit.data.case_tags import (
    CaseTags,
    TagsError,
    agreed_tags,
    as_case_tags,
    slices_of,
    tags_from_runs,
)
from evalkit.data.results import RunResult
from evalkit.io.setting_names import Setting
from evalkit.report.comparison_rows import verdict_of
from evalkit.report.slices import SliceEffect

#: What ``by=`` may name.
BY_CHOICES: tuple[str, ...] = ("tag",)

TagsArg = Mapping[str, Sequence[str] | str] | str | PathLike[str]


def check_by(by: str | None, tags: TagsArg | None, correction: str) -> CaseTags | None:
    """The options of slicing checked, and a given tags file read (before any work).

    Raises:
        ComparisonError: ``by`` is not ``"tag"``; ``tags`` without ``by``; the
            Westfall-Young correction with slices.
        TagsError: the tags file cannot be read (file and line named).
    """
    if by is None:
        if tags is not None:
            raise ComparisonError("tags are read only to compare slices: add ",
                                  Setting("by", "tag"))
        return None
    if by not in BY_CHOICES:
        raise ComparisonError(Setting("by", by), ": slices are made by 'tag' (the cases' tags)")
    if correction == "westfall-young":
        raise ComparisonError(
            "the westfall-young correction adjusts tests sharing one set of cases, and "
            "slices are different sets: with ", Setting("by", "tag"), " choose ",
            Setting("correction", "holm"), " or bh")
    return None if tags is None else as_case_tags(tags)


def case_tags_for(given: CaseTags | None, runs: Sequence[RunResult]) -> CaseTags:
    """The tags to slice by: ``given`` (when it agrees with the golden sets the runs
    record: :func:`~evalkit.data.case_tags.agreed_tags`), else those of the golden sets.

    Raises:
        ComparisonError: no tags known, or no case has a tag.
        TagsError: a recorded golden set is gone or changed; ``given`` disagrees with it.
    """
    headers = [r.header for r in runs]
    tags = tags_from_runs(headers) if given is None else agreed_tags(given, headers)
    if tags is None:
        raise ComparisonError(
            "slicing by tag needs the cases' tags, and these runs were not made from a "
            "golden set: pass a tags file (query id<TAB>tag lines) as ",
            Setting("tags", "FILE"))
    if not any(tags.values()):
        raise TagsError("no case has a tag: give the golden cases 'tags', or pass a tags "
                        "file")
    return tags


def compare_by_tag(runs: Sequence[RunResult], metrics: Sequence[str], tags: CaseTags,
                   polarity: Mapping[str, bool], *, correction: str, method: str,
                   alpha: float, alternative: str, n_resamples: int, **options: Any
                   ) -> tuple[tuple[SliceEffect, ...], tuple[str, ...]]:
    """``(slice rows, notes)``: every comparison of the paired ``runs`` on each tag's
    cases (slices in order of first appearance), adjusted over slices x metrics x
    candidates (:func:`evalkit.stats.compare_slices`); ``options`` go to it. Wins and
    losses are read by ``polarity`` (``{metric: higher_is_better}``, as checked against
    the runs: :meth:`evalkit.comparison.inputs.Loaded.polarities`)."""
    from evalkit.data.summaries import paired_mean
    from evalkit.stats.slices import compare_slices

    family = compare_slices(runs[0], list(runs[1:]), list(metrics), slices_of(tags),
                            correction=correction, method=method, alpha=alpha,
                            alternative=alternative, n_resamples=n_resamples, **options)
    by_name = {r.name: r for r in runs}

    def mean(run: RunResult, metric: str, ids: Sequence[str]) -> float:
        return paired_mean(run.scores(metric), ids, metric)

    out: list[SliceEffect] = []
    for name, fam in family.slices.items():
        for res in fam.results:
            cand, base = by_name[res.name_a], by_name[res.name_b]
            hib = polarity[res.metric]
            effect = res.effect
            assert effect is not None
            wins, losses = (effect.wins, effect.losses) if hib else (
                effect.losses, effect.wins)
            p_adj, verdict, p_note = verdict_of(res, correction=correction, method=method,
                                                alpha=alpha)
            out.append(SliceEffect(
                slice=name, metric=res.metric, baseline=base.name, candidate=cand.name,
                n_queries=int(res.n_queries),
                baseline_mean=mean(base, res.metric, fam.query_ids),
                candidate_mean=mean(cand, res.metric, fam.query_ids),
                diff=float(res.observed),
                ci_low=float(res.ci_low), ci_high=float(res.ci_high),
                p_value=float(res.p_value), p_adjusted=p_adj, significant=verdict,
                wins=wins, ties=effect.ties, losses=losses, method=res.method,
                ci_method=res.ci_method, higher_is_better=hib, alpha=alpha,
                p_note=p_note, n_resamples=None if res.method == "t-test" or res.exact
                else int(res.n_resamples) or None, warnings=tuple(res.warnings)))
    return tuple(out), family.notes


__all__ = ["BY_CHOICES", "case_tags_for", "check_by", "compare_by_tag"]
