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
    run_scores,
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
