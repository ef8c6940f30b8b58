"""A golden row as a pydantic model: the known fields typed, ids text, the rest kept.

:class:`GoldenRow` is one record of a golden file (a JSON Lines line, a YAML list item, a
CSV row after its cells are read). It is lenient where the docs promise it: a JSON
integer id becomes its digits (``42`` -> ``"42"``; the YAML and CSV readers pass ids as
the text written), a null query is the empty text, and every field it does not know is
kept, unchanged, as the case's context. Everything else is strict: an id is non-empty
text of at most :data:`~evalkit.io.limits.MAX_ID_CHARS` characters (never a float, a bool or
null), ``expected`` is a list of ids, a text or null, ``relevant`` a list of ids,
``relevance`` maps ids to integer labels, ``tags`` is a text or a list of distinct
texts (printable, without ``;``), ``answers`` is a non-blank text or a non-empty
list of non-blank texts (a text of only white space is no answer: exact match and F1
would compare with the empty text), no id is blank, and no id repeats in a list.
``cluster`` is text as an id is (a JSON integer becomes its digits) or null.
:func:`validate_row` raises :class:`evalkit.io.model_errors.Problem` with the message of
docs/runner.md; the reader adds the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import ErrorDetails

from evalkit.data.text_ids import IdCollisionError, text_ids
from evalkit.io.limits import (
    MAX_ID_CHARS,
    LimitError,
    check_id,
    label_problem,
    shown,
    text_problem,
)
from evalkit.io.model_errors import (
    MISSING,
    Problem,
    first_error,
    is_rule,
    rule,
    rule_message,
    value_at,
)
from evalkit.stats.numeric import finite_real, value_text

KNOWN_FIELDS = ("id", "query", "expected", "relevant", "relevance", "answers", "tags",
                "labels", "cluster")


def _int_as_text(value: Any) -> Any:
    """A JSON integer id as its digits; anything else unchanged (and then checked)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _label_in_range(label: int) -> int:
    problem = label_problem(label)
    if problem is not None:
        raise rule(problem)
    return label


Label = Annotated[int, AfterValidator(_label_in_range)]


def _each_once(ids: list[str], info: ValidationInfo) -> list[str]:
    seen: set[str] = set()
    for text in ids:
        if text in seen:
            raise rule(f"{shown(info.field_name)} lists {shown(text)} twice")
        seen.add(text)
    return ids


def _printable(text: str) -> str:
    """An id of printable text without white space around it (:func:`check_id`; the
    message comes from :func:`id_problem`)."""
    try:
        return check_id(text)
    except LimitError as exc:
        raise ValueError(str(exc)) from None


def _no_nul(text: str) -> str:
    if text_problem(text, "the text") is not None:
        raise ValueError("holds a NUL character")
    return text


CaseId = Annotated[
    str,
    BeforeValidator(_int_as_text, json_schema_input_type=str | int),
    Field(min_length=1, max_length=MAX_ID_CHARS, pattern=r"\S"),
    AfterValidator(_printable),
]
#: free text (a query, a reference text): anything but a NUL character
Text = Annotated[str, AfterValidator(_no_nul)]
def _tuple_as_list(value: Any) -> Any:
    """A custom loader's tuple of ids as a list (files only ever hold lists), whose ids
    may not be two values that are one id as text (``1`` and ``"1"``)."""
    value = list(value) if isinstance(value, tuple) else value
    return _one_text_each(value)


def _one_text_each(value: Any) -> Any:
    """``value`` (a list of ids, or a mapping keyed by ids) unchanged, unless two of its
    ids are one id as text (:func:`~evalkit.data.text_ids.text_ids`)."""
    if isinstance(value, list | Mapping):
        try:
            text_ids(value.keys() if isinstance(value, Mapping) else value, "ids")
        except IdCollisionError as exc:
            raise rule(f"{exc.first!r} and {exc.second!r} are both the id {exc.text!r} "
                       "(ids are text): give each id once, as text") from None
    return value


IdList = Annotated[list[CaseId], BeforeValidator(_tuple_as_list), AfterValidator(_each_once)]
#: A reference answer: text with something besides white space.
AnswerText = Annotated[str, Field(min_length=1, pattern=r"\S"), AfterValidator(_no_nul)]
AnswerList = Annotated[list[AnswerText], BeforeValidator(_tuple_as_list), Field(min_length=1)]
#: A case's tag (a slice it belongs to): text as an id is (printable, no white space
#: around it), without ``;``, which separates tags in a CSV cell.
TagText = Annotated[
    str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=r"^[^;]*[^;\s][^;]*$"),
    AfterValidator(_printable)]
TagList = Annotated[list[TagText], BeforeValidator(_tuple_as_list), AfterValidator(_each_once)]


def label_value_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as a human label, or ``None`` (a finite number)."""
    if isinstance(value, bool):
        return f"{shown(value)} is a boolean; write 1 or 0"
    if not isinstance(value, int | float):
        return f"{shown(value)} is a {type(value).__name__}; a label is a number"
    if finite_real(value) is None:  # NaN, an infinity, an int beyond the float range
        return f"{value_text(value)} is not a finite number a float holds"
    return None


def selection_of(obj: Mapping[str, Any]) -> tuple[str, int | None]:
    """``(selection, seed)`` of a declaration of how labelled cases were chosen:
    ``{"selection": "random", "seed": S}`` or ``{"selection": "all"}`` (a labels file's
    first line, a YAML golden file's ``labels_selection``).

    Raises:
        ValueError: another key, another selection, a random one without an integer
            seed, or ``all`` with a seed (the message says what to write).
    """
    unknown = sorted(set(obj) - {"selection", "seed"})
    if unknown:
        raise ValueError(f"unknown key {shown(unknown[0])} in the selection; it holds "
                         "'selection' and, for a random one, 'seed'")
    sel = obj.get("selection")
    if sel not in ("random", "all"):
        raise ValueError(f"'selection' must be \"random\" or \"all\", got {shown(sel)}")
    seed = obj.get("seed")
    if sel == "random" and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError("a random selection records its integer 'seed' "
                         "({\"selection\": \"random\", \"seed\": 7})")
    if sel == "all" and seed is not None:
        raise ValueError("'selection: all' has no seed; remove it")
    return str(sel), seed


#: a human label: a finite number, checked by :func:`label_value_problem`
HumanLabel = Annotated[Any, WithJsonSchema({"type": "number"})]


class GoldenRow(BaseModel):
    """One golden case as written in its file (see docs/runner.md)."""

    model_config = ConfigDict(strict=True, extra="allow", title="golden case")

    id: CaseId = Field(description="The case id, kept as text (quote ids such as 010).")
    query: Text | None = Field(description="What the target is asked (null: empty text).")
    expected: IdList | Text | None = Field(
        None, description="Ids a good answer contains (they become the relevant set), or "
        "a reference text, or null.")
    relevant: IdList | None = Field(
        None, description="The relevant ids, when they differ from expected.")
    relevance: Annotated[dict[CaseId, Label], BeforeValidator(_one_text_each)] | None = Field(
        None, description="Graded judgments {id: integer label}, as in TREC qrels.")
    answers: AnswerList | AnswerText | None = Field(
        None, description="Acceptable reference answers (a text or a list of texts) that "
        "text metrics (exact_match, f1, rouge_l) compare a generated answer with; without "
        "it they read a text expected.")
    cluster: CaseId | None = Field(
        None, description="The cluster the case belongs to (cases about one passage, one "
        "conversation, one document): `evalkit compare --cluster` and the gate's "
        "`clusters` take the cluster as the unit of the paired tests.")
    tags: TagList | TagText | None = Field(
        None, description="The slices the case belongs to (a text or a list of texts): "
        "`evalkit compare --by tag` compares each tag's cases, and a gate check may be "
        "scoped to them (scope: {tags: [...]}).")
    labels: dict[str, HumanLabel] | None = Field(
        None, description="Human labels of this case, {metric: number} "
        "(correctness: 4), that `evalkit agreement` compares the judge with.")

    @field_validator("labels")
    @classmethod
    def _labels_are_numbers(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for metric, label in (value or {}).items():
            if not metric.strip():
                raise rule("a metric name in 'labels' must be non-empty text")
            problem = label_value_problem(label)
            if problem is not None:
                raise rule(f"label of {shown(metric)}: {problem}")
        return value

    def context(self) -> dict[str, Any]:
        """The fields this model does not know, unchanged."""
        return dict(self.model_extra or {})


class LabelsSelection(BaseModel):
    """How the labelled cases of a golden file were chosen (:func:`selection_of`)."""

    model_config = ConfigDict(strict=True, extra="forbid", title="labels selection")

    selection: Annotated[str, WithJsonSchema({"enum": ["random", "all"]})] = Field(
        description="random: a random subset drawn with 'seed'; all: every case labelled.")
    seed: int | None = Field(None, description="The seed of a random selection.")


class GoldenCases(BaseModel):
    """A YAML golden file written as a mapping: its ``cases`` list, and optionally how
    its labelled cases were chosen."""

    model_config = ConfigDict(strict=True, extra="allow", title="golden set")

    cases: list[GoldenRow] = Field(description="The cases, in order.")
    labels_selection: LabelsSelection | None = Field(
        None, description="How the cases with 'labels' were chosen: {selection: random, "
        "seed: S} or {selection: all}; prediction-powered intervals need a random one.")


# ------------------------------------------------------------------ messages
def id_problem(value: Any, what: str) -> str:
    """What is wrong with ``value`` as an id (``what`` names it in the message)."""
    from evalkit.io.bounded_yaml import as_written

    if isinstance(value, bool) or value is None:
        return f"{what} {shown(value)} is not an id; write ids as text"
    if not isinstance(value, str):
        return (f"{what} {shown(value)} is a {type(value).__name__}; ids must be text "
                f"(quote it: \"{as_written(value)}\")")
    if value == "":
        return f"empty {what}"
    if not value.strip():
        return (f"{what} {shown(value)} is blank (only white space); write the id, or leave "
                "the entry out")
    try:
        check_id(value, what)
    except LimitError as exc:
        return str(exc)
    return f"{what} {shown(value)} is not an id"  # pragma: no cover - every failure is named above


def _rank(err: ErrorDetails) -> tuple[Any, ...]:
    # field by field, as the docs list them; in a field, a rule, then the deepest error
    loc = err["loc"]
    field = KNOWN_FIELDS.index(str(loc[0])) if loc and loc[0] in KNOWN_FIELDS else -1
    return field, not is_rule(err), -len(loc)


def _explain(err: ErrorDetails, record: Mapping[str, Any]) -> str:
    loc = err["loc"]
    key = str(loc[0]) if loc else ""
    if key == "id":
        return "the case has no 'id'" if err["type"] == "missing" else \
            id_problem(record["id"], "id")
    case = f"case {_int_as_text(record['id'])!r}"
    if key == "query":
        if err["type"] == "missing":
            return f"{case} has no 'query'"
        query = record["query"]
        if isinstance(query, str) and text_problem(query, "") is not None:
            return f"{case}: {text_problem(query, repr('query'))}"
        return f"{case}: 'query' must be text, got {type(query).__name__}"
    if is_rule(err):
        return f"{case}: {rule_message(err)}"
    value = record[key]
    index = next((p for p in loc[1:] if isinstance(p, int)), None)
    if key in ("expected", "relevant") and index is not None and \
            value_at(value, (index,)) is not MISSING:
        return id_problem(value[index], f"{case}: {shown(key)} item")
    if key == "expected":
        if isinstance(value, str) and text_problem(value, "") is not None:
            return f"{case}: {text_problem(value, repr('expected'))}"
        return (f"{case}: 'expected' must be a list of ids, a text or null; got "
                f"{type(value).__name__} {shown(value)}")
    if key == "relevant":
        return f"{case}: 'relevant' must be a list of ids"
    if key == "answers":
        return _answers_problem(case, value)
    if key == "tags":
        return _tags_problem(case, value)
    if key == "labels":
        return (f"{case}: 'labels' must map metric names to numbers (labels: "
                f"{{correctness: 4}}), got {type(value).__name__} {shown(value)}")
    if key == "cluster":
        if value == "":
            return f"{case}: 'cluster' is empty; name the cluster, or leave the field out"
        return f"{case}: {id_problem(value, repr('cluster'))}"
    if len(loc) == 3:  # a key of relevance
        return id_problem(loc[1], f"{case}: 'relevance' key")
    if len(loc) == 2:
        return (f"{case}: relevance label of {shown(_int_as_text(loc[1]))} must be an integer, "
                f"got {shown(value[loc[1]])}")
    return f"{case}: 'relevance' must map ids to integer labels"


def _answers_problem(case: str, value: Any) -> str:
    fix = "write a text or a list of texts (answers: [Paris, City of Paris])"
    texts = value if isinstance(value, list | tuple) else [value]
    nul = next((t for t in texts if isinstance(t, str) and "\x00" in t), None)
    if nul is not None:
        return f"{case}: {text_problem(nul, repr('answers'))}"
    if isinstance(value, list | tuple):
        if not value:
            return f"{case}: 'answers' is an empty list; {fix}, or leave the field out"
        bad = next((v for v in value if not isinstance(v, str) or not v.strip()), None)
        if bad == "":
            return f"{case}: an item of 'answers' is an empty text; {fix}"
        if isinstance(bad, str):
            return (f"{case}: an item of 'answers' is blank ({shown(bad)}, only white space); "
                    f"remove it or {fix}")
        value, what = bad, "an item of 'answers'"
    else:
        if value == "":
            return f"{case}: 'answers' is an empty text; {fix}, or leave the field out"
        if isinstance(value, str):
            return (f"{case}: 'answers' is blank ({shown(value)}, only white space); {fix}, or "
                    "leave the field out")
        what = "'answers'"
    from evalkit.io.bounded_yaml import as_written

    quote = (f" (quote it: \"{as_written(value)}\")" if isinstance(value, int | float)
             and not isinstance(value, bool) else "")
    return f"{case}: {what} must be text, got {type(value).__name__} {shown(value)}{quote}; {fix}"


def _tags_problem(case: str, value: Any) -> str:
    fix = "write a tag or a list of tags (tags: [medical, hard])"
    texts = value if isinstance(value, list | tuple) else [value]
    for t in texts:
        if not isinstance(t, str):
            return f"{case}: a tag must be text, got {type(t).__name__} {shown(t)}; {fix}"
        if ";" in t:
            return (f"{case}: tag {shown(t)} holds ';', which separates tags in a CSV cell; "
                    "write it without")
        if not t.strip():
            return f"{case}: tag {shown(t)} is empty or blank; remove it or {fix}"
        try:
            check_id(t, "tag")
        except LimitError as exc:
            return f"{case}: {exc}"
    if isinstance(value, list | tuple) and len(set(value)) < len(value):
        return f"{case}: 'tags' lists a tag twice"
    return f"{case}: 'tags' must be a text or a list of texts; {fix}"  # pragma: no cover


def validate_row(record: Mapping[Any, Any]) -> GoldenRow:
    """One golden row from a record (its keys are taken as text).

    Raises:
        Problem: the first problem; its message starts with the case (``case 'a': ...``)
            or the id.
    """
    data = {str(k): v for k, v in record.items()}
    try:
        return GoldenRow.model_validate(data)
    except ValidationError as exc:
        err = first_error(exc, _rank)
        raise Problem(tuple(err["loc"]), _explain(err, data)) from None


__all__ = ["KNOWN_FIELDS", "CaseId", "GoldenCases", "GoldenRow", "id_problem",
           "label_value_problem", "validate_row"]
