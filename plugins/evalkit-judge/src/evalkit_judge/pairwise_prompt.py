"""What a pairwise verdict request sends: the verdict tool, the user message showing a case
and two answers, the request body, its cache key, and the strict reading of the reply.

A verdict is one forced, strict answer of the tool ``record_verdict`` whose input is
``{"verdict": "A" | "B" | "tie", "reason": text}``; the judge's provider builds the
request and reads the answer with the same code as a grade's (a Messages API tool call,
a Chat Completions function call or ``json_schema`` content:
:mod:`evalkit_judge.providers`). ``A`` is the answer shown first,
``B`` the one shown second; which system each is stays out of the request (the judge sees
the answers, never the systems' names), so the same two answers in the same order share
one cached verdict whatever run they came from. The cache key is the SHA-256 of the
canonical request (model, system prompt, rubric, tool, generation parameters, the case's
query and reference answers, both answers in their order), a format version and the
provider's scope (its name and endpoint, unless it is the Anthropic API's default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit_judge.budget import JudgeError
from evalkit_judge.grades import block, canonical_json, sha256_hex, text_block
from evalkit_judge.prompt import ForcedToolPrompt, strict_tool

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse
    from evalkit_judge.providers import JudgeProvider

#: The name of the tool the model is forced to call to record its verdict.
VERDICT_TOOL = "record_verdict"
#: Folded into every verdict key: bump it when the rendering of verdict requests changes.
PAIRWISE_KEY_VERSION = "evalkit-judge/pairwise/1"
#: The verdicts a reply may give: the first answer, the second, or neither.
VERDICTS: tuple[str, ...] = ("A", "B", "tie")
#: The properties of a verdict (the ``record_verdict`` input), all required, no other.
VERDICT_FIELDS: tuple[str, ...] = ("verdict", "reason")
#: How a verdict is kept in the judge's cache (its integer ``score`` column).
VERDICT_CODES: dict[str, int] = {"A": 1, "B": 2, "tie": 3}


def answer_text(response: TargetResponse) -> str:
    """What the judge is shown of one answer: its text, else its ranked ids as JSON, else
    an empty string."""
    if response.text is not None:
        return response.text
    if response.ranked_ids:
        return text_block([str(x) for x in response.ranked_ids])
    return ""


@dataclass(frozen=True)
class PairwisePrompt(ForcedToolPrompt):
    """The parts of a judge's definition that go into every verdict request: the rubric
    says what "better" means (the judge's grading rubric, read as the criterion). The
    judge's provider builds the request (:meth:`request`) and reads the reply
    (:func:`parse_verdict`) with the same code as a grade's, another schema."""

    rubric: str
    model: str
    max_tokens: int
    temperature: float | None
    system: str | None

    @property
    def tool(self) -> dict[str, Any]:
        """The verdict tool: strict input ``{"verdict": "A" | "B" | "tie", "reason"}``."""
        return strict_tool(VERDICT_TOOL, "Record which of the two answers is better.", {
            "verdict": {
                "type": "string",
                "enum": list(VERDICTS),
                "description": "A: answer A is better. B: answer B is better. "
                               "tie: neither is better.",
            },
            "reason": {
                "type": "string",
                "description": "A short justification of the verdict.",
            },
        })

    def definition(self) -> dict[str, Any]:
        """Everything a verdict depends on but the case and the answers."""
        return {"version": PAIRWISE_KEY_VERSION, "model": self.model, "system": self.system,
                "rubric": self.rubric, "tool": self.tool, "max_tokens": self.max_tokens,
                "temperature": self.temperature}

    def definition_hash(self) -> str:
        """A short hash of :meth:`definition` (16 hex digits)."""
        return sha256_hex(canonical_json(self.definition()))[:16]

    def render(self, case: GoldenCase, first: TargetResponse, second: TargetResponse) -> str:
        """The user message asking which of ``first`` (shown as A) and ``second`` (B)
        better answers ``case``; the case's reference answers are shown when it has any
        (:meth:`GoldenCase.reference_answers <evalkit.data.cases.GoldenCase.reference_answers>`)."""
        parts = [
            "Two answers to the same query follow. Judge which one is better according to "
            "the rubric. The order in which they are shown must not matter.",
            f"<rubric>\n{self.rubric}\n</rubric>",
            block("query", case.query),
        ]
        reference = case.reference_answers()
        if reference:
            parts.append(block("reference", text_block(list(reference))))
        parts.append(block("answer_a", answer_text(first)))
        parts.append(block("answer_b", answer_text(second)))
        parts.append(f"Call {VERDICT_TOOL} once: verdict A, B or tie, and the reason.")
        return "\n\n".join(parts)

    def request(self, provider: JudgeProvider, case: GoldenCase, first: TargetResponse,
                second: TargetResponse) -> dict[str, Any]:
        """The request body of one verdict in ``provider``'s wire format (JSON-ready):
        :meth:`JudgeProvider.request <evalkit_judge.providers.JudgeProvider.request>` of
        this prompt and :meth:`render`'s message."""
        return provider.request(self, self.render(case, first, second))

    def key(self, body: Mapping[str, Any], sample: int | None = None,
            scope: Mapping[str, Any] | None = None) -> str:
        """The cache key of a verdict request ``body``: SHA-256 hex of the canonical
        request, of ``sample`` when given (one verdict per sample) and of ``scope`` (the
        provider and its endpoint: :meth:`LLMJudge.scope
        <evalkit_judge.judge.LLMJudge.scope>`) when not empty."""
        keyed: dict[str, Any] = {"version": PAIRWISE_KEY_VERSION, "rubric": self.rubric,
                                 "request": body}
        if scope:
            keyed["scope"] = dict(scope)
        if sample is not None:
            keyed["sample"] = sample
        return sha256_hex(canonical_json(keyed))


def parse_verdict(provider: JudgeProvider, reply: Mapping[str, Any]) -> tuple[str, str]:
    """``(verdict, reason)`` of a reply (in ``provider``'s wire format) that completed one
    ``record_verdict`` answer: :meth:`JudgeProvider.tool_input
    <evalkit_judge.providers.JudgeProvider.tool_input>`, then the values.

    Raises:
        JudgeError: the provider's refusals (no call, another tool, two calls, a reply cut
            before the answer completed, prose, another property in the input), a verdict
            other than ``"A"``, ``"B"`` or ``"tie"``, or a reason that is not text. Never
            read from prose.
    """
    data = provider.tool_input(reply, VERDICT_TOOL, VERDICT_FIELDS)
    verdict = data.get("verdict")
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise JudgeError(f"the verdict {verdict!r} is not one of 'A', 'B', 'tie'")
    reason = data.get("reason")
    if not isinstance(reason, str):
        raise JudgeError(f"the reason {reason!r} is not text")
    return verdict, reason
