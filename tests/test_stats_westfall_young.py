"""Westfall-Young's step-down min-P (``correction="westfall-young"``) checked against a
straightforward implementation written here: each test's p of every shared resample,
computed from the statistic its own test uses, then the step-down over the smallest of
them (Westfall and Young 1993, Algorithm 2.8 with p-values)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from evalkit.data.results import QueryResult, RunResult
from evalkit.stats import compare_runs, holm
from evalkit.stats.engine import draw_signflips


def _runs(columns: dict[str, tuple[np.ndarray, np.ndarray]]) -> tuple[RunResult, RunResult]:
    n = len(next(iter(columns.values()))[0])
    base = [QueryResult(f"q{i:03d}", [], {m: float(b[i]) for m, (b, _) in columns.items()})
            for i in range(n)]
    cand = [QueryResult(f"q{i:03d}", [], {m: float(c[i]) for m, (_, c) in columns.items()})
            for i in range(n)]
    return RunResult("base", base), RunResult("cand", cand)


def _step_down(p_obs: list[float], p_null: list[list[float]], plus_one: bool) -> list[float]:
    """Min-P step-down by its definition, one hypothesis at a time."""
    m = len(p_obs)
    order = sorted(range(m), key=lambda j: p_obs[j])
    adj = [0.0] * m
    running = 0.0
    for k, j in enumerate(order):
        rest = order[k:]
        count = sum(1 for row in p_null if min(row[i] for i in rest) <= p_obs[j])
        value = (count + 1) / (len(p_null) + 1) if plus_one else count / len(p_null)
        running = max(running, min(1.0, value))
        adj[j] = running
    return adj


def _upper_share(values: list[float], x: float, tol: float) -> float:
    return sum(1 for v in values if v >= x - tol) / len(values)


def test_westfall_young_exact_min_p_matches_enumeration() -> None:
    rng = np.random.default_rng(5)
    n = 10
    base = rng.uniform(0.1, 0.6, size=n)
    shared = rng.normal(0.06, 0.1, size=n)
    columns = {"ap": (base, base + shared),
               "ndcg": (base, base + 0.8 * shared + rng.normal(0, 0.03, size=n)),
               "rr": (base, base + rng.normal(0.0, 0.1, size=n))}
    b, c = _runs(columns)
    fam = compare_runs(b, [c], list(columns), method="randomization",
                       correction="westfall-young", seed=3)
    assert fam.differences is not None
    D = fam.differences
    patterns = list(itertools.product((1.0, -1.0), repeat=n))  # every sign pattern
    means = [[abs(sum(s * d for s, d in zip(pat, D[:, j], strict=True))) / n
              for j in range(D.shape[1])] for pat in patterns]
    tol = 1e-12
    p_null = [[_upper_share([row[j] for row in means], row[j], tol)
               for j in range(D.shape[1])] for row in means]
    p_obs = [_upper_share([row[j] for row in means], abs(math.fsum(D[:, j])) / n, tol)
             for j in range(D.shape[1])]
    assert [r.p_value for r in fam.results] == pytest.approx(p_obs, abs=1e-12)
    expected = _step_down(p_obs, p_null, plus_one=False)
    assert [r.p_adjusted for r in fam.results] == pytest.approx(expected, abs=1e-12)


def _two_tailed_share(values: list[float], x: float, tol: float) -> float:
    upper = sum(1 for v in values if v >= x - tol)
    lower = sum(1 for v in values if v <= x + tol)
    return min(1.0, 2 * min(upper, lower) / len(values))


def test_westfall_young_monte_carlo_min_p_with_auto_tests() -> None:
    """auto: a plain column (randomization), two skewed ones (randomization +
    bootstrap-t) and a binary one (t-test), each read with its own p: the sign-flip
    statistics on the shared sign flips, and for the skewed ones also the bootstrap-t
    half on the shared bootstrap resamples (both halves must reject)."""
    from evalkit.stats._kernels import bootstrap_sums

    rng = np.random.default_rng(15)
    n, B, seed = 40, 199, 17
    base = rng.uniform(0.2, 0.6, size=n)
    shift = rng.normal(0.03, 0.08, size=n)
    skew = np.where(rng.uniform(size=n) < 0.1, -0.6, rng.uniform(0.0, 0.08, size=n))
    skew2 = skew * 0.7 + np.where(rng.uniform(size=n) < 0.1, -0.3, 0.01)
    hit_b = (rng.uniform(size=n) < 0.4).astype(float)
    hit_c = np.where(rng.uniform(size=n) < 0.3, 1.0, hit_b)
    columns = {"ap": (base, base + shift), "recall": (base, np.clip(base + skew, 0, 2)),
               "recall2": (base, np.clip(base + skew2, 0, 2)), "hit": (hit_b, hit_c)}
    b, c = _runs(columns)
    fam = compare_runs(b, [c], list(columns), correction="westfall-young", n_resamples=B,
                       seed=seed, value_types={"hit": "binary"})
    both = "randomization+bootstrap-t"
    assert [r.method for r in fam.results] == ["randomization", both, both, "t-test"]
    assert fam.differences is not None
    D = fam.differences
    m = D.shape[1]
    sums, _ = draw_signflips(D, n_resamples=B, seed=seed, backend="numpy")
    tol = 1e-12
    p_obs: list[float] = []
    columns_p: list[list[float]] = []
    t_obs = [1.0] * m  # the bootstrap-t half: p = 1 for the tests without one
    t_cols = [[1.0] * B for _ in range(m)]
    for j, r in enumerate(fam.results):
        d = D[:, j]
        mean = float(np.mean(d))
        if r.method == "t-test":  # the t distribution's p of each flipped sample
            sq = float(np.sum(d * d))

            def t_p(mu: float, sq: float = sq) -> float:
                sd = math.sqrt(max(sq - n * mu * mu, 0.0) / (n - 1))
                return float(2 * stats.t.sf(abs(mu) / (sd / math.sqrt(n)), n - 1))

            p_obs.append(t_p(mean))
            columns_p.append([t_p(float(s) / n) for s in sums[:, j]])
            continue
        # the sign-flip mean, the observed data one more of the B + 1 values
        values = [abs(float(s)) / n for s in sums[:, j]] + [abs(mean)]
        p_obs.append(_upper_share(values, values[-1], tol))
        columns_p.append([_upper_share(values, v, tol) for v in values[:-1]])
        if r.method == both:  # studentized bootstrap means of the centred differences
            e = d - mean
            tot, sq_tot = bootstrap_sums(e.reshape(-1, 1), B, seed, want_squares=True,
                                         backend="numpy")
            assert sq_tot is not None
            dev = tot[:, 0] / n
            se_star = np.sqrt((sq_tot[:, 0] - n * dev * dev) / (n - 1) / n)
            t_vals = [*(dev / se_star).tolist(), mean / (np.std(d, ddof=1) / math.sqrt(n))]
            t_obs[j] = _two_tailed_share(t_vals, t_vals[-1], 1e-9)
            t_cols[j] = [_two_tailed_share(t_vals, v, 1e-9) for v in t_vals[:-1]]
    flip = _step_down(p_obs, [list(row) for row in zip(*columns_p, strict=True)], True)
    boot = _step_down(t_obs, [list(row) for row in zip(*t_cols, strict=True)], True)
    raw = [r.p_value for r in fam.results]
    assert raw[0] == pytest.approx(p_obs[0], abs=1e-12)  # the test's own p
    for j in (1, 2):  # the larger of its two halves
        assert raw[j] == pytest.approx(max(p_obs[j], t_obs[j]), abs=1e-12)
    expected = [max(flip[j], boot[j] if fam.results[j].method == both else 0.0, raw[j])
                for j in range(m)]
    assert [r.p_adjusted for r in fam.results] == pytest.approx(expected, abs=1e-9)
    # the bootstrap-t half decides a result here
    assert any(boot[j] > max(flip[j], raw[j]) + 1e-9 for j in (1, 2))


def test_westfall_young_keeps_what_holm_keeps_on_skewed_differences() -> None:
    """Skewed differences with one query lost entirely, where the sign-flip mean's p
    (0.01) and the studentized mean disagree: the adjusted p adjusts the printed raw p,
    so what Holm finds significant stays significant (a studentized max-T gave 0.155)."""
    rng = np.random.default_rng(2)
    n = 90
    base = rng.uniform(0.3, 0.7, size=n)
    gain = np.abs(rng.normal(0.03, 0.03, size=n))
    gain[7] = -1.0
    columns = {"skewed": (base, base + gain)}
    for k in range(4):
        columns[f"m{k}"] = (base, base + rng.normal(0.02 * (k % 3), 0.1, size=n))
    b, c = _runs(columns)
    fam = compare_runs(b, [c], list(columns), method="randomization",
                       correction="westfall-young", n_resamples=2000, seed=1)
    bound = holm([r.p_value for r in fam.results])
    for r, h in zip(fam.results, bound, strict=True):
        assert r.p_adjusted is not None and r.p_value <= r.p_adjusted <= h
    skewed = fam.get("cand", "base", "skewed")
    assert skewed.p_value == pytest.approx(0.01, abs=0.002)
    assert bound[0] < 0.05 and skewed.p_adjusted is not None and skewed.p_adjusted < 0.05
    assert not any("exceeds Holm" in n for n in fam.notes)


def test_westfall_young_says_when_it_exceeds_holm() -> None:
    from evalkit.stats.family import above_holm_note
    from evalkit.stats.results import PairedTestResult

    rng = np.random.default_rng(4)
    b, c = _runs({"ap": (rng.uniform(size=20), rng.uniform(size=20))})
    one = compare_runs(b, [c], "ap", correction="westfall-young", n_resamples=99).results[0]
    import dataclasses

    rows: list[PairedTestResult] = [
        dataclasses.replace(one, metric="ap", p_value=0.01, p_adjusted=0.05),
        dataclasses.replace(one, metric="hit", p_value=0.2, p_adjusted=0.2)]
    note = above_holm_note(rows)
    assert note is not None and "for 1 test:" in note and "ap (cand vs base: 0.05 > 0.02)" in note
    assert above_holm_note([dataclasses.replace(r, correction="holm") for r in rows]) is None


@pytest.mark.parametrize("method", ["randomization", "bootstrap", "bootstrap-t",
                                    "randomization+bootstrap-t", "auto"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_westfall_young_never_above_holm_with_resampling_tests(method: str, seed: int) -> None:
    """Each p read off its own resamples is at most c for at most a share c of them, so
    min-P's count at step j is at most (m - j + 1) p_(j): never above Holm's."""
    rng = np.random.default_rng(seed)
    n = 12 if seed == 0 else 40  # seed 0: the exact sign-flip enumeration
    base = rng.uniform(0.2, 0.6, size=n)
    shared = rng.normal(0.02, 0.06, size=n)
    columns = {f"m{k}": (base, base + (0.3 + 0.2 * k) * shared + rng.normal(
        0.01 * k, 0.05, size=n) + np.where(rng.uniform(size=n) < 0.08, -0.4, 0.0))
        for k in range(5)}
    b, c = _runs(columns)
    fam = compare_runs(b, [c], list(columns), method=method, correction="westfall-young",
                       n_resamples=499, seed=seed)
    bound = holm([r.p_value for r in fam.results])
    for r, h in zip(fam.results, bound, strict=True):
        assert r.p_adjusted is not None and r.p_value <= r.p_adjusted <= h + 1e-12
