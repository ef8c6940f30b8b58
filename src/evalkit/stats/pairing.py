"""Pairing two runs by query id.

Every paired method works on the per-query differences ``d_i = a_i - b_i`` over the
query ids both runs share; rows are matched by id, never by position.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.numeric import real_number


@runtime_checkable
class ScoredRun(Protocol):
    """Anything with a name and per-query scores (e.g. :class:`evalkit.RunResult`)."""

    name: str

    def scores(self, metric: str) -> dict[str, float]: ...


#: A run, or a plain ``{query id: score}`` mapping of one metric.
RunLike = ScoredRun | Mapping[str, float]


@dataclass(frozen=True)
class Paired:
    """Two runs' values of one metric, aligned by id (sorted ids).

    Attributes:
        ids: the shared query ids, sorted.
        a, b: values, shape ``(n,)``, in ``ids`` order.
        name_a, name_b: run names.
        metric: the metric.
    """

    ids: tuple[str, ...]
    a: NDArray[np.float64]
    b: NDArray[np.float64]
    name_a: str
    name_b: str
    metric: str

    @property
    def diffs(self) -> NDArray[np.float64]:
        """``a - b`` per query, shape ``(n,)``, with floating-point noise removed.

        See :func:`snap_differences`: two scores that differ only by rounding (an nDCG
        computed in another order, ``0.7 - 0.5`` vs ``0.4 - 0.2``) give exactly equal
        differences, so rounding can never look like a significant effect.
        """
        return snap_differences(self.a - self.b, self.a, self.b)


#: Differences are rounded to multiples of ``2**-SNAP_BITS`` times the scores' magnitude
#: (about 9e-13 of it): far below any real effect, far above float64 rounding (1e-16).
SNAP_BITS = 40


def snap_differences(
    d: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Merge differences of ``d = a - b`` that are equal up to floating-point rounding.

    The tolerance is ``step = 2**(e - SNAP_BITS)`` where ``2**e`` >= max |a|, |b|. Sorted,
    differences whose gap to the next one is at most ``step`` form one group (so two
    differences equal up to rounding are merged wherever they fall: there is no fixed
    grid whose edge could split them); every member of a group takes the value of its
    first member in input order (so the mean moves by at most the rounding it removes),
    and a group holding a difference within ``step / 2`` of 0 becomes exactly 0. The
    same rule then decides wins/ties/losses and degenerate (constant) differences.
    """
    n = d.size
    if n == 0:
        return d
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 2.0**-1000)
    step = 2.0 ** (int(np.ceil(np.log2(scale))) - SNAP_BITS)
    order = np.argsort(d, kind="stable")
    gap = np.diff(d[order]) > step
    starts = np.concatenate(([0], np.cumsum(gap)))
    group = np.empty(n, dtype=np.int64)
    group[order] = starts
    # a group is a run of consecutive positions in sorted order: reduce over each run
    bounds = np.concatenate(([0], np.flatnonzero(gap) + 1))
    first = np.minimum.reduceat(order, bounds)
    representative = d[first].copy()
    near_zero = np.logical_or.reduceat(np.abs(d[order]) <= step / 2, bounds)
    representative[near_zero] = 0.0
    snapped: NDArray[np.float64] = representative[group]
    return snapped


def run_name(run: Any, default: str) -> str:
    name = getattr(run, "name", None)
    return str(name) if name else default


def scores_of(run: Any, metric: str, default_name: str) -> tuple[str, dict[str, float]]:
    """``(name, {id: score})`` of ``run`` for ``metric``.

    Raises:
        ValueError: the run lacks the metric on some row, has no rows, or holds a
            non-finite or non-numeric score (a string such as ``"0.5"``, a bool: the
            message names the case id).
        TypeError: ``run`` is neither a run nor a mapping.
    """
    name, raw = _raw_scores(run, metric, default_name)
    values = _checked_values(name, raw, metric)
    return name, dict(zip(raw, values.tolist(), strict=True))


def _raw_scores(run: Any, metric: str, default_name: str) -> tuple[str, dict[str, Any]]:
    """``(name, {id: value as given})``; the errors of :func:`scores_of` but the values'."""
    name = run_name(run, default_name)
    if isinstance(run, Mapping):
        # the usual case, a dict keyed by str, is read as it is (never written to)
        if set(map(type, run)) <= {str}:
            raw = run if type(run) is dict else dict(run)
        else:
            raw = {str(k): v for k, v in run.items()}
    elif hasattr(run, "scores"):
        rows = getattr(run, "per_query", None)
        if rows is not None and len(rows) == 0:
            raise ValueError(f"run {name!r} is empty (no per-query rows); nothing to compare")
        try:
            got = run.scores(metric)
            raw = got if type(got) is dict else dict(got)  # read, never written to
        except KeyError as exc:
            msg = exc.args[0] if exc.args else str(exc)
            if "errored" in str(msg):
                raise ValueError(f"run {name!r} cannot be compared on {metric!r}: {msg}") from None
            raise ValueError(f"run {name!r} lacks metric {metric!r}: {msg}") from None
        if rows is not None and len(raw) != len(rows):
            raise ValueError(
                f"run {name!r} holds {len(rows)} rows but {len(raw)} distinct ids; "
                "duplicate row ids cannot be paired"
            )
    else:
        raise TypeError(
            f"expected a RunResult or a mapping of query id to score, got {type(run).__name__}"
        )
    if not raw:
        raise ValueError(f"run {name!r} is empty (no per-query scores); nothing to compare")
    return name, raw


#: Value types whose ``float()`` is the value itself (or an exact conversion): a score
#: of one of these needs no per-value check beyond finiteness.
_PLAIN_TYPES = frozenset({float, int, np.float64})


def _checked_values(name: str, raw: dict[str, Any], metric: str) -> NDArray[np.float64]:
    """``raw``'s values as float64, in ``raw``'s order, each checked as
    :func:`evalkit.stats.numeric.real_number` and finite; raises ValueError naming the
    first value (in ``raw``'s order) that is not."""
    if set(map(type, raw.values())) <= _PLAIN_TYPES:
        out = np.fromiter(raw.values(), dtype=np.float64, count=len(raw))
    else:  # something to refuse, or a number of another type: check each in turn
        values = []
        for qid, v in raw.items():
            f = real_number(v, f"run {name!r}: case {qid!r}: the {metric!r} score")
            if not math.isfinite(f):
                raise ValueError(f"run {name!r}: query {qid!r} has a non-finite {metric!r} "
                                 f"({f})")
            values.append(f)
        out = np.array(values, dtype=np.float64)
    finite = np.isfinite(out)
    if not finite.all():
        k = int(np.argmin(finite))
        qid = list(raw)[k]
        raise ValueError(f"run {name!r}: query {qid!r} has a non-finite {metric!r} "
                         f"({float(out[k])})")
    return out


@dataclass(frozen=True)
class Scores:
    """One run's checked values of one metric, by sorted id (:func:`run_scores`).

    Attributes:
        name: the run's name.
        ids: the query ids, sorted.
        values: the values in ``ids`` order, shape ``(n,)``.
        raw: ``{id: value}`` as the run gave them (for messages).
        order: the ids in ``raw``'s order.
    """

    name: str
    ids: tuple[str, ...]
    values: NDArray[np.float64]
    raw: Mapping[str, Any]
    order: tuple[str, ...]


def run_scores(run: RunLike, metric: str, default_name: str,
               like: Scores | None = None) -> Scores:
    """``run``'s ``metric`` values, checked and in sorted id order: what :func:`align`
    pairs. A family of comparisons reads each run once and pairs the results with
    :func:`pair_scores`.

    ``like``: another run's scores; when ``run`` holds the same ids, its ids are taken
    from ``like`` (the same tuple, not sorted again).

    Raises:
        As :func:`scores_of`.
    """
    name, raw = _raw_scores(run, metric, default_name)
    checked = _checked_values(name, raw, metric)
    keys = tuple(raw)
    if like is not None and (keys == like.order or raw.keys() == like.raw.keys()):
        ids = like.ids
    else:
        ids = tuple(sorted(keys))
    if ids == keys:
        values = checked
    else:  # read in id order (each value was checked above)
        values = np.fromiter(map(raw.__getitem__, ids), dtype=np.float64, count=len(ids))
    return Scores(name, ids, values, raw, keys)


def _id_list(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    more = len(ids) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def check_same_ids(name_a: str, ids_a: set[str], name_b: str, ids_b: set[str]) -> None:
    """Raise ValueError naming the ids that only one run holds."""
    if ids_a == ids_b:
        return
    only_a = sorted(ids_a - ids_b)
    only_b = sorted(ids_b - ids_a)
    parts = []
    if only_a:
        parts.append(f"{len(only_a)} only in {name_a!r} ({_id_list(only_a)})")
    if only_b:
        parts.append(f"{len(only_b)} only in {name_b!r} ({_id_list(only_b)})")
    raise ValueError(
        f"runs {name_a!r} and {name_b!r} cover different query ids: "
        + "; ".join(parts)
        + ". Evaluate both on the same queries (or filter them) before comparing"
    )


def align(
    a: RunLike, b: RunLike, metric: str, default_names: tuple[str, str] = ("a", "b")
) -> Paired:
    """Pair two runs' ``metric`` values by query id.

    Args:
        a, b: :class:`evalkit.RunResult` (or any object with ``name`` and
            ``scores(metric)``), or a ``{query id: score}`` mapping.
        metric: the metric name.
        default_names: names for inputs that carry none (plain mappings).

    Returns:
        :class:`Paired` over the sorted shared ids.

    Raises:
        ValueError: a run is empty, lacks the metric, holds a non-finite value, or the
            two runs cover different ids (the message lists them).
    """
    sa = run_scores(a, metric, default_names[0])
    sb = run_scores(b, metric, default_names[1], like=sa)
    return pair_scores(sa, sb, metric)


def pair_scores(sa: Scores, sb: Scores, metric: str) -> Paired:
    """:class:`Paired` of two runs' :func:`run_scores`; the checks and errors of
    :func:`align`."""
    if sa.ids != sb.ids:
        check_same_ids(sa.name, set(sa.ids), sb.name, set(sb.ids))
    ids, va, vb = sa.ids, sa.values, sb.values
    with np.errstate(over="ignore", invalid="ignore"):
        over = ~np.isfinite(va - vb)
    if over.any():
        bad = [i for i, o in zip(ids, over.tolist(), strict=True) if o]
        first = bad[0]
        raise ValueError(
            f"{metric}: the difference {sa.name!r} - {sb.name!r} exceeds the float64 range "
            f"on {len(bad)} quer{'y' if len(bad) == 1 else 'ies'} ({_id_list(bad)}; "
            f"{float(sa.raw[first])!r} - {float(sb.raw[first])!r}); rescale the scores "
            "(divide both runs by the same power of ten) before comparing them"
        )
    return Paired(ids=ids, a=va, b=vb, name_a=sa.name, name_b=sb.name, metric=metric)
