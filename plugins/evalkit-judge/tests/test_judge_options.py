"""LLMJudge's ``timeout`` is checked when the judge is built, as HttpTarget's numeric
options are (plugins/evalkit-http/tests/test_http_options.py): NaN, infinities, zero,
negatives, booleans and text are refused before any request."""

from __future__ import annotations

import math

import pytest


@pytest.mark.parametrize("value", [-1, 0, math.nan, math.inf, True, "30"])
def test_the_judges_timeout_is_checked_as_well(value: object) -> None:
    from evalkit_judge.judge import LLMJudge

    with pytest.raises(ValueError, match=r"^timeout must be a finite number of seconds > 0"):
        LLMJudge("Is it right?", model="claude-test", timeout=value)  # type: ignore[arg-type]
    assert LLMJudge("Is it right?", model="claude-test", timeout=2.5).timeout == 2.5
