"""Per-query rows, the run that holds them, and the JSON Lines run artifact.

Every aggregate is derived from the rows; nothing else is stored as truth.

Artifact format (``schema_version`` 1), one JSON object per line, UTF-8:

* line 1, the header: ``{"type": "header", "schema_version": 1, "name": ...,
  "evalkit_version": ..., "plugins": {distribution: version}, "metrics": {name:
  {"provider": ..., "version": ...}}, "qrels": {"path": ..., "sha256": ...},
  "relevance_level": 1, "missing": "zero" | "skip", "depth": null | int,
  "created": ISO-8601 UTC, "notes": {...}}``;
* then one line per query or case: ``{"type": "row", "id": ..., "metrics": {...},
  "counts": {...}, "retrieved": [...]}`` (target runs add ``response``, ``latency_ms``
  and ``error``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


class ArtifactError(ValueError):
    """A run artifact that cannot be read; the message names the file and line."""


@dataclass
class QueryResult:
    """One query's row: what was retrieved and every metric value.

    Attributes:
        query_id: the query id (text).
        retrieved: ids best first, as scored (after any depth limit): a list, or a
            read-only lazy view (:class:`evalkit.ranking.RankedIds`) for a run read
            from a TREC file.
        metrics: ``{canonical metric name: value}``.
        counts: per-query values that are reported but never gated or compared: counts
            (num_rel, num_ret, num_rel_ret; integers) and residuals (rbp_resid).
    """

    query_id: str
    retrieved: Sequence[str]
    metrics: dict[str, float]
    counts: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.query_id

    @property
    def error(self) -> str | None:
        return None

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"type": "row", "id": self.query_id, "metrics": self.metrics}
        if self.counts:
            row["counts"] = self.counts
        row["retrieved"] = list(self.retrieved)
        return row


@dataclass
class RunResult:
    """A named run: the per-query rows and the header that says how they were made.

    ``per_query`` is always retained; :meth:`mean` and every comparison derive from it
    and pair by query id.
    """

    name: str
    per_query: list[Any]
    header: dict[str, Any] = field(default_factory=dict)

    # -- derived views -------------------------------------------------------
    def ids(self) -> list[str]:
        """The row ids in stored order."""
        return [r.query_id for r in self.per_query]

    def metric_names(self) -> list[str]:
        """Metric names present on every row, in first-row order."""
        if not self.per_query:
            return []
        names = list(self.per_query[0].metrics)
        return [n for n in names if all(n in r.metrics for r in self.per_query)]

    def scores(self, metric: str) -> dict[str, float]:
        """``{query id: value}`` of one metric.

        Raises:
            KeyError: some row lacks the metric (the message names the run and a row).
        """
        metric = self._stored_name(metric)
        out: dict[str, float] = {}
        for r in self.per_query:
            if r.error is not None:
                raise KeyError(f"run {self.name!r}: case {r.query_id!r} errored ({r.error})")
            if metric not in r.metrics:
                have = ", ".join(sorted(r.metrics)) or "none"
                raise KeyError(
                    f"run {self.name!r} has no metric {metric!r} on query {r.query_id!r} "
                    f"(it has: {have})"
                )
            out[r.query_id] = float(r.metrics[metric])
        return out

    def _stored_name(self, metric: str) -> str:
        """The name rows store for ``metric``: itself, or its canonical registry name
        (so ``"AP"``, ``"map"`` and ``"nDCG@10"`` find ``ap`` and ``ndcg@10``)."""
        if not self.per_query or metric in self.per_query[0].metrics:
            return metric
        from evalkit.registry import RegistryError, default_registry

        try:
            canonical = default_registry().resolve(metric).name
        except RegistryError:
            return metric
        return canonical if canonical in self.per_query[0].metrics else metric

    def mean(self, metric: str) -> float:
        """Mean of ``metric`` over all rows (each query weighs the same).

        Raises:
            ValueError: the run has no rows.
            KeyError: a row lacks the metric.
        """
        if not self.per_query:
            raise ValueError(f"run {self.name!r} has no rows; its mean is undefined")
        values = self.scores(metric).values()
        return math.fsum(values) / len(self.per_query)

    def means(self) -> dict[str, float]:
        """``{metric: mean}`` for every metric present on all rows."""
        return {m: self.mean(m) for m in self.metric_names()}

    # -- artifact --------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the run artifact (header line, then one line per row), atomically.

        The file is written beside ``path`` and renamed over it, so a crash never leaves
        a half-written artifact.

        Non-finite values (only possible in hand-built rows: scoring refuses them) are
        written as ``NaN``/``Infinity``, which Python's json reads back, so nothing is lost
        and a gate can report them as errors.

        Raises:
            evalkit.outputs.UnwritableError: an :class:`OSError` naming ``path`` (not the
                temporary file) and why it cannot be written.
        """
        from evalkit.outputs import writing

        p = Path(path)
        header = {"type": "header", "schema_version": SCHEMA_VERSION, "name": self.name}
        header.update({k: v for k, v in self.header.items() if k not in header})
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        with writing(p):
            p.parent.mkdir(parents=True, exist_ok=True)
            try:
                with tmp.open("w", encoding="utf-8") as fh:
                    fh.write(json.dumps(header, sort_keys=False) + "\n")
                    for row in self.per_query:
                        fh.write(json.dumps(row.to_json()) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, p)
            finally:
                with contextlib.suppress(OSError):  # never hides the error being raised
                    tmp.unlink(missing_ok=True)
        return p

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        """Read a run artifact written by :meth:`save`.

        Raises:
            ArtifactError: missing header, wrong schema, malformed line (file and line
                named), duplicate row id.
        """
        p = Path(path)
        lines = list(_read_lines(p))
        if not lines:
            raise ArtifactError(f"{p}: empty file; not an evalkit run artifact")
        lineno, header = lines[0]
        if header.get("type") != "header":
            raise ArtifactError(
                f"{p}:{lineno}: first line is not an evalkit run header; is this a TREC run "
                "file? Pass it with --qrels so it is evaluated"
            )
        if header.get("schema_version") != SCHEMA_VERSION:
            raise ArtifactError(
                f"{p}:{lineno}: schema_version {header.get('schema_version')!r} is not "
                f"supported (this evalkit reads {SCHEMA_VERSION})"
            )
        rows: list[Any] = []
        seen: set[str] = set()
        for lineno, obj in lines[1:]:
            if obj.get("type") != "row" or "id" not in obj:
                raise ArtifactError(f"{p}:{lineno}: expected a row object with an 'id'")
            rid = str(obj["id"])
            if rid in seen:
                raise ArtifactError(f"{p}:{lineno}: duplicate row id {rid!r}")
            seen.add(rid)
            try:
                rows.append(_row_from_json(obj))
            except (ValueError, TypeError, AttributeError) as exc:
                raise ArtifactError(f"{p}:{lineno}: row {rid!r}: {exc}") from None
        name = str(header.get("name") or p.stem)
        return cls(name=name, per_query=rows, header=dict(header))


def _row_from_json(obj: Mapping[str, Any]) -> Any:
    if "response" in obj or "error" in obj:
        from evalkit.rows import case_result_from_json

        return case_result_from_json(obj)
    return QueryResult(
        query_id=str(obj["id"]),
        retrieved=[str(x) for x in obj.get("retrieved", [])],
        metrics={str(k): _value(v, "metric", k, float) for k, v in obj.get("metrics", {}).items()},
        counts={str(k): _count(v, k) for k, v in obj.get("counts", {}).items()},
    )


def _value(value: Any, what: str, name: str, kind: type[float] | type[int]) -> Any:
    """A stored number; text or a structure is refused naming the metric."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            kind is int and isinstance(value, float) and not value.is_integer()):
        noun = "an integer" if kind is int else "a number"
        raise ValueError(f"{what} {name!r} is {value!r}, not {noun}")
    return kind(value)


def _count(value: Any, name: str) -> float:
    """A stored count (an integer) or, for a count-kind measure whose summary is a mean
    (a residual such as rbp_resid), a number."""
    if isinstance(value, float) and not value.is_integer() and _is_residual(name):
        return value
    count: int = _value(value, "count", name, int)
    return count


def _is_residual(name: str) -> bool:
    from evalkit.registry import RegistryError, default_registry

    try:
        return getattr(default_registry().resolve(name), "summary", None) == "mean"
    except RegistryError:
        return False


def _read_lines(p: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        fh = p.open("r", encoding="utf-8-sig")
    except FileNotFoundError:
        raise ArtifactError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ArtifactError(f"{p}: is a directory, not a run artifact") from None
    with fh:
        lines = enumerate(fh, start=1)
        while True:
            try:
                lineno, line = next(lines)
            except StopIteration:
                return
            except UnicodeDecodeError as exc:
                raise ArtifactError(
                    f"{p}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}: {exc.reason}); "
                    "a run artifact is JSON Lines in UTF-8. Is this the right file?"
                ) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ArtifactError(f"{p}:{lineno}: not valid JSON ({exc.msg} at column "
                                    f"{exc.colno})") from None
            if not isinstance(obj, dict):
                raise ArtifactError(f"{p}:{lineno}: expected a JSON object")
            yield lineno, obj


def is_artifact(path: str | Path) -> bool:
    """Whether ``path`` starts with an evalkit run header line."""
    try:
        with Path(path).open("r", encoding="utf-8-sig") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return False
    try:
        obj = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "header"


def settings_differences(a: RunResult, b: RunResult) -> list[str]:
    """What differs between two runs' evaluation settings (qrels hash, relevance level,
    missing-query policy, depth, metric definitions). Empty when comparable."""
    diffs: list[str] = []
    qa = (a.header.get("qrels") or {}).get("sha256")
    qb = (b.header.get("qrels") or {}).get("sha256")
    if qa and qb and qa != qb:
        diffs.append(f"qrels differ (sha256 {qa[:12]} vs {qb[:12]})")
    elif bool(qa) != bool(qb):
        which = a.name if qa else b.name
        other = b.name if qa else a.name
        diffs.append(
            f"run {which!r} records the qrels it was scored against but {other!r} does not; "
            "re-score both with the same qrels"
        )
    for key in ("relevance_level", "missing", "depth"):
        if key in a.header and key in b.header and a.header[key] != b.header[key]:
            diffs.append(f"{key} differs ({a.header[key]!r} vs {b.header[key]!r})")
    ma: Mapping[str, Any] = a.header.get("metrics") or {}
    mb: Mapping[str, Any] = b.header.get("metrics") or {}
    for name in sorted(set(ma) & set(mb)):
        if ma[name] != mb[name]:
            diffs.append(f"metric {name} defined differently ({ma[name]} vs {mb[name]})")
    return diffs


def iter_rows(runs: Iterable[RunResult]) -> Iterator[tuple[str, Any]]:
    for run in runs:
        for row in run.per_query:
            yield run.name, row
