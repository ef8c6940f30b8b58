"""The rows of a run, one per query or golden case, and reading a row back from its
artifact line.

A ranking run's row is a :class:`QueryResult`: ``{"type": "row", "id": ..., "metrics":
{...}, "counts": {...}, "retrieved": [...]}`` (:mod:`evalkit.data.artifact` gives the
whole format), with ``metric_errors`` (``{metric: message}``) when a metric failed on
the row and ``sample`` (an integer) when the run holds repeated samples.

A target run has a :class:`CaseResult` per golden case: what
:func:`evalkit.execute.target_runner.evaluate` produces for every case and what
aggregates receive. Its line adds ``response``, ``latency_ms`` and ``error``::

    {"type": "row", "id": "q1", "metrics": {"ndcg@10": 0.5}, "retrieved": ["d3", "d1"],
     "response": {"ranked_ids": ["d3", "d1"], "text": null, "latency_ms": 12.5,
                  "raw": {...}, "meta": {...}},
     "latency_ms": 12.5, "error": null, "requests": 1}

``requests`` (the requests the call made, retries included) is there when the target
counts them, as ``HttpTarget`` does; ``rate_limited`` (how many were answered 429 or
529) when not 0.

A row whose target call failed has ``"response": null``, empty ``metrics`` and the error
message in ``error``. Errors of metrics are per metric: a metric that failed on a case
(an LLM judge call that failed) has no value in ``metrics`` and its message in
``"metric_errors": {metric: message}``; the row keeps its response and its other
metrics, and ``error`` stays null (so ``evalkit rescore`` can recompute the metric).

What a row keeps of a response is bounded (:func:`bounded_response`): the ranked ids,
the text and the meta always; the raw body only when its JSON is at most the target's
``max_raw_bytes`` (default :data:`DEFAULT_MAX_RAW_BYTES`, 64 KiB; ``None`` keeps it in
full). A row whose raw body was dropped says so: ``"raw": null, "raw_cut": <bytes>``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evalkit.data.artifact import metric_errors_of, sample_of
from evalkit.data.targets import TargetResponse
from evalkit.io.limits import shown

#: How much of a response's raw body (bytes of its JSON) a row keeps by default.
DEFAULT_MAX_RAW_BYTES = 64 * 1024


@dataclass
class QueryResult:
    """One query's row: what was retrieved and every metric value.

    Attributes:
        query_id: the query id (text).
        retrieved: ids best first, as scored (after any depth limit): a list, or a
            read-only lazy view (:class:`evalkit.data.ranked_ids.RankedIds`) for a run read
            from a TREC file.
        metrics: ``{canonical metric name: value}``.
        counts: per-query values that are reported but never gated or compared: counts
            (num_rel, num_ret, num_rel_ret; integers) and residuals (rbp_resid).
        metric_errors: ``{metric: message}`` for metrics that failed on this query (they
            have no value in ``metrics``).
        sample: the sample number of a run with repeated samples; ``None`` (the usual
            case) means the run has one sample per query.
    """

    query_id: str
    retrieved: Sequence[str]
    metrics: dict[str, float]
    counts: dict[str, float] = field(default_factory=dict)
    metric_errors: dict[str, str] = field(default_factory=dict)
    sample: int | None = None

    @property
    def id(self) -> str:
        """The query id (``query_id``)."""
        return self.query_id

    @property
    def error(self) -> str | None:
        """Always None: a scored ranking has no failed call."""
        return None

    def to_json(self) -> dict[str, Any]:
        """The row's artifact line (the module docstring gives its keys)."""
        row: dict[str, Any] = {"type": "row", "id": self.query_id}
        if self.sample is not None:
            row["sample"] = self.sample
        row["metrics"] = self.metrics
        if self.metric_errors:
            row["metric_errors"] = self.metric_errors
        if self.counts:
            row["counts"] = self.counts
        row["retrieved"] = list(self.retrieved)
        return row


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
        requests: the requests the target made for this case, retries included, when it
            counts them (``HttpTarget``); stored as ``"requests"`` only when known.
        rate_limited: how many of those requests were answered "rate limited" (429,
            529); stored as ``"rate_limited"`` only when not 0.
    """

    case_id: str
    response: TargetResponse | None
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    latency_ms: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    metric_errors: dict[str, str] = field(default_factory=dict)
    sample: int | None = None
    requests: int | None = None
    rate_limited: int = 0

    @property
    def query_id(self) -> str:
        """The case id under the name :class:`~evalkit.data.results.RunResult` pairs rows by."""
        return self.case_id

    @property
    def id(self) -> str:
        """The case id (``case_id``)."""
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
        """Per-query counts: none for a target's case (a TREC row's are num_ret, ...)."""
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
        if self.requests is not None:
            out["requests"] = self.requests
        if self.rate_limited:
            out["rate_limited"] = self.rate_limited
        if self.details:
            out["details"] = _jsonable(self.details)
        return out


def response_to_json(response: TargetResponse) -> dict[str, Any]:
    """A JSON-ready dict of a response; values JSON cannot hold are stored as ``repr``."""
    out = {
        "ranked_ids": [str(x) for x in response.ranked_ids],
        "text": response.text,
        "latency_ms": float(response.latency_ms),
        "raw": _jsonable(response.raw),
        "meta": {str(k): _jsonable(v) for k, v in response.meta.items()},
    }
    if response.raw_cut is not None:
        out["raw_cut"] = int(response.raw_cut)
    return out


def response_from_json(obj: Mapping[str, Any]) -> TargetResponse:
    """The inverse of :func:`response_to_json`."""
    text = obj.get("text")
    cut = obj.get("raw_cut")
    if cut is not None and (isinstance(cut, bool) or not isinstance(cut, int)):
        raise ValueError(f"'raw_cut' must be a number of bytes, got {shown(cut)}")
    return TargetResponse(
        ranked_ids=[str(x) for x in obj.get("ranked_ids") or []],
        text=None if text is None else str(text),
        latency_ms=_latency(obj.get("latency_ms") or 0.0),
        raw=obj.get("raw"),
        meta=dict(obj.get("meta") or {}),
        raw_cut=cut,
    )


def bounded_response(response: TargetResponse, max_raw_bytes: int | None
                     ) -> TargetResponse:
    """What a row keeps of ``response``: all of it when its raw body's JSON is at most
    ``max_raw_bytes`` bytes (or ``max_raw_bytes`` is ``None``); otherwise the same
    response with ``raw=None`` and ``raw_cut`` set to that size (0 when the body is
    nested too deeply to be encoded)."""
    if max_raw_bytes is None or response.raw is None or response.raw_cut is not None:
        return response
    try:
        size = len(json.dumps(_jsonable(response.raw)).encode("utf-8"))
    except (RecursionError, ValueError):
        size = 0
    else:
        if size <= max_raw_bytes:
            return response
    return replace(response, raw=None, raw_cut=size)


class RawCutError(LookupError):
    """A metric used ``response.raw`` of a row that did not keep it (see
    :class:`CutRaw`)."""


class CutRaw:
    """What ``response.raw`` is, when rescoring, on a row that did not keep its raw body:
    any use of it (indexing, ``.get``, iteration, ``len``, a truth test, ``in``, text)
    raises :class:`RawCutError`, so a metric that reads the raw body is found instead
    of being scored on nothing."""

    def __init__(self, case_id: str, size: int) -> None:
        self._case_id, self._size = case_id, size

    def _refuse(self, *_: Any, **__: Any) -> Any:
        size = f" ({self._size} bytes)" if self._size else ""
        raise RawCutError(f"the raw body of case {shown(self._case_id)}{size} was not kept in "
                          "the run (max_raw_bytes)")

    __getitem__ = __iter__ = __len__ = __bool__ = __contains__ = _refuse
    __str__ = __eq__ = __hash__ = _refuse

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._refuse()

    def __repr__(self) -> str:
        return f"CutRaw(case {shown(self._case_id)}, {self._size} bytes)"


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
    metrics = {str(k): _value(v, "metric", k, float)
               for k, v in (obj.get("metrics") or {}).items()}
    errors = metric_errors_of(obj)
    bad = non_finite_errors(metrics, "read")  # 1e999 in JSON is read as infinity
    if bad:
        metrics = {k: v for k, v in metrics.items() if k not in bad}
        errors = {**bad, **errors}
    return CaseResult(
        case_id=str(obj["id"]),
        response=None if resp is None else response_from_json(resp),
        metrics=metrics,
        error=None if error is None else str(error),
        latency_ms=None if latency is None else _latency(latency),
        details={str(k): v for k, v in details.items()},
        metric_errors=errors,
        sample=sample_of(obj),
        requests=_count_of(obj, "requests"),
        rate_limited=_count_of(obj, "rate_limited") or 0,
    )


def without_response_body_json(obj: dict[str, Any]) -> dict[str, Any]:
    """A target row's artifact object without its response's body: ``raw`` dropped,
    ``ranked_ids`` cut to its first id and ``text`` to its first character (when they
    are a list and a string), the row's ``retrieved`` copy of the ids dropped; every
    other field kept, so that :func:`case_result_from_json` refuses what it refuses in
    the whole object. Another row's object (no ``response`` object) is ``obj`` itself."""
    resp = obj.get("response")
    if not isinstance(resp, dict):
        return obj
    light = dict(resp)
    light.pop("raw", None)
    if isinstance(ids := resp.get("ranked_ids"), list):
        light["ranked_ids"] = ids[:1]
    if isinstance(text := resp.get("text"), str):
        light["text"] = text[:1]
    out = {k: v for k, v in obj.items() if k != "retrieved"}
    out["response"] = light
    return out


def _count_of(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0):
        raise ValueError(f"{shown(key)} must be a number of requests, got {shown(value)}")
    return value


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


_FLOAT = frozenset({float})
_STR = frozenset({str})


def row_from_json(obj: Mapping[str, Any]) -> Any:
    """The row an artifact line holds: a :class:`CaseResult` for a
    target run's line, else a :class:`QueryResult`.

    Raises:
        ValueError: a metric value or a count that is not a number (named).
        TypeError, AttributeError: a line whose parts have the wrong shape.
    """
    if "response" in obj or "error" in obj:
        return case_result_from_json(obj)
    stored = obj.get("metrics", {})
    if type(stored) is dict and set(map(type, stored.values())) <= _FLOAT and set(
            map(type, stored)) <= _STR:  # as JSON gives them: nothing to convert or refuse
        metrics = dict(stored)
    elif isinstance(stored, Mapping):
        metrics = {str(k): _value(v, "metric", k, float) for k, v in stored.items()}
    else:
        raise ValueError(f"'metrics' is {type(stored).__name__}, not an object of "
                         "{metric name: number}")
    errors = metric_errors_of(obj) if "metric_errors" in obj else {}
    if not math.isfinite(sum(metrics.values())):  # NaN or infinity (a sum overflowing too)
        bad = non_finite_errors(metrics, "read")
        metrics = {k: v for k, v in metrics.items() if k not in bad}
        errors = {**bad, **errors}
    retrieved = obj.get("retrieved", [])
    counts = obj.get("counts", {})
    if not isinstance(counts, Mapping):
        raise ValueError(f"'counts' is {type(counts).__name__}, not an object of "
                         "{measure name: count}")
    return QueryResult(  # positional, and an empty list or object taken as it is: faster
        str(obj["id"]),
        [] if type(retrieved) is list and not retrieved else [str(x) for x in retrieved],
        metrics,
        {} if type(counts) is dict and not counts
        else {str(k): _count(v, k) for k, v in counts.items()},
        errors,
        None if obj.get("sample") is None else sample_of(obj),
    )


def non_finite_errors(metrics: Mapping[str, Any], verb: str) -> dict[str, str]:
    """``{metric: message}`` of the metrics whose value is a non-finite float (NaN,
    infinity): a failed metric, never a number; ``verb`` says what was done (``"read"``,
    ``"saved"``)."""
    return {k: f"the value is {shown(v)}, not a finite number ({verb} as an error)"
            for k, v in metrics.items() if isinstance(v, float) and not math.isfinite(v)}


#: The keys of a plain ranking row's line (:func:`plain_rows_from_json`); ``counts`` may
#: be left out.
_PLAIN_KEYS = frozenset({"type", "id", "metrics", "retrieved", "counts"})


def plain_rows_from_json(objs: Sequence[dict[str, Any]]) -> list[QueryResult] | None:
    """:func:`row_from_json` of every object at once, when each is a plain ranking row's
    line (the usual artifact): only the keys ``type``, ``id`` (text), ``metrics`` (an
    object of floats), ``retrieved`` (a list of text) and, when present, ``counts`` (an
    object of integers). ``None`` when one is anything else; the caller then reads them
    one by one, which refuses a bad line by name.

    The rows hold the objects' own ``metrics``, ``retrieved`` and ``counts`` (as
    :func:`row_from_json` holds the equal copies it makes): pass objects that nothing
    else holds, such as those just decoded from a file."""
    shapes = {tuple(o) for o in objs}  # the keys of each, in order: usually one shape
    if not all(_PLAIN_KEYS - {"counts"} <= set(keys) <= _PLAIN_KEYS for keys in shapes):
        return None
    if not ({type(o["id"]) for o in objs} <= _STR
            and {type(o["metrics"]) for o in objs} <= _DICT):
        return None
    values = [v for o in objs for v in o["metrics"].values()]
    if not (set(map(type, values)) <= _FLOAT
            and math.isfinite(sum(values))  # NaN or infinity: read as a failed metric
            and {type(k) for o in objs for k in o["metrics"]} <= _STR
            and {type(o["retrieved"]) for o in objs} <= _LIST
            and {type(x) for o in objs for x in o["retrieved"]} <= _STR):
        return None
    if not any("counts" in keys for keys in shapes):
        return [QueryResult(o["id"], o["retrieved"], o["metrics"], {}, {}, None)
                for o in objs]
    counts: list[Any] = [o.get("counts") for o in objs]
    if not ({type(c) for c in counts} <= _DICT
            and {type(v) for c in counts for v in c.values()} <= _INT
            and {type(k) for c in counts for k in c} <= _STR):
        return None  # a missing or non-integer count: read row by row
    return [QueryResult(o["id"], o["retrieved"], o["metrics"], c, {}, None)
            for o, c in zip(objs, counts, strict=True)]


_DICT = frozenset({dict})
_LIST = frozenset({list})
_INT = frozenset({int})


def _value(value: Any, what: str, name: str, kind: type[float] | type[int]) -> Any:
    """A stored number; text or a structure is refused naming the metric."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            kind is int and isinstance(value, float) and not value.is_integer()):
        noun = "an integer" if kind is int else "a number"
        raise ValueError(f"{what} {shown(name)} is {shown(value)}, not {noun}")
    try:
        return kind(value)
    except OverflowError:  # an integer beyond the float range
        size = f" of {value.bit_length()} bits" if isinstance(value, int) else ""
        raise ValueError(f"{what} {shown(name)} is an integer{size}, beyond the float range "
                         "(about 1.8e308): write a number within it") from None


def _latency(value: Any) -> float:
    """A stored ``latency_ms``: a finite number of milliseconds, at least 0.

    Raises:
        ValueError: text, a bool, NaN, an infinity (``1e999``), an int beyond the float
            range, or a negative number.
    """
    v: float = _value(value, "the field", "latency_ms", float)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"'latency_ms' is {shown(v)}, not a finite number of milliseconds >= 0")
    return v


def _count(value: Any, name: str) -> float:
    """A stored count (an integer) or, for a count-kind measure whose summary is a mean
    (a residual such as rbp_resid), a number."""
    if isinstance(value, float) and not value.is_integer() and _is_residual(name):
        return value
    count: int = _value(value, "count", name, int)
    return count


def _is_residual(name: str) -> bool:
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        return getattr(default_registry().resolve(name), "summary", None) == "mean"
    except RegistryError:
        return False
