"""Human labels: what people graded, on which cases, and how those cases were chosen.

Labels come from a golden file (each case's ``labels: {metric: value}``; in CSV the
``label:<metric>`` columns) or from a labels file, JSON Lines::

    {"selection": "random", "seed": 7}
    {"id": "austen", "labels": {"correctness": 5}}
    {"id": "canberra", "labels": {"correctness": 2}}

keyed by case id (for a TREC run, the query id). The optional first line says how the
labelled cases were chosen: ``{"selection": "random", "seed": S}`` (a random subset
drawn with seed ``S``) or ``{"selection": "all"}`` (every case was labelled).
Prediction-powered intervals are valid only when the labelled cases are a random sample
of the run's cases (Angelopoulos et al., Science 2023, section "Problem setup"), so
:meth:`HumanLabels.selection_warning` says so when that is not declared. The format and
its rules are in docs/judge.md (Human labels).

A label is a finite number (``true``/``false`` are refused: write 1 or 0); a metric name
is non-empty text; a case id is text (a JSON integer becomes its digits), at most once
per file. Every problem raises :class:`LabelError` naming the file and line.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evalkit.data.goldens_models import label_value_problem, selection_of
from evalkit.io.limits import LimitError, check_id, loads_json, shown
from evalkit.io.setting_names import SettingError

Selection = Literal["random", "all"]
SELECTIONS: tuple[str, ...] = ("random", "all")


class LabelError(SettingError):
    """A labels file or label that cannot be used; the message names the file and line."""


def checked_labels(value: Any, where: str) -> dict[str, float]:
    """``{metric: value}`` from a ``labels`` mapping, each label a finite number.

    Raises:
        LabelError: not a mapping, empty, a blank metric name or a label that is not a
            finite number (``where`` prefixes the message).
    """
    if not isinstance(value, Mapping):
        raise LabelError(f"{where}: 'labels' must map metric names to numbers "
                         f"({{\"correctness\": 4}}), got {type(value).__name__}")
    if not value:
        raise LabelError(f"{where}: 'labels' is empty; leave the field out or label a metric")
    out: dict[str, float] = {}
    for metric, label in value.items():
        if not isinstance(metric, str) or not metric.strip():
            raise LabelError(f"{where}: a metric name in 'labels' must be non-empty text, "
                             f"got {shown(metric)}")
        problem = label_value_problem(label)
        if problem is not None:
            raise LabelError(f"{where}: label of {shown(metric)}: {problem}")
        out[metric] = float(label)
    return out


@dataclass(frozen=True)
class HumanLabels:
    """Human labels of some cases, and how those cases were chosen.

    Attributes:
        labels: ``{case id: {metric: value}}`` in file order.
        selection: ``"random"``, ``"all"`` or ``None`` (not declared).
        seed: the seed of a random selection, else ``None``.
        source: the file they were read from (``None`` when built in Python).
        lines: ``{case id: line}`` in ``source``, for messages.
    """

    labels: Mapping[str, Mapping[str, float]]
    selection: Selection | None = None
    seed: int | None = None
    source: str | None = None
    lines: Mapping[str, int] = field(default_factory=dict)

    def metrics(self) -> list[str]:
        """The labelled metrics, in order of first appearance."""
        seen: dict[str, None] = {}
        for row in self.labels.values():
            seen.update(dict.fromkeys(row))
        return list(seen)

    def for_metric(self, metric: str) -> dict[str, float]:
        """``{case id: label}`` of the cases labelled for ``metric``."""
        return {cid: row[metric] for cid, row in self.labels.items() if metric in row}

    def where(self, case_id: str) -> str:
        """``"file:line"`` (or the source alone) of the label of ``case_id``."""
        src = self.source or "labels"
        line = self.lines.get(case_id)
        return src if line is None else f"{src}:{line}"

    def check_ids(self, case_ids: Sequence[str], what: str = "the run") -> None:
        """Refuse a label of a case that ``case_ids`` does not hold.

        Raises:
            LabelError: the first unknown id, with its file and line.
        """
        known = set(case_ids)
        for cid in self.labels:
            if cid not in known:
                raise LabelError(
                    f"{self.where(cid)}: case {shown(cid)} is not a case of {what}; label the "
                    "run's own case ids (for a TREC run, its query ids)")

    def selection_warning(self, n_cases: int) -> str | None:
        """Why a prediction-powered interval over ``n_cases`` cases may be invalid, or
        ``None`` when the labelled cases are declared a random sample (or are all)."""
        n = len(self.labels)
        if self.selection == "random":
            return None
        if self.selection == "all" and n >= n_cases:
            return None
        if self.selection == "all":
            return (f"{self.source or 'labels'}: 'selection: all' is declared but only {n} "
                    f"of {n_cases} cases are labelled; the PPI interval is valid only for a "
                    "random subset")
        if n >= n_cases:
            return None
        return (f"{self.source or 'labels'}: the {n} labelled cases (of {n_cases}) are not "
                "declared a random sample; a prediction-powered interval is valid only when "
                "they are. Draw them with evalkit.data.labels.random_subset and write "
                "{\"selection\": \"random\", \"seed\": S} as the labels file's first line")


def random_subset(case_ids: Sequence[str], k: int, seed: int) -> list[str]:
    """``k`` of ``case_ids`` drawn uniformly without replacement with
    ``random.Random(seed).sample`` (Python's Mersenne Twister), in the order given.

    Raises:
        ValueError: ``k`` is negative or larger than the number of ids.
    """
    if not 0 <= k <= len(case_ids):
        raise ValueError(f"cannot draw {k} of {len(case_ids)} cases")
    chosen = set(random.Random(seed).sample(list(case_ids), k))
    return [c for c in case_ids if c in chosen]


def _header(obj: Mapping[str, Any], where: str) -> tuple[Selection, int | None]:
    try:
        sel, seed = selection_of(obj)
    except ValueError as exc:
        raise LabelError(f"{where}: {exc}") from None
    return sel, seed  # type: ignore[return-value]


def _case_id(value: Any, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise LabelError(f"{where}: 'id' must be text, got {type(value).__name__} {shown(value)}")
    try:
        return check_id(value)
    except LimitError as exc:
        raise LabelError(f"{where}: {exc}") from None


def load_labels(path: str | Path) -> HumanLabels:
    """Read a labels file (JSON Lines; module docstring).

    Raises:
        LabelError: unreadable, invalid JSON, a line that is not an object, a selection
            line anywhere but first, a missing or repeated id, unknown keys, a label that
            is not a finite number, or no labels at all (file and line named).
    """
    from evalkit.data.goldens import json_objects, read_text
    from evalkit.io.input_messages import swapped_input_message
    from evalkit.io.text_lines import MAX_JSONL_LINE_BYTES

    p = Path(path)
    text = read_text(p, "labels", LabelError, max_line=MAX_JSONL_LINE_BYTES)
    other = swapped_input_message(p, "labels", "--labels")
    if other is not None:
        raise LabelError(other)
    labels: dict[str, dict[str, float]] = {}
    lines: dict[str, int] = {}
    selection: Selection | None = None
    seed: int | None = None
    first = True
    for lineno, obj in json_objects(text, p, LabelError):
        where = f"{p}:{lineno}"
        if "selection" in obj:
            if not first:
                raise LabelError(f"{where}: the selection line must be the file's first line")
            selection, seed = _header(obj, where)
            first = False
            continue
        first = False
        if "id" not in obj:
            raise LabelError(f"{where}: a label line needs an 'id' "
                             "({\"id\": \"q1\", \"labels\": {\"correctness\": 4}})")
        unknown = sorted(set(obj) - {"id", "labels"})
        if unknown:
            raise LabelError(f"{where}: unknown key {shown(unknown[0])}; a label line holds "
                             "'id' and 'labels'")
        cid = _case_id(obj["id"], where)
        if cid in lines:
            raise LabelError(f"{where}: case {shown(cid)} is labelled twice (first on line "
                             f"{lines[cid]})")
        if "labels" not in obj:
            raise LabelError(f"{where}: case {shown(cid)} has no 'labels'")
        labels[cid] = checked_labels(obj["labels"], f"{where}: case {shown(cid)}")
        lines[cid] = lineno
    if not labels:
        raise LabelError(f"{p}: no labels; write one line per labelled case "
                         "({\"id\": \"q1\", \"labels\": {\"correctness\": 4}})")
    return HumanLabels(labels, selection, seed, str(p), lines)


def labels_from_goldens(gset: Any, selection: Selection | None = None,
                        seed: int | None = None) -> HumanLabels:
    """The ``labels`` of a golden set's cases (cases without any are left out); the
    selection is the one given, else the golden set's ``labels_selection`` (a YAML golden
    file's top-level ``labels_selection: {selection: random, seed: S}``)."""
    labels = {c.id: dict(c.labels) for c in gset if getattr(c, "labels", None)}
    if selection is None:
        declared = getattr(gset, "labels_selection", None)
        if declared is not None:
            selection, seed = declared
    return HumanLabels(labels, selection, seed, getattr(gset, "path", None))


def read_labels(path: str | Path) -> HumanLabels:
    """Labels from a labels file, or from a golden file's ``labels`` (a ``.yaml``,
    ``.yml`` or ``.csv`` file, or JSON Lines whose first record has a ``query``).

    Raises:
        LabelError: as :func:`load_labels`, or a golden file that breaks a rule or holds
            no labels.
    """
    from evalkit.data.goldens import GoldenError, load_goldens
    from evalkit.io.input_messages import swapped_input_message

    p = Path(path)
    if p.suffix.lower() in (".yaml", ".yml", ".csv") or _looks_golden(p):
        other = swapped_input_message(p, "labels", "--labels")
        if other is not None:
            raise LabelError(other)
        try:
            gset = load_goldens(p)
        except GoldenError as exc:
            raise LabelError(str(exc)) from None
        found = labels_from_goldens(gset)
        if not found.labels:
            raise LabelError(f"{p}: no case has 'labels'; add labels: {{metric: value}} to "
                             "the labelled cases, or pass a labels file")
        return found
    return load_labels(p)


def _looks_golden(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            head = fh.readline(1 << 20)
        first = loads_json(head.decode("utf-8-sig"))
    except (OSError, ValueError):  # LimitError too: load_labels then names the line
        return False
    return isinstance(first, dict) and "query" in first


def run_golden_labels(header: Mapping[str, Any]) -> HumanLabels | None:
    """The ``labels`` of the golden file a run's header names (``goldens.path``), when
    that file still exists, still holds the run's cases (its digest, which labels do not
    enter, is the header's) and some case has labels; else ``None``."""
    from evalkit.data.goldens import GoldenError, load_goldens

    record = header.get("goldens") or {}
    path = record.get("path") if isinstance(record, Mapping) else None
    if not isinstance(path, str) or not Path(path).is_file():
        return None
    try:
        gset = load_goldens(path)
    except (GoldenError, OSError, ValueError):
        return None
    if record.get("sha256") not in (None, gset.digest()):
        return None
    found = labels_from_goldens(gset)
    return found if found.labels else None


def off_scale(labels: HumanLabels, details: Mapping[str, Any]) -> dict[str, str]:
    """``{metric: note}`` for each labelled metric whose labels fall outside the grade scale the run
    declares for it (a run header's ``details[metric]["judge"]["scale"]``, an LLM
    judge's: whole grades from 1 to ``scale``): a 0-4 labelling compared with a 1-5 judge
    would otherwise go unnoticed. Metrics without a declared scale are not checked."""
    out: dict[str, str] = {}
    for metric in labels.metrics():
        entry = details.get(metric)
        judge = entry.get("judge") if isinstance(entry, Mapping) else None
        scale = judge.get("scale") if isinstance(judge, Mapping) else None
        if isinstance(scale, bool) or not isinstance(scale, int):
            continue
        bad = [(case, v) for case, v in labels.for_metric(metric).items()
               if not (1 <= v <= scale and v == int(v))]
        if bad:
            case, value = bad[0]
            out[metric] = (f"{labels.source or 'labels'}: {len(bad)} label(s) of {metric!r} "
                           f"are not grades on the judge's scale 1..{scale} (case "
                           f"{case[:20]!r}: {value:g}); the agreement compares them as they "
                           "are: check that the labels use the judge's scale")
    return out


def noting_off_scale(labels: HumanLabels | None, header: Mapping[str, Any],
                     notes: list[str]) -> Callable[[], HumanLabels | None]:
    """For :func:`labels_in_effect`: ``labels``, or else the labels of the golden file
    ``header`` names (:func:`run_golden_labels`), read when first asked; their
    :func:`off_scale` notes (against ``header["details"]``) are added to ``notes``."""

    def found() -> HumanLabels | None:
        out = labels if labels is not None else run_golden_labels(header)
        if out is not None:
            notes.extend(off_scale(out, header.get("details") or {}).values())
        return out

    return found


# ------------------------------------------------------- labels a gate's aggregates read
_ACTIVE: ContextVar[HumanLabels | Callable[[], HumanLabels | None] | None] = ContextVar(
    "evalkit_human_labels", default=None)


@contextmanager
def labels_in_effect(
    labels: HumanLabels | Callable[[], HumanLabels | None] | None,
) -> Iterator[None]:
    """Make ``labels`` the human labels that agreement aggregates
    (``krippendorff_alpha(metric)`` and the others) read while the block runs; a
    callable is called once, when an aggregate first asks."""
    token = _ACTIVE.set(labels)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_labels() -> HumanLabels | None:
    """The labels set by :func:`labels_in_effect`, or ``None``."""
    found = _ACTIVE.get()
    if callable(found):
        found = found()
        _ACTIVE.set(found)
    return found


__all__ = [
    "SELECTIONS",
    "HumanLabels",
    "LabelError",
    "active_labels",
    "checked_labels",
    "label_value_problem",
    "labels_from_goldens",
    "labels_in_effect",
    "load_labels",
    "noting_off_scale",
    "off_scale",
    "random_subset",
    "read_labels",
    "run_golden_labels",
]
