"""ROUGE-L: the F-measure of the longest common subsequence of tokens.

Lin (2004), "ROUGE: A Package for Automatic Evaluation of Summaries", section 3.1, with
beta = 1, as Google's ``rouge-score`` package computes ``rougeL`` with its default
tokenizer (``rouge_score.tokenize.tokenize`` without a stemmer):

* tokens: the text lower-cased, every run of characters other than ``a-z`` and ``0-9``
  replaced by a space, split on whitespace (so letters outside ASCII are dropped, as
  there);
* ``P = LCS / len(prediction tokens)``, ``R = LCS / len(reference tokens)``,
  ``F = 2PR / (P + R)``; 0 when either text has no token, or when ``P + R`` is 0;
* several references: the maximum F over them (``RougeScorer.score_multi``).

The tests compare every value with ``rouge-score`` itself (a dev-extra dependency).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """``text`` as rouge-score's default tokenizer splits it (see the module docstring)."""
    return _NON_ALPHANUMERIC.sub(" ", text.lower()).split()


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b`` (dynamic
    programming, one row at a time: O(len(a) * len(b)) time, O(len(b)) memory)."""
    if len(b) > len(a):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, reference: str) -> float:
    """The ROUGE-L F-measure of ``prediction`` against ``reference``, in [0, 1]."""
    predicted, expected = tokenize(prediction), tokenize(reference)
    if not predicted or not expected:
        return 0.0
    common = lcs_length(expected, predicted)
    precision, recall = common / len(predicted), common / len(expected)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def best_rouge_l(prediction: str, references: Iterable[str]) -> float:
    """The maximum of :func:`rouge_l` over ``references``.

    Raises:
        ValueError: ``references`` is empty.
    """
    refs = list(references)
    if not refs:
        raise ValueError("no reference answers to compare with")
    return max(rouge_l(prediction, r) for r in refs)
