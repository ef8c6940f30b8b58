"""One row per golden case of a target run: the response, its metrics, or its error.

A :class:`CaseResult` is what :func:`evalkit.evaluation.evaluate` produces for every case
and what aggregates receive. It is stored in the run artifact of :mod:`evalkit.results`
as a ``"row"`` line extended with ``response``, ``latency_ms`` and ``error``::

    {"type": "row", "id": "q1", "metrics": {"ndcg@10": 0.5}, "retrieved": ["d3", "d1"],
     "response": {"ranked_ids": ["d3", "d1"], "text": null, "latency_ms": 12.5,
                  "raw": {...}, "meta": {...}},
     "latency_ms": 12.5, "error": null}

A row whose target call failed has ``"response": null``, empty ``metrics`` and the error
message in ``error``. Errors of metrics are per metric: a metric that failed on a case
(an LLM judge call that failed) has no value in ``metrics`` and its message in
``"metric_errors": {metric: message}``; the row keeps its response and its other
metrics, and ``error`` stays null (so ``evalkit rescore`` can recompute the metric).
A row of a run with repeated samples carries ``"sample": n``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.artifact import metric_errors_of, sample_of
from evalkit.targets import TargetResponse


@dataclass
class CaseResult:
    """The outcome of one golden case.

    Attributes:
        case_id: the golden case id (text).
        response: what the target returned, or ``None`` when the call failed.
        metrics: ``{canonical metric name: value}``; empty on an errored row.
        error: ``None`` when the target answered; otherwise the message of the failed
            call (names the target and the case). An errored row is never scored:
            :meth:`RunResult.scores` and every built-in aggregate raise on it instead of
            reading it as 0.
        latency_ms: wall time of the target call in milliseconds (retries included), also
            for a failed call; ``None`` if unknown.
        details: ``{metric name: JSON-ready dict}`` that a metric published for this case
            through its ``details(case_id)`` method (an LLM judge: grade, reason, model,
            tokens, cost); stored as ``"details"`` only when not empty.
        metric_errors: ``{metric name: message}`` for each metric that failed on this
            case (it has no value in ``metrics``; the others keep theirs).
        sample: the sample number in a run with repeated samples, else ``None``.
    """

    case_id: str
    response: TargetResponse | None
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    latency_ms: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    metric_errors: dict[str, str] = field(default_factory=dict)
    sample: int | None = None

    @property
    def query_id(self) -> str:
        """The case id under the name :class:`~evalkit.results.RunResult` pairs rows by."""
        return self.case_id

    @property
    def id(self) -> str:
        return self.case_id

    @property
    def latency(self) -> float | None:
        """Alias of :attr:`latency_ms` (milliseconds)."""
        return self.latency_ms

    @property
    def ok(self) -> bool:
        """Whether the case has a response and every metric (no error of the call or of
        a metric)."""
        return self.error is None and not self.metric_errors

    @property
    def retrieved(self) -> list[str]:
        """The response's ranked ids (empty when there is no response)."""
        return [] if self.response is None else list(self.response.ranked_ids)

    @property
    def counts(self) -> dict[str, int]:
        return {}

    def to_json(self) -> dict[str, Any]:
        """The artifact line of this row (a JSON-ready dict)."""
        out: dict[str, Any] = {"type": "row", "id": self.case_id}
        if self.sample is not None:
            out["sample"] = self.sample
        out["metrics"] = dict(self.metrics)
        if self.metric_errors:
            out["metric_errors"] = dict(self.metric_errors)
        out.update({
            "retrieved": self.retrieved,
            "response": None if self.response is None else response_to_json(self.response),
            "latency_ms": self.latency_ms,
            "error": self.error,
        })
        if self.details:
            out["details"] = _jsonable(self.details)
        return out


def response_to_json(response: TargetResponse) -> dict[str, Any]:
    """A JSON-ready dict of a response; values JSON cannot hold are stored as ``repr``."""
    return {
        "ranked_ids": [str(x) for x in response.ranked_ids],
        "text": response.text,
        "latency_ms": float(response.latency_ms),
        "raw": _jsonable(response.raw),
        "meta": {str(k): _jsonable(v) for k, v in response.meta.items()},
    }


def response_from_json(obj: Mapping[str, Any]) -> TargetResponse:
    """The inverse of :func:`response_to_json`."""
    text = obj.get("text")
    return TargetResponse(
        ranked_ids=[str(x) for x in obj.get("ranked_ids") or []],
        text=None if text is None else str(text),
        latency_ms=float(obj.get("latency_ms") or 0.0),
        raw=obj.get("raw"),
        meta=dict(obj.get("meta") or {}),
    )


def case_result_from_json(obj: Mapping[str, Any]) -> CaseResult:
    """Rebuild a :class:`CaseResult` from its artifact line.

    Raises:
        ValueError: a field has the wrong type (the caller adds file and line).
    """
    resp = obj.get("response")
    if resp is not None and not isinstance(resp, Mapping):
        raise ValueError("'response' must be an object or null")
    latency = obj.get("latency_ms")
    error = obj.get("error")
    details = obj.get("details") or {}
    if not isinstance(details, Mapping):
        raise ValueError("'details' must be an object")
    return CaseResult(
        case_id=str(obj["id"]),
        response=None if resp is None else response_from_json(resp),
        metrics={str(k): float(v) for k, v in (obj.get("metrics") or {}).items()},
        error=None if error is None else str(error),
        latency_ms=None if latency is None else float(latency),
        details={str(k): v for k, v in details.items()},
        metric_errors=metric_errors_of(obj),
        sample=sample_of(obj),
    )


def _jsonable(value: Any) -> Any:
    """``value`` if JSON can store it as is, else its ``repr`` (never raises)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value
