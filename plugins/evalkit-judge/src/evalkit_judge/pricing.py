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
    missing, negative, not finite, not a whole number or not a number; or a body that is
    not JSON or is refused as malformed): the
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
