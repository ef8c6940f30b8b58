"""What a text metric reads of a response and a case, and how a parameter is named."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.core.metric_names import MetricNameError, canonical, parse_name

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse


def response_text(response: TargetResponse, metric: str) -> str:
    """The response's generated text; an empty response (no text and no ranked ids) reads
    as the empty text, which scores 0.

    Raises:
        ValueError: the response has ranked ids and no text (a retrieval target's answer,
            which a text metric cannot score).
    """
    if response.text is None:
        if not response.ranked_ids:
            return ""
        raise ValueError(
            f"{metric} reads the response's text, but the response has ranked ids and no "
            "text (a retrieval target); give the target an extract that returns text"
        )
    return response.text


def reference_answers(case: GoldenCase, metric: str) -> tuple[str, ...]:
    """The case's reference answers (``answers``, else a text ``expected``).

    Raises:
        ValueError: the case has none (the runner refuses such a case before the run;
            this is reached only when a metric is called directly).
    """
    answers = case.reference_answers()
    if not answers:
        raise ValueError(
            f"{metric} compares with reference answers, but case {case.id!r} has none; "
            "give it 'answers' (a text or a list of texts) or a text 'expected'"
        )
    return answers


def text_parameter(metric: str, name: str, value: Any, example: str) -> str:
    """``value`` of parameter ``name`` as text.

    Raises:
        ValueError: it is missing, not text (a number or a list the name's grammar read as
            a Python literal: quote it) or empty.
    """
    if value is None:
        raise ValueError(f"{metric} needs its {name}: write {example}")
    if not isinstance(value, str):
        raise ValueError(
            f"the {name} of {metric} must be text, but {value!r} reads as a Python "
            f"{type(value).__name__}; quote it: {metric}({name}={str(value)!r})"
        )
    if not value:
        raise ValueError(f"the {name} of {metric} is empty: write {example}")
    return value


def flag_parameter(metric: str, name: str, value: Any) -> bool:
    """A ``True``/``False`` parameter (``None``: False).

    Raises:
        ValueError: anything else.
    """
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValueError(f"{name} of {metric} must be True or False, got {value!r}")
    return value


def spelled(value: str) -> str:
    """A text parameter as a canonical name writes it: as written when the name grammar
    reads it back unchanged (``refund``, ``^\\d+$``, ``refund policy``), else quoted
    (``'42'``, ``'a,b'``)."""
    try:
        parsed = parse_name(f"x(v={value})")
    except MetricNameError:
        parsed = None
    if parsed is not None and parsed.params.get("v") == value and value == value.strip():
        return value
    return repr(value)


def variant_name(base: str, params: dict[str, Any]) -> str:
    """The canonical name of ``base`` with ``params`` (text as :func:`spelled`, flags
    only when True), parameters sorted by name."""
    shown = {k: v for k, v in params.items() if v not in (None, False)}
    if not shown:
        return canonical(base)
    inside = ",".join(f"{k}={spelled(v) if isinstance(v, str) else v}"
                      for k, v in sorted(shown.items()))
    return f"{base}({inside})"
