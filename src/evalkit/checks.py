"""Checks: what a gate asserts about a run, read from a YAML file.

A checks file is a mapping with one key, ``checks``, holding a list of checks::

    checks:
      - id: recall_floor            # required, unique in the file
        metric: recall@10           # required; resolved when the gate runs
        op: ">="                    # "<=" | ">=" | "=="   (threshold checks)
        threshold: 0.60             # a finite number        (threshold checks)
        level: block                # "block" (default) | "warn"
        scope: [q1, q2]             # optional: only these case ids

      - id: no_ndcg_regression
        metric: ndcg@10
        vs_baseline: no_significant_regression   # (baseline checks)
        alpha: 0.05                              # optional, default 0.05, in (0, 1)

Each check is a threshold check (``op`` and ``threshold``) or a baseline check
(``vs_baseline``), never both and never neither. Every problem is raised at load as a
:class:`CheckError` whose message starts with the file, then the check id (or its
position) and the offending key.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

Op = Literal["<=", ">=", "=="]
Level = Literal["block", "warn"]
BaselineRule = Literal["no_significant_regression"]

#: The comparison operators a threshold check accepts.
OPS: tuple[Op, ...] = ("<=", ">=", "==")
LEVELS: tuple[Level, ...] = ("block", "warn")
BASELINE_RULES: tuple[BaselineRule, ...] = ("no_significant_regression",)
DEFAULT_ALPHA = 0.05

#: The fixed tolerance of ``==`` (not configurable): ``math.isclose`` with these values.
EQ_REL_TOL = 1e-9
#: The absolute tolerance of ``==`` (with :data:`EQ_REL_TOL`).
EQ_ABS_TOL = 1e-12

CHECK_KEYS: tuple[str, ...] = (
    "id", "metric", "op", "threshold", "vs_baseline", "alpha", "level", "scope",
)
TOP_LEVEL_KEYS: tuple[str, ...] = ("checks",)

#: a line whose ``op`` value starts unquoted with ``>`` or ``|`` (YAML block scalars)
_UNQUOTED_OP = re.compile(r"^\s*(?:-\s+)?op\s*:\s*[>|]")


class CheckError(ValueError):
    """A checks file that cannot be used, or a check that cannot be evaluated.

    Load-time messages name the file and the check; run-time messages (from
    :meth:`CheckSpec.select`) name the check and the cases concerned.
    """


def row_id(row: Any) -> str:
    """The case id of a row: ``case_id`` (target runs) or ``query_id`` (retrieval runs)."""
    for attr in ("case_id", "query_id", "id"):
        value = getattr(row, attr, None)
        if value is not None:
            return str(value)
    raise CheckError(f"row {row!r} has no case id (expected a case_id or query_id attribute)")


def row_error(row: Any) -> str | None:
    """The error text of a row whose case failed, else ``None``."""
    err = getattr(row, "error", None)
    return None if err is None else str(err)


def _rows_of(rows: Any) -> list[Any]:
    per_query = getattr(rows, "per_query", None)
    return list(per_query if per_query is not None else rows)


def compare_threshold(observed: float, op: Op, threshold: float) -> bool:
    """Whether ``observed op threshold`` holds.

    ``<=`` and ``>=`` are exact (the boundary itself passes). ``==`` is
    ``math.isclose(observed, threshold, rel_tol=1e-9, abs_tol=1e-12)``. A NaN never
    satisfies any op.
    """
    if math.isnan(observed) or math.isnan(threshold):
        return False
    if op == "<=":
        return observed <= threshold
    if op == ">=":
        return observed >= threshold
    if op == "==":
        return math.isclose(observed, threshold, rel_tol=EQ_REL_TOL, abs_tol=EQ_ABS_TOL)
    raise ValueError(f"unknown op {op!r}; use one of {', '.join(OPS)}")


@dataclass(frozen=True)
class CheckSpec:
    """One check of a gate.

    Attributes:
        id: unique name within its file; reporters show it.
        metric: a metric or aggregate name as written (resolved when the gate runs).
        op, threshold: the comparison of a threshold check (``None`` on baseline checks).
        vs_baseline: ``"no_significant_regression"`` on baseline checks, else ``None``.
        alpha: significance level of a baseline check, in (0, 1); ``None`` on threshold
            checks.
        level: ``"block"`` (decides the exit code) or ``"warn"`` (reported only).
        scope: the case ids the check covers, or ``None`` for every case of the run.
        source: the file the check came from (for messages), if any.
    """

    id: str
    metric: str
    op: Op | None = None
    threshold: float | None = None
    vs_baseline: BaselineRule | None = None
    alpha: float | None = None
    level: Level = "block"
    scope: tuple[str, ...] | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if self.vs_baseline is not None and self.alpha is None:
            object.__setattr__(self, "alpha", DEFAULT_ALPHA)
        if self.scope is not None and not isinstance(self.scope, tuple):
            object.__setattr__(self, "scope", tuple(self.scope))
        errors = _check_problems(self)
        if errors:
            where = f"{self.source}: " if self.source else ""
            raise CheckError(f"{where}check {self.id!r}: {errors[0]}")

    # ------------------------------------------------------------------ views
    @property
    def kind(self) -> Literal["threshold", "baseline"]:
        """``"threshold"`` or ``"baseline"``."""
        return "baseline" if self.vs_baseline is not None else "threshold"

    @property
    def blocking(self) -> bool:
        """Whether this check's verdict can change the gate's exit code."""
        return self.level == "block"

    def describe(self) -> str:
        """The rule in words: ``"recall@10 >= 0.6"`` or ``"ndcg@10: no significant
        regression vs baseline (alpha 0.05)"``."""
        if self.kind == "threshold":
            return f"{self.metric} {self.op} {self.threshold:g}"
        return f"{self.metric}: no significant regression vs baseline (alpha {self.alpha:g})"

    def passes(self, observed: float) -> bool:
        """Whether ``observed`` satisfies this threshold check (see
        :func:`compare_threshold`). Raises CheckError on a baseline check."""
        if self.op is None or self.threshold is None:
            raise CheckError(f"check {self.id!r} is a baseline check; it has no threshold")
        return compare_threshold(observed, self.op, self.threshold)

    # ------------------------------------------------------------- row access
    def select(self, rows: Iterable[Any]) -> list[Any]:
        """The rows this check covers, in scope order (or run order when unscoped).

        Args:
            rows: a run's rows (``QueryResult`` / ``CaseResult``), or a ``RunResult``.

        Returns:
            One row per covered case.

        Raises:
            CheckError: a scoped case has no row, or a covered case errored (its row
                carries an ``error``). Either way the check would be judged on fewer cases
                than it covers; the message lists the cases.
        """
        all_rows = _rows_of(rows)
        if self.scope is None:
            chosen = all_rows
            missing: list[str] = []
        else:
            by_id = {row_id(r): r for r in all_rows}
            chosen = [by_id[i] for i in self.scope if i in by_id]
            missing = [i for i in self.scope if i not in by_id]
        errored = [(row_id(r), row_error(r)) for r in chosen if row_error(r) is not None]
        if not missing and not errored:
            return chosen
        total = len(self.scope) if self.scope is not None else len(all_rows)
        parts: list[str] = []
        if missing:
            parts.append(f"no row for {len(missing)}: {', '.join(missing)}")
        if errored:
            shown = "; ".join(f"{i} ({e})" for i, e in errored[:10])
            more = f"; and {len(errored) - 10} more" if len(errored) > 10 else ""
            parts.append(f"{len(errored)} errored: {shown}{more}")
        what = f"scoped to {total} case(s)" if self.scope is not None else (
            f"covering all {total} case(s) of the run"
        )
        lacking = len(missing) + len(errored)
        raise CheckError(
            f"check {self.id!r}: {what}, but {lacking} {'has' if lacking == 1 else 'have'} "
            "no result "
            f"({'; '.join(parts)}). The check is not evaluated on a subset: a result "
            "that skips the cases that fell over would look like a full pass."
        )

    def coverage_counts(self, rows: Iterable[Any]) -> tuple[int, int]:
        """``(evaluated, covered)``: cases with a usable row (present, not errored) over
        the cases the check covers (its scope, or every row of the run)."""
        all_rows = _rows_of(rows)
        if self.scope is None:
            good = sum(1 for r in all_rows if row_error(r) is None)
            return good, len(all_rows)
        usable = {row_id(r) for r in all_rows if row_error(r) is None}
        return sum(1 for i in self.scope if i in usable), len(self.scope)

    def coverage(self, rows: Iterable[Any]) -> str:
        """``"k/n cases"``: see :meth:`coverage_counts` (``"3/3 cases"`` for a three-id
        scope whose cases all produced rows)."""
        good, total = self.coverage_counts(rows)
        return f"{good}/{total} cases"

    def to_dict(self) -> dict[str, Any]:
        """The check as it would be written in a checks file (``source`` left out)."""
        out: dict[str, Any] = {"id": self.id, "metric": self.metric}
        if self.kind == "threshold":
            out["op"] = self.op
            out["threshold"] = self.threshold
        else:
            out["vs_baseline"] = self.vs_baseline
            out["alpha"] = self.alpha
        out["level"] = self.level
        if self.scope is not None:
            out["scope"] = list(self.scope)
        return out


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_problems(spec: CheckSpec) -> list[str]:
    """Every rule on one check's field values (types are checked by the loader)."""
    problems: list[str] = []
    if not isinstance(spec.id, str) or not spec.id.strip():
        problems.append("'id' must be a non-empty string")
    if not isinstance(spec.metric, str) or not spec.metric.strip():
        problems.append("'metric' must be a non-empty string")
    has_threshold = spec.op is not None or spec.threshold is not None
    has_baseline = spec.vs_baseline is not None
    if has_threshold and has_baseline:
        problems.append(
            "declares both a threshold (op/threshold) and 'vs_baseline'; a check is one or "
            "the other, so split it into two checks"
        )
    elif not has_threshold and not has_baseline:
        problems.append(
            "declares neither a threshold (op + threshold) nor 'vs_baseline', so it would "
            "gate nothing"
        )
    elif has_threshold:
        if spec.op is None:
            problems.append("has 'threshold' but no 'op'; add op: \"<=\", \">=\" or \"==\"")
        elif spec.op not in OPS:
            problems.append(_op_problem(spec.op))
        if spec.threshold is None:
            problems.append("has 'op' but no 'threshold'")
        elif not _is_number(spec.threshold):
            problems.append(f"'threshold' must be a number, got {spec.threshold!r}")
        elif not math.isfinite(spec.threshold):
            problems.append(f"'threshold' must be finite, got {spec.threshold!r}")
        if spec.alpha is not None:
            problems.append(
                "'alpha' is set on a threshold check; alpha is the significance level of a "
                "baseline comparison and a threshold check runs no test. Remove it"
            )
    else:
        if spec.vs_baseline not in BASELINE_RULES:
            problems.append(
                f"'vs_baseline' is {spec.vs_baseline!r}; the only rule is "
                f"{BASELINE_RULES[0]!r}"
            )
        alpha = spec.alpha
        if alpha is None or not _is_number(alpha) or not (0.0 < float(alpha) < 1.0):
            problems.append(f"'alpha' must be a number strictly between 0 and 1, got "
                            f"{spec.alpha!r}")
    if spec.level not in LEVELS:
        problems.append(f"'level' is {spec.level!r}; use 'block' or 'warn'")
    if spec.scope is not None:
        problems.extend(_scope_problems(spec.scope))
    return problems


_QUOTE_OP = ("quote the operator: op: \">=\" (or \"<=\", \"==\"); unquoted, YAML reads > "
             "as the start of a folded block of text")


def _op_problem(op: object) -> str:
    """What is wrong with an ``op`` outside :data:`OPS` and how to write it."""
    if isinstance(op, str) and (not op.strip() or "\n" in op):
        # `op: >` is a YAML folded scalar: its (empty) text becomes the value
        return f"'op' is {op!r}, which is what YAML makes of an unquoted >; {_QUOTE_OP}"
    if isinstance(op, str) and op.strip() in OPS:
        return f"'op' is {op!r}; remove the spaces around the operator"
    known = ", ".join(repr(o) for o in OPS)
    if isinstance(op, str) and op.strip() in ("<", ">", "=", "=>", "=<"):
        return (f"'op' is {op!r}; use one of {known} (strict < and > are not supported, "
                "and >= is written in that order)")
    return f"'op' is {op!r}; use one of {known}"


def _scope_problems(scope: Sequence[Any]) -> list[str]:
    if len(scope) == 0:
        return ["'scope' is empty; a check scoped to no case gates nothing. Remove 'scope' "
                "to cover every case, or name the cases"]
    not_text = [x for x in scope if not isinstance(x, str)]
    if not_text:
        return [f"'scope' ids must be strings; quote {', '.join(repr(x) for x in not_text)} "
                "(YAML reads 010 as a number, and case ids are text)"]
    seen: set[str] = set()
    repeated: list[str] = []
    for x in scope:
        if x in seen and x not in repeated:
            repeated.append(x)
        seen.add(x)
    if repeated:
        return [f"'scope' names {', '.join(repeated)} more than once; each case would count "
                "twice in the mean"]
    return []


# ----------------------------------------------------------------------- loading
_HINTS = {
    "min": "write a lower bound as op: \">=\" with threshold",
    "max": "write an upper bound as op: \"<=\" with threshold",
    "tolerance": "the tolerance of == is fixed and cannot be set per check",
    "gates": "the list is called 'checks'",
}


def _suggest(key: str, known: Sequence[str]) -> str:
    if key in _HINTS:
        return f" ({_HINTS[key]})"
    close = difflib.get_close_matches(key, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _parse_check(
    raw: Any, index: int, source: str, seen_ids: dict[str, int]
) -> CheckSpec:
    label = f"{source}: check #{index + 1}"
    if not isinstance(raw, Mapping):
        raise CheckError(f"{label}: expected a mapping of keys, got {type(raw).__name__}")
    cid = raw.get("id")
    if isinstance(cid, str) and cid.strip():
        label = f"{source}: check {cid!r}"
    for key in raw:
        if key not in CHECK_KEYS:
            raise CheckError(
                f"{label}: unknown key {key!r}{_suggest(str(key), CHECK_KEYS)}; known keys: "
                f"{', '.join(CHECK_KEYS)}"
            )
    for key in ("id", "metric"):
        if key not in raw:
            raise CheckError(f"{label}: missing required key {key!r}")
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise CheckError(f"{label}: {key!r} must be a non-empty string, got {raw[key]!r}")
    if cid in seen_ids:
        raise CheckError(
            f"{label}: duplicate id {cid!r} (also check #{seen_ids[cid] + 1}); ids must be "
            "unique so each verdict names one check"
        )
    seen_ids[str(cid)] = index
    for key in ("op", "vs_baseline", "level"):
        if key in raw and not isinstance(raw[key], str):
            raise CheckError(f"{label}: {key!r} must be a string, got {raw[key]!r}")
    for key in ("threshold", "alpha"):
        if key in raw and not _is_number(raw[key]):
            raise CheckError(f"{label}: {key!r} must be a number, got {raw[key]!r}")
    scope = raw.get("scope")
    if "scope" in raw and not isinstance(scope, list):
        raise CheckError(f"{label}: 'scope' must be a list of case ids, got {scope!r}")
    alpha = raw.get("alpha")
    threshold = raw.get("threshold")
    # CheckSpec validates the combination and raises "<source>: check '<id>': ...".
    return CheckSpec(
        id=str(cid),
        metric=str(raw["metric"]).strip(),
        op=raw.get("op"),
        threshold=float(threshold) if threshold is not None else None,
        vs_baseline=raw.get("vs_baseline"),
        alpha=float(alpha) if alpha is not None else None,
        level=raw.get("level", "block"),
        scope=tuple(scope) if scope is not None else None,
        source=source,
    )


def parse_checks(
    data: Any, source: str = "<checks>", known_case_ids: Collection[str] | None = None
) -> list[CheckSpec]:
    """Checks from already-parsed YAML/JSON data (``{"checks": [...]}``).

    Same rules and errors as :func:`load_checks`; ``source`` names the origin in messages.
    """
    if data is None:
        raise CheckError(f"{source}: the file is empty; it defines no checks")
    if not isinstance(data, Mapping):
        raise CheckError(
            f"{source}: expected a mapping with a 'checks' list at the top, got "
            f"{type(data).__name__}"
        )
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise CheckError(
                f"{source}: unknown top-level key {key!r}{_suggest(str(key), TOP_LEVEL_KEYS)}"
                "; the file holds one key, 'checks'"
            )
    raw_checks = data.get("checks")
    if raw_checks is None or raw_checks == []:
        raise CheckError(f"{source}: 'checks' is missing or empty; the file defines no checks")
    if not isinstance(raw_checks, list):
        raise CheckError(f"{source}: 'checks' must be a list, got {type(raw_checks).__name__}")
    seen: dict[str, int] = {}
    specs = [_parse_check(raw, i, source, seen) for i, raw in enumerate(raw_checks)]
    if known_case_ids is not None:
        known = {str(x) for x in known_case_ids}
        for spec in specs:
            if spec.scope is None:
                continue
            unknown = [i for i in spec.scope if i not in known]
            if unknown:
                raise CheckError(
                    f"{source}: check {spec.id!r}: 'scope' names {len(unknown)} case id(s) "
                    f"that are not among the {len(known)} known cases: {', '.join(unknown)}"
                )
    return specs


def load_checks(
    path: str | Path, known_case_ids: Collection[str] | None = None
) -> list[CheckSpec]:
    """Read a checks file (YAML, safe and bounded: :mod:`evalkit.bounded_yaml`).

    Args:
        path: the checks file.
        known_case_ids: the case ids of the golden set, when known. Every ``scope`` id
            must be one of them.

    Returns:
        The checks, in file order. Metric names are kept as written; they are resolved
        when a gate runs, so a file may name a metric registered later.

    Raises:
        CheckError: the file is missing, not YAML, empty or without checks; a check has an
            unknown key, a duplicate id, both or neither of threshold and ``vs_baseline``,
            an op outside ``<=``, ``>=``, ``==``, a non-numeric or non-finite threshold,
            ``alpha`` on a threshold check or outside (0, 1), a level other than block or
            warn, or a bad ``scope`` (empty, repeated or non-text ids, ids not in
            ``known_case_ids``). The message starts with the file and the check.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CheckError(f"{p}: no such checks file") from None
    except IsADirectoryError:
        raise CheckError(f"{p}: is a directory; pass the checks file (YAML) itself") from None
    except OSError as exc:
        raise CheckError(f"{p}: cannot read the checks file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise CheckError(
            f"{p}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "a checks file is YAML text. Is this the right file?"
        ) from None
    from evalkit.bounded_yaml import load_yaml
    from evalkit.limits import LimitError

    try:
        data = load_yaml(text)
    except LimitError as exc:
        line = "" if exc.line is None else f":{exc.line}"
        raise CheckError(f"{p}{line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        line = text.splitlines()[mark.line] if mark is not None and mark.line < len(
            text.splitlines()) else ""
        hint = f"; {_QUOTE_OP}" if _UNQUOTED_OP.match(line) else ""
        raise CheckError(f"{p}{where}: not valid YAML ({problem}){hint}") from None
    return parse_checks(data, str(p), known_case_ids)


__all__ = [
    "EQ_ABS_TOL",
    "EQ_REL_TOL",
    "OPS",
    "CheckError",
    "CheckSpec",
    "compare_threshold",
    "load_checks",
    "parse_checks",
    "row_error",
    "row_id",
]
