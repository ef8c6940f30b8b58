"""Fingerprints: what a run's stored values depend on, and how two fingerprints differ.

The fingerprint records what the stored numbers depend on, so a later comparison can
tell "the system changed" from "the yardstick changed":

* the golden set: the case ids (count and sha256 of the sorted ids) and the expected
  values (for retrieval runs the qrels sha256 from the run header; for target runs the
  golden file's sha256 when the header records one, else a hash of each row's expected
  value when rows carry one);
* the evaluation settings that change values (relevance level, missing-query policy,
  depth) when the header records them;
* the metric definitions: each metric's provider (distribution or module) and definition
  version, from the run header's ``"metrics"`` entry, plus every registered whole-run
  aggregate at promotion time. The plugin's release number is deliberately not part of it:
  a release that leaves a definition alone does not invalidate baselines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.data.definitions import definition_label, version_label
from evalkit.data.provenance import expected_difference, expected_values
from evalkit.data.results import RunResult
from evalkit.gate.checks import row_id
from evalkit.plugins.info import same_definition

if TYPE_CHECKING:
    from evalkit.core.registry import Registry

FINGERPRINT_VERSION = 1


_SETTINGS = ("relevance_level", "missing", "depth")


class BaselineError(ValueError):
    """A baseline that cannot be stored, read, or compared (the message says why)."""


def _sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Fingerprint:
    """What a run's values depend on (see the module docstring).

    Attributes:
        n_cases: number of case ids.
        ids_sha256: sha256 of the sorted case ids (JSON list).
        expected_source: where the expected values were read from: ``"qrels"``,
            ``"goldens"``, ``"rows"``, or ``None`` when the run records none.
        expected_sha256: the hash of the expected values (``None`` with no source).
        settings: ``{relevance_level, missing, depth}`` as recorded by the header.
        metrics: ``{metric name: {"provider": ..., "version": ...}}``.
        aggregates: ``{aggregate name: {"provider": ..., "version": ...}}``.
    """

    n_cases: int
    ids_sha256: str
    expected_source: str | None = None
    expected_sha256: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    aggregates: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The fingerprint as stored in a promoted baseline's header."""
        return {
            "fingerprint_version": FINGERPRINT_VERSION,
            "cases": {"count": self.n_cases, "ids_sha256": self.ids_sha256},
            "expected": {"source": self.expected_source, "sha256": self.expected_sha256},
            "settings": dict(self.settings),
            "metrics": {k: dict(v) for k, v in self.metrics.items()},
            "aggregates": {k: dict(v) for k, v in self.aggregates.items()},
        }

    def lines(self) -> list[str]:
        """The fingerprint for people, one fact a line: cases, expected values, settings,
        metric and aggregate definitions."""
        lines = [f"cases: {self.n_cases} (ids sha256 {self.ids_sha256[:12]})"]
        if self.expected_source:
            lines.append(f"expected values: {self.expected_source} sha256 "
                         f"{(self.expected_sha256 or '')[:12]}")
        else:
            lines.append("expected values: not recorded by the run")
        if self.settings:
            lines.append("settings: " + ", ".join(f"{k}={v!r}" for k, v in self.settings.items()))
        for name, d in sorted(self.metrics.items()):
            lines.append(f"metric {name}: {definition_label(d)}")
        if self.aggregates:
            lines.append("aggregates: " + ", ".join(
                f"{n} ({d.get('provider')} {version_label(d.get('version'))})" for n, d in sorted(
                    self.aggregates.items())))
        return lines

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "baseline") -> Fingerprint:
        """Read :meth:`to_json`'s mapping back (BaselineError naming ``where`` if malformed)."""
        try:
            version = data.get("fingerprint_version")
            if version != FINGERPRINT_VERSION:
                raise BaselineError(
                    f"{where}: fingerprint_version {version!r} is not supported (this "
                    f"evalkit reads {FINGERPRINT_VERSION}); promote the baseline again"
                )
            cases = data["cases"]
            expected = data.get("expected") or {}
            return cls(
                n_cases=int(cases["count"]),
                ids_sha256=str(cases["ids_sha256"]),
                expected_source=expected.get("source"),
                expected_sha256=expected.get("sha256"),
                settings=dict(data.get("settings") or {}),
                metrics={str(k): dict(v) for k, v in (data.get("metrics") or {}).items()},
                aggregates={str(k): dict(v) for k, v in (data.get("aggregates") or {}).items()},
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            if isinstance(exc, BaselineError):
                raise
            raise BaselineError(f"{where}: malformed baseline fingerprint ({exc})") from None


def aggregate_definitions(
    names: Sequence[str] | None = None, registry: Registry | None = None
) -> dict[str, dict[str, str]]:
    """``{aggregate name: {"provider", "version"}}`` from ``registry`` (default: the
    process registry), for the given names (unknown ones skipped) or for every registered
    aggregate but the aggregates of a metric (``krippendorff_alpha``: recorded only when
    named, as ``krippendorff_alpha(metric=correctness)``)."""
    from evalkit.core.providers import recorded_provider
    from evalkit.core.registry import RegistryError
    from evalkit.core.specs import AggregateSpec
    from evalkit.plugins.default import default_registry

    reg = registry or default_registry()
    out: dict[str, dict[str, str]] = {}
    if names is None:
        names = [key for _, key, e in reg.entries("metric")
                 if isinstance(e.spec, AggregateSpec) and e.spec.of_metric is None]
    for name in names:
        try:
            spec = reg.resolve(name)
            if not isinstance(spec, AggregateSpec):
                continue
            provider = recorded_provider(reg.provider_of(name), reg.plugins)
        except RegistryError:
            continue
        out[spec.name] = {"provider": provider, "version": spec.version}
    return out


def fingerprint(run: RunResult, *, aggregates: bool = True) -> Fingerprint:
    """The fingerprint of ``run`` as it stands (header and rows).

    ``aggregates=True`` records every aggregate registered in the default registry now.
    """
    ids = sorted(row_id(r) for r in run.per_query)
    source, digest = expected_values(run)
    settings = {k: run.header[k] for k in _SETTINGS if k in run.header}
    metrics_raw = run.header.get("metrics") or {}
    metrics = {
        str(k): {"provider": str(v.get("provider")), "version": str(v.get("version"))}
        for k, v in metrics_raw.items() if isinstance(v, Mapping)
    }
    return Fingerprint(
        n_cases=len(ids), ids_sha256=_sha256(ids), expected_source=source,
        expected_sha256=digest, settings=settings, metrics=metrics,
        aggregates=aggregate_definitions() if aggregates else {},
    )


def _definition(entry: Mapping[str, str] | None) -> str:
    if entry is None:
        return "not recorded"
    return definition_label(entry)


def fingerprint_differences(
    baseline: Fingerprint,
    current: Fingerprint,
    *,
    metrics: Sequence[str] = (),
    aggregates: Sequence[str] = (),
    baseline_ids: Sequence[str] | None = None,
    current_ids: Sequence[str] | None = None,
    compare_ids: bool = True,
) -> list[str]:
    """What changed between a baseline's fingerprint and the current run's, in words.

    Args:
        baseline, current: the two fingerprints.
        metrics: per-case metric names whose definitions must match.
        aggregates: aggregate names whose definitions must match.
        baseline_ids, current_ids: the case ids, to name the cases that differ.
        compare_ids: whether the case-id sets must be equal (off for scoped checks, which
            compare their own cases).

    Returns:
        One sentence per difference; empty when the two are comparable.
    """
    out: list[str] = []
    if compare_ids and baseline.ids_sha256 != current.ids_sha256:
        if baseline_ids is not None and current_ids is not None:
            out.append(case_set_difference(baseline_ids, current_ids))
        else:
            out.append(f"the case ids changed ({baseline.n_cases} case(s) in the baseline, "
                       f"{current.n_cases} in the run)")
    expected = expected_difference((baseline.expected_source, baseline.expected_sha256),
                                   (current.expected_source, current.expected_sha256))
    if expected is not None:
        out.append(expected)
    for key in _SETTINGS:
        if key in baseline.settings and key in current.settings and (
            baseline.settings[key] != current.settings[key]
        ):
            out.append(f"setting {key} changed: {baseline.settings[key]!r} in the baseline, "
                       f"{current.settings[key]!r} in the run")
    for kind, names, base_defs, cur_defs, where in (
        ("metric", metrics, baseline.metrics, current.metrics, "in the run"),
        ("aggregate", aggregates, baseline.aggregates, current.aggregates, "now"),
    ):
        for name in names:
            b, c = base_defs.get(name), cur_defs.get(name)
            if (b is None) != (c is None) or (b is not None and not same_definition(b, c or {})):
                out.append(f"{kind} {name} is defined differently: {_definition(b)} in the "
                           f"baseline, {_definition(c)} {where}")
    return out


def case_set_difference(baseline_ids: Sequence[str], current_ids: Sequence[str]) -> str:
    """A sentence naming the cases only in the run and only in the baseline."""
    b, c = set(baseline_ids), set(current_ids)
    only_run = sorted(c - b)
    only_base = sorted(b - c)

    def show(ids: list[str]) -> str:
        return ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")

    parts = []
    if only_run:
        parts.append(f"{len(only_run)} only in the run ({show(only_run)})")
    if only_base:
        parts.append(f"{len(only_base)} only in the baseline ({show(only_base)})")
    return "the baseline covers different cases: " + "; ".join(parts or ["(none)"])
