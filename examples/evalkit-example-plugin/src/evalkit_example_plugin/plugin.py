"""The plugin module named by the ``evalkit.plugins`` entry point.

It provides, through evalkit's hooks:

* ``keyword_recall`` (per-case metric, higher is better): the share of a case's keywords
  that occur as words in the response text. Keywords come from the case's
  ``context["keywords"]``, else from the words of ``expected`` when it is a string. A case
  with no keyword, or an empty response, scores 0.0.
* ``answered_share`` (whole-run aggregate, higher is better): the share of rows whose
  response has non-blank text. Raises on an empty run and on an errored row.
* ``tsv-summary`` (reporter): one tab-separated line per check or metric of a gate report
  or a comparison.
* ``evalkit keywords GOLDENS`` (command, :mod:`evalkit_example_plugin.commands`): the
  keywords of each case.
* ``keyword_metrics`` (section of the eval config, :mod:`evalkit_example_plugin.config`):
  ``{metric name: keywords}``, each registered before the run as a metric scoring the share
  of those keywords found in the response text.

Keep this module cheap to import: ``evalkit plugins list`` imports it to see its hooks,
and ``evalkit --help`` when the plugins changed since it last listed their commands. The
command's module and the section's model (pydantic) are named by import strings, imported
only when used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit import hookimpl
from evalkit.core.specs import (
    AggregateSpec,
    CommandSpec,
    ConfigSectionSpec,
    MetricSpec,
    ReporterSpec,
)

if TYPE_CHECKING:
    from evalkit import GoldenCase, TargetResponse

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def keywords_of(case: GoldenCase) -> list[str]:
    """The distinct lower-case keywords of ``case``, in first-seen order."""
    given = case.context.get("keywords")
    if given is None:
        given = _words(case.expected) if isinstance(case.expected, str) else []
    elif isinstance(given, str) or not all(isinstance(k, str) for k in given):
        raise ValueError(f"case {case.id!r}: context['keywords'] must be a list of strings")
    return list(dict.fromkeys(k.lower() for k in given))


def keyword_recall(response: TargetResponse, case: GoldenCase) -> float:
    """Share of the case's keywords found as words in the response text."""
    keywords = keywords_of(case)
    if not keywords:
        return 0.0
    found = set(_words(response.text or ""))
    return sum(1 for k in keywords if k in found) / len(keywords)


class AnsweredShareError(ValueError):
    """``answered_share`` is undefined for these rows (empty run or errored row)."""


def answered_share(rows: Sequence[Any]) -> float:
    """Share of rows whose response has non-blank text."""
    if not rows:
        raise AnsweredShareError("answered_share: the run has no rows")
    answered = 0
    for row in rows:
        if getattr(row, "error", None) is not None:
            raise AnsweredShareError(
                f"answered_share: case {row.id!r} errored; the run is incomplete"
            )
        response = getattr(row, "response", None)
        text = getattr(response, "text", None)
        answered += bool(text and text.strip())
    return answered / len(rows)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("\t", " ").replace("\n", " ")


def render_tsv(report: Any) -> str:
    """A gate report or comparison as TSV: a header, then one line per row."""
    from evalkit.report.model import as_report

    rep = as_report(report)
    header = ["name", "status", "metric", "value", "reference_value", "difference", "p_value"]
    lines = ["\t".join(header)]
    for row in rep.rows:
        lines.append("\t".join(_cell(getattr(row, col)) for col in header))
    return "\n".join(lines) + "\n"


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec]:
    return [
        MetricSpec(
            name="keyword_recall", fn=keyword_recall, higher_is_better=True,
            description="share of the case's keywords found in the response text",
        )
    ]


@hookimpl
def evalkit_register_aggregates() -> list[AggregateSpec]:
    return [
        AggregateSpec(
            name="answered_share", fn=answered_share, higher_is_better=True,
            description="share of cases whose response has non-blank text",
        )
    ]


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    return [
        ReporterSpec(
            name="tsv-summary", render=render_tsv, suffix=".tsv",
            description="one tab-separated line per check or metric",
        )
    ]


@hookimpl
def evalkit_register_commands() -> list[CommandSpec]:
    return [
        CommandSpec(
            name="keywords", help="Print the keywords keyword_recall looks for in each case.",
            load="evalkit_example_plugin.commands:keywords",
        )
    ]


_KEYWORD_METRICS: dict[tuple[str, tuple[str, ...]], Any] = {}


def fixed_keyword_recall(name: str, keywords: Sequence[str]) -> Any:
    """The metric ``name``: the share of ``keywords`` found as words in the response text
    (the same function for the same name and keywords, so registering it again is a
    no-op)."""
    wanted = tuple(dict.fromkeys(k.lower() for k in keywords))
    key = (name, wanted)
    if key not in _KEYWORD_METRICS:
        def recall(response: TargetResponse, case: GoldenCase) -> float:
            found = set(_words(response.text or ""))
            return sum(1 for k in wanted if k in found) / len(wanted)

        recall.__name__ = recall.__qualname__ = name
        _KEYWORD_METRICS[key] = recall
    return _KEYWORD_METRICS[key]


def apply_keyword_metrics(section: Any, config: Any) -> None:
    """Register one metric per entry of the ``keyword_metrics`` section (``section.root``:
    ``{name: keywords}``); a name another provider has raises ``RegistryError`` naming
    both, which evalkit reports as an error of the section."""
    import evalkit

    for name, keywords in section.root.items():
        evalkit.register_metric(name, higher_is_better=True,
                                description=f"share of {', '.join(keywords)} in the response")(
            fixed_keyword_recall(name, keywords))


@hookimpl
def evalkit_register_config_sections() -> list[ConfigSectionSpec]:
    return [
        ConfigSectionSpec(
            name="keyword_metrics", model="evalkit_example_plugin.config:KeywordMetrics",
            apply=apply_keyword_metrics,
            description="A metric per list of keywords: {name: [keyword, ...]}; each scores "
            "the share of its keywords found in the response text.",
        )
    ]
