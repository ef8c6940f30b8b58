"""The runner's side of repeated samples: one job per (case, sample), resume by that key,
and the reduced rows at the end (:mod:`evalkit.data.samples` defines the reduction).

With ``epochs`` K = 1 (the default), rows carry no ``sample``, ``RunResult.samples`` is
empty and the artifact has one row per case. With K >= 2
every case is called K times; the jobs go case by case (``q1`` samples 0..K-1, then
``q2``...), each sample is its own row, and a resumed run calls only the (case, sample)
pairs without a response.

Metrics learn which sample they score from :func:`current_sample` (the LLM judge adds
it to its cache key under ``judge_resamples: true``); it is ``None`` outside a run with
repeated samples.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from evalkit.data.goldens import GoldenSet
from evalkit.data.rows import CaseResult
from evalkit.data.samples import check_epochs, parse_reduce, reduce_samples

__all__ = ["RowKey", "current_sample", "finish_rows", "record_samples", "resume_rows",
           "row_key", "sample_numbers", "scoring_sample"]

#: a row's key in a run: (case id, sample number or None)
RowKey = tuple[str, int | None]

_SAMPLE: ContextVar[int | None] = ContextVar("evalkit_sample", default=None)


def current_sample() -> int | None:
    """The sample number of the row being scored in this thread (``None``: a run with
    one sample per case, or no run at all)."""
    return _SAMPLE.get()


@contextmanager
def scoring_sample(sample: int | None) -> Iterator[None]:
    """Within the block, :func:`current_sample` is ``sample``."""
    token = _SAMPLE.set(sample)
    try:
        yield
    finally:
        _SAMPLE.reset(token)


def row_key(row: Any) -> RowKey:
    """``(case id, sample)`` of a row."""
    return (str(row.query_id), getattr(row, "sample", None))


def sample_numbers(epochs: int) -> list[int | None]:
    """The sample numbers of each case: ``[None]`` for K = 1, else ``0..K-1``."""
    return [None] if check_epochs(epochs) == 1 else list(range(epochs))


def keys(gset: GoldenSet, epochs: int) -> list[RowKey]:
    """Every (case, sample) key of a run, in the order the rows are stored."""
    numbers = sample_numbers(epochs)
    return [(c.id, s) for c in gset for s in numbers]


def record_samples(header: dict[str, Any], epochs: int, reduce: str | None) -> None:
    """Record K in ``header["config"]`` (so a resume with another K is refused) and
    ``header["samples"] = {"epochs": K, "reduce": ...}``; nothing for K = 1.

    Raises:
        SampleError: ``epochs`` is not a positive integer or ``reduce`` not a reduction.
    """
    how = parse_reduce(reduce)
    if check_epochs(epochs) == 1:
        return
    header["config"]["epochs"] = epochs
    header["samples"] = {"epochs": epochs, "reduce": how.spec}


def resume_rows(gset: GoldenSet, epochs: int, old_rows: Sequence[CaseResult]
                ) -> tuple[dict[RowKey, CaseResult], dict[RowKey, CaseResult],
                           dict[str, int]]:
    """``(kept, redo, record)`` of a resumed run: rows kept as they are, rows with a
    response whose failed metrics are scored again, and ``header["resume"]``."""
    wanted = keys(gset, epochs)
    known = set(wanted)
    answered = {row_key(r): r for r in old_rows
                if r.response is not None and row_key(r) in known}
    errored = {row_key(r) for r in old_rows if r.response is None}
    kept = {k: r for k, r in answered.items() if r.ok}
    redo = {k: r for k, r in answered.items() if not r.ok}
    record = {
        "kept": len(answered),
        "called": sum(1 for k in wanted if k not in answered),
        "retried": sum(1 for k in wanted if k in errored and k not in answered),
        "rescored": len(redo),
    }
    return kept, redo, record


def ordered(gset: GoldenSet, epochs: int, rows: Mapping[RowKey, CaseResult]
            ) -> list[CaseResult]:
    """The rows present in ``rows``, in stored order."""
    return [r for k in keys(gset, epochs) if (r := rows.get(k)) is not None]


def finish_rows(gset: GoldenSet, epochs: int, reduce: str | None,
                results: Mapping[RowKey, CaseResult]
                ) -> tuple[list[CaseResult], list[CaseResult]]:
    """``(per_query, samples)`` of a finished run: for K = 1 the rows and no samples;
    for K >= 2 the reduced rows and every sample row, case by case."""
    rows = ordered(gset, epochs, results)
    if epochs == 1:
        return rows, []
    return reduce_samples(rows, reduce), rows
