"""Checks: what a gate asserts about a run, read from a YAML file.

A checks file is a mapping with one key, ``checks``, holding a list of checks::

    checks:
      - id: recall_floor            # required, unique in the file
        metric: recall@10           # required; resolved when the gate runs
        op: ">="                    # "<=" | ">=" | "=="   (threshold checks)
        threshold: 0.60             # a finite number        (threshold checks)
        level: block                # "block" (default) | "warn"
        scope: [q1, q2]             # optional: only these case ids,
                                    # or {tags: [medical]}: the cases with these tags

      - id: no_ndcg_regression
        metric: ndcg@10
        vs_baseline: no_significant_regression   # (baseline checks)
        alpha: 0.05                              # optional, default 0.05, in (0, 1)

Each check is a threshold check (``op`` and ``threshold``) or a baseline check
(``vs_baseline``), never both and never neither. The rules are the pydantic models of
:mod:`evalkit.gate.checks_models`; every problem is raised at load as a :class:`CheckError`
whose message starts with the file, then the check id (or its position) and the offending
key, and ends with the line (``(line 6)``; a duplicate id names both lines).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from evalkit.gate.check_ops import (
    BASELINE_RULES,
    DEFAULT_ALPHA,
    EQ_ABS_TOL,
    EQ_REL_TOL,
    LEVELS,
    OPS,
    BaselineRule,
    Level,
    Op,
    compare_threshold,
)
from evalkit.io.error_messages import not_utf8_at
from evalkit.io.limits import shown

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
    raise CheckError(f"row {shown(row)} has no case id (expected a case_id or query_id attribute)")


def row_error(row: Any) -> str | None:
    """The error text of a row whose case failed, else ``None``."""
    err = getattr(row, "error", None)
    return None if err is None else str(err)


def _rows_of(rows: Any) -> list[Any]:
    per_query = getattr(rows, "per_query", None)
    return list(per_query if per_query is not None else rows)


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
        scope_tags: the tags of a check scoped by tag (``scope: {tags: [...]}``), else
            None; :meth:`with_case_tags` sets ``scope`` to the cases carrying any of them,
            from then on judged as an id scope.
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
    scope_tags: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.vs_baseline is not None and self.alpha is None:
            object.__setattr__(self, "alpha", DEFAULT_ALPHA)
        if self.scope is not None and not isinstance(self.scope, tuple):
            object.__setattr__(self, "scope", tuple(self.scope))
        if self.scope_tags is not None and not isinstance(self.scope_tags, tuple):
            object.__setattr__(self, "scope_tags", tuple(self.scope_tags))
        from evalkit.gate.checks_models import validate_check
        from evalkit.io.model_errors import Problem

        fields = {k: getattr(self, k) for k in _FIELDS}
        if self.scope_tags is not None:
            fields["scope"] = {"tags": list(self.scope_tags)}
        elif self.scope is not None:
            fields["scope"] = list(self.scope)
        try:
            validate_check(fields)
        except Problem as exc:
            where = f"{self.source}: " if self.source else ""
            raise CheckError(f"{where}check {shown(self.id)}: {exc.message}") from None

    def with_case_tags(self, case_tags: Mapping[str, Sequence[str]]) -> CheckSpec:
        """A check scoped by tag made an id scope: ``scope`` becomes the cases of
        ``case_tags`` (``{case id: tags}``, the golden set's: every case it defines)
        carrying any of :attr:`scope_tags`, in its order; any other check unchanged. A
        case of the scope the run lacks is then refused as for an id scope
        (:meth:`select`).

        Raises:
            CheckError: no case carries any of the tags.
        """
        if self.scope_tags is None:
            return self
        wanted = set(self.scope_tags)
        ids = tuple(c for c, tags in case_tags.items() if wanted & set(tags))
        if not ids:
            known = sorted({t for tags in case_tags.values() for t in tags})
            raise CheckError(
                f"check {shown(self.id)}: no case carries the tag(s) "
                f"{', '.join(self.scope_tags)}, so the check would gate nothing; the "
                f"tags known are {', '.join(known) or 'none'}")
        return replace(self, scope=ids)

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
            raise CheckError(f"check {shown(self.id)} is a baseline check; it has no threshold")
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
            listed = "; ".join(f"{i} ({e})" for i, e in errored[:10])
            more = f"; and {len(errored) - 10} more" if len(errored) > 10 else ""
            parts.append(f"{len(errored)} errored: {listed}{more}")
        what = f"scoped to {total} case(s)" if self.scope is not None else (
            f"covering all {total} case(s) of the run"
        )
        lacking = len(missing) + len(errored)
        raise CheckError(
            f"check {shown(self.id)}: {what}, but {lacking} {'has' if lacking == 1 else 'have'} "
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
        if self.scope_tags is not None:
            out["scope"] = {"tags": list(self.scope_tags)}
        elif self.scope is not None:
            out["scope"] = list(self.scope)
        return out


_FIELDS = ("id", "metric", "op", "threshold", "vs_baseline", "alpha", "level", "scope")


def parse_checks(
    data: Any, source: str = "<checks>", known_case_ids: Collection[str] | None = None,
    line_of: Callable[[Sequence[int | str]], int | None] | None = None,
) -> list[CheckSpec]:
    """Checks from already-parsed YAML/JSON data (``{"checks": [...]}``).

    Same rules and errors as :func:`load_checks` (the rules are the models of
    :mod:`evalkit.gate.checks_models`); ``source`` names the origin in messages, and
    ``line_of`` (a location in ``data`` -> its line) adds the line.
    """
    return _parse_document(data, source, known_case_ids, line_of).checks


@dataclass(frozen=True)
class ChecksDocument:
    """A checks file read whole (:func:`load_checks_file`).

    Attributes:
        checks: the checks, in file order.
        labels: the run's human labels file its ``labels`` key names, resolved against
            the checks file's folder (the working directory for standard input), or
            None.
        baseline_labels: the baseline's, from ``baseline_labels``, or None.
    """

    checks: list[CheckSpec]
    labels: Path | None = None
    baseline_labels: Path | None = None


def _parse_document(
    data: Any, source: str, known_case_ids: Collection[str] | None,
    line_of: Callable[[Sequence[int | str]], int | None] | None,
) -> ChecksDocument:
    from evalkit.gate.checks_models import validate_document
    from evalkit.io.model_errors import Problem, located

    def error(problem: Problem) -> CheckError:
        return CheckError(located(source, problem, line_of, line_last=True))

    try:
        model = validate_document(data)
    except Problem as exc:
        raise error(exc) from None
    specs = [CheckSpec(**_spec_fields(m.model_dump()), source=source) for m in model.checks]
    if known_case_ids is not None:
        known = {str(x) for x in known_case_ids}
        for i, spec in enumerate(specs):
            unknown = [c for c in spec.scope or () if c not in known]
            if unknown:
                raise error(Problem(("checks", i, "scope"), (
                    f"check {shown(spec.id)}: 'scope' names {len(unknown)} case id(s) "
                    f"that are not among the {len(known)} known cases: {', '.join(unknown)}")))
    folder = Path(".") if source in ("-", "/dev/stdin", "<checks>") else Path(source).parent

    def beside(path: str | None) -> Path | None:
        return None if path is None else folder / path

    return ChecksDocument(specs, beside(model.labels), beside(model.baseline_labels))


def _spec_fields(dumped: dict[str, Any]) -> dict[str, Any]:
    """A check model's fields as :class:`CheckSpec` takes them: a ``{tags: [...]}``
    scope becomes ``scope_tags``."""
    scope = dumped.get("scope")
    if isinstance(scope, Mapping):
        return {**dumped, "scope": None, "scope_tags": tuple(scope["tags"])}
    return dumped


def _checks_bytes(p: Path) -> bytes:
    """The bytes of a checks file: standard input for ``-`` and ``/dev/stdin`` (read to
    its end, at most :data:`~evalkit.io.user_files.MAX_CONFIG_BYTES`), otherwise a
    regular file (:func:`evalkit.io.user_files.read_input`: a named pipe or a device is
    refused rather than blocking)."""
    from evalkit.io.user_files import MAX_CONFIG_BYTES, read_input

    if str(p) in ("-", "/dev/stdin"):
        try:
            with open("/dev/stdin" if str(p) == "-" else p, "rb") as fh:
                data = fh.read(MAX_CONFIG_BYTES + 1)
        except OSError as exc:
            raise CheckError(f"{p}: cannot read the checks ({exc.strerror})") from None
        if len(data) > MAX_CONFIG_BYTES:
            raise CheckError(f"{p}: more than {MAX_CONFIG_BYTES >> 20} MiB on standard "
                             "input; is this a checks file?")
        return data
    return read_input(p, "checks", error=CheckError)


def load_checks(
    path: str | Path, known_case_ids: Collection[str] | None = None
) -> list[CheckSpec]:
    """The checks of a checks file: :func:`load_checks_file`'s ``checks`` (same
    arguments, rules and errors)."""
    return load_checks_file(path, known_case_ids).checks


def load_checks_file(
    path: str | Path, known_case_ids: Collection[str] | None = None
) -> ChecksDocument:
    """Read a checks file (YAML, safe and bounded: :mod:`evalkit.io.bounded_yaml`).

    Args:
        path: the checks file.
        known_case_ids: the case ids of the golden set, when known. Every ``scope`` id
            must be one of them.

    Returns:
        The checks, in file order (metric names are kept as written; they are resolved
        when a gate runs, so a file may name a metric registered later), and the paths
        of its ``labels`` and ``baseline_labels`` keys, relative to the file's folder.

    Raises:
        CheckError: the file is missing, a directory, a pipe or device other than
            standard input (``-``, ``/dev/stdin``), larger than 16 MiB, not YAML, empty
            or without checks; a check has an unknown key, a duplicate id, both or
            neither of threshold and ``vs_baseline``,
            an op outside ``<=``, ``>=``, ``==``, a non-numeric or non-finite threshold,
            ``alpha`` on a threshold check or outside (0, 1), a level other than block or
            warn, or a bad ``scope`` (empty, repeated or non-text ids, ids not in
            ``known_case_ids``); ``labels`` or ``baseline_labels`` not a path. The
            message starts with the file and the check.
    """
    from evalkit.io.input_messages import swapped_input_message

    p = Path(path)
    data = _checks_bytes(p)
    other = swapped_input_message(p, "checks", "--checks")
    if other is not None:
        raise CheckError(other)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CheckError(
            f"{not_utf8_at(p, exc)}; a checks file is YAML text. Is this the right file?"
        ) from None
    import yaml

    from evalkit.gate.checks_models import QUOTE_OP
    from evalkit.io.bounded_yaml import load_marked
    from evalkit.io.limits import LimitError

    try:
        doc = load_marked(text)
    except LimitError as exc:
        line = "" if exc.line is None else f":{exc.line}"
        raise CheckError(f"{p}{line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        line = text.splitlines()[mark.line] if mark is not None and mark.line < len(
            text.splitlines()) else ""
        hint = f"; {QUOTE_OP}" if _UNQUOTED_OP.match(line) else ""
        raise CheckError(f"{p}{where}: not valid YAML ({problem}){hint}") from None
    return _parse_document(doc.data, str(p), known_case_ids, doc.line)


__all__ = [
    "BASELINE_RULES",
    "DEFAULT_ALPHA",
    "EQ_ABS_TOL",
    "EQ_REL_TOL",
    "LEVELS",
    "OPS",
    "BaselineRule",
    "CheckError",
    "CheckSpec",
    "ChecksDocument",
    "Level",
    "Op",
    "compare_threshold",
    "load_checks",
    "load_checks_file",
    "parse_checks",
    "row_error",
    "row_id",
]
