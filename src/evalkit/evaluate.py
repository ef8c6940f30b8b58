"""``evaluate_run()``: score a precomputed run (TREC file or ``{qid: {doc: score}}``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evalkit.cases import GoldenCase
from evalkit.ranking import RankedRun, rank_run
from evalkit.registry import default_registry
from evalkit.results import QueryResult, RunResult
from evalkit.runner import metric_provenance
from evalkit.scoring import resolve_metrics, score_cases
from evalkit.targets import TargetResponse

RunInput = str | Path | RankedRun | Mapping[str, Mapping[str, float]]
QrelsInput = str | Path | Mapping[str, Mapping[str, int]] | Mapping[str, set[str]]


@dataclass(frozen=True)
class LoadedQrels:
    """Qrels as graded judgments plus where they came from."""

    judgments: dict[str, dict[str, int]]
    path: str | None
    sha256: str


def load_qrels_input(qrels: QrelsInput) -> LoadedQrels:
    """Qrels from a path (through the registered ``qrels`` loader) or a mapping."""
    if isinstance(qrels, str | Path):
        loader = default_registry().loader("qrels", path=str(qrels))
        judg = loader.fn(Path(qrels))
        digest = hashlib.sha256(Path(qrels).read_bytes()).hexdigest()
        return LoadedQrels(judgments=judg, path=str(qrels), sha256=digest)
    graded: dict[str, dict[str, int]] = {}
    for q, j in qrels.items():
        if isinstance(j, set | frozenset):
            graded[str(q)] = {str(d): 1 for d in j}
        else:
            graded[str(q)] = {str(d): int(g) for d, g in j.items()}
    canon = json.dumps(graded, sort_keys=True).encode()
    return LoadedQrels(judgments=graded, path=None, sha256=hashlib.sha256(canon).hexdigest())


def load_run_input(run: RunInput, name: str | None = None) -> RankedRun:
    """A ranked run from a path (through the registered ``run`` loader) or a mapping."""
    if isinstance(run, RankedRun):
        return run
    if isinstance(run, str | Path):
        loader = default_registry().loader("run", path=str(run))
        loaded = loader.fn(Path(run))
        if not isinstance(loaded, RankedRun):
            raise TypeError(f"run loader {loader.name!r} returned {type(loaded).__name__}")
        if name:
            loaded.name = name
        return loaded
    return rank_run(run, name=name or "run")


def evaluate_run(
    run: RunInput,
    qrels: QrelsInput,
    metrics: Sequence[str],
    relevance_level: int = 1,
    missing: Literal["zero", "skip"] = "zero",
    *,
    depth: int | None = None,
    name: str | None = None,
) -> RunResult:
    """Score a precomputed run against qrels, one row per evaluated query.

    Args:
        run: a TREC run file path, a :class:`~evalkit.ranking.RankedRun`, or
            ``{qid: {doc: score}}`` (ranked by score desc, ties by doc id desc).
        qrels: a TREC qrels path, or ``{qid: {doc: label}}`` / ``{qid: set(doc ids)}``.
        metrics: spec strings (``"ap"``, ``"ndcg@10"``, ``"P@10"``...).
        relevance_level: trec_eval ``-l``: smallest label binary measures count as relevant.
        missing: ``"zero"`` scores judged queries absent from the run as an empty ranking
            (trec_eval ``-c``); ``"skip"`` leaves them out. Both are counted in the header.
        depth: trec_eval ``-M``: only the first ``depth`` ranked documents count.
        name: the run's name (defaults to the run tag).

    Returns:
        A :class:`RunResult` whose header records ``unjudged_ignored`` (run topics with
        no judgments, ignored as trec_eval does), ``missing_scored_zero`` or
        ``missing_skipped``, the qrels hash, the settings and metric provenance.

    Raises:
        ValueError: bad ``missing`` or ``depth``; RegistryError: unknown metric.
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', got {missing!r}")
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be a positive integer, got {depth!r}")
    specs = resolve_metrics(metrics)
    count_specs = [
        e.spec for _, _, e in default_registry().entries("metric")
        if getattr(e.spec, "kind", "metric") == "count" and hasattr(e.spec, "fn")
    ]
    ranked = load_run_input(run, name)
    q = load_qrels_input(qrels)
    unjudged = sorted(set(ranked.rankings) - set(q.judgments))
    missing_ids = sorted(set(q.judgments) - set(ranked.rankings))
    qids = sorted(q.judgments)
    if missing == "skip":
        qids = [x for x in qids if x in ranked.rankings]
    responses: list[TargetResponse] = []
    cases: list[GoldenCase] = []
    retrieved: list[list[str]] = []
    for qid in qids:
        docs = ranked.rankings.get(qid, [])
        if depth is not None:
            docs = docs[:depth]
        retrieved.append(docs)
        responses.append(TargetResponse(ranked_ids=docs))
        cases.append(GoldenCase.from_judgments(qid, q.judgments[qid],
                                               relevance_level=relevance_level))
    all_specs = list(specs) + [s for s in count_specs if s not in specs]  # type: ignore[misc]
    values = score_cases(responses, cases, all_specs)  # type: ignore[arg-type]
    count_names = {s.name for s in count_specs}
    rows = []
    for c, r, v in zip(cases, retrieved, values, strict=True):
        rows.append(QueryResult(
            query_id=c.id, retrieved=r,
            metrics={k: x for k, x in v.items() if k not in count_names},
            counts={k: int(x) for k, x in v.items() if k in count_names},
        ))
    header: dict[str, Any] = {
        "evalkit_version": _version(),
        "plugins": _plugin_versions(),
        "metrics": metric_provenance([s.name for s in specs]),
        "run": {"path": ranked.path, "sha256": ranked.sha256, "tag": ranked.name},
        "qrels": {"path": q.path, "sha256": q.sha256},
        "relevance_level": relevance_level,
        "missing": missing,
        "depth": depth,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "notes": {
            "unjudged_ignored": len(unjudged),
            "unjudged_ignored_ids": unjudged[:20],
            ("missing_scored_zero" if missing == "zero" else "missing_skipped"):
                len(missing_ids),
            "missing_ids": missing_ids[:20],
            "num_queries": len(rows),
        },
    }
    return RunResult(name=name or ranked.name, per_query=rows, header=header)


def _version() -> str:
    from evalkit._version import __version__

    return __version__


def _plugin_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for info in default_registry().plugins:
        if info.distribution and info.status == "loaded":
            out[info.distribution] = info.version or "?"
    return out
