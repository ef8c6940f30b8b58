"""Repeated samples: K rows per case, reduced to the one row per case every statistic uses.

A run with ``epochs: K >= 2`` answers each case K times. Every answer is its own row,
keyed by ``(case id, sample)`` with ``sample`` in ``0..K-1``, and scored by every metric
(``RunResult.samples``; the artifact stores these rows). ``RunResult.per_query`` holds
one row per case: the **reduced** row of :func:`reduce_samples`.

Reductions (``reduce``), per metric, over the values of the case's samples:

* ``mean`` (default): the arithmetic mean;
* ``max`` / ``min``: the largest / smallest value;
* ``all`` or ``all:T``: 1.0 when every sample's value is at least ``T`` (default 0.5,
  so a 0/1 grade passes only when every sample passes), else 0.0 (Miller 2024 reduces
  by the mean only; ``max``, ``min`` and ``all`` answer "best of K", "worst of K" and
  "passes every time", as pass@k-style reports do).

The reduced row of a case: the first sample's response, details and retrieved ids (so
``RunResult.per_query`` rows look like single-sample rows), the mean latency, a metric
only when every sample has it (a metric that failed on one sample fails on the case, with
``"sample i: message"``), and the first failed call's error when a call failed (then no
response: the case, like the run, is incomplete).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from evalkit.stats.numeric import exact_mean

__all__ = [
    "DEFAULT_REDUCE",
    "REDUCTIONS",
    "Reduction",
    "SampleError",
    "check_epochs",
    "epochs_of",
    "group_samples",
    "missing_samples",
    "parse_reduce",
    "per_case_reduction",
    "recorded_reduce",
    "reduce_samples",
    "reduction_difference",
    "sample_rows",
    "sample_scores",
    "samples_note",
    "split_samples",
]

#: The reduction used when none is named.
DEFAULT_REDUCE = "mean"
#: The reduction names (``all`` also takes a threshold: ``all:0.8``).
REDUCTIONS = ("mean", "max", "min", "all")
#: The threshold of ``all`` when none is given.
DEFAULT_ALL_THRESHOLD = 0.5


class SampleError(ValueError):
    """A bad ``epochs`` or ``reduce`` setting, or sample rows that do not fit together."""


class Reduction:
    """A parsed ``reduce`` setting: :attr:`name`, :attr:`threshold` (``all`` only) and
    ``self(values) -> float``."""

    def __init__(self, name: str, threshold: float | None = None) -> None:
        self.name, self.threshold = name, threshold

    @property
    def spec(self) -> str:
        """The setting as written in a header (``"mean"``, ``"all:0.8"``)."""
        if self.name == "all" and self.threshold != DEFAULT_ALL_THRESHOLD:
            return f"all:{self.threshold:g}"
        return self.name

    def __call__(self, values: Sequence[float]) -> float:
        if self.name == "mean":
            return exact_mean(list(values))
        if self.name == "max":
            return float(max(values))
        if self.name == "min":
            return float(min(values))
        assert self.threshold is not None
        return 1.0 if all(v >= self.threshold for v in values) else 0.0


def parse_reduce(spec: str | Reduction | None) -> Reduction:
    """The :class:`Reduction` of ``spec`` (``None`` is ``"mean"``).

    Raises:
        SampleError: an unknown name, or ``all:T`` whose ``T`` is not a finite number.
    """
    if isinstance(spec, Reduction):
        return spec
    text = (spec or DEFAULT_REDUCE).strip()
    name, _, arg = text.partition(":")
    if name not in REDUCTIONS or (arg and name != "all"):
        raise SampleError(f"reduce {text!r} is not one of mean, max, min, all, all:T "
                          "(T: the value every sample must reach)")
    if name != "all":
        return Reduction(name)
    try:
        threshold = float(arg) if arg else DEFAULT_ALL_THRESHOLD
    except ValueError:
        threshold = math.nan
    if not math.isfinite(threshold):
        raise SampleError(f"reduce {text!r}: the threshold after 'all:' must be a finite "
                          "number, such as all:0.5")
    return Reduction("all", threshold)


def check_epochs(epochs: object) -> int:
    """``epochs`` as an integer from 1 to :data:`evalkit.io.limits.MAX_EPOCHS`. Raises
    :class:`SampleError` otherwise."""
    from evalkit.io.limits import MAX_EPOCHS

    if isinstance(epochs, bool) or not isinstance(epochs, int) or not 1 <= epochs <= MAX_EPOCHS:
        raise SampleError(f"epochs must be an integer from 1 to {MAX_EPOCHS} (samples per "
                          f"case), got {epochs!r}")
    return epochs


def _rid(row: Any) -> str:
    return str(row.query_id)


def group_samples(rows: Iterable[Any]) -> dict[str, list[Any]]:
    """``{case id: its sample rows, by sample number}``, cases in first-seen order."""
    out: dict[str, list[Any]] = {}
    for r in rows:
        out.setdefault(_rid(r), []).append(r)
    for group in out.values():
        group.sort(key=lambda r: r.sample if r.sample is not None else -1)
    return out


def epochs_of(header: Mapping[str, Any], samples: Sequence[Any]) -> int:
    """K of a run: the header's ``samples.epochs``, else the most samples a case has
    (1 for a run without sample rows)."""
    rec = header.get("samples")
    if isinstance(rec, Mapping):
        k = rec.get("epochs")
        if isinstance(k, int) and not isinstance(k, bool) and k >= 1:
            return k
    if not samples:
        return 1
    return max(len(g) for g in group_samples(samples).values())


def reduce_samples(rows: Sequence[Any], reduce: str | Reduction | None = None) -> list[Any]:
    """One row per case from the sample rows ``rows`` (the module docstring gives the
    fields), cases in first-seen order.

    Raises:
        SampleError: ``reduce`` is not a reduction.
    """
    how = parse_reduce(reduce)
    return [_reduced(group, how) for group in group_samples(rows).values()]


def _reduced(group: Sequence[Any], how: Callable[[Sequence[float]], float]) -> Any:
    first = group[0]
    errored = next((r for r in group if getattr(r, "error", None) is not None), None)
    names = list(dict.fromkeys(m for r in group for m in r.metrics))
    metrics: dict[str, float] = {}
    errors: dict[str, str] = {}
    for m in names:
        failed = next((r for r in group if m not in r.metrics), None)
        if failed is None:
            metrics[m] = how([float(r.metrics[m]) for r in group])
    for r in group:
        for m, message in getattr(r, "metric_errors", {}).items():
            errors.setdefault(m, message if r.sample is None else f"sample {r.sample}: "
                              f"{message}")
    if errored is not None:
        metrics = {}
    changes: dict[str, Any] = {"metrics": metrics, "metric_errors": errors, "sample": None}
    if hasattr(first, "latency_ms"):
        lat = [float(r.latency_ms) for r in group if r.latency_ms is not None]
        changes["latency_ms"] = exact_mean(lat) if lat else None
    if errored is not None and hasattr(first, "response"):
        error = errored.error if errored.sample is None else \
            f"sample {errored.sample}: {errored.error}"
        changes.update(response=None, error=error, details={})
    return replace(first, **changes)


def missing_samples(header: Mapping[str, Any], samples: Sequence[Any], shown: int = 20
                    ) -> tuple[int, int, list[str]]:
    """``(expected (case, sample) pairs, how many have no row, "case 'q1' sample 2" for
    the first ``shown`` of them)`` of the sample rows of a run whose cases all have at
    least one row (cases without any row are reported by coverage as missing cases).
    Work and memory grow with the rows and ``shown``, not with the header's K, which a
    damaged or hostile artifact may set to any integer."""
    k = epochs_of(header, samples)
    groups = group_samples(samples)
    count, names = 0, list[str]()
    for cid, g in groups.items():
        have = {r.sample if r.sample is not None else 0 for r in g}
        have = {s for s in have if isinstance(s, int) and 0 <= s < k}
        count += k - len(have)
        s = 0
        while len(names) < shown and s < k and len(names) < count:
            if s not in have:
                names.append(f"case {cid!r} sample {s}")
            s += 1
    return k * len(groups), count, names


def sample_rows(run: Any, rows: Sequence[Any]) -> list[Any]:
    """The rows a whole-run aggregate sees for the cases of ``rows`` (rows of
    ``run.per_query``): their sample rows when ``run`` has repeated samples, else
    ``rows``."""
    samples = getattr(run, "samples", None)
    if not samples:
        return list(rows)
    wanted = {_rid(r) for r in rows}
    return [s for s in samples if _rid(s) in wanted]


def samples_note(run: Any, baseline: Any = None) -> list[str]:
    """One note for a gate whose run (or baseline) has repeated samples: K of each, and
    that the checks use the reduced per-case values (aggregates: every sample row)."""
    pairs = [(role, r) for role, r in (("run", run), ("baseline", baseline))
             if r is not None]
    if all(r.epochs == 1 for _, r in pairs):
        return []
    parts = [f"{role} {r.name!r} K = {r.epochs}" + (
        f" ({(r.header.get('samples') or {}).get('reduce', DEFAULT_REDUCE)})"
        if r.epochs > 1 else "") for role, r in pairs]
    return ["samples per case: " + ", ".join(parts) + "; per-case checks use each case's "
            "reduced value (n is the number of cases), aggregates every sample row"]


def per_case_reduction(run: Any) -> tuple[int, str]:
    """``(K, reduction)`` of ``run``'s per-case values (a
    :class:`~evalkit.data.results.RunResult` or any record with ``header`` and
    ``samples``): K from the header's ``samples.epochs`` (else the sample rows), the
    reduction's canonical spec from ``samples.reduce`` (``"mean"`` when none is
    recorded; an unreadable one as written)."""
    header: Mapping[str, Any] = getattr(run, "header", None) or {}
    return epochs_of(header, getattr(run, "samples", None) or []), recorded_reduce(header)


def recorded_reduce(header: Mapping[str, Any]) -> str:
    """The canonical spec of the reduction a run header records (``samples.reduce``):
    ``"mean"`` when it records none (a run without repeated samples, where the reduction
    changes nothing); one that is not a reduction, as written."""
    recorded = header.get("samples")
    how = recorded.get("reduce") if isinstance(recorded, Mapping) else None
    try:
        return parse_reduce(how if isinstance(how, str) else None).spec
    except SampleError:
        return str(how)


def _describe(k: int, spec: str) -> str:
    return "one sample per case" if k == 1 else f"the {spec} of K = {k} samples per case"


def reduction_difference(a: Any, b: Any, a_role: str = "baseline", b_role: str = "run"
                         ) -> str | None:
    """Why the per-case values of runs ``a`` and ``b`` do not measure the same thing, or
    ``None`` when they do.

    A per-case value is its samples reduced (``epochs`` K, ``reduce``). A mean over K
    samples has the same expected value as one sample, so a run with one sample per case
    and runs reduced by ``mean`` with any K are comparable (only their noise differs).
    Every other reduction depends on K and on the reduction: the max of 3 samples is a
    "best of 3", never comparable with a single sample, a mean, or the max of 5. Compared
    anyway, a flaky system reduced by ``max`` would look as good as a steady one.

    Returns:
        One sentence naming both settings and the fix, or ``None``.
    """
    (ka, ra), (kb, rb) = per_case_reduction(a), per_case_reduction(b)

    def meaning(k: int, spec: str) -> tuple[int, str]:
        return (1, "mean") if k == 1 or spec == "mean" else (k, spec)

    if meaning(ka, ra) == meaning(kb, rb):
        return None
    return (f"the per-case values are reduced differently: {a_role} "
            f"{getattr(a, 'name', '?')!r} holds {_describe(ka, ra)}, {b_role} "
            f"{getattr(b, 'name', '?')!r} {_describe(kb, rb)} (epochs: {ka}, reduce: {ra} "
            f"vs epochs: {kb}, reduce: {rb}), so a case's value means something else in "
            "each; make both runs with the same epochs and reduce (a mean over any K "
            "compares with one sample)")


def split_samples(rows: Sequence[Any], header: Mapping[str, Any]
                  ) -> tuple[list[Any], list[Any]]:
    """``(reduced rows, sample rows)`` of the rows read from an artifact that stores
    samples, reduced as its header's ``samples.reduce`` says (default ``mean``).

    Raises:
        SampleError: the recorded reduction is not one.
    """
    recorded = header.get("samples")
    how = recorded.get("reduce") if isinstance(recorded, Mapping) else None
    return reduce_samples(rows, how), list(rows)


def sample_scores(run: Any, metric: str) -> dict[str, list[float]]:
    """``{case id: [value of each sample]}`` of one metric of ``run`` (a
    :class:`~evalkit.data.results.RunResult`; one value per case for a run without
    repeated samples); cases where a sample lacks a value are left out."""
    rows = run.samples or run.per_query
    return {cid: [float(r.metrics[metric]) for r in g]
            for cid, g in group_samples(rows).items()
            if all(metric in r.metrics and getattr(r, "error", None) is None for r in g)}
