"""What a judge sends: the grading tool, the user message of a case, the request body and
the cache key that covers it.

The request for a case is built from the judge's definition (model, system prompt,
rubric, scale, tool schema, generation parameters) and the case (query, expected answer,
reference answers, relevance labels, context) and the response's output (text and ranked
ids; never the latency, raw body or meta). The cache key is the SHA-256 of that request's canonical
JSON, so anything that can change the grade changes the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit_judge.grades import (
    KEY_VERSION,
    TOOL_NAME,
    block,
    canonical_json,
    seed_sha,
    sha256_hex,
    text_block,
)

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse


def strict_tool(name: str, description: str, properties: Mapping[str, Any]
                ) -> dict[str, Any]:
    """A strict tool definition whose input is an object of exactly ``properties``, all
    required (no other property allowed)."""
    return {
        "name": name,
        "description": description,
        "strict": True,
        "input_schema": {
            "type": "object",
            "properties": dict(properties),
            "required": list(properties),
            "additionalProperties": False,
        },
    }


class ForcedToolPrompt:
    """What every forced-tool request shares: a model, generation settings, an optional
    system prompt and one strict tool (:attr:`tool`, from :func:`strict_tool`) whose call
    is the only answer. A grade (:class:`GradingPrompt`) and a pairwise verdict
    (:class:`~evalkit_judge.pairwise_prompt.PairwisePrompt`) are such prompts; a provider
    builds the request of either with :meth:`JudgeProvider.request
    <evalkit_judge.providers.JudgeProvider.request>` and reads the tool's input with
    :meth:`JudgeProvider.tool_input <evalkit_judge.providers.JudgeProvider.tool_input>`.
    """

    model: str
    max_tokens: int
    temperature: float | None
    system: str | None

    @property
    def tool(self) -> dict[str, Any]:
        """The strict tool (Messages API shape: ``name``, ``description``, ``strict``,
        ``input_schema``)."""
        raise NotImplementedError

    @property
    def tool_name(self) -> str:
        """The forced tool's name."""
        name: str = self.tool["name"]
        return name

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema of the tool's input: its properties, all required, nothing
        else."""
        schema: dict[str, Any] = self.tool["input_schema"]
        return schema

    @property
    def fields(self) -> tuple[str, ...]:
        """The properties of the tool's input (all required, no other allowed)."""
        return tuple(self.schema["properties"])

    def messages_body(self, message: str) -> dict[str, Any]:
        """The Messages API request body (JSON-ready) whose one user message is
        ``message`` and whose only possible answer is one call of :attr:`tool`
        (``tool_choice`` forces it and disables parallel calls); ``system`` and
        ``temperature`` are sent when not ``None``."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "user", "content": message}],
            "tools": [self.tool],
            "tool_choice": {"type": "tool", "name": self.tool_name,
                            "disable_parallel_tool_use": True},
        }
        if self.system is not None:
            body["system"] = self.system
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body


@dataclass(frozen=True)
class GradingPrompt(ForcedToolPrompt):
    """The parts of a judge's definition that go into every request."""

    rubric: str
    model: str
    scale: int
    max_tokens: int
    temperature: float | None
    system: str | None

    @property
    def tool(self) -> dict[str, Any]:
        """The grading tool: strict input ``{"score": 1..scale, "reason": text}``."""
        return strict_tool(TOOL_NAME, "Record the grade of the response under evaluation.", {
            "score": {
                "type": "integer",
                "enum": list(range(1, self.scale + 1)),
                "description": f"1 is the worst grade, {self.scale} the best.",
            },
            "reason": {
                "type": "string",
                "description": "A short justification of the score.",
            },
        })

    def definition(self) -> dict[str, Any]:
        """Everything a grade depends on but the case: what the definition hash covers."""
        return {
            "version": KEY_VERSION, "model": self.model, "system": self.system,
            "rubric": self.rubric, "scale": self.scale, "tool": self.tool,
            "max_tokens": self.max_tokens, "temperature": self.temperature,
        }

    def render(self, response: TargetResponse, case: GoldenCase) -> str:
        """The user message of the request for ``(response, case)``."""
        parts = [
            "Grade the response below against the rubric.",
            f"<rubric>\n{self.rubric}\n</rubric>",
            f"<scale>integers from 1 (worst) to {self.scale} (best)</scale>",
            block("query", case.query),
        ]
        if case.expected is not None:
            parts.append(block("expected", text_block(case.expected)))
        if case.answers:  # only when given: the keys of cases without answers are unchanged
            parts.append(block("answers", text_block(list(case.answers))))
        if case.relevance:
            parts.append(block("relevance", text_block(dict(case.relevance))))
        if case.context:
            parts.append(block("context", text_block(dict(case.context))))
        if response.text is not None:
            parts.append(block("response", response.text))
        if response.ranked_ids:
            parts.append(
                block("ranked_ids", text_block([str(x) for x in response.ranked_ids]))
            )
        if response.text is None and not response.ranked_ids:
            parts.append("<response>\n\n</response>")
        parts.append(f"Call {TOOL_NAME} once with the score and the reason.")
        return "\n\n".join(parts)

    def request(self, response: TargetResponse, case: GoldenCase) -> dict[str, Any]:
        """The Messages API request body for ``(response, case)`` (JSON-ready)."""
        return self.messages_body(self.render(response, case))

    def definition_hash(self) -> str:
        """A short hash of :meth:`definition` (16 hex digits)."""
        return sha256_hex(canonical_json(self.definition()))[:16]

    def key(self, body: Mapping[str, Any], sample: int | None = None,
            scope: Mapping[str, Any] | None = None) -> str:
        """The cache key of a request ``body``: SHA-256 hex of the canonical request, of
        ``sample`` when given (``judge_resamples``: one grade per sample) and of
        ``scope`` (the provider and its endpoint) when not empty."""
        keyed: dict[str, Any] = {"version": KEY_VERSION, "scale": self.scale,
                                 "rubric": self.rubric, "request": body}
        if scope:
            keyed["scope"] = dict(scope)
        if sample is not None:
            keyed["sample"] = sample
        return sha256_hex(canonical_json(keyed))

    def seed_key(self, response: TargetResponse, case: GoldenCase) -> str:
        """The key the 0.2 judge used for ``(response, case)`` in its JSON cache."""
        output: Any = response.text if response.text is not None \
            else [str(x) for x in response.ranked_ids]
        rubric_hash = seed_sha(self.rubric, str(self.scale), self.model, self.system or "")
        canonical = json.dumps(output, sort_keys=True, ensure_ascii=False)
        return seed_sha(str(case.id), seed_sha(canonical), rubric_hash)
