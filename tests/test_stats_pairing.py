"""Pairing two runs by id (:mod:`evalkit.stats.pairing`): the ids' order is Python's
``sorted`` (the independent reference here) whichever way it is computed, and the
values follow their ids."""

from __future__ import annotations

import random
import string
from typing import Any

import numpy as np
import pytest

from evalkit.stats import paired_bootstrap, paired_test
from evalkit.stats.pairing import (
    ID_SORT_MAX_BYTES,
    ID_SORT_MIN,
    align,
    code_point_sort,
    id_sort,
    rounding_tolerance,
    run_scores,
    snap_differences,
)

ADVERSARIAL: dict[str, list[str]] = {
    "prefixes of each other": ["", "a", "ab", "abc", "abcd", "abcdefgh", "abcdefghi",
                               "abcdefghij", "b", "ba", "aa", "a b", "a!"],
    "digits vs letters": ["1", "10", "100", "2", "9", "09", "A", "Z", "a", "z", "_", "~",
                          " ", "-1", "1a", "a1", "Q1", "q1", "q10", "q2"],
    "one length": ["q0001", "q0010", "q0100", "q1000", "Q0001", "q000a", "p9999"],
    "one length, a multiple of 8": ["abcdefgh", "abcdefgi", "bbcdefgh", "abcdefgg",
                                    "Abcdefgh", "abcdefg~"],
    "latin-1": ["é", "e", "ez", "éa", "ÿ", "z", "\x7f", "\x80", "Ü", "u"],
    "basic plane": ["日本", "日", "中", "中文", "Ω", "ω", "z", "\uffff", "\ue000", "ﬀ"],
    "astral": ["😀", "😀a", "😁", "𝔘", "\U0010ffff", "\U00010000", "\uffff", "a😀", "a",
               "\ud7ff"],
    # Python orders by code point: a lone surrogate (U+D800..DFFF) sorts before U+E000
    # and the astral planes (UTF-16 order would put it after U+E000)
    "lone surrogates": ["\ud800", "\udfff", "\ue000", "\U00010000", "\ud800a", "a\udc80",
                        "a", "b"],
    "one id": ["only"],
    "one empty id": [""],
    "no ids": [],
}


def shuffled(ids: list[str], seed: int) -> list[str]:
    out = list(ids)
    random.Random(seed).shuffle(out)
    return out


def sorted_by_numpy(ids: list[str]) -> list[str]:
    sort = code_point_sort(ids)
    assert sort is not None
    got = list(sort.ids(ids))
    assert [ids[i] for i in sort.positions.tolist()] == got
    return got


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_code_point_order_is_pythons_on_adversarial_ids(case: str, seed: int) -> None:
    ids = shuffled(ADVERSARIAL[case], seed)
    assert sorted_by_numpy(ids) == sorted(ids)


def random_ids(rng: random.Random, n: int, alphabet: str, longest: int) -> list[str]:
    ids: set[str] = set()
    while len(ids) < n:
        ids.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))))
    return shuffled(sorted(ids), rng.randint(0, 1 << 30))


@pytest.mark.parametrize("alphabet", [
    "ab", string.digits, string.ascii_letters + string.digits + "-_./",
    "aé\xff", "aZ日\uffff", "a😀\U0010ffff\ud800\ue000",
])
@pytest.mark.parametrize("longest", [3, 9, 40])
def test_code_point_order_is_pythons_on_random_ids(alphabet: str, longest: int) -> None:
    rng = random.Random(sum(map(ord, alphabet)) * 100 + longest)
    top = max(map(ord, alphabet))
    longest = min(longest, ID_SORT_MAX_BYTES // (1 if top < 256 else 2 if top < 65536 else 4))
    n = min(2000, len(alphabet) ** longest // 2 + 1)
    ids = random_ids(rng, n, alphabet, longest)
    assert sorted_by_numpy(ids) == sorted(ids)


def test_ids_sharing_long_prefixes_are_told_apart_word_by_word() -> None:
    # long varying prefixes: rows tie on their first words and differ only further on
    prefixes = ["collection-a/passages/", "collection-b/passages/", "collection-a/passage/"]
    ids = [f"{p}doc{i % 37:04d}/part{i:05d}" for p in prefixes for i in range(700)]
    ids += [p + "doc" for p in prefixes]
    ids = shuffled(ids, 5)
    assert sorted_by_numpy(ids) == sorted(ids)


def test_ids_a_numpy_sort_does_not_take_are_left_to_python() -> None:
    assert code_point_sort(["a", "b\0", "c"]) is None  # a NUL inside an id
    for char, size in (("b", 1), ("é", 1), ("日", 2), ("😀", 4)):
        longest = ID_SORT_MAX_BYTES // size  # code points
        assert code_point_sort(["a", char * (longest + 1)]) is None
        assert code_point_sort(["a", char * longest]) is not None
    ids = [f"q{i:05d}" for i in range(ID_SORT_MIN)]
    assert id_sort(ids[:-1]) is None  # too few for numpy to pay
    assert id_sort(ids) is None  # already in order: Python's sort is adaptive
    assert id_sort(shuffled(ids, 0)) is not None


def runs(n: int, seed: int) -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]  # varying lengths: "q10" sorts before "q2"
    return (dict(zip(ids, rng.random(n).tolist(), strict=True)),
            dict(zip(ids, rng.random(n).tolist(), strict=True)))


def reorder(run: dict[str, float], seed: int) -> dict[str, float]:
    return {k: run[k] for k in shuffled(list(run), seed)}


@pytest.mark.parametrize("n", [3, ID_SORT_MIN + 1, 5000])
def test_align_pairs_by_sorted_id_in_every_insertion_order(n: int) -> None:
    a, b = runs(n, 1)
    ids = tuple(sorted(a))
    expect_a, expect_b = [a[i] for i in ids], [b[i] for i in ids]
    for x, y in [(a, b), (reorder(a, 1), reorder(b, 2)), (reorder(a, 3), b),
                 (a, reorder(b, 4)), (reorder(a, 5), reorder(b, 5))]:
        p = align(x, y, "m")
        assert p.ids == ids
        assert p.a.tolist() == expect_a and p.b.tolist() == expect_b


def test_a_run_in_the_same_order_reuses_the_sort_and_the_ids() -> None:
    a, b = runs(3000, 2)
    a, b = reorder(a, 6), reorder(b, 6)
    sa = run_scores(a, "m", "a")
    assert sa.sort is not None  # sorted by numpy
    sb = run_scores(b, "m", "b", like=sa)
    assert sb.sort is sa.sort and sb.ids is sa.ids
    sc = run_scores(reorder(b, 7), "m", "c", like=sa)  # the same ids, another order
    assert sc.sort is not sa.sort and sc.ids is sa.ids
    assert sc.values.tolist() == sb.values.tolist() == [b[i] for i in sorted(b)]


def test_different_ids_are_named_whichever_way_they_were_sorted() -> None:
    a, b = runs(3000, 3)
    b = reorder(b, 8)
    del b["q17"]
    b["q17x"] = 0.5
    with pytest.raises(ValueError, match=r"1 only in 'a' \('q17'\); 1 only in 'b' \('q17x'\)"):
        align(reorder(a, 9), b, "m")


def test_random_streams_do_not_depend_on_insertion_order() -> None:
    a, b = runs(3000, 4)
    x, y = reorder(a, 10), reorder(b, 11)
    r1 = paired_bootstrap(a, b, "m", n_resamples=200, seed=3)
    r2 = paired_bootstrap(x, y, "m", n_resamples=200, seed=3)
    assert (r1.observed, r1.ci_low, r1.ci_high, r1.p_value) == (
        r2.observed, r2.ci_low, r2.ci_high, r2.p_value)
    t1 = paired_test(a, b, "m", n_resamples=200, seed=3)
    t2 = paired_test(x, y, "m", n_resamples=200, seed=3)
    assert (t1.observed, t1.ci_low, t1.ci_high, t1.p_value) == (
        t2.observed, t2.ci_low, t2.ci_high, t2.p_value)


@pytest.mark.parametrize("n", [3, ID_SORT_MIN + 1])
def test_ids_that_are_not_str_are_paired_by_their_str(n: int) -> None:
    a, b = runs(n, 5)
    shuffled_ids = shuffled(list(a), 12)
    # the same ids given as int keys on one side (mixed with str on the other)
    numbered: dict[Any, float] = {int(k[1:]): a[k] for k in shuffled_ids}
    mixed: dict[Any, float] = {(int(k[1:]) if i % 2 else k[1:]): b[k]
                               for i, k in enumerate(shuffled_ids)}
    p = align(numbered, mixed, "m")
    ids = tuple(sorted(k[1:] for k in a))
    assert p.ids == ids and all(type(i) is str for i in p.ids)
    assert p.a.tolist() == [a["q" + i] for i in ids]
    assert p.b.tolist() == [b["q" + i] for i in ids]


# ------------------------------------------------------------ rounding (snap_differences)
def _large_scores(base: float) -> tuple[np.ndarray, dict[str, float], dict[str, float]]:
    """30 real differences of about 0.3 (3 decimals) on scores near ``base``."""
    rng = np.random.default_rng(3)
    d = np.round(rng.normal(0.3, 0.2, 30), 3)
    a = {f"q{i:02d}": float(base + d[i]) for i in range(30)}
    b = {f"q{i:02d}": float(base) for i in range(30)}
    return np.array([a[k] - b[k] for k in a]), a, b


def test_differences_of_large_scores_keep_their_mean_and_do_not_depend_on_ids() -> None:
    from scipy import stats

    true, a, b = _large_scores(1e11)  # float spacing 1.5e-5; tolerance 2**(37-40) = 0.125
    r = paired_test(a, b, "m", method="t-test")
    # only -0.211 and -0.104 (0.107 apart, isolated) lie within the tolerance: both take
    # their midpoint; every other difference keeps its value
    snapped = true.copy()
    pair = np.isin(np.round(true, 3), [-0.211, -0.104])
    assert pair.sum() == 2
    snapped[pair] = 0.5 * true[pair].min() + 0.5 * true[pair].max()
    ref = stats.ttest_rel(snapped, np.zeros(30))
    assert r.observed == pytest.approx(true.mean(), rel=1e-12)  # was 0.6553 (true 0.3116)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    assert r.p_value == pytest.approx(stats.ttest_rel(true, np.zeros(30)).pvalue, rel=0.05)
    assert (r.ci_low, r.ci_high) == pytest.approx(
        tuple(ref.confidence_interval(0.95)), rel=1e-8)
    assert r.ci_low < true.mean() < r.ci_high
    # the same data under reversed ids (and in reversed order): the same result
    names = list(a)
    rev_a = {names[29 - i]: a[names[i]] for i in range(30)}
    rev_b = {names[29 - i]: b[names[i]] for i in range(30)}
    for method in ("t-test", "randomization"):
        x = paired_test(a, b, "m", method=method)
        y = paired_test(rev_a, rev_b, "m", method=method)
        assert x.effect is not None and y.effect is not None
        assert (y.observed, y.effect.sd_diff) == (x.observed, x.effect.sd_diff)
    assert paired_test(rev_a, rev_b, "m", method="t-test").p_value == r.p_value


def test_one_query_with_huge_scores_leaves_the_others_differences_alone() -> None:
    from scipy import stats

    true, a, b = _large_scores(0.0)
    # q00's difference of 1 at 1e13 is within its own rounding (tolerance 2**(44-40) = 16,
    # half of it 8): a tie; the 29 others (scores below 1) keep theirs
    a["q00"], b["q00"] = 1e13, 1e13 - 1
    r = paired_test(a, b, "m", method="t-test")  # was observed 0, p 1, 30 ties
    expected = true.copy()
    expected[0] = 0.0
    assert r.effect is not None
    assert r.effect.ties == 1 and r.effect.wins + r.effect.losses == 29
    assert r.p_value == pytest.approx(stats.ttest_rel(expected, np.zeros(30)).pvalue,
                                      rel=1e-8)
    assert r.observed == pytest.approx(expected.mean(), rel=1e-12)
    # a difference beyond its query's rounding (64 > 8) is a difference like any other
    b["q00"] = 1e13 - 64
    r = paired_test(a, b, "m", method="t-test")
    assert r.p_value == pytest.approx(stats.ttest_rel(list(a.values()),
                                                      list(b.values())).pvalue, rel=1e-8)


def test_snapping_moves_no_difference_beyond_its_own_tolerance() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        base = 10.0 ** rng.uniform(-3, 13, n)
        a = base + np.round(rng.normal(0, 0.2, n), int(rng.integers(1, 6)))
        b = base.copy()
        d = a - b
        snapped = snap_differences(d, a, b)
        tol = rounding_tolerance(a, b)
        assert np.all(np.abs(snapped - d) <= tol)
        perm = rng.permutation(n)
        assert np.array_equal(snap_differences(d[perm], a[perm], b[perm]), snapped[perm])
        assert np.array_equal(snap_differences(-d, b, a), -snapped)


def test_differences_equal_up_to_rounding_merge_and_rounding_of_zero_is_zero() -> None:
    a = np.array([0.7, 0.4, 0.9, 0.3, 0.6, 0.5], dtype=np.float64)
    b = np.array([0.5, 0.2, 0.7, 0.1, 0.4, 0.5 + 2**-50], dtype=np.float64)
    snapped = snap_differences(a - b, a, b)
    assert len(set((a - b)[:5].tolist())) > 1
    assert len(set(snapped[:5].tolist())) == 1 and snapped[5] == 0.0
    assert abs(snapped[0] - 0.2) <= 2**-41
    # a chain of close differences spread beyond the tolerance is real: kept as it is
    step = 2.0**-40  # scores in (0.5, 1]
    d = 0.5 + np.arange(5, dtype=np.float64) * (0.3 * step)  # gaps 0.3 step, ends 1.2
    assert np.array_equal(snap_differences(d, d + 0.25, np.full(5, 0.25)), d)
