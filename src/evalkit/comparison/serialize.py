"""The versioned JSON of a comparison: what ``evalkit compare --json`` prints.

Version 1 (``"type": "comparison", "schema_version": 1``) keeps every key the 0.3 output
had and adds the description, the query ids and texts, provenance, and per comparison
the interval method, the effect sizes, the per-query differences and both runs'
per-query values (aligned with the top-level ``query_ids``), the binned distribution and
per-case details. Compared slice by slice (``by="tag"``) it adds ``by``,
``slice_family_size`` and ``slices``, one per (tag, metric, candidate)
(:meth:`evalkit.report.slices.SliceEffect.to_dict`). Non-finite numbers (an open
interval end) are ``null``; ``ci_unbounded`` lists the open ends (``"low"``,
``"high"``), so a ``null`` end it does not list was not computed. A row where no test
was possible or none could decide (fewer than 2 queries paired, or the degenerate-input
rule: ``p_note`` says ``"n too small"``) has ``p_value`` and ``p_adjusted`` ``null``, so
no script reads a p below alpha where the reports say "n too small".
docs/comparison.md lists every field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from evalkit.comparison.records import (
    ComparisonRecord,
    MetricComparison,
    QueryDelta,
    RunInfo,
    Settings,
)
from evalkit.io.limits import loads_json
from evalkit.report.slices import SliceEffect, open_ends
from evalkit.stats.results import N_TOO_SMALL

_C = TypeVar("_C", bound=ComparisonRecord)

#: The document's ``type``.
DOCUMENT_TYPE = "comparison"
#: The version :func:`to_json` writes and :func:`from_json` reads (and 0: the 0.3 output,
#: which has no ``schema_version``).
SCHEMA_VERSION = 1


def _run(info: RunInfo) -> dict[str, Any]:
    return {"name": info.name, "source": info.source, "provenance": dict(info.provenance)}


def _row(c: MetricComparison) -> dict[str, Any]:
    e = c.effect
    # no test ran (one query), or the degenerate-input rule says no test could decide
    # (p_note "n too small"): no p a script could read as significant
    tested = c.n_queries >= 2 and c.p_note != N_TOO_SMALL
    return {
        "metric": c.metric, "baseline": c.baseline, "candidate": c.candidate,
        "n_queries": c.n_queries, "n_clusters": c.n_clusters,
        "baseline_mean": c.baseline_mean,
        "candidate_mean": c.candidate_mean, "diff": c.diff, "ci_low": c.ci_low,
        "ci_high": c.ci_high, "ci_unbounded": open_ends(c.n_queries, c.ci_low, c.ci_high),
        "p_value": c.p_value if tested else None,
        "p_adjusted": c.p_adjusted if tested else None,
        "p_note": c.p_note, "significant": c.significant,
        "significant_unadjusted": c.significant_unadjusted,
        "wins": c.wins, "ties": c.ties, "losses": c.losses,
        "higher_is_better": c.higher_is_better, "standardized_effect": c.standardized_effect,
        "warnings": list(c.warnings), "top_gains": [m.to_dict() for m in c.top_gains],
        "top_losses": [m.to_dict() for m in c.top_losses], "p_resamples": c.p_resamples,
        "method": c.method, "ci_method": c.ci_method,
        "effect": None if e is None else {
            "mean_diff": e.mean_diff, "sd_diff": e.sd_diff, "standardized": e.standardized,
            "wins": e.wins, "ties": e.ties, "losses": e.losses, "skewness": e.skewness,
            "skewness_warning": e.skewness_warning},
        "differences": list(c.differences),
        "baseline_values": list(c.baseline_values),
        "candidate_values": list(c.candidate_values),
        "distribution": None if c.distribution is None else c.distribution.to_dict(),
        "details": {q: dict(d) for q, d in c.details.items()},
        "spread": None if c.spread is None else c.spread.to_dict(),
        "ppi": None if c.ppi is None else dict(c.ppi),
    }


def _document(c: ComparisonRecord, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The document of ``c`` with ``rows`` as its ``comparisons`` (not yet JSON-ready)."""
    s = c.settings
    doc: dict[str, Any] = {
        "type": DOCUMENT_TYPE, "schema_version": SCHEMA_VERSION,
        "baseline": _run(c.baseline), "candidates": [_run(r) for r in c.candidates],
        "difference": "candidate - baseline", "confidence": 1.0 - s.alpha,
        **s.to_dict(),
        "description": c.description, "metrics": list(c.metrics),
        "warnings": list(c.warnings), "query_ids": list(c.query_ids),
        "queries": dict(c.queries), "provenance": dict(c.provenance),
        "comparisons": rows,
    }
    if s.by is not None:
        doc["slices"] = [x.to_dict() for x in c.slices]
    return doc


def to_json(c: ComparisonRecord) -> dict[str, Any]:
    """``c`` as the JSON-ready document (see the module docstring)."""
    from evalkit.stats.numeric import json_ready

    return json_ready(_document(c, [_row(r) for r in c.results]))  # type: ignore[no-any-return]


def json_text(c: ComparisonRecord) -> Iterator[str]:
    """The text of ``json.dumps(to_json(c), indent=2, allow_nan=False)``, in pieces:
    each comparison's row is built and encoded when its turn comes, so neither the whole
    document (every row's per-query values as Python floats) nor its whole text is held
    at once (100 rows of 10,000 queries: 85 MB of text).

    The pieces are what :mod:`json`'s encoder writes for the document: the top-level
    object's members in order, each value encoded on its own and indented one level
    (two spaces after each line break: a JSON string holds no raw line break, so every
    line break is the encoder's), the rows two levels.

    Raises:
        ValueError: a non-finite float where :func:`~evalkit.stats.numeric.json_ready`
            leaves one (it turns every float it reaches into ``None`` or a finite one).
    """
    from evalkit.stats.numeric import json_ready

    encode = json.JSONEncoder(indent=2, allow_nan=False).encode
    doc = _document(c, [])
    for k, (key, value) in enumerate(doc.items()):
        yield ("{\n  " if k == 0 else ",\n  ") + encode(key) + ": "
        if key != "comparisons" or not c.results:
            yield encode(json_ready(value)).replace("\n", "\n  ")
            continue
        for i, r in enumerate(c.results):
            row = encode(json_ready(_row(r)))
            yield ("[\n    " if i == 0 else ",\n    ") + row.replace("\n", "\n    ")
        yield "\n  ]"
    yield "\n}"


def _opt_float(x: Any) -> float | None:
    return None if x is None else float(x)


def _effect(data: Mapping[str, Any] | None) -> Any:
    if data is None:
        return None
    from evalkit.stats.results import EffectSizes

    def num(key: str, open_value: float) -> float:
        value = data.get(key)
        return open_value if value is None else float(value)

    return EffectSizes(
        mean_diff=num("mean_diff", 0.0), sd_diff=num("sd_diff", 0.0),
        standardized=num("standardized", float("inf")), wins=int(data["wins"]),
        ties=int(data["ties"]), losses=int(data["losses"]), skewness=num("skewness", 0.0),
        skewness_warning=data.get("skewness_warning"))


def _row_from(d: Mapping[str, Any], ids: tuple[str, ...], texts: Mapping[str, str],
              correction: str = "holm") -> MetricComparison:
    from evalkit.stats.histogram import Histogram
    from evalkit.stats.spread import WithinCaseSpread

    def movers(key: str) -> tuple[QueryDelta, ...]:
        out = []
        for m in d.get(key) or ():
            delta = QueryDelta.from_dict(m)
            if delta.text is None and delta.id in texts:
                delta = QueryDelta(delta.id, delta.baseline, delta.candidate, delta.diff,
                                   texts[delta.id], delta.details)
            out.append(delta)
        return tuple(out)

    diffs = tuple(float(x) for x in d.get("differences") or ())
    if diffs and len(diffs) != len(ids):
        raise ValueError(f"comparison {d.get('metric')!r}: {len(diffs)} differences for "
                         f"{len(ids)} query ids")
    values = {}
    for key in ("baseline_values", "candidate_values"):
        # aligned with the query ids: without them (a 0.3 document) they cannot be read
        values[key] = tuple(float(x) for x in d.get(key) or ()) if ids else ()
        if values[key] and len(values[key]) != len(ids):
            raise ValueError(f"comparison {d.get('metric')!r}: {len(values[key])} {key} for "
                             f"{len(ids)} query ids")
    dist = d.get("distribution")
    p_res = d.get("p_resamples")
    untested = int(d["n_queries"]) < 2 or d.get("p_note") == N_TOO_SMALL
    return MetricComparison(
        metric=str(d["metric"]), baseline=str(d["baseline"]), candidate=str(d["candidate"]),
        n_queries=int(d["n_queries"]), baseline_mean=float(d["baseline_mean"]),
        candidate_mean=float(d["candidate_mean"]), diff=float(d["diff"]),
        ci_low=_opt_float(d.get("ci_low")), ci_high=_opt_float(d.get("ci_high")),
        # no test (fewer than 2 queries, or "n too small"): p null in the document, 1 in
        # the record read back (not significant, as every report prints it)
        p_value=1.0 if d["p_value"] is None and untested else float(d["p_value"]),
        p_adjusted=1.0 if d.get("p_adjusted") is None and untested and
        correction != "none" else _opt_float(d.get("p_adjusted")),
        significant=bool(d["significant"]),
        significant_unadjusted=bool(d.get("significant_unadjusted", d["significant"])),
        wins=int(d["wins"]), ties=int(d["ties"]), losses=int(d["losses"]),
        higher_is_better=bool(d.get("higher_is_better", True)),
        standardized_effect=_opt_float(d.get("standardized_effect")),
        warnings=tuple(str(w) for w in d.get("warnings") or ()),
        top_gains=movers("top_gains"), top_losses=movers("top_losses"),
        p_resamples=None if p_res is None else int(p_res), method=d.get("method"),
        ci_method=d.get("ci_method"), effect=_effect(d.get("effect")),
        query_ids=ids if diffs else (), differences=diffs,
        distribution=None if dist is None else Histogram.from_dict(dist),
        details={str(q): dict(v) for q, v in (d.get("details") or {}).items()},
        spread=None if not d.get("spread") else WithinCaseSpread.from_dict(d["spread"]),
        p_note=None if d.get("p_note") is None else str(d["p_note"]),
        n_clusters=None if d.get("n_clusters") is None else int(d["n_clusters"]),
        ppi=None if d.get("ppi") is None else dict(d["ppi"]),
        **values,
    )


def from_json(doc: Mapping[str, Any] | str, cls: type[_C]) -> _C:
    """The ``cls`` (:class:`~evalkit.comparison.Comparison`) of a document written by
    :func:`to_json` (or its JSON text).

    Raises:
        ValueError: not a comparison document, a version this evalkit cannot read, or a
            malformed field (the message names it).
    """
    from evalkit.comparison.text import describe

    data: Any = loads_json(doc) if isinstance(doc, str) else doc
    if not isinstance(data, Mapping) or "comparisons" not in data:
        raise ValueError("not an evalkit comparison document (no 'comparisons' list)")
    version = data.get("schema_version", 0)
    if data.get("type", DOCUMENT_TYPE) != DOCUMENT_TYPE or version not in (0, SCHEMA_VERSION):
        raise ValueError(f"comparison document of type {data.get('type')!r}, schema_version "
                         f"{version!r}: this evalkit reads schema_version {SCHEMA_VERSION}")
    try:
        fields = Settings.__dataclass_fields__
        asked = {k: data[k] for k in fields if k in data}
        for key in ("methods_used", "ci_methods_used"):
            asked[key] = tuple(asked.get(key) or ())
        settings = Settings(**asked)
        ids = tuple(str(q) for q in data.get("query_ids") or ())
        texts = {str(k): str(v) for k, v in (data.get("queries") or {}).items()}

        def run(d: Mapping[str, Any]) -> RunInfo:
            return RunInfo(str(d["name"]), d.get("source"), dict(d.get("provenance") or {}))

        return cls(
            baseline=run(data["baseline"]),
            candidates=tuple(run(r) for r in data["candidates"]),
            results=tuple(_row_from(r, ids, texts, settings.correction)
                          for r in data["comparisons"]),
            metrics=tuple(data.get("metrics") or dict.fromkeys(
                r["metric"] for r in data["comparisons"])),
            settings=settings, description=str(data.get("description") or describe(settings)),
            warnings=tuple(str(w) for w in data.get("warnings") or ()), query_ids=ids,
            queries=texts, provenance=dict(data.get("provenance") or {}),
            slices=tuple(SliceEffect.from_dict(x, correction=settings.correction)
                         for x in data.get("slices") or ()),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed comparison document: {type(exc).__name__}: {exc}"
                         ) from None


__all__ = ["DOCUMENT_TYPE", "SCHEMA_VERSION", "from_json", "json_text", "to_json"]
