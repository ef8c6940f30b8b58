"""What a judge's request will cost: prices, estimates before sending, and what the replies
teach about input and output tokens.

A :class:`CostModel` is one judge model's: it prices usage (:meth:`CostModel.cost`),
estimates a dry run's requests (:meth:`CostModel.estimate`), and plans the expected and
worst cost of a request the budget must fit before it is sent (:meth:`CostModel.plan`,
docs/judge.md "How --max-cost decides"), learning from each reply (:meth:`CostModel.calibrate`).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from evalkit_judge.budget import Budget, CostPlan, ModelPrice, Usage
from evalkit_judge.grades import canonical_json, untrusted_reply
from evalkit_judge.pricing import UsageUnknown, implausible_usage

log = logging.getLogger("evalkit_judge")

#: Characters per token assumed when nothing better is known: dry-run estimates, and the
#: first request of a judge whose client cannot count tokens (conservative for English).
CHARS_PER_TOKEN = 3.0
#: Tokens the API adds to a request for the tool definition and tool-use instructions
#: (part of the same fallback estimate).
TOOL_OVERHEAD_TOKENS = 500
#: Output tokens assumed for a typical grade in dry-run estimates.
TYPICAL_OUTPUT_TOKENS = 150


class CostModel:
    """The prices of one judge model and what its replies have shown.

    Args:
        prices: ``{model: ModelPrice}`` (:func:`~evalkit_judge.budget.price_table`).
        model: the model asked.
        max_tokens: the output token cap of a request (the worst case).
    """

    def __init__(self, prices: Mapping[str, ModelPrice], model: str, max_tokens: int) -> None:
        self.prices = prices
        self.model = model
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        # from the replies: the request length and input tokens of the reply with the most
        # input tokens per character, and the most output tokens of any reply
        self._calibration: tuple[int, int] | None = None
        self._most_output: int | None = None

    def price(self, model: str | None = None) -> ModelPrice | None:
        """The price of ``model`` (default: the judge's), or ``None`` when not configured."""
        return self.prices.get(model or self.model)

    def cost(self, usage: Usage, served_model: str | None = None) -> float | None:
        """The cost in US dollars of ``usage``; ``None`` without a price."""
        price = self.price() or (self.price(served_model) if served_model else None)
        return None if price is None else price.cost(usage)

    def estimate(self, body: Mapping[str, Any]) -> tuple[float | None, float | None]:
        """``(typical, worst)`` cost in US dollars of sending ``body``; ``None`` without a
        price. Input tokens are estimated from the request's length."""
        price = self.price()
        if price is None:
            return None, None
        tokens_in = math.ceil(len(canonical_json(body)) / CHARS_PER_TOKEN) \
            + TOOL_OVERHEAD_TOKENS
        typical = price.cost(Usage(tokens_in, min(self.max_tokens, TYPICAL_OUTPUT_TOKENS)))
        worst = price.cost(Usage(tokens_in, self.max_tokens))
        return typical, worst

    def reply_usage(self, read: Callable[[Mapping[str, Any]], Usage],
                    body: Mapping[str, Any], reply: Mapping[str, Any], what: str) -> Usage:
        """The usage of ``reply`` (to the request ``body``) as ``read`` (a provider's
        ``usage``) gives it, learnt from (:meth:`calibrate`).

        The one place a reply's cost is decided: when the reply cannot be trusted
        (:func:`~evalkit_judge.grades.untrusted_reply`: not JSON, a repeated key in the
        body or in JSON text inside it) or ``read`` cannot read its counts
        (:class:`~evalkit_judge.pricing.UsageUnknown`: no usage, a missing count, a count
        that is not a count; or any other failure of ``read`` on a reply of an unexpected
        shape), or the counts cannot be true of ``body``
        (:func:`~evalkit_judge.pricing.implausible_usage`: 0 input tokens, fewer than the
        prompt's text can be, or 0 output tokens for a reply holding an answer):
        :meth:`fallback_usage`, logged as a warning naming ``what`` (the model
        and the case)."""
        try:
            why = untrusted_reply(reply)
            if why is not None:
                raise UsageUnknown(why)
            usage = read(reply)
            why = implausible_usage(body, reply, usage)
            if why is not None:
                raise UsageUnknown(why)
        except (UsageUnknown, LookupError, TypeError, AttributeError, ValueError) as exc:
            # charged the worst case: a reply cannot lower it
            usage = self.fallback_usage(body)
            log.warning("%s: %s; charged the request's worst-case estimate (%d input, %d "
                        "output tokens)", what, exc, usage.input_tokens, usage.output_tokens)
            return usage
        self.calibrate(body, usage)
        return usage

    def fallback_usage(self, body: Mapping[str, Any]) -> Usage:
        """The usage charged for a reply whose token counts cannot be trusted
        (:class:`~evalkit_judge.pricing.UsageUnknown`): the request's worst case, input
        estimated conservatively (:data:`CHARS_PER_TOKEN`, :data:`TOOL_OVERHEAD_TOKENS`)
        and ``max_tokens`` of output, so no reply lowers what is recorded as spent."""
        tokens_in = math.ceil(len(canonical_json(body)) / CHARS_PER_TOKEN) \
            + TOOL_OVERHEAD_TOKENS
        return Usage(tokens_in, self.max_tokens)

    def plan(self, body: Mapping[str, Any], budget: Budget,
             count_tokens: Callable[[Mapping[str, Any]], int | None]) -> CostPlan:
        """``() -> (expected, worst)`` cost in US dollars of sending ``body`` now, from
        what this model knows when it is called; ``(None, None)`` without a price. See
        docs/judge.md, "How --max-cost decides".

        Input tokens, when the spending is limited and the worst case might not fit in
        what the budget has left: counted once, here, by the API's token counting endpoint
        (when the client has ``messages.count_tokens``). Otherwise estimated: expected, from
        the reply of this judge with the most input tokens per character of request (before
        any reply, the conservative :data:`CHARS_PER_TOKEN` estimate); worst, the larger
        of that and the conservative estimate. Output tokens: ``max_tokens`` in the worst
        case; expected, the most any earlier reply of this judge used (none before the
        first reply).
        """
        price = self.price()
        if price is None:
            return lambda: (None, None)
        chars = len(canonical_json(body))
        conservative = math.ceil(chars / CHARS_PER_TOKEN) + TOOL_OVERHEAD_TOKENS

        def estimated_input() -> tuple[int, int]:
            with self._lock:
                calibration = self._calibration
            if calibration is None:
                return conservative, conservative
            seen_chars, seen_tokens = calibration
            scaled = -(-seen_tokens * chars // seen_chars)  # ceil, in integers
            return scaled, max(scaled, conservative)

        counted = None
        headroom = budget.headroom()
        if headroom is not None and budget.stopped is None \
                and price.cost(Usage(estimated_input()[1], self.max_tokens)) > headroom:
            counted = count_tokens(body)

        def plan() -> tuple[float | None, float | None]:
            expected_in, worst_in = (counted, counted) if counted is not None \
                else estimated_input()
            with self._lock:
                most_output = self._most_output
            expected_out = 0 if most_output is None else min(most_output, self.max_tokens)
            return (price.cost(Usage(expected_in, expected_out)),
                    price.cost(Usage(worst_in, self.max_tokens)))

        return plan

    def calibrate(self, body: Mapping[str, Any], usage: Usage) -> None:
        """Learn input tokens per character and output tokens from one reply."""
        tokens_in = (usage.input_tokens + usage.cache_creation_input_tokens
                     + usage.cache_read_input_tokens)
        chars = len(canonical_json(body))
        with self._lock:
            if tokens_in > 0 and chars > 0:
                old = self._calibration
                if old is None or tokens_in * old[0] > old[1] * chars:
                    self._calibration = (chars, tokens_in)
            self._most_output = max(self._most_output or 0, usage.output_tokens)
