"""What a run header records about how its rows were made.

Both ``run()`` and ``evaluate_run()`` (and the gate's baseline fingerprints) read these
fields, so two runs scored differently can be refused by name of the difference
(:func:`settings_differences`).
"""

from __future__ import annotations

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


def settings_differences(a: RunRecord, b: RunRecord) -> list[str]:
    """What differs between two runs' evaluation settings (qrels hash, relevance level,
    missing-query policy, depth, metric definitions, the reduction of repeated samples
    to per-case values: :func:`evalkit.data.samples.reduction_difference`). Empty when
    comparable."""
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
