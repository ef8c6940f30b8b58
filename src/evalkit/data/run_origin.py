"""Where a target run came from, as its header records it, and whether that still holds.

A target run's header records its golden set (``goldens``: ``path``, ``sha256``,
``n_cases``, ``case_digests``, optionally ``loader``) and its settings (``config``, and
the definitions of its metrics). Three questions are answered here, each in one place:

* :func:`goldens_shape_problem`: is the ``goldens`` record well formed? The artifact
  reader refuses one that is not (:func:`evalkit.data.artifact.read_artifact`).
* :func:`goldens_record_problems`: does the record agree with itself (its ``sha256`` is
  the digest of its ``case_digests``, :func:`evalkit.data.goldens.goldens_digest`)? When it
  does not, the header was edited; the golden file it names, when it is there with that
  sha256, says which cases the run lacks. Coverage counts it
  (:func:`evalkit.data.coverage.coverage_of`).
* :func:`header_changes`: what differs between a run's header and the header the same
  settings and golden set would give now. ``evalkit run --resume`` refuses a run that
  changed; ``evalkit gate`` reading an eval config takes a run that was not made from it
  as incomplete evidence (:class:`RunOrigin`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RunOrigin", "goldens_record_problems", "goldens_shape_problem",
           "header_changes", "show_case_ids"]

#: Case ids a change lists before ``...``.
SHOWN = 5


def show_case_ids(ids: Sequence[str]) -> str:
    """``"2 case(s) ('q3', 'q4')"``, at most :data:`SHOWN` ids named."""
    return f"{len(ids)} case(s) ({_named(ids)})"


def _named(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids[:SHOWN]) + (", ..." if len(ids) > SHOWN else "")


# ------------------------------------------------------------------ the record's shape
def goldens_shape_problem(value: Any) -> str | None:
    """Why a header's ``goldens`` value is not a record of a golden set, naming the
    field (``"goldens.n_cases is -1, not a count of cases"``); ``None`` when it is one
    or is absent (``None``: a run built in memory from no golden file). Every field is
    optional; a field present must have its type: ``path`` and ``loader`` text or null,
    ``sha256`` text, ``n_cases`` an integer >= 0, ``case_digests`` a mapping of text."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return (f"goldens is {_short(value)}, not a record of the golden set (path, "
                "sha256, n_cases, case_digests)")
    for key in ("path", "loader"):
        if value.get(key) is not None and not isinstance(value[key], str):
            return f"goldens.{key} is {_short(value[key])}, not text"
    if "sha256" in value and not isinstance(value["sha256"], str):
        return f"goldens.sha256 is {_short(value['sha256'])}, not text"
    n = value.get("n_cases", 0)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        return f"goldens.n_cases is {_short(n)}, not a count of cases"
    digests = value.get("case_digests", {})
    if not isinstance(digests, Mapping) or not all(
            isinstance(d, str) for d in digests.values()):
        return (f"goldens.case_digests is {_short(digests)}, not a mapping of case id to "
                "digest")
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------ the record's consistency
def goldens_record_problems(header: Mapping[str, Any], ids: Sequence[str]) -> list[str]:
    """Why the ``goldens`` record of ``header`` cannot be trusted to say which cases a run
    with rows ``ids`` should hold: its ``case_digests`` do not hash to its ``sha256``
    (the header was edited after the run, for instance cases removed from it together
    with their rows). The golden file it names, when it is a file there with that
    sha256 (unchanged since the run), is then the truth: the problem names the cases of
    that file the run has no row for. Empty when the record holds no ``sha256`` or no
    ``case_digests`` (nothing to check), or when they agree.

    Never raises: a golden file that cannot be read only leaves the cases unnamed."""
    record = header.get("goldens")
    if not isinstance(record, Mapping):
        return []
    sha, digests = record.get("sha256"), record.get("case_digests")
    if not isinstance(sha, str) or not isinstance(digests, Mapping):
        return []
    from evalkit.data.goldens import goldens_digest

    if goldens_digest(map(str, digests.values())) == sha:
        return []
    edited = (f"its header's golden-set record was edited: its {len(digests)} case "
              "digests do not hash to the sha256 it records")
    truth = _recorded_file(record)
    if truth is None:
        return [f"{edited}, so the cases the run should hold are unknown; write the run "
                "again (evalkit run --overwrite)"]
    path, file_ids = truth
    present = set(ids)
    missing = [c for c in file_ids if c not in present]
    if not missing:
        return [f"{edited}; write the run again (evalkit run --overwrite)"]
    return [f"{edited}, and the golden set {path} it names (unchanged since the run: its "
            f"sha256 matches) holds {len(file_ids)} cases, {len(missing)} of them without "
            f"a row ({_named(missing)})"]


def _recorded_file(record: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """``(path, case ids)`` of the golden file ``record`` names when it is a regular file
    whose cases hash to the recorded sha256; else ``None``."""
    path = record.get("path")
    if not isinstance(path, str) or not Path(path).is_file():
        return None
    from evalkit.data.goldens import load_goldens

    try:
        gset = load_goldens(path, loader=record.get("loader"))
    except Exception:  # unreadable: the record alone cannot say which cases
        return None
    if gset.digest() != record.get("sha256"):
        return None
    return path, gset.ids()


# ------------------------------------------------------------------ changes since the run
def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix: {}}
    return {prefix: value}


def _filled(key: str, a: Any, b: Any, keys: Collection[str]) -> bool:
    """Whether ``key`` is an empty mapping on one side that the other fills: its keys
    are listed as changes of their own (``target_kwargs.version``)."""
    return {} in (a, b) and "<absent>" in (a, b) and any(
        k.startswith(f"{key}.") for k in keys)


def header_changes(old: Mapping[str, Any], new: Mapping[str, Any], *,
                   config_keys: Collection[str] | None = None) -> list[str]:
    """What differs between a run's header ``old`` and the header ``new`` its settings and
    golden set give now, one line each: ``"config target_kwargs.version: '<absent>' ->
    'v2'"``, ``"definition of recall@1: ... -> ..."`` (a metric's provider or version),
    ``"golden set: added 2 case(s) ('q3', 'q4')"`` (also ``removed``, ``changed``, or
    ``case order changed``). Empty when nothing differs.

    Args:
        old: the run's header (any fields may be missing or odd: absent reads as
            ``'<absent>'``).
        new: a header with ``config`` (a mapping), ``metrics`` and
            ``aggregate_definitions`` (``{name: provenance}``) and ``goldens`` (a record
            with ``sha256`` and ``case_digests``).
        config_keys: compare only these top-level keys of ``config`` (those ``new``
            knows); ``None``: every key of both.
    """
    changes: list[str] = []
    old_config = old.get("config")
    old_config = old_config if isinstance(old_config, Mapping) else {}
    new_config: Mapping[str, Any] = new["config"]
    if config_keys is not None:
        old_config = {k: v for k, v in old_config.items() if k in config_keys}
        new_config = {k: v for k, v in new_config.items() if k in config_keys}
    before, after = _flatten(old_config), _flatten(new_config)
    keys = set(before) | set(after)
    for key in sorted(keys):
        a, b = before.get(key, "<absent>"), after.get(key, "<absent>")
        if a != b and not _filled(key, a, b, keys):
            changes.append(f"config {key}: {a!r} -> {b!r}")
    old_defs = {**_mapping(old.get("metrics")), **_mapping(old.get("aggregate_definitions"))}
    new_defs = {**new["metrics"], **new["aggregate_definitions"]}
    from evalkit.data.definitions import same_recorded_definition

    for metric in sorted(set(old_defs) & set(new_defs)):
        a_def, b_def = old_defs[metric], new_defs[metric]
        if not (same_recorded_definition(a_def, b_def) if isinstance(a_def, Mapping)
                and isinstance(b_def, Mapping) else a_def == b_def):
            changes.append(f"definition of {metric}: {old_defs[metric]} -> {new_defs[metric]}")
    old_g = _mapping(old.get("goldens"))
    new_g: Mapping[str, Any] = new["goldens"]
    if old_g.get("sha256") != new_g["sha256"]:
        a_dig = _mapping(old_g.get("case_digests"))
        b_dig: Mapping[str, str] = new_g["case_digests"]
        added = [c for c in b_dig if c not in a_dig]
        removed = [c for c in a_dig if c not in b_dig]
        edited = [c for c in b_dig if c in a_dig and a_dig[c] != b_dig[c]]
        parts = [f"{label} {show_case_ids(ids)}" for label, ids in
                 (("added", added), ("removed", removed), ("changed", edited)) if ids]
        changes.append("golden set: " + ("; ".join(parts) or "case order changed"))
    return changes


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class RunOrigin:
    """What a run gated with an eval config must have been made from: the header
    ``evalkit run`` would give now (:attr:`header`, as :func:`header_changes` takes it),
    the config keys that header knows (the config decides them; the target's own
    description and command-line options are not compared), and the config's file.

    Attributes:
        source: the eval config (``"evalkit.yaml"``, ``"pyproject.toml [tool.evalkit]"``).
        header: ``config``, ``metrics``, ``aggregate_definitions``, ``goldens``.
        config_keys: the top-level ``config`` keys compared.
        fix: the command that makes the run again (``"evalkit run evalkit.yaml
            --overwrite"``).
    """

    source: str
    header: Mapping[str, Any]
    config_keys: tuple[str, ...]
    fix: str

    def mismatch(self, header: Mapping[str, Any], where: str) -> str | None:
        """One line saying that the run ``where`` (``"run 't1' (out/run.jsonl)"``) with
        ``header`` was not made from :attr:`source` as it is now, what differs (worded as
        ``evalkit run --resume`` words it) and how to make it again; ``None`` when it was
        (nothing differs)."""
        if header.get("kind") != "target":
            changes = ["it is not a target run written by evalkit run"]
        else:
            changes = header_changes(header, self.header, config_keys=self.config_keys)
        if not changes:
            return None
        return (f"{where} was not made from {self.source} as it is now: "
                + "; ".join(changes) + f"; make it again: {self.fix}")
