"""Which text metrics the async runner may score on its event loop (``nonblocking``):
the one-pass ones (exact_match, f1, contains, json_valid), never regex (a search may take
its 1 s timeout), rouge_l (an LCS table, quadratic) or json_schema (a schema of any
size); and a nonblocking run scores a long response as correctly as a short one, in a
scoring thread (tests/test_runner_async_loop_scoring.py checks where)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget
from evalkit.execute.async_executor import ON_LOOP_MAX_CHARS
from evalkit.execute.scoring import resolve_metrics
from evalkit.execute.target_runner import evaluate


def test_the_one_pass_metrics_are_nonblocking_and_the_others_are_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.json").write_text(json.dumps({"type": "object"}))
    names = ["exact_match", "em", "f1", "contains(text=x)", "contains(ignore_case=True,text=x)",
             "json_valid", "regex(pattern=x)", "rouge_l", "json_schema(schema=s.json)"]
    flags = {name: resolve_metrics([name])[0].nonblocking for name in names}
    assert flags == {"exact_match": True, "em": True, "f1": True, "contains(text=x)": True,
                     "contains(ignore_case=True,text=x)": True, "json_valid": True,
                     "regex(pattern=x)": False, "rouge_l": False,
                     "json_schema(schema=s.json)": False}


def test_an_async_run_scores_short_and_long_responses_alike() -> None:
    # f1 by hand: the answer "paris france" (2 tokens) against a response of the two
    # words and n - 2 other tokens: P = 2 / n, R = 1, F1 = 2PR / (P + R) = 4 / (n + 2)
    long_n = ON_LOOP_MAX_CHARS  # "w " * n is 2n characters: past the loop's bound
    texts = {"short": "paris france w w", "long": "paris france" + " w" * (long_n - 2)}

    async def answer(case: GoldenCase) -> str:
        return texts[case.id]

    cases = [GoldenCase(q, "q", answers=["Paris, France"]) for q in texts]
    run = evaluate(CallableTarget(answer), cases, ["f1", "exact_match",
                                                   "contains(text=france)", "json_valid"],
                   progress=False, max_concurrency=2)
    assert run.scores("f1") == pytest.approx({"short": 4 / 6, "long": 4 / (long_n + 2)})
    assert run.scores("exact_match") == {"short": 0.0, "long": 0.0}
    assert run.scores("contains(text=france)") == {"short": 1.0, "long": 1.0}
    assert run.scores("json_valid") == {"short": 0.0, "long": 0.0}
