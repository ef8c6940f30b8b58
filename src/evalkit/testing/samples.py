"""Sample inputs for a plugin's tests: ``(response, case)`` pairs and rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse

if TYPE_CHECKING:
    from evalkit.data.rows import CaseResult



Pair = tuple[TargetResponse, GoldenCase]


# ------------------------------------------------------------------ sample inputs
def sample_pairs() -> list[Pair]:
    """A few ``(response, case)`` pairs covering retrieval and text metrics.

    Graded judgments with a zero and a negative label, a case with no relevant document,
    an expected list of ids, text answers and responses with latency, cost and token
    metadata (``cost_usd``, ``tokens_in``, ``tokens_out``).
    """
    c1 = GoldenCase(
        id="q1", query="Which element has atomic number 1?",
        expected="Hydrogen has atomic number 1.",
        relevance={"d1": 2, "d2": 1, "d3": 0, "d4": -1}, relevant=frozenset({"d1", "d2"}),
    )
    c2 = GoldenCase(id="q2", query="Who proved the conjecture?", expected="Nobody yet.",
                    relevance={"d7": 0}, relevant=frozenset())
    c3 = GoldenCase(id="q3", query="Which documents mention neutrons?",
                    expected=["d9", "d1"], relevance={"d9": 1, "d1": 1},
                    relevant=frozenset({"d9", "d1"}))
    return [
        (TargetResponse(ranked_ids=("d3", "d1", "d5", "d2", "d4"), text="Hydrogen.",
                        latency_ms=12.5, meta={"cost_usd": 0.001, "tokens": 20,
                                               "tokens_in": 15, "tokens_out": 5}), c1),
        (TargetResponse(ranked_ids=("d7", "d8"), text="I do not know.", latency_ms=30.0,
                        meta={"cost_usd": 0.002, "tokens": 35, "tokens_in": 28,
                              "tokens_out": 7}), c2),
        (TargetResponse(ranked_ids=("d1", "d9"), text="d1 and d9", latency_ms=7.0,
                        meta={"cost_usd": 0.0, "tokens_in": 12, "tokens_out": 4}), c3),
    ]


def sample_rows(pairs: Sequence[Pair] | None = None) -> list[CaseResult]:
    """``CaseResult`` rows built from ``pairs`` (default :func:`sample_pairs`), each with
    the details an LLM judge records on a row (a grade, its tokens and cost, one cached)."""
    from evalkit.data.rows import CaseResult

    return [
        CaseResult(case_id=case.id, response=resp, metrics={"score": float(i) / 2},
                   latency_ms=resp.latency_ms,
                   details={"judge": {"score": 3, "cached": i == 1, "input_tokens": 100,
                                      "output_tokens": 20, "cost_usd": 0.0002}})
        for i, (resp, case) in enumerate(pairs or sample_pairs())
    ]
