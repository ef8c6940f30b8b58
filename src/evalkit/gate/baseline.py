"""Stored baselines: a run kept as the reference a gate compares against.

A baseline file is an ordinary run artifact (JSON Lines, header then rows) whose header
carries one extra key, ``"baseline"``::

    {"promoted": ISO-8601 UTC, "source": "<path of the promoted run>",
     "fingerprint": {...}}

The fingerprint it carries is :mod:`evalkit.gate.fingerprint`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit.data.coverage import completeness_lines, coverage_of
from evalkit.data.judged_match import judged_problems
from evalkit.data.results import QueryResult, RunResult
from evalkit.data.same_run import run_identity, same_file
from evalkit.gate.checks import row_error, row_id
from evalkit.gate.fingerprint import (
    BaselineError as BaselineError,
)
from evalkit.gate.fingerprint import Fingerprint, fingerprint
from evalkit.io.outputs import destination

#: Where ``evalkit baseline promote`` stores the baseline when no path is given.
DEFAULT_BASELINE_PATH = Path(".evalkit") / "baseline.jsonl"


@dataclass
class Baseline:
    """A baseline run and its fingerprint.

    ``fingerprint`` is the stored one for a promoted baseline, or computed from the run
    when a plain run is used as the baseline (``promoted`` is then ``False``).
    """

    run: RunResult
    fingerprint: Fingerprint
    promoted: bool = False
    path: Path | None = None
    promoted_at: str | None = None

    @property
    def name(self) -> str:
        """The baseline run's name."""
        return self.run.name

    def to_json(self) -> dict[str, Any]:
        """What ``evalkit baseline show --json`` prints: ``{"path", "run", "promoted",
        "promoted_at", "fingerprint"}``, the fingerprint as a promoted baseline's header
        stores it (:meth:`Fingerprint.to_json`); ``path`` and ``promoted_at`` may be
        ``None``."""
        return {"path": None if self.path is None else str(self.path), "run": self.name,
                "promoted": self.promoted, "promoted_at": self.promoted_at,
                "fingerprint": self.fingerprint.to_json()}

    @classmethod
    def from_run(cls, run: RunResult, where: str | None = None) -> Baseline:
        """A run as a baseline: the fingerprint stored in its header by :func:`promote`,
        else one computed from the run now. ``where`` names it in error messages.

        Raises:
            BaselineError: a stored fingerprint is malformed or of another version.
        """
        stored = run.header.get("baseline")
        if isinstance(stored, Mapping) and "fingerprint" in stored:
            return cls(
                run=run,
                fingerprint=Fingerprint.from_json(stored["fingerprint"], where or run.name),
                promoted=True, promoted_at=stored.get("promoted"),
            )
        return cls(run=run, fingerprint=fingerprint(run), promoted=False)


def load_baseline(path: str | Path) -> Baseline:
    """Read a baseline file (or a plain run artifact used as one).

    Raises:
        ArtifactError: the file is not a run artifact (file and line named).
        BaselineError: the stored fingerprint is malformed or of another version.
    """
    p = Path(path)
    base = Baseline.from_run(RunResult.load(p), where=str(p))
    base.path = p
    return base


def require_storable(run: RunResult, *, what: str = "a baseline",
                     then: str = "promote") -> None:
    """Refuse a run that cannot be stored as ``what`` (a baseline, a run of a history):
    every later comparison with it would be an error.

    Args:
        run: the run.
        what: what it would be stored as, for the messages (``"a baseline"``).
        then: the command to run again once the run is fixed (``"promote"``).

    Raises:
        BaselineError: the run has no rows, has errored cases, fails coverage (cases
            without a row, a file cut short or never finished: :mod:`evalkit.data.coverage`),
            was stopped early by a sequential rule (its rows are the cases the rule drew:
            :attr:`evalkit.data.coverage.Coverage.partial`), has a metric that failed on
            some case, or has a non-finite metric value.
    """
    if not run.per_query:
        raise BaselineError(f"run {run.name!r} has no rows (an empty run, or a file cut "
                            f"short in its first row); there is nothing to store as {what}")
    errored = [row_id(r) for r in run.per_query if row_error(r) is not None]
    if errored:
        shown = ", ".join(errored[:10]) + (" ..." if len(errored) > 10 else "")
        raise BaselineError(
            f"run {run.name!r} has {len(errored)} errored case(s) ({shown}); {what} must "
            f"have a result for every case. Fix or re-run them, then {then}"
        )
    partial = coverage_of(run).partial
    if partial is not None:  # complete for its sequential decision only
        where = f" ({run.integrity.path})" if run.integrity is not None else ""
        raise BaselineError(f"run {run.name!r}{where} {partial}, then {then}")
    gaps = [line.removeprefix("warning: ") for line in completeness_lines(run)
            if line.startswith("warning:")]  # incomplete, or a metric failed on a case
    gaps.extend(f"run {run.name!r}: {problem}" for problem in judged_problems(run))
    if gaps:
        raise BaselineError("; ".join(gaps) + f". {what[:1].upper()}{what[1:]} must hold "
                            "every metric on every case: resume or re-run the run (or "
                            f"rescore it), then {then}")
    for r in run.per_query:
        bad = [k for k, v in r.metrics.items() if not math.isfinite(float(v))]
        if bad:
            raise BaselineError(
                f"run {run.name!r}: case {row_id(r)!r} has a non-finite value for "
                f"{', '.join(bad)}; refusing to store it as {what}"
            )


def promote(
    run: RunResult | str | Path,
    to: str | Path = DEFAULT_BASELINE_PATH,
    *,
    drop_rankings: bool = False,
) -> Path:
    """Store ``run`` as a baseline at ``to`` (parent directories created).

    Args:
        run: a run, or the path of a run artifact.
        to: the baseline file to write.
        drop_rankings: store retrieval rows without their ranked ids (metrics and counts
            only), for a baseline small enough to commit. Rows of target runs keep their
            responses, which aggregates read.

    Returns:
        The path written.

    Raises:
        BaselineError: the run has no rows, has errored cases, fails coverage (cases
            without a row, a file cut short or never finished: :mod:`evalkit.data.coverage`),
            was stopped early by a sequential rule (``evalkit run --until-decided``),
            has a metric that failed on some case, was scored without some of its judged
            queries (``--missing skip``), or has a non-finite metric value; a
            baseline with holes would make every later comparison an error.
        ArtifactError: ``run`` is a path that is not a run artifact.
    """
    source: str | None = None
    if isinstance(run, str | Path):
        source = str(run)
        run = RunResult.load(run)
    require_storable(run)
    fp = fingerprint(run)
    header = dict(run.header)
    header["baseline"] = {
        "promoted": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source,
        "fingerprint": fp.to_json(),
    }
    rows = run.per_query
    if drop_rankings:
        rows = [QueryResult(r.query_id, [], dict(r.metrics), dict(r.counts))
                if isinstance(r, QueryResult) else r for r in rows]
    stored = RunResult(name=run.name, per_query=rows, header=header, samples=run.samples)
    return stored.save(to)


def refuse_replacing(to: Path, *, force: bool) -> None:
    """Refuse to replace an existing file at ``to`` without ``force`` (a device or pipe
    is written to, never replaced); the message says whose baseline it holds.

    Raises:
        BaselineError: ``to`` exists and ``force`` is not given.
    """
    if force or not to.exists() or destination(to) == "stream":
        return
    what = ""
    try:
        stored = load_baseline(to)
    except Exception:  # whatever it is, it is not replaced without --force
        pass
    else:
        when = f", promoted {stored.promoted_at}" if stored.promoted else ""
        what = f" (the baseline of run {stored.name!r}{when})"
    raise BaselineError(f"--to {to} already exists{what}; pass --force to replace it, or "
                        "choose another --to")


def promoted_fingerprint(run_path: Path, path: Path) -> tuple[str, Fingerprint]:
    """``(run name, fingerprint)`` of a baseline just written to ``path`` from the run at
    ``run_path``: read back from the file, or computed from the run when ``path`` is a
    device or pipe that cannot be read back."""
    if destination(path) == "stream":
        source = RunResult.load(run_path)
        return source.name, fingerprint(source)
    stored = load_baseline(path)
    return stored.name, stored.fingerprint


def refuse_the_run_itself(run: RunResult, baseline: Baseline | None,
                          compared: bool = True) -> None:
    """Refuse a baseline that is the gated run itself, when a check compares against it
    (``compared``): the same object, the same file (path, link or inode), or a copy of it
    (byte copy, or a baseline promoted from it: the same header name, start and end times
    and the same rows); a regression check against it can never fail.

    Raises:
        BaselineError: naming both files and the fix.
    """
    if baseline is None or not compared:
        return
    run_path = run.integrity.path if run.integrity is not None else None
    base_path = baseline.path or (baseline.run.integrity.path
                                  if baseline.run.integrity is not None else None)
    same = baseline.run is run or same_file(run_path, base_path)
    mine = None if same else run_identity(run)
    if not same and (mine is None or mine != run_identity(baseline.run)):
        return
    where = f" {base_path}" if base_path is not None else ""
    of = f" {run_path}" if run_path is not None else ""
    how = (f"is the gated run{of} itself" if same else
           f"is a copy of the gated run{of} (the same header name, start and end times and "
           "rows)")
    raise BaselineError(
        f"the baseline{where} {how}: a gate comparing a run with itself can never "
        "fail. Pass the baseline of an earlier run (--baseline, or the eval config's "
        "'baseline:'; evalkit baseline promote stores one), not the run being gated")


__all__ = [
    "DEFAULT_BASELINE_PATH",
    "Baseline",
    "BaselineError",
    "load_baseline",
    "promote",
    "promoted_fingerprint",
    "refuse_replacing",
    "refuse_the_run_itself",
    "require_storable",
]
