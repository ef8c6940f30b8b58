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
from typing import TYPE_CHECKING, Any, NamedTuple

from evalkit.core.providers import recorded_provider
from evalkit.data.definitions import (
    BOUNDS_KEY,
    POLARITY_KEY,
    VALUE_TYPE_KEY,
    definition_text,
    recorded_definition,
    same_recorded_definition,
    values_text,
)
from evalkit.plugins.default import default_registry

if TYPE_CHECKING:
    from evalkit.core.registry import Registry
    from evalkit.data.run_record import RunRecord


def metric_provenance(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{canonical metric name: {"provider": ..., "version": ..., "higher_is_better":
    ...}}`` (metrics and aggregates alike).

    ``provider`` is the distribution that registered the metric (also when a module of
    its package registered it at run time:
    :func:`~evalkit.core.providers.recorded_provider`), else the client module,
    ``version`` its definition version, not the plugin's release number, and
    ``higher_is_better`` its polarity (left out for a legacy ``METRICS[...] = fn`` entry,
    which declares none): a comparison of runs reads the direction from it
    (:func:`comparison_polarity`); for a per-case metric, ``value_type`` and ``bounds``
    (:func:`declared_values`), from which a comparison chooses its default test.

    Raises:
        RegistryError: an unknown or blocked name.
    """
    reg = default_registry()
    out: dict[str, dict[str, Any]] = {}
    for n in names:
        spec = reg.resolve(n)
        out[spec.name] = {
            "provider": recorded_provider(reg.provider_of(n), reg.plugins),
            "version": getattr(spec, "version", "1"),
        }
        polarity = getattr(spec, "higher_is_better", None)
        if isinstance(polarity, bool):
            out[spec.name][POLARITY_KEY] = polarity
        out[spec.name].update(declared_values(spec))
    return out


def declared_values(spec: object) -> dict[str, Any]:
    """``{"value_type": ..., "bounds": [lo, hi] or None}`` of a per-case metric (each
    None when it declares none); ``{}`` for an aggregate, which declares neither."""
    from evalkit.core.specs import MetricSpec

    if not isinstance(spec, MetricSpec):
        return {}
    bounds = None if spec.bounds is None else [float(spec.bounds[0]), float(spec.bounds[1])]
    return {VALUE_TYPE_KEY: spec.value_type, BOUNDS_KEY: bounds}


class PolarityMismatch(ValueError):
    """Runs compared by a polarity, a value type or bounds other than the ones they were
    scored with (the message names both definitions and the fix)."""


class ComparedDefinition(NamedTuple):
    """What a comparison of runs reads of one metric (:func:`comparison_definition`)."""

    higher_is_better: bool | None
    value_type: str | None
    warnings: list[str]


def comparison_polarity(
    name: str, runs: Sequence[tuple[str, Mapping[str, Any]]], registry: Registry | None = None
) -> tuple[bool | None, list[str]]:
    """``(higher_is_better, warnings)`` of :func:`comparison_definition`."""
    found = comparison_definition(name, runs, registry)
    return found.higher_is_better, found.warnings


def comparison_definition(
    name: str, runs: Sequence[tuple[str, Mapping[str, Any]]], registry: Registry | None = None
) -> ComparedDefinition:
    """The polarity and value type of ``name`` for a comparison of ``runs`` (``(label,
    header)`` pairs: ``"baseline 'a'"``), and warnings.

    The definition registered now (``registry``, default the process registry) decides,
    as long as it agrees with what the runs recorded when they were scored
    (:func:`metric_provenance`: ``higher_is_better``, ``value_type`` and ``bounds`` next
    to provider and version); a run that records none of these (written before headers
    recorded them) agrees with anything. When nothing is registered under ``name`` now,
    the recorded ones are used (None: neither says), so a stored comparison chooses the
    same test whichever plugins are loaded.

    Returns:
        A :class:`ComparedDefinition`: one warning when the provider or version
        registered now differs from the one that scored a run but the definition agrees.

    Raises:
        PolarityMismatch: two runs recorded opposite polarities or different value
            types or bounds, or the definition registered now has the opposite polarity
            of the recorded one (its direction would read improvements as regressions)
            or another value type or bounds (the default test would differ).
    """
    from evalkit.core.registry import RegistryError

    reg = registry or default_registry()
    current: dict[str, Any] | None = None
    canonical = name
    try:
        spec = reg.resolve(name)
        canonical = spec.name
        current = {"provider": recorded_provider(reg.provider_of(name), reg.plugins),
                   "version": getattr(spec, "version", "1")}
        if isinstance(getattr(spec, "higher_is_better", None), bool):
            current[POLARITY_KEY] = spec.higher_is_better
        current.update(declared_values(spec))
    except RegistryError:
        pass
    recorded = [(label, entry) for label, header in runs
                if (entry := recorded_definition(header, canonical)
                    or recorded_definition(header, name)) is not None]
    polar = [(label, e) for label, e in recorded if isinstance(e.get(POLARITY_KEY), bool)]
    typed = [(label, e) for label, e in recorded if VALUE_TYPE_KEY in e]
    fix = ("score them again with one definition (`evalkit rescore RUN -m "
           f"{canonical}`, or `evalkit run`)")
    for label, entry in polar[1:]:
        first_label, first = polar[0]
        if entry[POLARITY_KEY] != first[POLARITY_KEY]:
            raise PolarityMismatch(
                f"{canonical} was scored with opposite polarities: {first_label} by "
                f"{definition_text(first)}, {label} by {definition_text(entry)}; runs "
                f"scored by definitions that disagree on which direction is better cannot "
                f"be compared: {fix}")
    for label, entry in typed[1:]:
        first_label, first = typed[0]
        if values_text(entry) != values_text(first):
            raise PolarityMismatch(
                f"{canonical} was scored by definitions that declare different values: "
                f"{first_label} by {definition_text(first)} ({values_text(first)}), "
                f"{label} by {definition_text(entry)} ({values_text(entry)}); the "
                f"comparison's default test depends on them: {fix}")
    value_type = typed[0][1][VALUE_TYPE_KEY] if typed else None
    if current is not None and typed and VALUE_TYPE_KEY in current \
            and values_text(current) != values_text(typed[0][1]):
        label, entry = typed[0]
        raise PolarityMismatch(
            f"{canonical}: {label} was scored by {definition_text(entry)} "
            f"({values_text(entry)}), but the definition registered now is "
            f"{definition_text(current)} ({values_text(current)}); the comparison's "
            "default test depends on the value type, so it would differ with the "
            f"plugins loaded. Load the plugin that scored the runs ({entry.get('provider')}) "
            f"in place of {current.get('provider')} (see `evalkit plugins list`), or {fix}")
    if current is not None and not typed:  # runs written before headers recorded it
        value_type = current.get(VALUE_TYPE_KEY)
    if current is None or not isinstance(current.get(POLARITY_KEY), bool):
        unknown = [] if current is not None or typed or not recorded else [
            f"{canonical}: the runs record no value type (written before headers did) and "
            f"nothing registered now declares one ({recorded[0][1].get('provider')} scored "
            "them), so the default test is the one for a metric of unknown value type; "
            f"load that plugin for the test its declaration chooses, or {fix}"]
        return ComparedDefinition((polar[0][1][POLARITY_KEY] if polar else None),
                                  value_type, unknown)
    now: bool = current[POLARITY_KEY]
    if polar and polar[0][1][POLARITY_KEY] != now:
        label, entry = polar[0]
        raise PolarityMismatch(
            f"{canonical}: {label} was scored by {definition_text(entry)}, but the "
            f"definition registered now is {definition_text(current)}; comparing by "
            "it would read every improvement as a regression. Load the plugin that scored "
            f"the runs ({entry.get('provider')}) in place of {current.get('provider')} "
            f"(see `evalkit plugins list`), or {fix}")
    warnings = [
        f"{canonical}: {label} was scored by {definition_text(entry)}, but the definition "
        f"registered now is {definition_text(current)}; "
        + ("the polarity agrees, and the comparison reads it from the current definition"
           if POLARITY_KEY in entry else
           "the run records no polarity (written before headers did), so the comparison "
           "reads the direction from the current definition: make sure it is the one that "
           f"scored the runs, or {fix}")
        for label, entry in recorded
        if not same_recorded_definition(entry, current)]
    return ComparedDefinition(now, value_type, warnings[:1])


def unregistered_metric(name: str, headers: Sequence[Mapping[str, Any]],
                        registry: Registry | None = None) -> str | None:
    """Why the metric ``name`` that a run's header records (``headers``: the runs', in
    order) is not registered now, naming who scored it (the provider and its release,
    from the header) and what is wrong with that plugin now: blocked by a conflict
    (naming both plugins), installed but disabled, failed to load, or not installed (the
    ``pip install``); None when no header records ``name``."""
    from evalkit.plugins.info import install_hint, origin_of

    found = next(((h, e) for h in headers if (e := recorded_definition(h, name)) is not None),
                 None)
    if found is None:
        return None
    header, entry = found
    reg = registry or default_registry()
    dist = str(entry.get("provider"))
    release = (header.get("plugins") or {}).get(dist)
    who = f"{dist} {release}" if release else dist
    said = f"metric {name!r} was scored by {who} (the run's header records it)"
    blocked = [c for c in reg.conflicts()
               if c.name == name and not c.kernel_keeps and not c.suffix]
    if blocked:
        return f"{said}, and is blocked now: {blocked[0].message()}"
    info = next((p for p in reg.plugins if dist in (p.distribution, p.name)), None)
    if info is None:
        if "." in dist or dist == "__main__":  # a client module, not a distribution
            return (f"{said}, which is not imported now: import {dist} (or run what "
                    "registers the metric) before this")
        hint = install_hint(dist) if origin_of(dist) == "in-repo" else \
            f"install it with `pip install {dist}`"
        return f"{said}, which is not installed now: {hint}"
    if info.status == "disabled":
        by = f" (left out by {reg.selection_source})" if reg.selection_source else ""
        return f"{said}, which is installed but not enabled now{by}: enable it"
    if info.status == "failed":
        return f"{said}, which failed to load now: {info.error}"
    return (f"{said}, which is loaded but registers no metric {name!r} now (a metric a "
            "config section registers in its apply is registered when the command reads "
            "that eval config: pass it with --config)")


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
            same = same_recorded_definition(da, db)
        else:
            same = da == db
        if not same:
            flipped = isinstance(da, Mapping) and isinstance(db, Mapping) and isinstance(
                da.get(POLARITY_KEY), bool) and isinstance(db.get(POLARITY_KEY), bool) \
                and da[POLARITY_KEY] != db[POLARITY_KEY]
            diffs.append(f"metric {name} defined differently ({_shown(da)} vs {_shown(db)})"
                         + ("; the two disagree on which direction is better: score both "
                            f"runs with one definition (`evalkit rescore RUN -m {name}`)"
                            if flipped else ""))
    from evalkit.data.samples import reduction_difference

    reduced = reduction_difference(a, b, "run", "run")
    if reduced is not None:
        diffs.append(reduced)
    return diffs


def _shown(entry: Any) -> str:
    return definition_text(entry) if isinstance(entry, Mapping) else repr(entry)
