"""What a judge request costs: token usage, prices per model, and the price table a judge
is given (``{model: (input, output)}`` in US dollars per million tokens, or a JSON file)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.stats.numeric import finite_real


class UsageUnknown(ValueError):
    """A reply whose token counts cannot be trusted (no ``usage`` object, a count that is
    missing, negative, not finite, not a whole number or not a number; counts that cannot
    be true of the request sent (:func:`implausible_usage`); or a body that is not JSON or
    is refused as malformed): the
    judge charges the request's worst-case estimate instead (docs/judge.md, "Spending"),
    so that no reply can lower what a run records as spent."""


def token_count(value: Any, name: str) -> int:
    """A token count of a reply's usage: ``None`` (absent) is 0; a whole number >= 0 (an
    integer, or a float such as ``100.0``) is itself.

    Raises:
        UsageUnknown: anything else (``-1``, ``-1e308``, ``NaN``, ``12.5``, ``true``,
            ``"100"``), naming the field.
    """
    if value is None:
        return 0
    number = finite_real(value)
    if isinstance(value, bool) or number is None or number < 0 or number != int(number):
        raise UsageUnknown(f"the reply's usage has {name}={value!r}, not a token count")
    return int(number)


def reported_usage(reply: Mapping[str, Any], *required: str) -> Mapping[str, Any]:
    """The ``usage`` object of ``reply``, which must report each of ``required``.

    Raises:
        UsageUnknown: no ``usage`` object (absent, ``null``, not an object), or one
            without a ``required`` count (``{}``): what the request cost cannot be read.
    """
    usage = reply.get("usage")
    if not isinstance(usage, Mapping):
        raise UsageUnknown(f"the reply reports no usage (usage={usage!r})")
    missing = [name for name in required if usage.get(name) is None]
    if missing:
        raise UsageUnknown(f"the reply's usage has no {' or '.join(missing)}")
    return usage


@dataclass(frozen=True)
class Usage:
    """Token counts of one Messages API reply (the API's ``usage`` object)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @classmethod
    def from_reply(cls, reply: Mapping[str, Any]) -> Usage:
        """Read the Messages API ``usage`` object of ``reply``.

        Raises:
            UsageUnknown: no usage, or no ``input_tokens`` / ``output_tokens``
                (:func:`reported_usage`); a count that is not a token count
                (:func:`token_count`).
        """
        usage = reported_usage(reply, "input_tokens", "output_tokens")

        def count(name: str) -> int:
            return token_count(usage.get(name), name)

        return cls(
            input_tokens=count("input_tokens"),
            output_tokens=count("output_tokens"),
            cache_creation_input_tokens=count("cache_creation_input_tokens"),
            cache_read_input_tokens=count("cache_read_input_tokens"),
        )


#: The most characters of prompt text one token stands for, on average over a whole
#: prompt, that any tokenizer is assumed to reach (:func:`implausible_usage`), once each run
#: of one repeated character is counted as one character (a run of spaces or of ``=`` can
#: be a single token). The byte-pair and SentencePiece vocabularies of the judge models
#: (cl100k_base, o200k_base, Claude's, Llama 3's, Gemma's) average about 3 to 5 characters
#: per token on natural text of any language and on code; with whitespace splitting their
#: longest tokens other than such runs are single long words or identifiers. 16 leaves a
#: margin of more than 3 times, and the floor counts neither the tool definition nor the
#: tokens that mark the messages, which the API also charges as input.
PROMPT_CHARS_PER_TOKEN_MAX = 16


def _prompt_text(body: Mapping[str, Any]) -> list[str]:
    """The text of a request ``body``'s system prompt and messages (Messages API and
    Chat Completions forms: a string, or a list of blocks with ``text``)."""
    parts: list[Any] = [body.get("system")]
    messages = body.get("messages")
    if isinstance(messages, list):
        parts.extend(m.get("content") for m in messages if isinstance(m, Mapping))
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, list):
            texts.extend(block["text"] for block in part
                         if isinstance(block, Mapping) and isinstance(block.get("text"), str))
    return texts


def input_token_floor(body: Mapping[str, Any]) -> int:
    """The fewest input tokens a request ``body`` can cost: 1 (a request always has
    input), or its prompt text's characters over :data:`PROMPT_CHARS_PER_TOKEN_MAX`,
    each run of one repeated character counted once."""
    import re

    chars = sum(len(re.sub(r"(.)\1+", r"\1", text, flags=re.DOTALL))
                for text in _prompt_text(body))
    return max(1, chars // PROMPT_CHARS_PER_TOKEN_MAX)


def carries_output(reply: Mapping[str, Any]) -> bool:
    """Whether ``reply`` holds anything the model wrote: a tool call or non-empty text
    (a Messages API ``content`` block; a Chat Completions choice's ``tool_calls``,
    ``function_call`` or ``content``)."""
    blocks = reply.get("content")
    if isinstance(blocks, list) and any(
            isinstance(block, Mapping) and (block.get("type") == "tool_use" or block.get("text"))
            for block in blocks):
        return True
    choices = reply.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            message = choice.get("message") if isinstance(choice, Mapping) else None
            if isinstance(message, Mapping) and any(
                    message.get(name) for name in ("tool_calls", "function_call", "content")):
                return True
    return False


def implausible_usage(body: Mapping[str, Any], reply: Mapping[str, Any],
                      usage: Usage) -> str | None:
    """Why ``usage``, read from ``reply``, cannot be true of the request ``body`` sent,
    or ``None``: fewer input tokens (cache reads and writes included) than
    :func:`input_token_floor` (0 included: every request has input), or no output token
    for a reply holding a grade, a tool call or an answer (:func:`carries_output`)."""
    tokens_in = (usage.input_tokens + usage.cache_creation_input_tokens
                 + usage.cache_read_input_tokens)
    floor = input_token_floor(body)
    if tokens_in < floor:
        return (f"the reply's usage reports {tokens_in} input tokens, fewer than the "
                f"request can cost (at least {floor})")
    if usage.output_tokens == 0 and carries_output(reply):
        return "the reply's usage reports 0 output tokens for a reply that holds an answer"
    return None


@dataclass(frozen=True)
class ModelPrice:
    """Prices of one model in US dollars per million tokens.

    Cache-write and cache-read input tokens are priced at ``input_per_mtok`` unless their
    own price is given.
    """

    input_per_mtok: float
    output_per_mtok: float
    cache_write_per_mtok: float | None = None
    cache_read_per_mtok: float | None = None

    def __post_init__(self) -> None:
        for name in ("input_per_mtok", "output_per_mtok", "cache_write_per_mtok",
                     "cache_read_per_mtok"):
            value = getattr(self, name)
            if value is None and name.startswith("cache"):
                continue
            if (price := finite_real(value)) is None or price < 0:
                raise ValueError(f"price {name} must be a finite number >= 0, got {value!r}")

    def cost(self, usage: Usage) -> float:
        """The cost in US dollars of a reply with this ``usage``."""
        write = self.input_per_mtok if self.cache_write_per_mtok is None \
            else self.cache_write_per_mtok
        read = self.input_per_mtok if self.cache_read_per_mtok is None \
            else self.cache_read_per_mtok
        total = (usage.input_tokens * self.input_per_mtok
                 + usage.output_tokens * self.output_per_mtok
                 + usage.cache_creation_input_tokens * write
                 + usage.cache_read_input_tokens * read)
        return total / 1_000_000.0


PriceTable = Mapping[str, ModelPrice]


#: ``() -> (expected, worst)`` cost in US dollars of a request (``None``: no price).
CostPlan = Callable[[], tuple[float | None, float | None]]


PricesLike = Mapping[str, Any] | str | Path


def price_table(prices: PricesLike | None) -> dict[str, ModelPrice]:
    """Normalise a price table.

    Accepts ``{model: ModelPrice}``, ``{model: (input, output)}``,
    ``{model: {"input": ..., "output": ..., "cache_write": ..., "cache_read": ...}}``
    (US dollars per million tokens), or the path of a JSON file holding the last form.

    Raises:
        ValueError: an entry of another shape, or a negative or non-finite price (the
            message names the model); a file that cannot be read, is not JSON, holds
            more than 16 MiB or nests more than 100 levels (the message names it).
    """
    if prices is None:
        return {}
    if isinstance(prices, str | Path):
        from evalkit.io.limits import LimitError, loads_json, read_capped

        path = Path(prices)
        try:  # bounded: at most 16 MiB, nested at most 100 levels (evalkit.io.limits)
            loaded = loads_json(read_capped(path).decode("utf-8"), unique_keys=True)
        except (OSError, ValueError) as exc:  # JSONDecodeError, LimitError, UnicodeError
            what = "is refused" if isinstance(exc, LimitError) else "cannot read it"
            raise ValueError(f"price table {path}: {what} ({exc})") from None
        if not isinstance(loaded, Mapping):
            raise ValueError(f"price table {path}: expected a JSON object of models")
        prices = loaded
    out: dict[str, ModelPrice] = {}
    for model, entry in prices.items():
        try:
            if isinstance(entry, ModelPrice):
                out[str(model)] = entry
            elif isinstance(entry, tuple | list) and len(entry) == 2:
                out[str(model)] = ModelPrice(entry[0], entry[1])
            elif isinstance(entry, Mapping):
                unknown = set(entry) - {"input", "output", "cache_write", "cache_read"}
                if unknown or "input" not in entry or "output" not in entry:
                    raise ValueError(
                        "expected keys input and output (optionally cache_write, cache_read)"
                    )
                out[str(model)] = ModelPrice(entry["input"], entry["output"],
                                             entry.get("cache_write"), entry.get("cache_read"))
            else:
                raise ValueError("expected (input, output) or {'input': .., 'output': ..}")
        except ValueError as exc:
            raise ValueError(f"price of model {model!r}: {exc}") from None
    return out
