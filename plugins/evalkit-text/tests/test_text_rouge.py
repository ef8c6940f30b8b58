"""rouge_l agrees with Google's rouge-score (``RougeScorer(["rougeL"])``, default
tokenizer, no stemmer; dev extra) on texts that exercise its tokenizer, and with a hand
calculation."""

from __future__ import annotations

import pytest
from evalkit_text.rouge import lcs_length, tokenize

from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.plugins.default import resolve as resolve_any

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

PAIRS = [
    ("the cat sat on the mat", "the cat was on the mat"),
    ("police killed the gunman", "the gunman was shot down by police"),
    ("The quick brown fox jumps over the lazy dog.", "A quick brown dog jumps over a lazy fox!"),
    ("Refunds are accepted within 30 days of purchase.", "You have 30 days to ask for a refund."),
    ("state-of-the-art models, e.g. GPT-4", "state of the art models such as gpt 4"),
    ("Caf\u00e9 M\u00fcller serves cr\u00e8me br\u00fbl\u00e9e", "cafe muller serves creme brulee"),
    ("\u201cquoted\u201d \u2014 dashes\u2026 and tabs\there", "quoted dashes and tabs here"),
    ("", "an empty prediction"),
    ("an empty reference", ""),
    ("!!! ???", "only punctuation"),
    ("a a a b b", "b a b a"),
    ("1,000,000 USD in 2024", "1000000 usd in 2024"),
    ("x " * 60 + "y", "y " + "x " * 40),
    ("\u0130stanbul and \u00dftra\u00dfe", "istanbul and strasse"),
]


def resolve(name: str) -> MetricSpec:
    spec = resolve_any(name)
    assert isinstance(spec, MetricSpec)
    return spec


def ours(prediction: str, answers: list[str]) -> float:
    spec = resolve("rouge_l")
    value = spec.fn(TargetResponse(text=prediction), GoldenCase("c", "q", answers=answers))
    assert isinstance(value, float)
    return value


@pytest.mark.parametrize(("prediction", "reference"), PAIRS)
def test_equals_rouge_score_on_one_reference(prediction: str, reference: str) -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    expected = scorer.score(reference, prediction)["rougeL"].fmeasure
    if reference == "":  # a case has no empty answer: compare the function itself
        from evalkit_text.rouge import rouge_l
        assert rouge_l(prediction, reference) == expected
        return
    assert ours(prediction, [reference]) == expected  # the same float, not only close


def test_the_tokens_are_rouge_scores_default_tokens() -> None:
    from rouge_score import tokenizers

    default = tokenizers.DefaultTokenizer(use_stemmer=False)
    for prediction, reference in PAIRS:
        for text in (prediction, reference):
            assert tokenize(text) == default.tokenize(text)


def test_several_answers_take_rouge_scores_score_multi() -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    prediction = "the refund window is thirty days"
    answers = ["30 days", "thirty days from delivery", "the window for a refund is 30 days"]
    expected = scorer.score_multi(answers, prediction)["rougeL"].fmeasure
    assert ours(prediction, answers) == expected


def test_by_hand() -> None:
    # "the cat sat" vs "the cat": LCS 2, P = 2/3 (prediction has 3 tokens), R = 1, F = 0.8
    assert ours("the cat sat", ["the cat"]) == pytest.approx(0.8)
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4  # CLRS's example
