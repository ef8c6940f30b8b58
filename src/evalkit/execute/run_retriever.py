"""``run()``: evaluate a retriever callable over queries with qrels, keeping every row.

``METRICS`` is the metric table of ``(retrieved, relevant, k) -> float`` families;
it is a view of the one registry, so ``METRICS["precision"] = fn`` adds a family
``precision@k`` with no declared polarity (``run()`` and ``compare`` use it; gates refuse it).
As a dict's assignment does, it replaces a family of that name that a plugin provides
(``evalkit-retrieval``'s ``precision@k``), with a warning, for the rest of the process;
``del METRICS["precision"]`` gives the plugin's family back.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from evalkit.core.providers import RegistryError, client_provider
from evalkit.core.specs import MetricFamily
from evalkit.data.cases import GoldenCase
from evalkit.data.provenance import base_header
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetResponse
from evalkit.execute.scoring import require_metrics, resolve_metrics, score_rankings
from evalkit.io.limits import first_repeated
from evalkit.plugins.default import default_registry

Qrels = Mapping[str, set[str]] | Mapping[str, Mapping[str, int]]


class _MetricsTable(MutableMapping[str, Callable[..., float]]):
    """Dict-like view of the registry's ``name@k`` families with a core function."""

    def _families(self) -> dict[str, MetricFamily]:
        out: dict[str, MetricFamily] = {}
        for _, _key, entry in default_registry().entries("metric"):
            spec = entry.spec
            if isinstance(spec, MetricFamily) and spec.core is not None:
                out[spec.name] = spec
        return out

    def __getitem__(self, name: str) -> Callable[..., float]:
        fam = self._families().get(name)
        if fam is None or fam.core is None:
            raise KeyError(name)
        return fam.core

    def __setitem__(self, name: str, fn: Callable[..., float]) -> None:
        from evalkit.metrics.retrieval import core_family

        existing = self._families().get(name)
        if existing is not None and existing.core is fn:
            return
        provider = client_provider(fn)
        replaced = default_registry().replace(core_family(name, fn, None), provider)
        if replaced is not None and not replaced.provider.is_client:
            warnings.warn(
                f"METRICS[{name!r}] = {getattr(fn, '__name__', fn)!r} replaces the {name}@k "
                f"family of {replaced.provider} in this process (its spellings, e.g. "
                f"{name}@10, now score with your function; `del METRICS[{name!r}]` gives it "
                "back)", UserWarning, stacklevel=2)

    def __delitem__(self, name: str) -> None:
        reg = default_registry()
        key = f"{name}@k"
        for _, k, entry in reg.entries("metric"):
            if k == key:
                if not entry.provider.is_client:
                    raise RegistryError(
                        f"{name!r} is provided by {entry.provider}; only client entries can be "
                        "deleted"
                    )
                reg.remove("metric", key)
                return
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._families())

    def __len__(self) -> int:
        return len(self._families())


#: The registry's ``name@k`` metric families with a core function, as a mapping of
#: name to function (0.2's table; assigning a function registers it).
METRICS: MutableMapping[str, Callable[..., float]] = _MetricsTable()


def run(
    name: str,
    retriever: Callable[[Any], Sequence[str]],
    queries: Iterable[Any],
    qrels: Qrels,
    metrics: Sequence[str],
    *,
    relevance_level: int = 1,
) -> RunResult:
    """Evaluate ``retriever`` on every query and keep one row per query.

    Args:
        name: the run's name.
        retriever: ``(query) -> list[str]`` of ids, best first.
        queries: objects with an ``.id`` (any type; ids are compared as text).
        qrels: ``{query id: set of relevant ids}`` or graded ``{query id: {doc: label}}``.
        metrics: spec strings (``"recall@10"``, ``"ndcg@10"``) resolved in the registry.
        relevance_level: smallest label binary measures count as relevant (trec_eval -l).

    Returns:
        A :class:`RunResult` whose rows keep the retrieved ids and every metric.

    Raises:
        KeyError: a query has no entry in ``qrels`` (an unjudged query is never scored 0).
        ValueError: the retriever returned a duplicate id for a query, or a metric names
            ``rel=`` above 1 (run() takes binary qrels).
        RegistryError: an unknown metric name.
    """
    from evalkit.execute.run_evaluator import load_qrels_input

    require_metrics(metrics)
    specs = resolve_metrics(metrics)
    _refuse_graded_levels(specs)
    loaded = load_qrels_input(qrels, list(metrics))
    qrels_by_text = loaded.judgments
    responses: list[TargetResponse] = []
    cases: list[GoldenCase] = []
    seen: set[str] = set()
    for query in queries:
        qid = str(query.id)
        if qid in seen:
            raise ValueError(f"query id {qid!r} appears twice in queries")
        seen.add(qid)
        if qid not in qrels_by_text:
            raise KeyError(
                f"query {qid!r} has no entry in qrels; an unjudged query cannot be scored "
                "(add its judgments or drop it from the queries)"
            )
        retrieved = _ids_from(retriever(query), name, qid)
        dup = first_repeated(retrieved)
        if dup is not None:
            raise ValueError(
                f"run {name!r}: the retriever returned doc {dup!r} twice for query {qid!r}"
            )
        responses.append(TargetResponse(ranked_ids=retrieved))
        judg = qrels_by_text[qid]
        cases.append(
            GoldenCase.from_judgments(qid, judg, relevance_level=relevance_level,
                                      query=str(getattr(query, "text", "") or ""))
        )
    rows = score_rankings(responses, cases, specs)
    header = base_header(
        [s.name for s in specs], qrels_path=None, qrels_sha256=loaded.sha256,
        relevance_level=relevance_level, missing="error",
    )
    header["notes"] = {"num_queries": len(rows)}
    return RunResult(name=name, per_query=rows, header=header)


def _refuse_graded_levels(specs: Sequence[Any]) -> None:
    """run() takes binary qrels (sets of relevant ids): a measure's ``rel=`` above 1 would
    find nothing relevant, so it is refused."""
    from evalkit.core.metric_names import MetricNameError, parse_name

    for spec in specs:
        try:
            parsed = parse_name(spec.name)
        except MetricNameError:
            continue
        level = parsed.params.get("rel") if parsed is not None else None
        if isinstance(level, int) and level > 1:
            raise ValueError(
                f"{spec.name!r}: run() takes binary qrels (sets of relevant ids), so "
                f"rel={level} would count nothing as relevant; score graded qrels "
                "({doc: label}) with evaluate_run(), or drop rel="
            )


def _ids_from(out: Any, name: str, qid: str) -> list[str]:
    """The retriever's ranked ids as text; refuses anything but a sequence of ids."""
    if isinstance(out, str | bytes) or not isinstance(out, Sequence | Iterable):
        raise TypeError(
            f"run {name!r}: the retriever returned {type(out).__name__} for query {qid!r}; "
            "it must return a list of document ids (str), best first"
        )
    ids: list[str] = []
    for item in out:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise TypeError(
                f"run {name!r}: the retriever returned {item!r} ({type(item).__name__}) in the "
                f"ranking of query {qid!r}; each item must be a document id (str). "
                "To rank {doc: score} pairs, use evaluate_run()"
            )
        ids.append(str(item))
    return ids


