"""What a run header records about how its rows were made.

Both ``run()`` and ``evaluate_run()`` (and the gate's baseline fingerprints) read these
fields, so two runs scored differently can be refused by name of the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from evalkit.plugins.default import default_registry


def metric_provenance(names: Sequence[str]) -> dict[str, dict[str, str]]:
    """``{canonical metric name: {"provider": ..., "version": ...}}``.

    ``provider`` is the distribution (or client module) that registered the metric and
    ``version`` its definition version, not the plugin's release number.

    Raises:
        RegistryError: an unknown or blocked name.
    """
    reg = default_registry()
    out: dict[str, dict[str, str]] = {}
    for n in names:
        spec = reg.resolve(n)
        prov = reg.provider_of(n)
        out[spec.name] = {
            "provider": prov.distribution or prov.module,
            "version": getattr(spec, "version", "1"),
        }
    return out


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
