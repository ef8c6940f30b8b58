"""What a run header records about how its rows were made.

Both ``run()`` and ``evaluate_run()`` (and the gate's baseline fingerprints) read these
fields, so two runs scored differently can be refused by name of the difference
(:func:`settings_differences`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evalkit.core.providers import recorded_provider
from evalkit.plugins.default import default_registry
from evalkit.plugins.info import same_definition

if TYPE_CHECKING:
    from evalkit.data.run_record import RunRecord


def metric_provenance(names: Sequence[str]) -> dict[str, dict[str, str]]:
    """``{canonical metric name: {"provider": ..., "version": ...}}``.

    ``provider`` is the distribution that registered the metric (also when a module of
    its package registered it at run time:
    :func:`~evalkit.core.providers.recorded_provider`), else the client module, and
    ``version`` its definition version, not the plugin's release number.

    Raises:
        RegistryError: an unknown or blocked name.
    """
    reg = default_registry()
    out: dict[str, dict[str, str]] = {}
    for n in names:
        spec = reg.resolve(n)
        out[spec.name] = {
            "provider": recorded_provider(reg.provider_of(n), reg.plugins),
            "version": getattr(spec, "version", "1"),
        }
    return out


def restore_recorded(header: Mapping[str, Any]) -> None:
    """Let the plugins register again the metrics a run's header records the definition
    of: each config section's ``restore(header)``
    (:class:`~evalkit.core.specs.ConfigSectionSpec`), called when the header holds
    metric details (``header["details"]``, where a metric such as a judge declared in
    the eval config keeps its definition). Nothing is done for a header without them,
    so reading such a run loads no plugin."""
    if not isinstance(header.get("details"), Mapping) or not header["details"]:
        return
    from evalkit.core.specs import ConfigSectionSpec

    for _, _, entry in default_registry().entries("config section"):
        spec = entry.spec
        if isinstance(spec, ConfigSectionSpec) and spec.restore is not None:
            spec.restore(header)


def plugin_versions() -> dict[str, str]:
    """``{distribution: version}`` of every loaded plugin of the default registry."""
    out: dict[str, str] = {}
    for info in default_registry().plugins:
        if info.distribution and info.status == "loaded":
            out[info.distribution] = info.version or "?"
    return out


def base_header(
    metrics: Sequence[str],
    *,
    qrels_path: str | None,
    qrels_sha256: str,
    relevance_level: int,
    missing: str,
    depth: int | None = None,
) -> dict[str, Any]:
    """The header fields every scored run carries (see :mod:`evalkit.data.results`)."""
    from evalkit._version import __version__

    return {
        "evalkit_version": __version__,
        "plugins": plugin_versions(),
        "metrics": metric_provenance(metrics),
        "qrels": {"path": qrels_path, "sha256": qrels_sha256},
        "relevance_level": relevance_level,
        "missing": missing,
        "depth": depth,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def expected_values(run: RunRecord) -> tuple[str | None, str | None]:
    """``(source, sha256)`` of what ``run``'s metrics were scored against: ``"qrels"``
    and the header's qrels hash; ``"goldens"`` and the golden set's hash its header
    records (``goldens.expected_sha256``, else ``goldens.sha256``); ``"rows"`` and the
    sha256 of the rows' own ``expected`` values (``{case id: expected}`` as sorted,
    compact JSON); ``(None, None)`` when none is known. The gate's baseline fingerprint
    stores the pair (:func:`evalkit.gate.fingerprint.fingerprint`)."""
    qrels = run.header.get("qrels")
    if isinstance(qrels, Mapping) and qrels.get("sha256"):
        return "qrels", str(qrels["sha256"])
    for key in ("goldens", "golden_set", "golden"):
        goldens = run.header.get(key)
        if isinstance(goldens, Mapping):
            for hkey in ("expected_sha256", "sha256"):
                if goldens.get(hkey):
                    return "goldens", str(goldens[hkey])
    expected: dict[str, Any] = {}
    for row in run.per_query:
        value = getattr(row, "expected", None)
        if value is None:
            value = getattr(getattr(row, "case", None), "expected", None)
        if value is not None:
            ident = next((getattr(row, a) for a in ("case_id", "query_id", "id")
                          if getattr(row, a, None) is not None), row)
            expected[str(ident)] = value
    if expected:
        text = json.dumps(expected, sort_keys=True, separators=(",", ":"), default=str)
        return "rows", hashlib.sha256(text.encode("utf-8")).hexdigest()
    return None, None


def expected_difference(a: tuple[str | None, str | None], b: tuple[str | None, str | None],
                        in_a: str = "in the baseline", in_b: str = "in the run"
                        ) -> str | None:
    """The sentence saying that two runs' expected values (:func:`expected_values` of
    each: ``(source, sha256)``) differ, or None when they are the same; ``in_a`` and
    ``in_b`` name the runs ("in the baseline", "in 'bm25'"). The one wording of the
    gate, the history and ``evalkit compare``."""
    if a[1] == b[1]:
        return None
    if a[0] == b[0]:
        what = {"qrels": "the qrels", "goldens": "the golden file",
                "rows": "the expected values"}.get(str(a[0]), "the expected values")
        return (f"the golden set's expected values changed: {what} hash {_short(a[1])} "
                f"{in_a}, {_short(b[1])} {in_b}")
    return (f"the expected values come from {a[0] or 'nothing'} (hash {_short(a[1])}) "
            f"{in_a} but from {b[0] or 'nothing'} (hash {_short(b[1])}) {in_b}")


def _short(digest: str | None) -> str:
    return digest[:12] if digest else "none"


def settings_differences(a: RunRecord, b: RunRecord) -> list[str]:
    """What differs between two runs' evaluation settings (qrels hash, relevance level,
    missing-query policy, depth, the golden set's expected values when both runs record
    theirs otherwise than by qrels (:func:`expected_difference`, as the gate words it),
    metric definitions, the reduction of repeated samples to per-case values:
    :func:`evalkit.data.samples.reduction_difference`). Empty when comparable."""
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
    else:
        ea, eb = expected_values(a), expected_values(b)
        if ea[0] is not None and eb[0] is not None:  # qrels: compared above
            line = expected_difference(ea, eb, f"in {a.name!r}", f"in {b.name!r}")
            if line is not None:
                diffs.append(line)
    for key in ("relevance_level", "missing", "depth"):
        if key in a.header and key in b.header and a.header[key] != b.header[key]:
            diffs.append(f"{key} differs ({a.header[key]!r} vs {b.header[key]!r})")
    ma: Mapping[str, Any] = a.header.get("metrics") or {}
    mb: Mapping[str, Any] = b.header.get("metrics") or {}
    for name in sorted(set(ma) & set(mb)):
        da, db = ma[name], mb[name]
        if isinstance(da, Mapping) and isinstance(db, Mapping):
            same = same_definition(da, db)
        else:
            same = da == db
        if not same:
            diffs.append(f"metric {name} defined differently ({ma[name]} vs {mb[name]})")
    from evalkit.data.samples import reduction_difference

    reduced = reduction_difference(a, b, "run", "run")
    if reduced is not None:
        diffs.append(reduced)
    return diffs
