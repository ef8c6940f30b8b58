"""Many columns, each with its own test: "auto" resolved per column, the columns of each
resolved test analysed together (:func:`evalkit.stats.engine.analyse`).

Column ``j`` of ``D`` is one comparison's per-query differences; its test comes from
:func:`evalkit.stats.methods.resolve_method` (the method asked for, or for "auto" the
metric's declared value type and the column's skewness). All groups draw from the same
generator streams, so sign patterns and bootstrap indices are shared across groups and
the min-P null rows line up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.stats._blocks import chunk_width
from evalkit.stats._kernels import Backend
from evalkit.stats.engine import (
    Analysis,
    ColumnOutcome,
    FloatArray,
    analyse,
    draw_signflips,
    needs_of,
)
from evalkit.stats.histogram import Histogram
from evalkit.stats.intervals import Alternative
from evalkit.stats.methods import DEFAULT_CI, resolve_method
from evalkit.stats.numeric import pow2_above


@dataclass(frozen=True)
class Family:
    """:func:`analyse_family`'s answer: per column the outcome, the test and interval
    actually used and the resamples behind it, plus what min-P needs (each column's p
    of the observed data, ``p_obs``, and of every shared resample, ``p_null``; and for
    the columns whose test is :data:`evalkit.stats.methods.BOTH`, the same of its
    bootstrap-t half, ``p_obs_t`` and ``p_null_t``, p = 1 in the other columns, or None
    when no column is)."""

    outcomes: list[ColumnOutcome]
    methods: list[str]
    ci_methods: list[str]
    n_resamples: list[int]
    used_generator: list[bool]
    p_obs: FloatArray | None
    p_null: FloatArray | None
    null_exact: bool
    histograms: tuple[Histogram | None, ...] = ()
    p_obs_t: FloatArray | None = None
    p_null_t: FloatArray | None = None


def analyse_family(
    D: FloatArray,
    *,
    method: str,
    ci: str | None,
    alpha: float,
    alternative: Alternative,
    n_resamples: int,
    seed: int,
    want_null: bool = False,
    backend: Backend = "auto",
    bins: int = 0,
    value_types: list[str | None] | None = None,
    flip: FloatArray | None = None,
) -> Family:
    """:func:`analyse` with "auto" resolved per column (:func:`resolve_method`, from
    ``value_types[j]``, the declared value type of column ``j``'s metric, and the column's
    skewness).

    Columns resolved to the same test run together; all groups draw from the same
    generator streams, so the sign patterns (and bootstrap indices) are shared across
    groups and the min-P null rows line up.

    Each column is divided by a power of two that brings its largest magnitude into
    ``[1, 2)`` (exact: :mod:`evalkit.stats.numeric`) and the means and intervals are scaled
    back, so differences of any magnitude a float holds (1e-300 to 1e300) give the same
    answer as the same differences near 1: no sum overflows, no square vanishes.

    ``flip`` (the same shape as ``D``): clustered cases, where ``D`` holds the clusters'
    residual totals and ``flip`` the values the sign-flip test flips
    (:func:`evalkit.stats.clusters.cluster_columns`); "auto" then runs the cluster
    sign-flip test on every column, binary metrics included, and its skew guard reads
    the skewness of ``flip``, the values whose sign-flip distribution it guards.
    """
    m = D.shape[1]
    types = value_types if value_types is not None else [None] * m
    peak = _largest_magnitudes(D)
    if flip is not None:
        peak = np.maximum(peak, _largest_magnitudes(flip))
    scales = np.array([pow2_above(float(x)) for x in peak])
    F = D if flip is None else flip
    resolved = [resolve_method(method, F[:, j] / scales[j], types[j], flip is not None)
                for j in range(m)]
    groups: dict[str, list[int]] = {}
    for j, r in enumerate(resolved):
        groups.setdefault(r, []).append(j)
    outcomes: list[ColumnOutcome | None] = [None] * m
    ci_methods = [""] * m
    p_obs = np.ones(m)
    p_obs_t = np.ones(m)
    p_null_t: FloatArray | None = None
    hists: list[Histogram | None] = [None] * m
    parts: list[tuple[list[int], Analysis]] = []
    cis = {g: ci if ci is not None else DEFAULT_CI[g] for g in groups}
    # the columns, each group's side by side, a chunk at a time (each column's values
    # depend on that column alone): a wide family never holds all its resampled sums.
    # min-P reads every column's resampled p-values together: one chunk
    order = [j for cols in groups.values() for j in cols]
    width = m if want_null else chunk_width(D.shape[0], n_resamples)
    for c0 in range(0, m, width):
        chunk = order[c0:c0 + width]
        sc = scales[chunk][None, :]
        Dc = D[:, chunk] / sc
        Fc = Dc if flip is None else flip[:, chunk] / sc
        at: dict[str, list[int]] = {}  # each group's positions in the chunk, in a run
        for k, j in enumerate(chunk):
            at.setdefault(resolved[j], []).append(k)
        shared = _shared_flips(Fc, at, cis, want_null, n_resamples, seed, backend)
        for g, pos in at.items():
            lo, hi = pos[0], pos[-1] + 1
            an = analyse(Dc[:, lo:hi], method=g, ci_method=cis[g], alpha=alpha,
                         alternative=alternative, n_resamples=n_resamples, seed=seed,
                         want_null=want_null, backend=backend, bins=bins,
                         flip=None if flip is None else Fc[:, lo:hi],
                         drawn_flips=shared.get(g))
            cols = chunk[lo:hi]
            parts.append((cols, an))
            for k, j in enumerate(cols):
                outcomes[j] = an.outcomes[k]
                ci_methods[j] = cis[g]
                if an.p_obs is not None:
                    p_obs[j] = an.p_obs[k]
                if an.p_obs_t is not None and an.p_null_t is not None:
                    if p_null_t is None:
                        p_null_t = np.ones((an.p_null_t.shape[0], m))
                    p_obs_t[j] = an.p_obs_t[k]
                    p_null_t[:, j] = an.p_null_t[:, k]
                if an.histograms:
                    hists[j] = an.histograms[k]
    reported, used = _group_draws(parts, resolved, m)
    p_null, null_exact = _joined_null(parts, m) if want_null else (None, False)
    final = [ColumnOutcome(o.observed * sc, o.ci_low * sc, o.ci_high * sc, o.p_value,
                           o.exact, o.degenerate)
             for o, sc in zip(outcomes, scales.tolist(), strict=True) if o is not None]
    return Family(final, resolved, ci_methods, reported, used,
                  p_obs if want_null else None, p_null, null_exact,
                  tuple(None if h is None else h.scaled(sc)
                        for h, sc in zip(hists, scales.tolist(), strict=True))
                  if bins else (),
                  p_obs_t if p_null_t is not None else None, p_null_t)


def _largest_magnitudes(D: FloatArray) -> FloatArray:
    """Each column's largest ``|value|`` (``max(max, -min)``: no copy of ``D``)."""
    peak: FloatArray = np.maximum(D.max(axis=0), -D.min(axis=0))
    return peak


def _group_draws(parts: list[tuple[list[int], Analysis]], resolved: list[str], m: int
                 ) -> tuple[list[int], list[bool]]:
    """Per column, the resamples behind its p-value and whether the generator was used,
    as its whole group reports them: a chunk of a group's columns that are all constant
    draws nothing, but the group's other chunks do (the first chunk of the group with a
    column that is not constant speaks for all; else the group's first chunk)."""
    first: dict[str, Analysis] = {}
    for cols, an in parts:
        g = resolved[cols[0]]
        live = any(o.degenerate != "constant" for o in an.outcomes)
        if g not in first or (live and all(
                o.degenerate == "constant" for o in first[g].outcomes)):
            first[g] = an
    reported = [first[resolved[j]].n_resamples for j in range(m)]
    used = [first[resolved[j]].used_generator for j in range(m)]
    return reported, used


def _shared_flips(F: FloatArray, groups: dict[str, list[int]], cis: dict[str, str],
                  want_null: bool, n_resamples: int, seed: int, backend: Backend
                  ) -> dict[str, tuple[FloatArray, FloatArray]]:
    """Per group whose test needs sign flips, those of its columns of ``F`` (``(B, k)``
    sums and the ``(B,)`` sign sums), drawn in one call when two or more groups need
    them; else empty. Every group draws the same patterns from the same seed and a
    column's sums depend on that column alone (:func:`evalkit.stats.engine.draw_signflips`),
    so each group's columns of these are what it would have drawn itself."""
    flipping = [g for g in groups if needs_of(g, cis[g], want_null, True).flips]
    if len(flipping) < 2:
        return {}
    cols = [j for g in flipping for j in groups[g]]  # each group's columns side by side
    drawn, signs = draw_signflips(F[:, cols], n_resamples=n_resamples, seed=seed,
                                  backend=backend)
    out: dict[str, tuple[FloatArray, FloatArray]] = {}
    start = 0
    for g in flipping:  # views, not copies
        out[g] = (drawn[:, start:start + len(groups[g])], signs)
        start += len(groups[g])
    return out


def _joined_null(parts: list[tuple[list[int], Analysis]], m: int
                 ) -> tuple[FloatArray, bool]:
    """The groups' resampled p-values for min-P side by side, ``(R, m)``: R is the longest
    group's (a group of another length, an exact enumeration beside Monte Carlo
    patterns, contributes p = 1: it never takes the minimum)."""
    rows = max(an.p_null.shape[0] for _, an in parts if an.p_null is not None)
    p_null = np.ones((rows, m))
    null_exact = False
    for cols, an in parts:
        if an.p_null is not None and an.p_null.shape[0] == rows:
            p_null[:, cols] = an.p_null
            null_exact = null_exact or an.null_exact
    return p_null, null_exact
