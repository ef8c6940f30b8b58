"""The keys under which a target reports what one call used, in its response's ``meta``.

A :class:`~evalkit.data.targets.TargetResponse` may carry them (``HttpTarget(meta_keys=
("cost_usd", "tokens_in", "tokens_out"))`` copies them from a JSON body). The request
pacing (``tokens_per_minute``, :func:`evalkit.execute.pacing.reported_tokens`) and the
judge plugin's cost aggregates read them.
"""

from __future__ import annotations

#: The ``meta`` key of one call's cost in US dollars (a number >= 0).
COST_KEY = "cost_usd"
#: The ``meta`` keys of one call's prompt and completion tokens (integers >= 0).
TOKENS_IN_KEY, TOKENS_OUT_KEY = "tokens_in", "tokens_out"
