"""SQuAD v1.1's answer normalisation, exact match and token F1.

The definitions of the official SQuAD v1.1 evaluation script (Rajpurkar et al., 2016,
"SQuAD: 100,000+ Questions for Machine Comprehension of Text", ``evaluate-v1.1.py``):

* normalisation: lower case; every ASCII punctuation character (:data:`string.punctuation`)
  removed; the words ``a``, ``an`` and ``the`` removed; runs of whitespace collapsed to one
  space, none at the ends;
* exact match: 1 when the two normalised texts are equal, else 0;
* F1: over the whitespace tokens of the normalised texts, ``common`` the size of their
  multiset intersection; 0 when ``common`` is 0, else ``2PR / (P + R)`` with
  ``P = common / len(prediction)`` and ``R = common / len(reference)``;
* a case with several acceptable answers scores the maximum over them.

tests/data/squad_v1.1_expected.json holds the values the official script computes on the
test inputs (see plugins/evalkit-text/tests/data/README.md).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """``text`` lower-cased, without ASCII punctuation and the articles a/an/the, its
    whitespace collapsed (SQuAD v1.1's ``normalize_answer``)."""
    lowered = text.lower()
    kept = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", kept).split())


def exact_match_score(prediction: str, reference: str) -> float:
    """1.0 when the normalised texts are equal, else 0.0."""
    return 1.0 if normalize_answer(prediction) == normalize_answer(reference) else 0.0


def f1_score(prediction: str, reference: str) -> float:
    """SQuAD's token F1 of ``prediction`` against ``reference``, in [0, 1]."""
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision = common / len(predicted)
    recall = common / len(expected)
    return (2 * precision * recall) / (precision + recall)


def best_exact_match(prediction: str, references: Iterable[str]) -> float:
    """The maximum of :func:`exact_match_score` over ``references``.

    Raises:
        ValueError: ``references`` is empty.
    """
    return max(exact_match_score(prediction, r) for r in _nonempty(references))


def best_f1(prediction: str, references: Iterable[str]) -> float:
    """The maximum of :func:`f1_score` over ``references``.

    Raises:
        ValueError: ``references`` is empty.
    """
    return max(f1_score(prediction, r) for r in _nonempty(references))


def _nonempty(references: Iterable[str]) -> list[str]:
    refs = list(references)
    if not refs:
        raise ValueError("no reference answers to compare with")
    return refs
