"""Pairing two runs by query id.

Every paired method works on the per-query differences ``d_i = a_i - b_i`` over the
query ids both runs share; rows are matched by id, never by position.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from evalkit.io.error_messages import quoted
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


#: A query's differences are equal up to rounding within ``2**-SNAP_BITS`` of its scores'
#: magnitude (about 9e-13 of it, some 4000 to 8000 float64 spacings): far below any real
#: effect on a metric in [0, 1], far above float64 rounding (1e-16) or the error of a sum
#: of a few thousand terms.
SNAP_BITS = 40


def rounding_tolerance(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each query's rounding tolerance, shape ``(n,)``: ``2**(e_i - SNAP_BITS)`` where
    ``2**e_i`` is the smallest power of two >= ``max(|a_i|, |b_i|)`` (``2**-1000`` for
    scores of 0): the query's own magnitude, never another query's."""
    top = np.maximum(np.maximum(np.abs(a), np.abs(b)), 2.0**-1000)
    mantissa, exponent = np.frexp(top)  # top = mantissa * 2**exponent, mantissa in [0.5, 1)
    e = exponent - (mantissa == 0.5)  # an exact power of two is its own bound
    tol: NDArray[np.float64] = np.ldexp(1.0, e - SNAP_BITS)
    return tol


def snap_values(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``x`` (shape ``(n,)``, finite) with values equal up to floating-point rounding
    merged into one: :func:`snap_differences` of ``x - 0``, so each value's tolerance
    comes from its own magnitude (``2**(e - SNAP_BITS)``, :func:`rounding_tolerance`).
    Used where values are categories (agreement statistics: a judge's mean over epochs,
    ``0.10000000000000002``, is the human's ``0.1``). Returns ``x`` itself when nothing
    merges."""
    return snap_differences(x, x, np.zeros_like(x))


def snap_differences(
    d: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Merge differences of ``d = a - b`` (shape ``(n,)``) that are equal up to
    floating-point rounding.

    Each query ``i`` has its tolerance ``t_i`` (:func:`rounding_tolerance`, from its own
    ``a_i`` and ``b_i``). First, a difference within ``t_i / 2`` of 0 becomes exactly 0.
    Then the distinct values are sorted, each with the smallest tolerance among the
    queries that hold it, and neighbours whose gap is at most the smaller of their
    tolerances form a chain. A chain whose whole span
    (largest minus smallest member) is at most the smallest tolerance in it is *tight*:
    every member takes one value, 0 when the chain reaches 0 and otherwise the midpoint
    of its ends, so no difference moves by more than its own tolerance (half of it,
    away from 0). A chain that is not tight (close differences spread over more than the
    tolerance: real differences, not rounding) keeps its values. So two differences
    equal up to rounding (``0.7 - 0.5`` and ``0.4 - 0.2``; an nDCG summed in another
    order) become equal, there being no fixed grid whose edge could split them, unless
    other differences fill the gap to beyond the tolerance; the result depends on the
    values alone, never on the queries' order or ids; and negating ``d`` negates it.
    The same values then decide wins/ties/losses (a tie is exactly 0) and degenerate
    (constant) differences.

    Returns:
        The snapped differences, shape ``(n,)`` (``d`` itself when nothing merges).
    """
    n = d.size
    if n == 0:
        return d
    tol = rounding_tolerance(a, b)
    zero = np.abs(d) <= tol / 2
    out = np.where(zero, 0.0, d) if zero.any() else d
    if n == 1:
        return out
    order = np.argsort(out, kind="stable")
    s = out[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    first = np.flatnonzero(new)
    if first.size == 1:
        return out
    # each distinct value once, with the smallest tolerance among the queries that hold it
    values = s[first]
    reach = np.minimum.reduceat(tol[order], first)
    linked = np.diff(values) <= np.minimum(reach[:-1], reach[1:])
    if not linked.any():
        return out
    starts = np.concatenate(([0], np.flatnonzero(~linked) + 1))
    ends = np.concatenate((starts[1:], [values.size]))
    span = values[ends - 1] - values[starts]
    merge = (ends - starts > 1) & (span <= np.minimum.reduceat(reach, starts))
    if not merge.any():
        return out
    for lo, hi in zip(starts[merge].tolist(), ends[merge].tolist(), strict=True):
        low, high = float(values[lo]), float(values[hi - 1])
        values[lo:hi] = 0.0 if low <= 0.0 <= high else 0.5 * low + 0.5 * high
    result = np.empty(n)
    result[order] = values[np.cumsum(new) - 1]
    return result


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
    name, raw, _, _ = _raw_scores(run, metric, default_name)
    values = _checked_values(name, raw, metric)
    return name, dict(zip(raw, values.tolist(), strict=True))


def _raw_scores(run: Any, metric: str, default_name: str
                ) -> tuple[str, dict[str, Any], tuple[str, ...], str | None]:
    """``(name, {id: value as given}, its ids, joined ids)``; the errors of
    :func:`scores_of` but the values'. ``joined ids``: a mapping's ids as
    :func:`code_point_sort` reads them (:func:`joined_ids`), None for a run's scores."""
    name = run_name(run, default_name)
    joined: str | None = None
    if isinstance(run, Mapping):
        # the usual case, a dict keyed by str, is read as it is (never written to); joining
        # its ids checks that each is a str, as fast as any check, and the sort reuses it
        keys = tuple(run)
        try:
            joined = joined_ids(keys)
        except TypeError:
            raw = {str(k): v for k, v in run.items()}
        else:
            raw = run if type(run) is dict else dict(run)
    elif hasattr(run, "scores"):
        rows = getattr(run, "per_query", None)
        if rows is not None and len(rows) == 0:
            raise ValueError(f"run {quoted(name)} is empty (no per-query rows); nothing to compare")
        try:
            got = run.scores(metric)
            raw = got if type(got) is dict else dict(got)  # read, never written to
        except KeyError as exc:
            msg = exc.args[0] if exc.args else str(exc)
            if "errored" in str(msg):
                raise ValueError(f"run {quoted(name)} cannot be compared on {metric!r}: "
                                 f"{msg}") from None
            raise ValueError(f"run {quoted(name)} lacks metric {metric!r}: {msg}") from None
        if rows is not None and len(raw) != len(rows):
            raise ValueError(
                f"run {quoted(name)} holds {len(rows)} rows but {len(raw)} distinct ids; "
                "duplicate row ids cannot be paired"
            )
    else:
        raise TypeError(
            f"expected a RunResult or a mapping of query id to score, got {type(run).__name__}"
        )
    if not raw:
        raise ValueError(f"run {quoted(name)} is empty (no per-query scores); nothing to compare")
    if joined is None:
        keys = tuple(raw)
    return name, raw, keys, joined


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
            f = real_number(v, f"run {quoted(name)}: case {qid!r}: the {metric!r} score")
            if not math.isfinite(f):
                raise ValueError(f"run {quoted(name)}: query {qid!r} has a non-finite {metric!r} "
                                 f"({f})")
            values.append(f)
        out = np.array(values, dtype=np.float64)
    finite = np.isfinite(out)
    if not finite.all():
        k = int(np.argmin(finite))
        qid = list(raw)[k]
        raise ValueError(f"run {quoted(name)}: query {qid!r} has a non-finite {metric!r} "
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
        sort: how ``order`` was sorted into ``ids`` (:func:`id_sort`); None when
            Python's ``sorted`` did it.
    """

    name: str
    ids: tuple[str, ...]
    values: NDArray[np.float64]
    raw: Mapping[str, Any]
    order: tuple[str, ...]
    sort: IdSort | None = field(default=None, repr=False, compare=False)


def run_scores(run: RunLike, metric: str, default_name: str,
               like: Scores | None = None) -> Scores:
    """``run``'s ``metric`` values, checked and in sorted id order: what :func:`align`
    pairs. A family of comparisons reads each run once and pairs the results with
    :func:`pair_scores`.

    ``like``: another run's scores; when ``run`` holds the same ids, its ids are taken
    from ``like`` (the same tuple), and when it lists them in the same order, so is their
    sort (:func:`id_sort`).

    Raises:
        As :func:`scores_of`.
    """
    name, raw, keys, joined = _raw_scores(run, metric, default_name)
    checked = _checked_values(name, raw, metric)
    ids, values, sort = _in_id_order(keys, raw, checked, like, joined)
    return Scores(name, ids, values, raw, keys, sort)


def _in_id_order(keys: tuple[str, ...], raw: Mapping[str, Any], checked: NDArray[np.float64],
                 like: Scores | None, joined: str | None = None
                 ) -> tuple[tuple[str, ...], NDArray[np.float64], IdSort | None]:
    """``(sorted ids, values in their order, the sort)`` of a run whose ids are ``keys``
    (``raw``'s order; ``joined``: :func:`joined_ids` of them, if known) and values
    ``checked`` (in ``keys`` order); see :func:`run_scores`."""
    same_order = like is not None and keys == like.order
    # the same ids in the same order: one sort serves both
    sort = like.sort if like is not None and same_order else id_sort(keys, joined)
    if sort is not None:
        if like is not None and (same_order or (like.sort is not None
                                                and sort.same_ids(like.sort))):
            ids = like.ids
        else:
            ids = sort.ids(keys)
            if like is not None and like.sort is None and ids == like.ids:
                ids = like.ids
        return ids, checked[sort.positions], sort
    if like is not None and (same_order or raw.keys() == like.raw.keys()):
        ids = like.ids
    else:
        ids = tuple(sorted(keys))
    if ids == keys:
        values = checked
    else:  # read in id order (each value was checked above)
        values = np.fromiter(map(raw.__getitem__, ids), dtype=np.float64, count=len(ids))
    return ids, values, None


#: :func:`id_sort` leaves to Python's ``sorted`` fewer ids than this (as fast for a
#: few) ...
ID_SORT_MIN = 1_000
#: ... and ids whose every ``len // ID_SORT_SAMPLE``-th one is in order already (Python's
#: sort is adaptive: ids in order, or nearly, cost it about one comparison each) ...
ID_SORT_SAMPLE = 64
#: ... and ids longer than this many bytes written as :func:`code_point_sort` writes them
#: (40 ASCII or Latin-1 code points, 20 of the basic plane, 10 beyond): five words, where
#: ids that tie on every word but the last (the slowest case) still sort as fast as
#: Python's ``sorted`` (longer, up to twice as slow).
ID_SORT_MAX_BYTES = 40

#: Positions into a sequence, shape ``(n,)``.
Positions = NDArray[np.integer[Any]]


@dataclass(frozen=True)
class IdSort:
    """The order of a run's ids, found by :func:`code_point_sort`.

    Attributes:
        positions: shape ``(n,)``: ``[keys[i] for i in positions]`` is ``sorted(keys)``.
        words: shape ``(n, k)``, uint64: the sorted ids' code points (NUL-padded),
            packed big-endian into 64-bit words.
        layout: bytes per code point and code points per id (padded) in ``words``;
            two sorts of the same ids have the same layout and words.
    """

    positions: Positions
    words: NDArray[np.uint64]
    layout: tuple[int, int]

    def ids(self, keys: Sequence[str]) -> tuple[str, ...]:
        """``keys`` (the sequence sorted) in sorted order: the same objects."""
        column = np.fromiter(keys, dtype=object, count=len(keys))
        return tuple(column[self.positions].tolist())

    def same_ids(self, other: IdSort) -> bool:
        """Whether the two sorts are of the same ids."""
        return self.layout == other.layout and np.array_equal(self.words, other.words)


def id_sort(keys: Sequence[str], joined: str | None = None) -> IdSort | None:
    """:func:`code_point_sort` of ``keys`` (distinct ``str``; ``joined``: their
    :func:`joined_ids`, if known), or None where Python's ``sorted`` is as fast: fewer
    than :data:`ID_SORT_MIN` ids, or ids sampled in order (:data:`ID_SORT_SAMPLE`).
    """
    n = len(keys)
    if n < ID_SORT_MIN:
        return None
    sample = keys[:: max(n // ID_SORT_SAMPLE, 1)]
    if all(map(operator.le, sample, sample[1:])):
        return None
    return code_point_sort(keys, joined)


def joined_ids(keys: Iterable[str]) -> str:
    """The ids, each followed by a NUL: what :func:`code_point_sort` reads.

    Raises:
        TypeError: an id is not a ``str``.
    """
    return "\0".join(keys) + "\0"


def code_point_sort(keys: Sequence[str], joined: str | None = None) -> IdSort | None:
    """Sort distinct ids (``str``) as ``sorted(keys)`` does, with numpy; None when an id
    is longer than :data:`ID_SORT_MAX_BYTES` or holds a NUL.

    Python compares two strings code point by code point, a string before its
    extensions. Here the ids are NUL-padded to one length (no id holds a NUL, so a
    prefix still comes first), each code point written big-endian in 1, 2 or 4 bytes
    (the fewest that hold the largest one) and each id read as a row of 64-bit words:
    rows compare as the ids do. Words equal in all rows are left out; the rows are
    sorted by their first word, then, while rows tie, by (rank so far, rank of the next
    word). The ids differ, so do the rows: the order is unique.
    """
    n = len(keys)
    if n == 0:
        return IdSort(np.zeros(0, dtype=np.intp), np.zeros((0, 1), dtype=np.uint64), (1, 8))
    text = joined_ids(keys) if joined is None else joined
    codes: NDArray[Any]
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:  # a lone surrogate is a code point too, compared by its value
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if codes.size - np.count_nonzero(codes) != n:  # an id holds a NUL
        return None
    width = len(keys[0])
    lengths = None
    if codes.size != n * (width + 1) or codes.reshape(n, width + 1)[:, width].any():
        ends = np.flatnonzero(codes == 0)  # the ids differ in length
        lengths = np.diff(ends, prepend=-1) - 1
        width = int(lengths.max())
    top = int(codes.max())
    size = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4
    if width * size > ID_SORT_MAX_BYTES:
        return None
    per_word = 8 // size
    padded = -(-max(width, 1) // per_word) * per_word
    rows: NDArray[Any]
    if lengths is None and size == 1 and width + 1 == padded:  # the text is the rows
        rows = codes.reshape(n, padded)
    else:
        rows = np.zeros((n, padded), dtype=f">u{size}")
        if lengths is None:  # the text as it is, each id with its NUL where there is room
            end = min(width + 1, padded)
            rows[:, :end] = codes.reshape(n, width + 1)[:, :end]
        else:
            rows[np.arange(padded) < lengths[:, None]] = codes[codes != 0]
    words = rows.view(">u8").astype(np.uint64)
    positions = _row_order(words)
    return IdSort(positions, words[positions], (size, padded))


def _row_order(words: NDArray[np.uint64]) -> Positions:
    """Positions sorting the rows of ``words`` (shape ``(n, k)``, all different)
    lexicographically: by the first word, then the rows that tie so far (only they) by
    the next word, and so on."""
    n = words.shape[0]
    columns = [words[:, j] for j in range(words.shape[1])
               if not bool(np.all(words[:, j] == words[0, j]))]
    if not columns:  # one row
        return np.arange(n, dtype=np.intp)
    order = _order(columns[0])
    slots = np.arange(n)  # places in `order` whose rows may tie, in order
    key = columns[0][order]  # the rows' sort key so far, ascending
    for column in columns[1:]:
        same = key[1:] == key[:-1]
        if not same.any():
            break
        tied = np.zeros(key.size, dtype=bool)
        tied[1:] = same
        tied[:-1] |= same
        group = np.cumsum(np.concatenate(([True], ~same)), dtype=np.uint64)[tied]
        slots = slots[tied]
        rows = order[slots]
        values = column[rows]
        rank, distinct = _dense_rank(values)
        key = group * np.uint64(distinct) + rank  # < n**2; ascending groups keep their places
        within = _order(key)
        order[slots] = rows[within]
        key = key[within]
    return order


def _order(key: NDArray[np.uint64]) -> Positions:
    """``np.argsort(key)``, or, when the bits that vary from value to value leave room
    for a position, the positions that sorting the values with their positions in the
    low bits gives (a sort of numbers is faster than an argsort)."""
    n = key.size
    varying = int(np.bitwise_or.reduce(key ^ key[0]))
    low = (varying & -varying).bit_length() - 1
    span = varying.bit_length() - low
    index_bits = max(n - 1, 1).bit_length()
    if span + index_bits > 64:
        order: Positions = np.argsort(key)
        return order
    packed = key >> np.uint64(max(low, 0))  # the bits above and below the span are constant
    if span < 64:
        packed &= np.uint64((1 << span) - 1)
    packed <<= np.uint64(index_bits)
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    packed &= np.uint64((1 << index_bits) - 1)
    return packed.view(np.int64)


def _dense_rank(values: NDArray[np.uint64]) -> tuple[NDArray[np.uint64], int]:
    """Each value's rank among the distinct ``values``, and how many distinct values
    there are."""
    order = _order(values)
    s = values[order]
    new = np.empty(s.size, dtype=np.uint64)
    new[0] = 0
    np.not_equal(s[1:], s[:-1], out=new[1:], casting="unsafe")
    rank = np.empty(s.size, dtype=np.uint64)
    rank[order] = np.cumsum(new, dtype=np.uint64)
    return rank, int(rank[order[-1]]) + 1


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
        parts.append(f"{len(only_a)} only in {quoted(name_a)} ({_id_list(only_a)})")
    if only_b:
        parts.append(f"{len(only_b)} only in {quoted(name_b)} ({_id_list(only_b)})")
    raise ValueError(
        f"runs {quoted(name_a)} and {quoted(name_b)} cover different query ids: "
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
            f"{metric}: the difference {quoted(sa.name)} - {quoted(sb.name)} exceeds the "
            "float64 range "
            f"on {len(bad)} quer{'y' if len(bad) == 1 else 'ies'} ({_id_list(bad)}; "
            f"{float(sa.raw[first])!r} - {float(sb.raw[first])!r}); rescale the scores "
            "(divide both runs by the same power of ten) before comparing them"
        )
    return Paired(ids=ids, a=va, b=vb, name_a=sa.name, name_b=sb.name, metric=metric)
