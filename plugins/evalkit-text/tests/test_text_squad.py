"""exact_match and f1 agree with the official SQuAD v1.1 evaluation script on every case
of data/squad_v1.1_expected.json (values the script printed; see data/README.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from evalkit_text.squad import f1_score, normalize_answer

from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.plugins.default import resolve as resolve_any

EXPECTED: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "squad_v1.1_expected.json").read_text(encoding="utf-8"))
CASES = EXPECTED["cases"]


def resolve(name: str) -> MetricSpec:
    spec = resolve_any(name)
    assert isinstance(spec, MetricSpec)
    return spec


def score(metric: str, prediction: str, answers: list[str]) -> float:
    spec = resolve(metric)
    value = spec.fn(TargetResponse(text=prediction), GoldenCase("c", "q", answers=answers))
    assert isinstance(value, float)
    return value


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_case_equals_the_official_script(case: dict[str, Any]) -> None:
    em = score("exact_match", case["prediction"], case["answers"])
    f1 = score("f1", case["prediction"], case["answers"])
    assert 100.0 * em == case["exact_match_percent"]
    assert 100.0 * f1 == pytest.approx(case["f1_percent"], rel=1e-12, abs=1e-12)


def test_the_means_equal_the_script_on_all_cases() -> None:
    em = [score("exact_match", c["prediction"], c["answers"]) for c in CASES]
    f1 = [score("f1", c["prediction"], c["answers"]) for c in CASES]
    whole = EXPECTED["all_cases"]
    assert 100.0 * math.fsum(em) / len(em) == pytest.approx(whole["exact_match"], rel=1e-12)
    assert 100.0 * math.fsum(f1) / len(f1) == pytest.approx(whole["f1"], rel=1e-12)


def test_the_inputs_cover_the_normalisation_rules() -> None:
    ids = {c["id"] for c in CASES}
    assert {"case_and_article", "punctuation", "articles_inside_words", "whitespace",
            "max_over_answers", "repeated_tokens", "empty_prediction"} <= ids
    # a few cases where the script gives a partial value, so F1 is tested off 0 and 1
    assert sum(0 < c["f1_percent"] < 100 for c in CASES) >= 5


def test_normalisation_by_hand() -> None:
    assert normalize_answer("  The  Denver-Broncos, an  NFL team! ") == "denverbroncos nfl team"
    # articles only as whole words; non-ASCII punctuation is kept, as the script keeps it
    assert normalize_answer("Theodore x\u201cb\u201d") == "theodore x\u201cb\u201d"
    # F1 by hand: "cat sat mat" vs "cat on mat": common 2, P = R = 2/3
    assert f1_score("the cat sat mat", "cat on the mat") == pytest.approx(2 / 3)


def test_a_case_with_a_text_expected_and_no_answers_is_compared_with_it() -> None:
    spec = resolve("exact_match")
    case = GoldenCase("c", "q", expected="Denver Broncos")
    assert spec.fn(TargetResponse(text="the denver broncos."), case) == 1.0
    # answers win over expected when both are given
    both = GoldenCase("c", "q", expected="Denver Broncos", answers=["Carolina"])
    assert spec.fn(TargetResponse(text="Denver Broncos"), both) == 0.0
