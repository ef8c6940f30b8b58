"""The checks file as pydantic models: every load rule of :mod:`evalkit.gate.checks` in one place.

:class:`ChecksFile` is the file (one key, ``checks``, a non-empty list with unique ids);
:class:`CheckModel` is one check: strict types, no unknown key, a threshold check
(``op`` and ``threshold``) or a baseline check (``vs_baseline``, optional ``alpha`` in
(0, 1)), never both and never neither. :func:`validate_file` and :func:`validate_check`
raise :class:`evalkit.io.model_errors.Problem` with the message the docs promise (the did-you-mean
of a typo'd key, the quoting of ``op: >``, the scope rules); the reader adds the file and
line. The JSON Schema (``evalkit schema checks``) comes from the same models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import ErrorDetails, PydanticCustomError

from evalkit.gate.check_ops import BASELINE_RULES, OPS, BaselineRule, Level, Op
from evalkit.io.limits import MAX_ID_CHARS, LimitError, check_id, shown
from evalkit.io.limits import repeated as repeats
from evalkit.io.model_errors import (
    Loc,
    Problem,
    did_you_mean,
    first_error,
    is_rule,
    rule,
    rule_message,
    value_at,
)

CHECK_KEYS: tuple[str, ...] = (
    "id", "metric", "op", "threshold", "vs_baseline", "alpha", "level", "scope",
)
TOP_LEVEL_KEYS: tuple[str, ...] = ("checks", "labels", "baseline_labels")

#: what to write instead of a key some other tool uses
HINTS = {
    "min": "write a lower bound as op: \">=\" with threshold",
    "max": "write an upper bound as op: \"<=\" with threshold",
    "tolerance": "the tolerance of == is fixed and cannot be set per check",
    "gates": "the list is called 'checks'",
}

QUOTE_OP = ("quote the operator: op: \">=\" (or \"<=\", \"==\"); unquoted, YAML reads > "
            "as the start of a folded block of text")

_Text = Annotated[str, Field(min_length=1, pattern=r"\S")]


def _short_id(text: str) -> str:
    try:
        return check_id(text, "check id")
    except LimitError as exc:
        raise rule(str(exc)) from None


#: a check id, at most evalkit.io.limits.MAX_ID_CHARS characters (never printed back whole)
CheckId = Annotated[_Text, AfterValidator(_short_id)]
_Name = Annotated[_Text, StringConstraints(strip_whitespace=True)]
#: ``None`` stands for a key left out; a key written with no value (``threshold:``) is refused
_Absent = SkipJsonSchema[None]

# JSON Schema of the either/or: pydantic checks it in CheckModel._one_kind
_ONE_KIND: JsonDict = {"oneOf": [
    {"title": "threshold check", "required": ["op", "threshold"],
     "not": {"anyOf": [{"required": ["vs_baseline"]}, {"required": ["alpha"]}]}},
    {"title": "baseline check", "required": ["vs_baseline"],
     "not": {"anyOf": [{"required": ["op"]}, {"required": ["threshold"]}]}},
]}


class TagScope(BaseModel):
    """A check's scope by tag: the cases carrying any of ``tags``."""

    model_config = ConfigDict(strict=True, extra="forbid", title="tag scope")

    tags: Annotated[list[str], Field(min_length=1)] = Field(
        description="The tags whose cases the check covers (a case with any of them).")

    @field_validator("tags")
    @classmethod
    def _tags_once(cls, tags: list[str]) -> list[str]:
        for tag in tags:
            try:
                check_id(tag, "'scope' tag")
            except LimitError as exc:
                raise rule(str(exc)) from None
        repeated = repeats(tags)
        if repeated:
            raise rule(f"'scope' names the tag {', '.join(repeated)} more than once")
        return tags


class CheckModel(BaseModel):
    """One check of a checks file (see docs/gate.md)."""

    model_config = ConfigDict(strict=True, extra="forbid", title="check",
                              json_schema_extra=_ONE_KIND)

    id: CheckId = Field(description="Unique in the file; names the check in every report.")
    metric: _Name = Field(description="A metric or aggregate name, resolved when the gate "
                          "runs (recall@10, ndcg@10, latency_p95, ...).")
    op: Op | _Absent = Field(None, description="Threshold checks: the comparison (quote it).")
    threshold: Annotated[float, Field(allow_inf_nan=False)] | _Absent = Field(
        None, description="Threshold checks: a finite number.")
    vs_baseline: BaselineRule | _Absent = Field(
        None, description="Baseline checks: the rule against the stored baseline.")
    alpha: Annotated[float, Field(gt=0, lt=1)] | _Absent = Field(
        None, description="Baseline checks: the significance level (default 0.05).")
    level: Level = Field("block", description="block decides the exit code; warn is "
                         "reported only.")
    scope: Annotated[list[str], Field(min_length=1)] | TagScope | _Absent = Field(
        None, description="Only these case ids (text: quote ids such as \"010\"), or "
        "{tags: [...]}: the cases of the golden set carrying any of these tags; without "
        "it, every case of the run.")

    @model_validator(mode="before")
    @classmethod
    def _no_empty_value(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None and key in CHECK_KEYS:
                    raise PydanticCustomError("null_value", "{key} has no value", {"key": key})
        return data

    @field_validator("scope")
    @classmethod
    def _each_case_once(cls, scope: list[str] | TagScope | None
                        ) -> list[str] | TagScope | None:
        if scope is None or isinstance(scope, TagScope):
            return scope
        blank = next((x for x in scope if not x.strip()), None)
        if blank is not None:
            raise rule(f"'scope' lists a blank case id ({shown(blank)}); write the case ids, or "
                       "leave the entry out")
        for case_id in scope:
            try:
                check_id(case_id, "'scope' case id")
            except LimitError as exc:
                raise rule(str(exc)) from None
        repeated = repeats(scope)
        if repeated:
            raise rule(f"'scope' names {', '.join(repeated)} more than once; each case "
                       "would count twice in the mean")
        return scope

    @model_validator(mode="after")
    def _one_kind(self) -> CheckModel:
        has_threshold = self.op is not None or self.threshold is not None
        if has_threshold and self.vs_baseline is not None:
            raise rule("declares both a threshold (op/threshold) and 'vs_baseline'; a check "
                       "is one or the other, so split it into two checks", key="vs_baseline")
        if not has_threshold and self.vs_baseline is None:
            raise rule("declares neither a threshold (op + threshold) nor 'vs_baseline', so "
                       "it would gate nothing")
        if has_threshold and self.op is None:
            raise rule("has 'threshold' but no 'op'; add op: \"<=\", \">=\" or \"==\"",
                       key="threshold")
        if has_threshold and self.threshold is None:
            raise rule("has 'op' but no 'threshold'", key="op")
        if has_threshold and self.alpha is not None:
            raise rule("'alpha' is set on a threshold check; alpha is the significance "
                       "level of a baseline comparison and a threshold check runs no test. "
                       "Remove it", key="alpha")
        return self


class ChecksFile(BaseModel):
    """A checks file: ``checks``, a list of at least one check, ids unique; optionally the
    human labels the gate reads (``labels``, ``baseline_labels``)."""

    model_config = ConfigDict(strict=True, extra="forbid", title="evalkit checks file")

    checks: Annotated[list[CheckModel], Field(min_length=1)] = Field(
        description="The checks of the gate, in report order.")
    labels: _Text | _Absent = Field(
        None, description="The run's human labels (a labels file or a labelled golden "
        "file; relative to this file), which agreement aggregates and --ppi read; "
        "--labels overrides it.")
    baseline_labels: _Text | _Absent = Field(
        None, description="The baseline's human labels for --ppi (relative to this "
        "file); --baseline-labels overrides it.")

    @field_validator("checks")
    @classmethod
    def _unique_ids(cls, checks: list[CheckModel]) -> list[CheckModel]:
        first: dict[str, int] = {}
        for i, check in enumerate(checks):
            if check.id in first:
                raise rule(f"duplicate id {shown(check.id)} (also check #{first[check.id] + 1}); "
                           "ids must be unique so each verdict names one check",
                           index=i, first=first[check.id])
            first[check.id] = i
        return checks


# ------------------------------------------------------------------ messages
def op_problem(op: object) -> str:
    """What is wrong with an ``op`` outside :data:`~evalkit.gate.check_ops.OPS` and how to
    write it."""
    if isinstance(op, str) and (not op.strip() or "\n" in op):
        # `op: >` is a YAML folded scalar: its (empty) text becomes the value
        return f"'op' is {shown(op)}, which is what YAML makes of an unquoted >; {QUOTE_OP}"
    if isinstance(op, str) and op.strip() in OPS:
        return f"'op' is {shown(op)}; remove the spaces around the operator"
    known = ", ".join(repr(o) for o in OPS)
    if isinstance(op, str) and op.strip() in ("<", ">", "=", "=>", "=<"):
        return (f"'op' is {shown(op)}; use one of {known} (strict < and > are not supported, "
                "and >= is written in that order)")
    return f"'op' is {shown(op)}; use one of {known}"


def _field_problem(err: ErrorDetails, key: str, value: Any, check: Any) -> str:
    """The message of an error on one key of a check."""
    kind = err["type"]
    if key == "scope" and isinstance(value, Mapping):
        return _tag_scope_problem(value)
    if kind == "extra_forbidden":
        return (f"unknown key {shown(key)}{did_you_mean(key, CHECK_KEYS, HINTS)}; known keys: "
                f"{', '.join(CHECK_KEYS)}")
    if kind == "missing":
        return f"missing required key {shown(key)}"
    if key in ("id", "metric"):
        return f"{shown(key)} must be a non-empty string, got {shown(value)}"
    if kind == "null_value":
        what = {"threshold": "a number", "alpha": "a number", "scope": "a list of case ids"}
        return f"{shown(key)} must be {what.get(key, 'a string')}, got None"
    if key in ("op", "vs_baseline", "level") and not isinstance(value, str):
        return f"{shown(key)} must be a string, got {shown(value)}"
    if key == "op":
        return op_problem(value)
    if key == "vs_baseline":
        return f"'vs_baseline' is {shown(value)}; the only rule is {shown(BASELINE_RULES[0])}"
    if key == "level":
        return f"'level' is {shown(value)}; use 'block' or 'warn'"
    if key in ("threshold", "alpha") and kind == "float_type":
        from evalkit.stats.numeric import value_text

        if isinstance(value, int) and not isinstance(value, bool):  # beyond the float range
            return f"{shown(key)} must be a number a float holds, got {value_text(value)}"
        return f"{shown(key)} must be a number, got {value_text(value)}"
    if key == "threshold":
        return f"'threshold' must be finite, got {shown(value)}"
    if key == "alpha":
        return f"'alpha' must be a number strictly between 0 and 1, got {shown(value)}"
    scope = check.get("scope") if isinstance(check, Mapping) else None
    if isinstance(scope, Mapping):
        return _tag_scope_problem(scope)
    if kind in ("list_type", "model_type") and not isinstance(value, list):
        return f"'scope' must be a list of case ids, got {shown(value)}"
    if kind == "too_short":
        return ("'scope' is empty; a check scoped to no case gates nothing. Remove 'scope' "
                "to cover every case, or name the cases")
    not_text = [x for x in scope or [] if not isinstance(x, str)]
    return (f"'scope' ids must be strings; quote {_quoted(not_text)} "
            "(YAML reads 010 as a number, and case ids are text)")


def _quoted(values: list[Any]) -> str:
    """``values`` as the file wrote them, each quoted as it should be (``"010", "2"``)."""
    from evalkit.io.bounded_yaml import as_written

    return ", ".join(f'"{as_written(x)}"' for x in values)


def _tag_scope_problem(scope: Mapping[Any, Any]) -> str:
    """What is wrong with a ``scope`` written as a mapping (``{tags: [...]}``)."""
    unknown = [str(k) for k in scope if k != "tags"]
    if unknown:
        return (f"'scope' has the key {shown(unknown[0])}; a scope is a list of case ids or "
                "{tags: [...]}")
    tags = scope.get("tags")
    if "tags" not in scope or tags is None:
        return "'scope' needs 'tags': a list of tags (scope: {tags: [medical]})"
    if not isinstance(tags, list):
        return f"'scope' tags must be a list of tags, got {shown(tags)}"
    if not tags:
        return ("'scope' tags is empty; a check scoped to no case gates nothing. Remove "
                "'scope' to cover every case, or name the tags")
    not_text = [x for x in tags if not isinstance(x, str)]
    if not_text:
        return f"'scope' tags must be strings; quote {_quoted(not_text)}"
    try:
        TagScope._tags_once(tags)
    except PydanticCustomError as exc:
        return exc.message()
    return f"'scope' is not a list of case ids nor {{tags: [...]}}: {shown(scope)}"


def _rank(err: ErrorDetails) -> tuple[Any, ...]:
    # as a reader goes: check by check, and in each an unknown key, then a missing one
    order = {"extra_forbidden": 0, "missing": 1}
    return (tuple(p for p in err["loc"] if isinstance(p, int)), order.get(err["type"], 2))


def _label(check: Any, index: int) -> str:
    cid = check.get("id") if isinstance(check, Mapping) else None
    if isinstance(cid, str) and len(cid) > MAX_ID_CHARS:  # never printed back whole
        return f"check #{index + 1}"
    return f"check {shown(cid)}" if isinstance(cid, str) and cid.strip() else f"check #{index + 1}"



def _explain(err: ErrorDetails, data: Any) -> tuple[Loc | None, str | None, str]:
    """``(loc, label, problem)`` of one error; ``label`` names the check (``None`` for a
    problem of the whole file). A duplicate id's ``loc`` is the second check's."""
    loc: Loc = tuple(err["loc"])
    if len(loc) >= 2 and loc[0] == "checks" and isinstance(loc[1], int):
        index, check = loc[1], value_at(data, loc[:2])
        label = _label(check, index)
        key = (err.get("ctx") or {}).get("key")
        if len(loc) == 2 and key:  # a rule of the check: at the key it names
            loc = (*loc, key)
        if is_rule(err):
            return loc, label, rule_message(err)
        if len(loc) == 2:
            return loc, label, f"expected a mapping of keys, got {type(check).__name__}"
        return loc, label, _field_problem(err, str(loc[2]), value_at(data, loc[:3]), check)
    if is_rule(err):  # a duplicate id: reported at the second check
        index = int((err.get("ctx") or {})["index"])
        return ("checks", index), _label(value_at(data, ("checks", index)), index), \
            rule_message(err)
    if not loc:
        if data is None:
            return None, None, "the file is empty; it defines no checks"
        return loc, None, ("expected a mapping with a 'checks' list at the top, got "
                           f"{type(data).__name__}")
    if err["type"] == "extra_forbidden":
        key = str(loc[0])
        return loc, None, (f"unknown top-level key {shown(key)}"
                           f"{did_you_mean(key, TOP_LEVEL_KEYS, HINTS)}; the file holds "
                           "'checks' and optionally 'labels' and 'baseline_labels'")
    value = value_at(data, loc)
    if loc[0] in ("labels", "baseline_labels"):
        return loc[:1], None, (f"'{loc[0]}' must be the path of a labels file (relative to "
                               f"the checks file), got {shown(value_at(data, loc[:1]))}")
    if err["type"] == "list_type" and value is not None:
        return loc, None, f"'checks' must be a list, got {type(value).__name__}"
    return None, None, "'checks' is missing or empty; the file defines no checks"


def validate_file(data: Any) -> list[CheckModel]:
    """The checks of a parsed checks file (``{"checks": [...]}``), in file order.

    Raises:
        Problem: the first problem, its ``loc`` in ``data`` and its message.
    """
    return validate_document(data).checks


def validate_document(data: Any) -> ChecksFile:
    """A parsed checks file as its model (the checks and the labels paths).

    Raises:
        Problem: the first problem, its ``loc`` in ``data`` and its message.
    """
    try:
        return ChecksFile.model_validate(data)
    except ValidationError as exc:
        err = first_error(exc, _rank)
        loc, label, problem = _explain(err, data)
        first = (err.get("ctx") or {}).get("first") if is_rule(err) else None
        raise Problem(loc, problem if label is None else f"{label}: {problem}",
                      related=None if first is None else ("checks", int(first))) from None


def validate_check(fields: Mapping[str, Any]) -> CheckModel:
    """One check from its fields (as :class:`evalkit.gate.checks.CheckSpec` holds them: ``None``
    for a key left out).

    Raises:
        Problem: the first problem (its message without the check's label).
    """
    # a record holds None for a key it leaves out
    given = {k: v for k, v in fields.items() if v is not None or k in ("id", "metric", "level")}
    try:
        return CheckModel.model_validate(given)
    except ValidationError as exc:
        err = first_error(exc, _rank, prefix=("checks", 0))
        loc, _, problem = _explain(err, {"checks": [given]})
        raise Problem(None if loc is None else loc[2:], problem) from None  # caller names it


__all__ = [
    "CHECK_KEYS",
    "QUOTE_OP",
    "TOP_LEVEL_KEYS",
    "CheckModel",
    "ChecksFile",
    "op_problem",
    "validate_check",
    "validate_document",
    "validate_file",
]
