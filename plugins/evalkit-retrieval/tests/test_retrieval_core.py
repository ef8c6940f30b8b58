"""The reference definitions in evalkit_retrieval.core, checked against hand calculations."""

from __future__ import annotations

import math

import pytest
from evalkit_retrieval import core

RANKED = ["a", "b", "c", "d", "e"]
RELEVANT = {"b", "d", "x"}  # x is relevant but never retrieved: R = 3


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 0.5), (4, 0.5), (5, 0.4), (10, 0.2)])
def test_precision_divides_by_k(k: int, expected: float) -> None:
    assert core.precision_at_k(RANKED, RELEVANT, k) == pytest.approx(expected)


@pytest.mark.parametrize(("k", "expected"), [(1, 0.0), (2, 1 / 3), (5, 2 / 3), (100, 2 / 3)])
def test_recall_divides_by_all_relevant(k: int, expected: float) -> None:
    assert core.recall_at_k(RANKED, RELEVANT, k) == pytest.approx(expected)


def test_success_rr_ap_rprec_by_hand() -> None:
    assert core.success_at_k(RANKED, RELEVANT, 1) == 0.0
    assert core.success_at_k(RANKED, RELEVANT, 2) == 1.0
    assert core.reciprocal_rank(RANKED, RELEVANT) == 0.5
    assert core.rr_at_k(RANKED, RELEVANT, 1) == 0.0
    assert core.rr_at_k(RANKED, RELEVANT, 2) == 0.5
    # AP: precision 1/2 at b and 2/4 at d, over R = 3
    assert core.average_precision(RANKED, RELEVANT) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert core.ap_at_k(RANKED, RELEVANT, 2) == pytest.approx((1 / 2) / 3)
    assert core.ap_at_k(RANKED, RELEVANT, 3) == pytest.approx((1 / 2) / 3)
    # R-precision: one relevant document among the top R = 3
    assert core.r_precision(RANKED, RELEVANT) == pytest.approx(1 / 3)


def test_graded_ndcg_by_hand() -> None:
    labels = {"a": 3, "b": 0, "c": 1, "z": 2}
    dcg = 3 / math.log2(2) + 1 / math.log2(4)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert core.ndcg(["a", "b", "c"], labels) == pytest.approx(dcg / ideal)
    assert core.ndcg_at_k(["a", "b", "c"], labels, 1) == pytest.approx(1.0)
    assert core.ndcg_at_k(["a", "b", "c"], labels, 2) == pytest.approx(
        3 / (3 + 2 / math.log2(3)))
    assert core.dcg_at_k(["a", "b", "c"], labels, None) == pytest.approx(3.5)


def test_binary_ndcg_from_a_set() -> None:
    # gains 1 at ranks 2 and 4; ideal: ranks 1, 2, 3 (R = 3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / 2)
    assert core.ndcg_at_k(RANKED, RELEVANT, 5) == pytest.approx(expected)


def test_graded_mapping_counts_positive_labels_as_relevant_for_binary_measures() -> None:
    labels = {"a": 0, "b": 2, "c": -1, "d": 1}
    assert core.precision_at_k(["a", "b", "c", "d"], labels, 4) == 0.5
    assert core.recall_at_k(["a", "b"], labels, 2) == 0.5


def test_no_relevant_document_scores_zero_everywhere() -> None:
    for fn in (core.precision_at_k, core.recall_at_k, core.success_at_k, core.rr_at_k,
               core.ap_at_k, core.ndcg_at_k):
        assert fn(RANKED, set(), 3) == 0.0
        assert fn([], set(), 3) == 0.0
    assert core.ndcg(RANKED, {"a": 0, "b": -1}) == 0.0
    assert core.average_precision([], {"a"}) == 0.0
    assert core.r_precision(RANKED, set()) == 0.0
    assert core.reciprocal_rank([], {"a"}) == 0.0


@pytest.mark.parametrize("fn", [core.precision_at_k, core.recall_at_k, core.success_at_k,
                                core.rr_at_k, core.ap_at_k, core.ndcg_at_k])
def test_duplicates_and_bad_cutoffs_raise(fn: object) -> None:
    with pytest.raises(ValueError, match=r"'b' appears twice.*ranks 2 and 3"):
        fn(["a", "b", "b"], {"b"}, 3)  # type: ignore[operator]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            fn(["a"], {"a"}, bad)  # type: ignore[operator]


def test_seed_import_path_resolves_to_the_plugin() -> None:
    from evalkit.metrics.core import ndcg_at_k, recall_at_k

    assert recall_at_k is core.recall_at_k
    assert ndcg_at_k is core.ndcg_at_k
    assert recall_at_k(["d1", "d2"], {"d2"}, 1) == 0.0
