"""Multiplicity adjustments for a family of tests (several metrics and/or systems).

* Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6
  (1979): family-wise error control under any dependence (the default).
* Benjamini and Hochberg, "Controlling the false discovery rate", JRSS B 57 (1995):
  false discovery rate, valid under independence or positive dependence.
* Westfall and Young, *Resampling-Based Multiple Testing* (1993), ch. 2, Algorithm
  2.8 in its min-P form: step-down on the distribution of the smallest of the tests'
  p-values over resamples shared by all hypotheses, each p computed from the statistic
  its own test uses. It uses the correlation between metrics/systems, so where tests
  are correlated it rejects more than Holm, while keeping family-wise control.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.numeric import numbers_of

CORRECTIONS: tuple[str, ...] = ("holm", "bh", "westfall-young", "none")


def p_values_of(p: Sequence[float] | NDArray[np.float64], what: str = "p-value"
                ) -> NDArray[np.float64]:
    """``p`` as a float array after checking each value is a probability: a real number
    (:func:`evalkit.stats.numeric.numbers_of`) in ``[0, 1]``, not NaN.

    Raises:
        ValueError: a value is not a number (a string, a bool, None), NaN (often an
            upstream test that failed), or outside ``[0, 1]``; the message names its
            position and value (``"p-value 1 (of 2) must be in [0, 1], got nan"``).
    """
    values = numbers_of(p, what)
    for i, v in enumerate(values):
        if not 0.0 <= v <= 1.0:  # also False for NaN
            why = (" (a NaN p usually means the test that produced it failed)"
                   if v != v else "")
            raise ValueError(f"{what} {i} (of {len(values)}) must be in [0, 1], got "
                             f"{v!r}{why}")
    return np.asarray(values, dtype=np.float64)


def holm(p: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, same order as ``p``; each in ``[p_i, 1]``.

    Raises:
        ValueError: a p-value is not a number (a string, a bool), is NaN, or is outside
            ``[0, 1]``; the message names its position and value (:func:`p_values_of`).
    """
    arr = p_values_of(p)
    m = arr.size
    order = np.argsort(arr, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(arr[i])))
        adj[i] = running
    return adj.tolist()


def holm_floor_note(floors_at: Callable[[int], Sequence[float]], alpha: float,
                    n_resamples: int,
                    floors_with_n: Callable[[int], Sequence[float]] | None = None,
                    n_units: int | None = None, unit: str = "queries",
                    fewer_tests: str = "test fewer metrics or pairs, use correction 'bh' "
                    "(its smallest adjusted p does not grow with the number of tests)"
                    ) -> str | None:
    """Why Holm over a family of tests can reject nothing, or None when it can.

    Holm's smallest adjusted p is ``m`` times the smallest raw p, and a resampling test's
    p never goes below its floor (:func:`evalkit.stats.methods.smallest_p`: ``1/(B+1)``,
    ``2/(B+1)`` for the two-sided bootstrap-t): when ``m * min(floor) >= alpha`` (with one
    Monte Carlo floor, ``B + 1 <= m / alpha``), no result can be significant whatever the
    data. The note gives the cause and the fix that can help:

    * the smallest floor is at least ``alpha`` whatever ``B`` (an exact enumeration's,
      ``2/2**n``, does not move with ``B``): not even an uncorrected test can reject, so
      the cause is too few queries (clusters), whatever the correction; the note names
      the fewest with which one test could reject, and with Holm over ``m > 1`` tests;
    * the floor times ``m`` is at least ``alpha`` whatever ``B``: fewer tests, correction
      'bh' (its smallest adjusted p does not grow with ``m``) or more queries;
    * else the fewest resamples with which one can (up to
      :data:`evalkit.stats.bootstrap.MAX_RESAMPLES`).

    Args:
        floors_at: ``B -> each test's smallest attainable p with B resamples``, in the
            family's order (non-increasing in ``B``).
        alpha: the significance level.
        n_resamples: the ``B`` the family ran with.
        floors_with_n: ``n -> each test's floor with B = n_resamples`` had it ``n``
            queries (clusters), or None when the tests have different numbers (then no
            count is named).
        n_units: the tests' common number of queries (clusters), or None.
        unit: what ``n_units`` counts, plural ("queries", "clusters", "cases").
        fewer_tests: the advice when the family is too large whatever ``B`` (a gate,
            which corrects by Holm only, says to put fewer checks in it).
    """
    from evalkit.stats.bootstrap import MAX_RESAMPLES

    def rejects(floors: Sequence[float], m: int) -> bool:
        return bool(floors) and min(1.0, m * min(floors)) < alpha  # Holm's step 1

    now = floors_at(n_resamples)
    m = len(now)
    if rejects(now, m):
        return None
    floor = min(now)
    tests = f"{m} test{'' if m == 1 else 's'}"
    these = "this test" if m == 1 else "these tests"
    with_n = f" with {n_units} {unit}" if n_units is not None else ""
    at_most = floors_at(MAX_RESAMPLES)
    if not rejects(at_most, 1):  # even one uncorrected test cannot reject
        fewest = _fewest_units(floors_with_n, n_units, alpha, m)
        text = (f"no test can be significant at alpha = {alpha:g} whatever the correction: "
                f"the smallest p {these} can give{with_n} is {floor:.3g}, and more "
                f"resamples do not change that (an exact enumeration's floor); the "
                f"{unit} are too few")
        if fewest is not None:
            single, holm_n = fewest
            text += f": a test can reject with {single} {unit} or more"
            if m > 1 and holm_n:
                text += f" ({holm_n} or more with Holm's correction over {tests})"
        return text
    head = (f"no test can be significant after Holm's correction: {tests} at alpha = "
            f"{alpha:g} need a raw p below {alpha / m:.3g}, and the smallest p {these} "
            f"can give with B = {n_resamples:,} resamples{with_n} is {floor:.3g}")
    if m == 1:
        head = (f"no test can be significant at alpha = {alpha:g}: the smallest p this "
                f"test can give with B = {n_resamples:,} resamples{with_n} is {floor:.3g}")
    if not rejects(at_most, m):
        fewest = _fewest_units(floors_with_n, n_units, alpha, m)
        more = (f", or use {fewest[1]} {unit} or more" if fewest is not None and fewest[1]
                else f", or use more {unit}")
        return head + ("; more resamples do not change that (an exact enumeration's "
                       f"floor): {fewer_tests}{more}")
    low, high = n_resamples, MAX_RESAMPLES  # rejects(high), not rejects(low)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if rejects(floors_at(mid), m) else (mid, high)
    return (head + f"; B = {high:,} is the fewest that can reject (n_resamples={high}; "
            f"--resamples {high} on the command line)")


def holm_smallest_adjusted(floors: Sequence[float]) -> list[float]:
    """Each test's smallest attainable Holm-adjusted p, given every test's floor (the
    smallest raw p its test can give: :func:`evalkit.stats.methods.smallest_p`), same
    order as ``floors``; each in ``[floors[i], 1]``.

    Holm (1979) step-down: with the raw p sorted ascending ``p_(1) <= ... <= p_(m)``, the
    test at rank ``k`` gets ``min(1, max_{j<=k} (m - j + 1) p_(j))``, which no raw p can
    lower by rising. Test ``i`` at its floor ``f_i`` can stand at rank ``k`` only behind
    ``k - 1`` other tests whose p is at most ``f_i``, so whose floors are; the best such
    are the ``k - 1`` smallest other floors ``g_1 <= ... <= g_{k-1}`` (all ``<= f_i``), at
    their floors. Hence::

        min_adj_i = min over feasible k = 1..m of
                    min(1, max(max_{j<k} (m - j + 1) g_j, (m - k + 1) f_i))

    (``k = 1`` is always feasible: ``m f_i``). A test is able to reject at level alpha
    only when ``min_adj_i < alpha``, whatever the other tests do.

    Raises:
        ValueError: a floor is not a number, is NaN or is outside ``[0, 1]``.
    """
    values = p_values_of(floors, "p floor").tolist()
    m = len(values)
    out: list[float] = []
    for i, f in enumerate(values):
        others = sorted(g for j, g in enumerate(values) if j != i and g <= f)
        best = min(1.0, m * f)
        ahead = 0.0  # max_{j<k} (m - j + 1) g_j
        for j, g in enumerate(others, start=1):  # g at rank j; test i at rank k = j + 1
            ahead = max(ahead, (m - j + 1) * g)
            best = min(best, min(1.0, max(ahead, (m - j) * f)))
        out.append(best)
    return out


def holm_check_floor_note(floors_at: Callable[[int], Sequence[float]], index: int,
                          alpha: float, n_resamples: int,
                          floors_with_n: Callable[[int], Sequence[float]] | None = None,
                          n_units: int | None = None, unit: str = "cases") -> str | None:
    """Why test ``index`` of a Holm family cannot be significant whatever the data (its
    smallest attainable Holm-adjusted p, :func:`holm_smallest_adjusted`, is at least
    ``alpha``), or None when it can. The note gives the cause and the fix that can
    help, as :func:`holm_floor_note` does for the whole family: too few queries
    (cases, clusters) for this test even uncorrected (naming the fewest with which it
    could reject), a family too large for its floor whatever ``B``, or too few
    resamples (naming the fewest with which it can).

    Args:
        floors_at: ``B -> each test's smallest attainable p with B resamples``.
        index: the test judged, a position in what ``floors_at`` returns.
        alpha: the test's significance level.
        n_resamples: the ``B`` the family ran with.
        floors_with_n: ``n -> each test's floor with B = n_resamples`` had it (or every
            test, when they have the same number) ``n`` units, or None (no count named).
        n_units: the test's number of units, or None.
        unit: what ``n_units`` counts, plural.
    """
    from evalkit.stats.bootstrap import MAX_RESAMPLES

    def can(floors: Sequence[float]) -> bool:
        return bool(floors) and holm_smallest_adjusted(floors)[index] < alpha

    now = floors_at(n_resamples)
    if can(now):
        return None
    m = len(now)
    floor, smallest = now[index], holm_smallest_adjusted(now)[index]
    with_n = f" with {n_units} {unit}" if n_units is not None else ""
    at_most = floors_at(MAX_RESAMPLES)

    def fewest(test: Callable[[Sequence[float]], bool]) -> int | None:
        if floors_with_n is None or n_units is None:
            return None
        return next((n for n in range(n_units + 1, 1025) if test(floors_with_n(n))), None)

    if at_most[index] >= alpha:  # not even uncorrected, whatever B
        text = (f"its test cannot be significant at alpha = {alpha:g} whatever the "
                f"correction: the smallest p it can give{with_n} is {floor:.3g}, and more "
                f"resamples do not change that (an exact enumeration's floor); its {unit} "
                "are too few")
        single = fewest(lambda f: f[index] < alpha)
        if single is not None:
            text += f": a test can reject with {single} {unit} or more"
            holm_n = fewest(can) if m > 1 else None
            if holm_n is not None and holm_n != single:
                text += f" ({holm_n} or more with Holm's correction over {m} tests)"
        return text
    if m == 1:
        head = (f"its test cannot be significant at alpha = {alpha:g}: the smallest p it "
                f"can give with B = {n_resamples:,} resamples{with_n} is {floor:.3g}")
    else:
        head = (f"its test cannot be significant after Holm's correction over {m} tests "
                f"at alpha = {alpha:g}: the smallest p it can give with B = "
                f"{n_resamples:,} resamples{with_n} is {floor:.3g}, and with the other "
                f"tests' floors its smallest Holm-adjusted p is {smallest:.3g}")
    if not can(at_most):
        more = fewest(can)
        return head + ("; more resamples do not change that (an exact enumeration's "
                       "floor): put fewer blocking baseline checks in the family, or use "
                       + (f"{more} {unit} or more" if more is not None else f"more {unit}"))
    low, high = n_resamples, MAX_RESAMPLES  # can(high), not can(low)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if can(floors_at(mid)) else (mid, high)
    return (head + f"; B = {high:,} is the fewest that can reject (n_resamples={high}; "
            f"--resamples {high} on the command line)")


def _fewest_units(floors_with_n: Callable[[int], Sequence[float]] | None,
                  n_units: int | None, alpha: float, m: int = 1,
                  limit: int = 1024) -> tuple[int, int | None] | None:
    """``(fewest n with which one test can reject, fewest with which Holm over m
    can)``, searching ``n`` above ``n_units`` up to ``limit`` (None for one not found);
    None without ``floors_with_n``."""
    if floors_with_n is None or n_units is None:
        return None
    single: int | None = None
    for n in range(n_units + 1, limit + 1):
        floors = floors_with_n(n)
        if not floors:
            return None
        if single is None and min(floors) < alpha:
            single = n
        if min(1.0, m * min(floors)) < alpha:
            return (single or n), n
    return (single, None) if single is not None else None


def benjamini_hochberg(p: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), same order as ``p``; each in
    ``[p_i, 1]``.

    Raises:
        ValueError: a p-value is not a number (a string, a bool), is NaN, or is outside
            ``[0, 1]``; the message names its position and value (:func:`p_values_of`).
    """
    arr = p_values_of(p)
    m = arr.size
    order = np.argsort(arr, kind="stable")
    adj = np.empty(m)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, float(arr[i]) * m / (rank + 1))
        adj[i] = min(1.0, running)
    return adj.tolist()


def westfall_young(
    p_obs: NDArray[np.float64],
    p_null: NDArray[np.float64],
    exact: bool = False,
) -> list[float]:
    """Step-down min-P adjusted p-values (Westfall and Young 1993, Algorithm 2.8 with
    p-values in place of the statistics).

    With the observed ``p_(1) <= ... <= p_(m)``, ``p_adj(i) = max_{k <= i} c_k / R'``,
    ``c_k`` the rows whose smallest p over the hypotheses ``(k), ..., (m)`` is at most
    ``p_(k)``. Monte Carlo rows (``exact`` false) are joined by the observed data as one
    more row, which always counts: ``c_k = #{...} + 1`` and ``R' = R + 1``.

    Args:
        p_obs: each hypothesis's p of the observed data, shape ``(m,)``.
        p_null: the same p of each resample, shape ``(R, m)``; row ``r`` is one shared
            resample of every hypothesis, column ``j`` computed as ``p_obs[j]`` was.
        exact: the rows enumerate the whole null distribution, the observed data among
            them (no ``+1`` rule).

    Returns:
        Adjusted p-values, same order as ``p_obs``, monotone in the step-down order,
        in ``(0, 1]``.

    Raises:
        ValueError: a p-value of ``p_obs`` or ``p_null`` is not a number, is NaN or is
            outside ``[0, 1]`` (its position named); ``p_null`` is not of shape
            ``(R, m)`` with ``R >= 1``.
    """
    obs = p_values_of(np.ravel(np.asarray(p_obs, dtype=object)).tolist(), "observed p-value")
    m = obs.size
    null = np.asarray(p_null, dtype=np.float64)
    if null.ndim != 2 or null.shape[1] != m or null.shape[0] < 1:
        raise ValueError(f"p_null must have shape (R, {m}) with R >= 1 (one row per "
                         f"resample, one column per hypothesis), got {null.shape}")
    bad = ~((null >= 0.0) & (null <= 1.0))
    if bad.any():
        r, j = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"resampled p-value (row {r}, hypothesis {j}) must be in [0, 1], "
                         f"got {float(null[r, j])!r}")
    R = null.shape[0]
    order = np.argsort(obs, kind="stable")  # most significant first
    # successive minima from the least significant hypothesis upwards
    running = np.full(R, np.inf)
    counts = np.empty(m)
    for pos in range(m - 1, -1, -1):
        j = order[pos]
        running = np.minimum(running, null[:, j])
        counts[pos] = np.count_nonzero(running <= obs[j] * (1.0 + 1e-12))
    p_sorted = counts / R if exact else (counts + 1) / (R + 1)
    p_sorted = np.minimum(1.0, np.maximum.accumulate(p_sorted))
    adj = np.empty(m)
    adj[order] = p_sorted
    return adj.tolist()
