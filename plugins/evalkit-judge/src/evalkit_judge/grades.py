"""A grade, the reply that holds one, and the canonical JSON requests and keys are made of.

:func:`parse_reply` accepts a reply only when it completed exactly one call of the grading
tool with an integer score on the scale and a text reason; anything else is a
:class:`~evalkit_judge.budget.JudgeError` saying what the reply held.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from evalkit.stats.numeric import finite_real
from evalkit_judge.budget import JudgeError, Usage

#: The name of the tool the model is forced to call to record its grade.
TOOL_NAME = "record_grade"
#: The properties of a grade (the ``record_grade`` input), all required, no other.
GRADE_FIELDS: tuple[str, ...] = ("score", "reason")


#: Folded into every key: bump it when the rendering of requests changes.
KEY_VERSION = "evalkit-judge/1"


@dataclass(frozen=True)
class Grade:
    """One grade and where it came from.

    Attributes:
        score: an integer in ``1..scale``.
        reason: the judge's justification.
        model: the model asked (part of the key); ``served_model`` is the one the API
            reported, ``None`` when unknown.
        key: the cache key (SHA-256 hex of the request).
        cached: ``True`` when no request was sent for this grade.
        source: ``"api"`` (requested now), ``"cache"`` or ``"seed-json"`` (imported from
            a 0.2 JSON cache).
        usage: tokens of the request that produced the grade (zeros for imported ones).
        cost_usd: the cost of that request in US dollars, ``None`` without a price.
        definition: a short hash of the judge's definition (everything but the case).
        retries: the requests the SDK sent again for this grade (a retry after a 429,
            529, 5xx or connection failure; its ``retries_taken``); on a row's details
            as ``"retries"`` only when not 0.
    """

    score: int
    reason: str
    model: str
    key: str
    cached: bool
    source: str
    usage: Usage
    cost_usd: float | None
    served_model: str | None
    definition: str
    retries: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready details kept on a run row."""
        out = {
            "score": self.score,
            "reason": self.reason,
            "model": self.model,
            "served_model": self.served_model,
            "cached": self.cached,
            "source": self.source,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cache_creation_input_tokens": self.usage.cache_creation_input_tokens,
            "cache_read_input_tokens": self.usage.cache_read_input_tokens,
            "cost_usd": self.cost_usd,
            "key": self.key,
            "definition": self.definition,
        }
        if self.retries:
            out["retries"] = self.retries
        return out


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plain(value: Any) -> Any:
    """A JSON-ready, deterministic copy of ``value`` (sets sorted, unknown types as repr)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        items = [plain(v) for v in value]
        return sorted(items, key=canonical_json)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return repr(value)


def text_block(value: Any) -> str:
    value = plain(value)
    return value if isinstance(value, str) else canonical_json(value)


#: The tags that delimit the blocks of a judge's user message
#: (:meth:`evalkit_judge.prompt.GradingPrompt.render`,
#: :meth:`evalkit_judge.pairwise_prompt.PairwisePrompt.render`).
PROMPT_TAGS: tuple[str, ...] = (
    "rubric", "scale", "query", "expected", "answers", "relevance", "context", "response",
    "ranked_ids", "reference", "answer_a", "answer_b",
)
_PROMPT_TAG = re.compile(r"<(\s*/?\s*)(" + "|".join(PROMPT_TAGS) + r")\b", re.IGNORECASE)


def block(name: str, text: str) -> str:
    """``<name>``, ``text`` and ``</name>`` on their own lines, with every opening or
    closing tag of the prompt's own blocks inside ``text`` (:data:`PROMPT_TAGS`, any
    case, spaces allowed: ``</response>``, ``< /Answers >``) written with ``&lt;``
    instead of ``<``: text from a system under test or a golden set cannot close its
    block nor open another, so it cannot forge the prompt's structure. Text without
    such a tag is shown as it is (its requests, and cache keys, are unchanged)."""
    inner = _PROMPT_TAG.sub(r"&lt;\1\2", text)
    return f"<{name}>\n{inner}\n</{name}>"


def seed_sha(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def reply_dict(message: Any) -> dict[str, Any]:
    """A JSON-ready dict of a Messages API reply (an SDK ``Message`` or a dict)."""
    if isinstance(message, Mapping):
        return cast(dict[str, Any], plain(message))
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        try:
            # a field off its type (a count of -1e308) is kept as sent, unwarned: the judge
            # refuses it when it reads the usage
            return cast(dict[str, Any], plain(dump(mode="json", warnings=False)))
        except Exception:  # fall back to reading attributes
            pass
    blocks = []
    for block in getattr(message, "content", None) or []:
        blocks.append({"type": getattr(block, "type", None), "name": getattr(block, "name", None),
                       "input": plain(getattr(block, "input", None)),
                       "text": getattr(block, "text", None)})
    usage = getattr(message, "usage", None)
    return {
        "model": getattr(message, "model", None),
        "stop_reason": getattr(message, "stop_reason", None),
        "content": blocks,
        "usage": {name: getattr(usage, name, None) for name in (
            "input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens")} if usage is not None else None,
    }


def rejected_details(*, model: str, key: str, definition: str, error: str,
                     usage: Usage, served_model: str | None, cost_usd: float | None,
                     retries: int = 0) -> dict[str, Any]:
    """The JSON-ready details a run row keeps for a reply the API delivered (and billed)
    but the judge rejected (no grade in it, a score off the scale): no ``score``,
    ``rejected`` holding why, and the reply's tokens and cost, so that what was spent on
    it is counted (:func:`summarize`, ``judge_cost_total``)."""
    out: dict[str, Any] = {
        "rejected": error, "model": model, "served_model": served_model, "cached": False,
        "source": "api", "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "cost_usd": cost_usd, "key": key, "definition": definition,
    }
    if retries:
        out["retries"] = retries
    return out


def failed_details(*, model: str, key: str, definition: str, error: str,
                   requests: int) -> dict[str, Any]:
    """The details of a grade whose request got no reply after ``requests`` HTTP
    attempts (retries included): nothing billed is known, so no cost; the attempts count
    in the run header's ``requests`` and ``retried``."""
    out: dict[str, Any] = {"failed": error, "model": model, "cached": False, "key": key,
                           "definition": definition, "requests": requests}
    if requests > 1:
        out["retries"] = requests - 1
    return out


def summarize(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Totals of the grade details of a run's rows (``None`` rows are skipped).

    Every reply the API billed is on exactly one row: the row of the case whose grade
    requested it, graded or rejected (:func:`rejected_details`). A grade served from the
    cache, or shared with another case asking for the same grade at the same time, was
    paid for once, where it was requested (in this run or an earlier one), and is
    counted as ``cached`` only.

    Returns:
        ``{"grades", "requested", "rejected", "cached", "failed", "requests", "retried",
        "input_tokens", "output_tokens", "cost_usd", "unpriced", "cached_cost_usd",
        "models", "definitions"}``: ``grades`` counts the rows with a grade; ``requested``
        the replies requested (and billed) for the rows, ``rejected`` those of them that
        held no usable grade; ``cached`` the grades served from the cache; ``failed`` the
        grades whose request got no reply after its retries (:func:`failed_details`);
        ``requests`` every HTTP request sent for the rows (each reply's and each failed
        grade's attempts, retries included: what the server received); ``retried`` the
        requests sent again after a failed attempt, failed grades' included; ``input_tokens``,
        ``output_tokens`` and ``cost_usd`` (US dollars) what the requested replies cost,
        the money spent for these rows (the same sum as the ``judge_cost_total``
        aggregate); ``unpriced`` counts requested replies with no cost (no price
        configured); ``cached_cost_usd`` what the cached grades cost when they were
        first requested (not spent again; 0.2 imports have no cost).
    """
    out: dict[str, Any] = {"grades": 0, "requested": 0, "rejected": 0, "cached": 0,
                           "failed": 0, "requests": 0, "retried": 0, "input_tokens": 0,
                           "output_tokens": 0, "cost_usd": 0.0, "unpriced": 0,
                           "cached_cost_usd": 0.0}
    models: set[str] = set()
    definitions: set[str] = set()
    for row in rows:
        if not row:
            continue
        retries = row.get("retries")
        retries = retries if isinstance(retries, int) and not isinstance(retries, bool) \
            and retries > 0 else 0
        if "failed" in row:
            requests = row.get("requests")
            if isinstance(requests, int) and not isinstance(requests, bool) and requests > 0:
                out["failed"] += 1
                out["requests"] += requests
                out["retried"] += requests - 1
            continue
        rejected = "rejected" in row
        cached = bool(row.get("cached")) and not rejected
        if not rejected:
            out["grades"] += 1
        out["cached" if cached else "requested"] += 1
        out["rejected"] += rejected
        cost = finite_real(row.get("cost_usd"))
        if cached:
            if cost is not None:
                out["cached_cost_usd"] += cost
        else:
            out["requests"] += 1 + retries
            out["retried"] += retries
            for name, total in (("input_tokens", "input_tokens"),
                                ("output_tokens", "output_tokens")):
                value = row.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    out[total] += value
            if cost is not None:
                out["cost_usd"] += cost
            else:
                out["unpriced"] += 1
        if isinstance(row.get("model"), str):
            models.add(row["model"])
        if isinstance(row.get("definition"), str):
            definitions.add(row["definition"])
    out["models"] = sorted(models)
    out["definitions"] = sorted(definitions)
    return out


def only_fields(data: Mapping[str, Any], name: str, fields: tuple[str, ...]
                ) -> Mapping[str, Any]:
    """``data`` (the input of the forced tool ``name``), checked to hold no key outside
    ``fields`` (the tool's strict schema).

    Raises:
        JudgeError: a key the schema does not allow (named).
    """
    extra = sorted(set(data) - set(fields))
    if extra:
        allowed = " and ".join(map(repr, fields))
        raise JudgeError(f"the {name} input has key(s) {', '.join(map(repr, extra))} the "
                         f"schema does not allow (only {allowed})")
    return data


#: The key of a reply dict standing for a reply body refused as malformed
#: (:func:`reply_json`): its message.
MALFORMED = "malformed"


def reply_json(content: bytes | str) -> dict[str, Any]:
    """The JSON object of a reply body, read as strictly as a golden file
    (:func:`evalkit.io.limits.loads_json` with ``unique_keys``): a body whose objects
    repeat a key (``{"score": 1, "score": 5}``: JSON leaves its meaning undefined) is
    ``{"malformed": why}``, a body that is not a JSON object ``{"unreadable": text}``;
    both are refused as a grade (:func:`refuse_malformed`) and their usage is not read
    (the judge then charges the request's estimate)."""
    from evalkit.io.limits import RepeatedKeyError, loads_json

    try:
        data = loads_json(content, unique_keys=True)
    except RepeatedKeyError as exc:
        return {MALFORMED: f"the reply is malformed: {exc}"}
    except ValueError:  # not JSON, not UTF-8, too deep
        text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
        return {"unreadable": text[:2000]}
    return dict(plain(data)) if isinstance(data, Mapping) else {"unreadable": data}


def refuse_malformed(reply: Mapping[str, Any]) -> None:
    """Raise :class:`~evalkit_judge.budget.JudgeError` for a reply :func:`reply_json`
    refused (a repeated key); nothing for any other."""
    why = reply.get(MALFORMED)
    if isinstance(why, str):
        raise JudgeError(why)


def untrusted_reply(reply: Mapping[str, Any]) -> str | None:
    """Why the token counts of ``reply`` (:func:`reply_json`'s dict) cannot be trusted,
    or ``None``: a body that is not a JSON object, a body refused for a repeated key, or
    JSON text inside it (a tool call's ``arguments``, a JSON answer) that repeats a key.
    Such a reply is charged the request's worst-case estimate
    (:meth:`~evalkit_judge.costs.CostModel.reply_usage`)."""
    from evalkit.io.limits import RepeatedKeyError, loads_json

    why = reply.get(MALFORMED)
    if isinstance(why, str):
        return why
    if "unreadable" in reply:
        return "the reply is not a JSON object"
    pending: list[Any] = [reply]
    while pending:
        value = pending.pop()
        if isinstance(value, Mapping):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            try:
                loads_json(value, unique_keys=True)
            except RepeatedKeyError as exc:
                return f"JSON text in the reply is malformed: {exc}"
            except ValueError:  # not JSON: refused, if at all, as the grade is read
                continue
    return None


def strict_object(raw: str, name: str, quoted: int = 120) -> Mapping[str, Any]:
    """The JSON object of a tool's arguments or a JSON answer ``raw`` (the ``name``
    answer), read strictly: a repeated key, an object nested too deep or prose refused.

    Raises:
        JudgeError: ``raw`` is not one JSON object, or repeats a key.
    """
    from evalkit.io.limits import LimitError, RepeatedKeyError, loads_json

    try:
        data = loads_json(raw, unique_keys=True)
    except RepeatedKeyError as exc:
        raise JudgeError(f"the {name} answer is malformed: {exc}") from None
    except LimitError as exc:
        raise JudgeError(f"the {name} answer is JSON {exc}") from None
    except ValueError:
        raise JudgeError(f"the {name} answer is not JSON (an answer is never read from "
                         f"prose): {raw[:quoted]!r}") from None
    if not isinstance(data, Mapping):
        raise JudgeError(f"the {name} answer is not a JSON object: {raw[:quoted]!r}")
    return data


def forced_tool_input(reply: Mapping[str, Any], name: str, fields: tuple[str, ...]
                      ) -> Mapping[str, Any]:
    """The input of the one completed call of the tool ``name`` in the Messages API
    ``reply`` (a reply to a request that forced that tool: a grade, or a pairwise
    verdict), holding no key outside ``fields``.

    Raises:
        JudgeError: no call, another tool, two calls, a reply that stopped before the call
            completed (``max_tokens``), an input that is not an object, or a key outside
            ``fields``; a body refused as malformed (:func:`reply_json`).
    """
    refuse_malformed(reply)
    content = reply.get("content")
    blocks = [b for b in content if isinstance(b, Mapping)] \
        if isinstance(content, list) else []
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    if not uses:
        raise JudgeError(f"the reply has no {name} tool call "
                         f"(stop_reason={reply.get('stop_reason')!r})")
    ours = [b for b in uses if b.get("name") == name]
    if not ours:
        names = ", ".join(repr(b.get("name")) for b in uses)
        raise JudgeError(f"the reply called {names}, not {name}")
    if len(ours) > 1:
        raise JudgeError(f"the reply called {name} {len(ours)} times")
    stop = reply.get("stop_reason")
    if stop != "tool_use":  # only a completed tool call is an answer
        why = (" (it hit max_tokens: the tool call, and its reason, may be cut "
               "mid-word; raise max_tokens)" if stop == "max_tokens" else "")
        raise JudgeError(f"the reply stopped with stop_reason={stop!r}, not a completed "
                         f"{name} tool call ('tool_use'){why}")
    data = ours[0].get("input")
    if not isinstance(data, Mapping):
        raise JudgeError(f"the {name} input is not an object: {data!r}")
    return only_fields(data, name, fields)


def parse_reply(reply: Mapping[str, Any], scale: int) -> tuple[int, str]:
    """``(score, reason)`` of a reply that completed one grading tool call.

    Raises:
        JudgeError: no call, another tool, two calls, a reply that stopped before the call
            completed (``max_tokens``), a score that is not an integer on ``1..scale``, or
            a reason that is not text.
    """
    return grade_fields(forced_tool_input(reply, TOOL_NAME, GRADE_FIELDS), scale)


def grade_fields(data: Mapping[str, Any], scale: int) -> tuple[int, str]:
    """``(score, reason)`` of a grade object: an integer ``score`` on ``1..scale`` and a
    text ``reason``.

    Raises:
        JudgeError: a score that is not an integer or lies off the scale, a reason that
            is not text.
    """
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, int):
        raise JudgeError(f"the score {score!r} is not an integer")
    if not 1 <= score <= scale:
        raise JudgeError(f"the score {score} is outside the scale 1-{scale}")
    reason = data.get("reason")
    if not isinstance(reason, str):
        raise JudgeError(f"the reason {reason!r} is not text")
    return score, reason
