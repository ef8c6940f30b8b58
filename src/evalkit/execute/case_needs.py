"""What a metric needs of a case, checked before anything is scored.

A metric record declares the case fields it reads (``MetricSpec.needs``:
``"relevance"``, ``"answers"``, ``"context:KEY"``; :data:`evalkit.core.specs.CASE_NEEDS`).
:func:`require_case_fields` refuses a case that lacks one, naming the metrics and the
cases, instead of letting the metric score it 0 (or raise on every case) and the run
average that in. Every path calls it before scoring: :func:`evalkit.execute.scoring.score_columns`
(``run()``, ``evaluate_run()``, ``evalkit eval``), and the target runner and ``rescore``
before any call or write (``evaluate()``, ``evalkit run``, ``evalkit rescore``).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.core.specs import CONTEXT_NEED, MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.judged_queries import JudgedQueries


class MissingCaseFieldsError(ValueError):
    """Metrics were asked for on cases that lack a field they need
    (``MetricSpec.needs``); the message names the metrics, the field and the cases.

    Attributes:
        need: the field the cases lack (``"answers"``, ``"context:topic"``...).
        metrics: the names of the metrics that need it.
        case_ids: the ids of the cases that lack it.
    """

    def __init__(self, message: str, need: str, metrics: Sequence[str],
                 case_ids: Sequence[str]) -> None:
        super().__init__(message)
        self.need, self.metrics, self.case_ids = need, list(metrics), list(case_ids)


class UnjudgedCasesError(MissingCaseFieldsError):
    """Metrics that need relevance judgments (``"relevance"``) were asked for on cases
    that have none (no expected ids, no relevance labels)."""


class UnansweredCasesError(UnjudgedCasesError):
    """Metrics that compare with reference answers (``"answers"``: exact_match, f1,
    rouge_l) were asked for on cases that have none (no ``answers`` and no text
    ``expected``). A subclass of :class:`UnjudgedCasesError`: both are the same refusal,
    of a case a metric cannot score."""


def lacks(case: GoldenCase, need: str) -> bool:
    """Whether ``case`` lacks the field ``need`` names: no relevance judgments, no
    reference answers (:meth:`GoldenCase.reference_answers`), or no key ``KEY`` in its
    context (``"context:KEY"``); an unknown need is never lacking."""
    if need == "relevance":
        return not case.relevance and not case.relevant
    if need == "answers":
        return not case.reference_answers()
    if need.startswith(CONTEXT_NEED):
        return need[len(CONTEXT_NEED):] not in case.context
    return False


def _lacking(cases: Sequence[GoldenCase], need: str) -> list[str]:
    """The ids of ``cases`` that lack ``need``. The queries of an evaluation against
    qrels (:class:`JudgedQueries`) have judgments and nothing else, so they are answered
    without making a case each."""
    if isinstance(cases, JudgedQueries):
        if need == "relevance":
            return [q for q in cases.ids if not len(cases.judgments[q])]
        return list(cases.ids)
    return [c.id for c in cases if lacks(c, need)]


def _shown(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids[:10]) + (
        f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def _message(need: str, names: Sequence[str], ids: Sequence[str],
             cases: Sequence[GoldenCase]) -> str:
    one = len(names) == 1
    who = ", ".join(names)
    where = "of the golden set"
    if isinstance(cases, JudgedQueries):
        where = "scored against qrels"
        if need != "relevance":  # none of them can have it: say why and where it works
            what = ("reference answers" if need == "answers"
                    else f"the field {need[len(CONTEXT_NEED):]!r}")
            return (f"{who} need{'s' if one else ''} {what}, but the {len(ids)} queries "
                    f"{where} (a TREC run's) have none, only relevance judgments: "
                    f"{_shown(ids)}. Score {'it' if one else 'them'} on a golden "
                    f"set that gives {what} (evalkit run, evaluate()), or drop "
                    f"{'this metric' if one else 'these metrics'}")
    n = len(ids)
    if need == "relevance":
        return (f"{who} need{'s' if one else ''} relevance judgments, but {n} case(s) "
                f"{where} have no expected ids: {_shown(ids)}. An unjudged case would "
                "score 0 and be averaged in; give these cases expected ids (or relevance "
                "labels), or leave them out or drop these metrics")
    if need == "answers":
        return (f"{who} compare{'s' if one else ''} the response with reference answers, "
                f"but {n} case(s) {where} have none: {_shown(ids)}. A case without answers "
                "would score 0 and be averaged in; give these cases 'answers' (a text or a "
                "list of texts) or a text 'expected', or leave them out or drop these "
                "metrics")
    key = need[len(CONTEXT_NEED):]
    return (f"{who} need{'s' if one else ''} the field {key!r} of each case "
            f"(case.context[{key!r}]), but {n} case(s) {where} lack it: {_shown(ids)}; "
            f"give these cases a {key!r} field, or leave them out or drop "
            f"{'this metric' if one else 'these metrics'}")


def require_case_fields(specs: Sequence[MetricSpec], cases: Sequence[GoldenCase]) -> None:
    """Refuse ``cases`` when one lacks a field that a metric of ``specs`` needs
    (``MetricSpec.needs``), before anything is scored: such a case would score 0 (or
    fail) and be averaged in. The needs are checked in the order the metrics declare
    them; the first one some case lacks is reported.

    Raises:
        UnjudgedCasesError: cases without relevance judgments (``"relevance"``).
        UnansweredCasesError: cases without reference answers (``"answers"``).
        MissingCaseFieldsError: cases without a context key (``"context:KEY"``).
        Each names the metrics and the cases (the first ten, and how many more).
    """
    by_need: dict[str, list[str]] = {}
    for spec in specs:
        for need in getattr(spec, "needs", ()):
            by_need.setdefault(need, []).append(spec.name)
    for need, names in by_need.items():
        ids = _lacking(cases, need)
        if ids:
            cls = (UnjudgedCasesError if need == "relevance" else UnansweredCasesError
                   if need == "answers" else MissingCaseFieldsError)
            raise cls(_message(need, names, ids, cases), need, names, ids)
