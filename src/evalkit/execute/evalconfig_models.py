"""The eval config as pydantic models: ``evalkit.yaml`` and the table ``[tool.evalkit]``.

:class:`EvalSettings` is ``evalkit.yaml``: the run settings of ``evalkit run`` (goldens,
target, metrics, output, ...) and the gate settings of ``evalkit gate`` (checks,
baseline, reporters). :class:`ToolSettings` is ``[tool.evalkit]`` of ``pyproject.toml``:
the same keys plus the plugin selection (``plugins``, ``local_plugins``), which is read
on every command's start-up by the lighter :mod:`evalkit.core.pyproject_config` and is only
typed here. Strict types, no unknown key: :func:`validate_settings` raises
:class:`evalkit.io.model_errors.Problem` naming the key (``key 'max_concurrency': must be a
positive integer, got 'eight'``); a plugin key in ``evalkit.yaml`` is refused with where
it belongs. The JSON Schema (``evalkit schema config``) comes from :class:`EvalSettings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.config import JsonDict
from pydantic_core import ErrorDetails

from evalkit.execute.pacing import (
    MIN_REQUESTS_PER_MINUTE,
    MIN_TOKENS_PER_MINUTE,
    check_rate,
    rate_floor_text,
)
from evalkit.execute.target_runner import DEFAULT_MAX_CONCURRENCY
from evalkit.io.limits import MAX_EPOCHS, MAX_NAME_CHARS, LimitError, check_name
from evalkit.io.model_errors import (
    Problem,
    did_you_mean,
    first_error,
    is_rule,
    rule,
    rule_message,
    shown_value,
    value_at,
)

_Text = Annotated[str, Field(min_length=1, pattern=r"\S")]
_Names = list[Annotated[str, Field(min_length=1, pattern=r"\S")]]

#: keys that belong in another file: where, and why
MISPLACED = {
    key: ("has no effect in evalkit.yaml: plugin selection is read from [tool.evalkit] in "
          "pyproject.toml, where it applies to every command; move it there")
    for key in ("plugins", "local_plugins")
}
#: what a key some other tool uses is written as here
HINTS = {"gate": "the gate's settings are the keys checks, baseline and reporters"}


# JSON Schema of "at least one metric or aggregate": pydantic checks it in _scores_something
_SCORES_SOMETHING: JsonDict = {"anyOf": [
    {"required": [key], "properties": {key: {"minItems": 1}}} for key in ("metrics", "aggregates")
]}


class TargetSettings(BaseModel):
    """``target``: what ``evalkit run`` calls on every case."""

    model_config = ConfigDict(strict=True, extra="forbid", title="target")

    factory: Annotated[str, Field(pattern=r"^(?:[^:]*[^:\s][^:]*|[\w.]+:[\w.]+)$")] = Field(
        description="'package.module:callable' returning a target (or a plain function "
        "case -> ids or text), or a registered target factory's name ('http').")
    kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments of the factory (secrets are "
        "redacted from the run header).")



#: the keys of ``target``
TARGET_KEYS: frozenset[str] = frozenset(TargetSettings.model_fields)


class ExecutorSettings(BaseModel):
    """``executor``: where ``evalkit run`` makes the target calls (docs/scaling.md)."""

    model_config = ConfigDict(strict=True, extra="forbid", title="executor")

    name: _Text = Field("local", description="A registered executor: 'local' (threads, "
                        "the default) or 'dask' (the evalkit-dask plugin).")
    address: _Text | None = Field(
        None, description="dask: the scheduler's address (tcp://host:8786); absent: a "
        "LocalCluster on this machine, started and stopped by the run.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Further keyword arguments of the executor "
        "(dask: n_workers, batch_size, max_retries, judge_on_workers).")

    def factory_options(self) -> dict[str, Any]:
        """The executor factory's keyword arguments."""
        extra = {} if self.address is None else {"address": self.address}
        return {**self.options, **extra}


class EvalSettings(BaseModel):
    """``evalkit.yaml``: the run settings of ``evalkit run`` and the gate settings of
    ``evalkit gate``. Paths are relative to the file."""

    model_config = ConfigDict(strict=True, extra="forbid", title="evalkit eval config",
                              json_schema_extra=_SCORES_SOMETHING)

    name: Annotated[_Text, Field(max_length=MAX_NAME_CHARS)] | None = Field(
        None, description="The run's name (default: the target's name).")
    goldens: _Text = Field(description="The golden file (jsonl, yaml or csv).")
    goldens_loader: _Text | None = Field(
        None, description="A goldens loader's name (default: chosen by suffix).")
    target: TargetSettings
    metrics: _Names = Field(default_factory=list, description="Per-case metrics "
                            "(recall@10, ndcg@10, ...).")
    aggregates: _Names = Field(default_factory=list, description="Whole-run aggregates "
                               "(latency_p95, ...).")
    output: _Text = Field(description="The run artifact evalkit run writes.")
    max_concurrency: Annotated[int, Field(ge=1)] = Field(
        DEFAULT_MAX_CONCURRENCY, description="Most target calls in flight, across every "
        "worker of the executor (the runner lowers it while rate-limit answers arrive, and "
        "raises it again).")
    epochs: Annotated[int, Field(ge=1, le=MAX_EPOCHS)] = Field(
        1, description="Samples per case: each case is answered this many times (K).")
    reduce: Annotated[str, Field(pattern=r"^(mean|max|min|all(:[-+0-9.eE]+)?)$")] = Field(
        "mean", description="How a case's samples become its value: mean, max, min, all "
        "or all:T (every sample reaches T; default 0.5).")
    requests_per_minute: Annotated[float, Field(
        ge=MIN_REQUESTS_PER_MINUTE, allow_inf_nan=False)] | None = Field(
        None, description="Most target calls started per minute, shared by every worker, "
        "at least 1/60 (one call an hour) (default: no limit).")
    tokens_per_minute: Annotated[float, Field(
        ge=MIN_TOKENS_PER_MINUTE, allow_inf_nan=False)] | None = Field(
        None, description="Most tokens per minute, from the usage the target's responses "
        "report (meta 'tokens', 'tokens_in' + 'tokens_out', or 'usage'), applied after the "
        "fact, at least 60 (one token a second) (default: no limit).")
    executor: ExecutorSettings = Field(
        default_factory=lambda: ExecutorSettings.model_validate({}),
        description="Where the target calls are made.")
    checks: _Text | None = Field(
        None, description="evalkit gate: the checks file (default for --checks).")
    baseline: _Text | None = Field(
        None, description="evalkit gate: the baseline (default for --baseline).")
    reporters: list[Annotated[str, Field(pattern=r"^[\w-]+:.+$")]] = Field(
        default_factory=list, description="evalkit gate: reports to write, FORMAT:PATH as "
        "with --report (default for --report).")

    @model_validator(mode="after")
    def _scores_something(self) -> EvalSettings:
        if not self.metrics and not self.aggregates:
            raise rule("name at least one metric or aggregate", key="metrics")
        from evalkit.data.samples import SampleError, parse_reduce

        try:  # the pattern admits all:T; the threshold is checked as the runner reads it
            parse_reduce(self.reduce)
        except SampleError:
            raise rule(_reduce_problem(repr(self.reduce)), key="reduce") from None
        return self


class ToolSettings(EvalSettings):
    """``[tool.evalkit]`` of ``pyproject.toml``: the keys of ``evalkit.yaml`` and the
    plugin selection (its rules: :mod:`evalkit.core.pyproject_config`)."""

    model_config = ConfigDict(title="[tool.evalkit]")

    plugins: list[str] | None = Field(
        None, description="Plugin distributions to load, with optional version "
        "specifiers (absent: every installed plugin).")
    local_plugins: list[str] | None = Field(
        None, description="The project's own plugin modules, imported by name.")


def known_keys(model: type[BaseModel]) -> tuple[str, ...]:
    """The keys of a table of ``model``, sorted."""
    return tuple(sorted(model.model_fields))


# ------------------------------------------------------------------ messages
def _not_loaded(key: str) -> str:
    """:func:`evalkit.core.pyproject_config.undeclared_section` of ``key`` with the
    plugins installed but not loaded, one of which may declare it."""
    from evalkit.core.pyproject_config import undeclared_section
    from evalkit.plugins.default import default_registry

    try:
        text = default_registry().not_loaded()
    except (LookupError, ValueError):  # the plugins cannot be discovered: said elsewhere
        text = ""
    return undeclared_section(key, text)


def _problem(err: ErrorDetails, path: str, data: Any, model: type[EvalSettings],
             sections: Sequence[str] = ()) -> str:
    """The problem of one error at the key ``path`` (``metrics``, ``target.factory``);
    ``sections`` are the plugins' config sections, keys too."""
    loc = err["loc"]
    key = str(loc[0])
    value = value_at(data, loc[:1] if key != "target" else loc[:2])
    kind = err["type"]

    def shown(value: Any) -> str:
        return shown_value(loc, value)

    if kind == "extra_forbidden" and key == "target":
        return "unknown key; target takes 'factory' and 'kwargs'"
    if key == "executor":
        if kind == "extra_forbidden":
            return "unknown key; executor takes 'name', 'address' and 'options'"
        return "must be a table: name (an executor: local, dask), optional address and options"
    if kind == "extra_forbidden" and key in MISPLACED:
        return MISPLACED[key]
    if kind == "extra_forbidden":
        plugins = (f", and the sections of the loaded plugins: {', '.join(sorted(sections))}"
                   if sections else "")
        table = _not_loaded(key) if isinstance(value, dict) else ""
        return (f"unknown key{did_you_mean(key, [*known_keys(model), *sections], HINTS)}; "
                f"the keys are {', '.join(known_keys(model))}{plugins}{table}")
    if kind == "missing":
        return "missing (required): 'package.module:callable'" if path == "target.factory" \
            else "missing (required)"
    if path == "target":
        return "must be a table with 'factory' (and optional 'kwargs')"
    if path == "target.factory" and kind == "string_pattern_mismatch" and ":" in value:
        return f"{shown(value)} is not 'package.module:callable'"
    if path == "target.kwargs":
        if isinstance(value, dict):
            return "its keys must be text"
        return f"must be a table, got {type(value).__name__}"
    if key in ("metrics", "aggregates"):
        return f"must be a list of names, got {shown(value)}"
    if key == "max_concurrency":
        return f"must be a positive integer, got {shown(value)}"
    if key == "epochs":
        return (f"must be an integer from 1 to {MAX_EPOCHS} (samples per case), "
                f"got {shown(value)}")
    if key == "reduce":
        return _reduce_problem(shown(value))
    if key in ("requests_per_minute", "tokens_per_minute"):
        try:
            check_rate(key, value)
        except ValueError as exc:
            if kind == "greater_than_equal":
                return str(exc).removeprefix(f"{key} ")
        return f"must be a positive number, {rate_floor_text(key)}, got {shown(value)}"
    if key == "reporters":
        return f"must be a list of reports FORMAT:PATH (as --report), got {shown(value)}"
    if key == "name" and kind == "string_too_long":
        try:
            check_name(value)
        except LimitError as exc:
            return str(exc)
    return f"must be a non-empty string, got {shown(value)}"


def _reduce_problem(shown: str) -> str:
    return (f"must be mean, max, min, all or all:T (T a finite number, such as all:0.8), "
            f"got {shown}")


def _rank(err: ErrorDetails) -> tuple[int, ...]:
    # an unknown key first (a typo explains the rest), then a missing one
    return {"extra_forbidden": 0, "missing": 1}.get(err["type"], 2), len(err["loc"])


def validate_settings(data: Any, model: type[EvalSettings],
                      sections: Sequence[str] = ()) -> EvalSettings:
    """``data`` (a parsed ``evalkit.yaml``, or the ``[tool.evalkit]`` table, without the
    plugins' sections: :mod:`evalkit.execute.config_sections`) as ``model``;
    ``sections`` are named with the keys of an unknown key's message.

    Raises:
        Problem: the first problem; its message is ``key 'K': ...``, or the file's
            (``empty config``, ``the config must be a mapping of keys``) at no key.
    """
    if data is None:
        raise Problem(None, "empty config")
    if not isinstance(data, dict):
        raise Problem((), "the config must be a mapping of keys")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = first_error(exc, _rank)
        loc = tuple(err["loc"])
        if is_rule(err):
            key = str((err.get("ctx") or {}).get("key"))
            raise Problem((key,), f"key {key!r}: {rule_message(err)}") from None
        shown = [p for p in loc[:2] if isinstance(p, str) and p != "[key]"]
        path = ".".join(shown if loc[:1] == ("target",) else shown[:1])
        raise Problem(loc, f"key {path!r}: {_problem(err, path, data, model, sections)}"
                      ) from None


__all__ = [
    "TARGET_KEYS",
    "EvalSettings",
    "ExecutorSettings",
    "TargetSettings",
    "ToolSettings",
    "known_keys",
    "validate_settings",
]
