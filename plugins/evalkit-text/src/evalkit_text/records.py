"""The metric records of evalkit-text (what ``evalkit_register_metrics`` returns).

Every metric reads the response's text, scores higher-is-better values in [0, 1], has
definition version ``"1"`` (``json_schema``: ``"2+schema.<digest>"``) and needs no
relevance judgments. ``exact_match``, ``f1`` and ``rouge_l`` compare with the case's
reference answers (``needs=("answers",)``: a case with no ``answers`` and no text ``expected``
is refused before the run); ``contains``, ``regex`` and the JSON checks read only the
response. ``contains``, ``regex`` and ``json_schema`` take their parameters in their name
(``contains(text=refund)``); the bare name is refused when it is resolved, since it has
no default to fall back on.

``exact_match``, ``f1``, ``contains`` and ``json_valid`` are ``nonblocking``: their work is
one pass, linear in the response and the answers (SQuAD normalisation and token
counting, a substring search, ``json.loads``), with no I/O, so the async runner scores
them on its event loop, and only rows whose input is small
(:func:`evalkit.execute.async_executor.small_input`: 8,192 characters of response and
answers), a larger row in a thread. ``regex`` (a search may take up to its 1 s
timeout), ``rouge_l`` (an LCS table, quadratic in the token counts) and ``json_schema``
(validation by a schema of any size, ``$ref`` resolution within the schema file, pattern
searches of up to 1 s each) always score in threads.

The scoring modules are imported on first use, so that registering the records (every
command's start-up) imports only this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalkit.core.specs import MetricSpec

#: The range every metric of the plugin scores a case in (``MetricSpec.bounds``).
UNIT = (0.0, 1.0)

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse


def exact_match(response: TargetResponse, case: GoldenCase) -> float:
    """1 when the SQuAD-normalised response equals one of the case's answers, else 0."""
    from evalkit_text.reading import reference_answers, response_text
    from evalkit_text.squad import best_exact_match

    return best_exact_match(response_text(response, "exact_match"),
                            reference_answers(case, "exact_match"))


def f1(response: TargetResponse, case: GoldenCase) -> float:
    """SQuAD v1.1 token F1, the maximum over the case's answers."""
    from evalkit_text.reading import reference_answers, response_text
    from evalkit_text.squad import best_f1

    return best_f1(response_text(response, "f1"), reference_answers(case, "f1"))


def rouge_l(response: TargetResponse, case: GoldenCase) -> float:
    """ROUGE-L F-measure (rouge-score's default tokenizer), the maximum over the answers."""
    from evalkit_text.reading import reference_answers, response_text
    from evalkit_text.rouge import best_rouge_l

    return best_rouge_l(response_text(response, "rouge_l"), reference_answers(case, "rouge_l"))


def _unparameterised(example: str) -> Callable[[TargetResponse, GoldenCase], float]:
    def fn(response: TargetResponse, case: GoldenCase) -> float:
        raise ValueError(f"this metric takes its parameter in its name: write {example}")

    return fn


def json_valid(response: TargetResponse, case: GoldenCase) -> float:
    """1 when the response's text is one JSON value (RFC 8259), else 0."""
    from evalkit_text.json_checks import json_valid as check

    return check(response, case)


def _contains(**params: Any) -> MetricSpec:
    from evalkit_text.assertions import contains_scorer

    name, fn = contains_scorer(**params)
    return MetricSpec(name, fn, True, description=fn.__doc__ or "", family="contains",
                      nonblocking=True, value_type="binary", bounds=UNIT)


def _regex(**params: Any) -> MetricSpec:
    from evalkit_text.assertions import regex_scorer

    name, fn = regex_scorer(**params)
    return MetricSpec(name, fn, True, description=fn.__doc__ or "", family="regex",
                      value_type="binary", bounds=UNIT)


def _json_schema(**params: Any) -> MetricSpec:
    from evalkit_text.json_checks import json_schema_scorer

    name, version, fn = json_schema_scorer(**params)
    return MetricSpec(name, fn, True, description=fn.__doc__ or "", version=version,
                      family="json_schema", value_type="binary", bounds=UNIT)


def _parameterised(name: str, params: tuple[str, ...], variant: Callable[..., MetricSpec],
                   example: str, description: str) -> MetricSpec:
    # The bare name resolves through a preset that gives the first parameter no value, so
    # that `contains` alone is refused by the variant ("needs its text") when it is named,
    # before any call, rather than failing on every case.
    return MetricSpec(
        name, _unparameterised(example), True, description=description, params=params,
        variant=variant, presets={name: {params[0]: None}}, value_type="binary", bounds=UNIT,
    )


def metric_records() -> list[MetricSpec]:
    """The records the plugin registers (see the module docstring)."""
    return [
        MetricSpec("exact_match", exact_match, True, needs=("answers",), aliases=("em",),
                   nonblocking=True, value_type="binary", bounds=UNIT,
                   description="SQuAD v1.1 exact match after answer normalisation, max over "
                               "answers"),
        MetricSpec("f1", f1, True, needs=("answers",), nonblocking=True,
                   description="SQuAD v1.1 token F1 after answer normalisation, max over "
                               "answers", value_type="continuous", bounds=UNIT),
        MetricSpec("rouge_l", rouge_l, True, needs=("answers",), aliases=("rougeL",),
                   description="ROUGE-L F-measure (LCS of rouge-score's default tokens), max "
                               "over answers", value_type="continuous", bounds=UNIT),
        _parameterised("contains", ("text", "ignore_case"), _contains,
                       "contains(text=refund)",
                       "1 when the response's text contains text= (ignore_case=True to fold "
                       "case), else 0"),
        _parameterised("regex", ("pattern", "ignore_case"), _regex, "regex(pattern=^[0-9]+$)",
                       "1 when re.search finds pattern= in the response's text, else 0"),
        MetricSpec("json_valid", json_valid, True, nonblocking=True, value_type="binary",
                   bounds=UNIT,
                   description="1 when the response's text is one JSON value (RFC 8259), "
                               "else 0"),
        _parameterised("json_schema", ("schema",), _json_schema,
                       "json_schema(schema=schemas/answer.json)",
                       "1 when the response's text is JSON valid against the schema file "
                       "schema= (jsonschema), else 0"),
    ]
