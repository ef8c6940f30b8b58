"""Whether a record's fields have the types they must have (:func:`record_problem`),
checked when a record is registered by the registry or returned by a plugin's hook: one
line naming the record and the field, instead of a failure far from its cause. The
records are those of :mod:`evalkit.core.specs`; names are checked by
:mod:`evalkit.core.record_names`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.core.record_names import names_problem
from evalkit.core.specs import (
    LOADER_KINDS,
    OWN_RUN_FORMATS,
    SUMMARY_KINDS,
    VALUE_TYPES,
    AggregateSpec,
    CommandSpec,
    ConfigSectionSpec,
    ExecutorSpec,
    LoaderSpec,
    MeasureSyntaxSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    RunEvaluatorSpec,
    RunFormatSpec,
    TargetSpec,
    merged_needs,
    need_problem,
)

#: A command's name, and a config section's name.
COMMAND_NAME = r"^[a-z][a-z0-9-]*$"
SECTION_NAME = r"^[A-Za-z][A-Za-z0-9_-]*$"

#: The fields of each record type that must be callable, and those that may also be None.
_CALLABLE_FIELDS: dict[type, tuple[str, ...]] = {
    MetricSpec: ("fn",), MetricFamily: ("factory",), AggregateSpec: ("fn",),
    LoaderSpec: ("fn",), TargetSpec: ("factory",), ReporterSpec: ("render",),
    ExecutorSpec: ("factory",), MeasureSyntaxSpec: ("expand",), RunFormatSpec: ("render",),
    RunEvaluatorSpec: ("evaluate", "load_qrels"),
}
_OPTIONAL_CALLABLES: dict[type, tuple[str, ...]] = {
    MetricSpec: ("prepare", "batch", "variant"), MetricFamily: ("core",),
    LoaderSpec: ("accepts",), ConfigSectionSpec: ("apply", "restore"),
    AggregateSpec: ("of_metric",), ReporterSpec: ("record",),
}
_STRING_FIELDS = ("description", "version", "suffix", "help", "load")
_NAME_TUPLES = ("aliases", "suffixes", "params", "default_measures", "default_metrics")


def record_problem(rec: Any) -> str | None:
    """What is wrong with the fields of record ``rec``, in one line naming the record and
    the field, or ``None`` when every field has the type it must have. Catches the
    mistakes a type checker would: arguments in the wrong order, a bare string where a
    tuple of names is expected (``aliases="mrr"`` would register ``m``, ``r``), a number
    for ``version``, bytes for ``name``."""
    cls = type(rec)
    what = f"{cls.__name__} {rec.name!r}" if isinstance(rec.name, str) else cls.__name__
    if not isinstance(rec.name, str) or not rec.name.strip():
        return f"{what}: name must be a non-empty string, got {rec.name!r}"
    problem = names_problem(rec, cls.__name__, isinstance(rec, MetricSpec | AggregateSpec))
    if problem is not None:
        return problem
    if cls is RunFormatSpec and rec.name in OWN_RUN_FORMATS:
        return (f"{what}: {' and '.join(OWN_RUN_FORMATS)} are evalkit eval's own formats; "
                "give the run format another name")
    if isinstance(rec, CommandSpec | ConfigSectionSpec):
        return _extension_problem(rec, what)
    for attr in _CALLABLE_FIELDS.get(cls, ()):
        if not callable(getattr(rec, attr)):
            return f"{what}: {attr} must be callable, got {getattr(rec, attr)!r}"
    for attr in _OPTIONAL_CALLABLES.get(cls, ()):
        value = getattr(rec, attr)
        if value is not None and not callable(value):
            return f"{what}: {attr} must be callable or None, got {value!r}"
    for attr in _STRING_FIELDS:
        value = getattr(rec, attr, "")
        if not isinstance(value, str):
            return f"{what}: {attr} must be a string, got {value!r}"
    for attr in _NAME_TUPLES:
        value = getattr(rec, attr, ())
        if isinstance(value, str):
            return (f"{what}: {attr} must be a tuple of strings, got the string {value!r}; "
                    f"write {attr}=({value!r},)")
        if not isinstance(value, tuple | list) or not all(isinstance(v, str) for v in value):
            return f"{what}: {attr} must be a tuple of strings, got {value!r}"
    hib = getattr(rec, "higher_is_better", None)
    if hib is not None and not isinstance(hib, bool):
        return f"{what}: higher_is_better must be True or False, got {hib!r}"
    kind = getattr(rec, "kind", "metric")
    allowed: tuple[str, ...] = LOADER_KINDS if cls is LoaderSpec else ("metric", "count")
    if kind not in allowed:
        return f"{what}: kind must be one of {', '.join(allowed)}, got {kind!r}"
    for attr in ("needs_judgments", "needs_answers"):
        needs = getattr(rec, attr, False)
        if not isinstance(needs, bool):
            return f"{what}: {attr} must be True or False, got {needs!r}"
    declared = getattr(rec, "needs", ())
    if isinstance(declared, str):
        return (f"{what}: needs must be a tuple of strings, got the string {declared!r}; "
                f"write needs=({declared!r},)")
    if merged_needs(declared) is None:
        return f"{what}: needs must be a tuple of strings, got {declared!r}"
    for need in declared:
        problem = need_problem(need)
        if problem is not None:
            return f"{what}: needs: {problem}"
    family = getattr(rec, "family", None)
    if family is not None and not isinstance(family, str):
        return f"{what}: family must be a string or None, got {family!r}"
    for attr in ("options", "presets"):
        value = getattr(rec, attr, None)
        if value is not None and not isinstance(value, Mapping):
            return f"{what}: {attr} must be a mapping or None, got {value!r}"
    summary = getattr(rec, "summary", None)
    if summary is not None and summary not in SUMMARY_KINDS:
        return f"{what}: summary must be one of {', '.join(SUMMARY_KINDS)}, got {summary!r}"
    if getattr(rec, "cutoff", "int") not in ("int", "float"):
        return f"{what}: cutoff must be 'int' or 'float', got {rec.cutoff!r}"
    if not isinstance(getattr(rec, "always", True), bool):
        return f"{what}: always must be True or False, got {rec.always!r}"
    value_type = getattr(rec, "value_type", None)
    if value_type is not None and value_type not in VALUE_TYPES:
        return (f"{what}: value_type must be one of {', '.join(VALUE_TYPES)} or None, got "
                f"{value_type!r}")
    return bounds_problem(what, getattr(rec, "bounds", None))


def bounds_problem(what: str, bounds: Any) -> str | None:
    """Why ``bounds`` is not ``None`` or ``(lo, hi)``, two finite numbers with
    ``lo < hi`` (:attr:`MetricSpec.bounds`, each held by a float), or ``None`` if fine."""
    import sys

    if bounds is None:
        return None
    if not isinstance(bounds, tuple | list) or len(bounds) != 2 or not all(
            isinstance(b, int | float) and not isinstance(b, bool)
            and abs(b) <= sys.float_info.max for b in bounds) or not bounds[0] < bounds[1]:
        return (f"{what}: bounds must be (lo, hi), two finite numbers with lo < hi, or "
                f"None, got {bounds!r}")
    return None


def _extension_problem(rec: CommandSpec | ConfigSectionSpec, what: str) -> str | None:
    """:func:`record_problem` of a command or a config section."""
    import re

    from evalkit.core.import_strings import IMPORT_STRING

    if isinstance(rec, CommandSpec):
        if not re.match(COMMAND_NAME, rec.name):
            return (f"{what}: a command's name is lower-case letters, digits and hyphens, "
                    "starting with a letter")
        if not isinstance(rec.help, str) or not rec.help.strip() or "\n" in rec.help.strip():
            return f"{what}: help must be one line of text, got {rec.help!r}"
        if not isinstance(rec.load, str) or not re.match(IMPORT_STRING, rec.load):
            return (f"{what}: load must be 'package.module:attr' or 'package.module', got "
                    f"{rec.load!r}")
        return None
    from evalkit.core.pyproject_config import OTHER_KEYS, RUN_KEYS

    if not re.match(SECTION_NAME, rec.name):
        return (f"{what}: a section's name is letters, digits, '_' and '-', starting with "
                "a letter")
    if rec.name in RUN_KEYS | OTHER_KEYS:
        return (f"{what}: {rec.name!r} is a key of the eval config itself; give the section "
                "another name")
    model = rec.model
    if isinstance(model, str):
        if ":" not in model or not re.match(IMPORT_STRING, model):
            return (f"{what}: model must be a pydantic model or 'package.module:Model', "
                    f"got {model!r}")
    elif not (isinstance(model, type) and callable(getattr(model, "model_validate", None))
              and callable(getattr(model, "model_json_schema", None))):
        return (f"{what}: model must be a pydantic model class (a BaseModel subclass) or "
                f"'package.module:Model', got {model!r}")
    if rec.apply is not None and not callable(rec.apply):
        return f"{what}: apply must be callable or None, got {rec.apply!r}"
    if not isinstance(rec.description, str):
        return f"{what}: description must be a string, got {rec.description!r}"
    return None


__all__ = ["COMMAND_NAME", "SECTION_NAME", "bounds_problem", "record_problem"]
