"""Judges declared in the eval config: the ``judges:`` section of ``evalkit.yaml`` (a
table list ``[[tool.evalkit.judges]]`` of ``pyproject.toml``).

.. code-block:: yaml

    judges:
      - name: correctness              # the metric's name
        provider: openai               # anthropic (default), openai, or a registered one
        model: gpt-4.1-mini
        base_url: https://api.openai.com/v1
        api_key_env: OPENAI_API_KEY
        rubric: {file: rubrics/correctness.md}   # or the text itself
        scale: 5
        higher_is_better: true         # required, as for every metric
        cache: .evalkit/judge-cache.sqlite
        prices: {gpt-4.1-mini: [0.4, 1.6]}
    metrics: [correctness]

The section is validated with :class:`Judges` when the config is read (an unknown key
or a bad value names the file, line and key). ``evalkit run`` then hands it to
:func:`apply_judges`, which builds one :class:`~evalkit_judge.judge.LLMJudge` per entry
(paths relative to the config's folder) and registers it as a metric: a name another
metric has is refused as any clash is.

The run's header keeps each declared judge's whole definition (no secret: a header
value only as its ``${NAME}`` reference) under ``details[name]["judge"]``, through the
metric's ``summarize_details``, and its definition hash as the metric's ``version``.
When a run is read without its config (``evalkit rescore``, ``gate``, ``compare``),
:func:`restore_judges` registers again the judges its header records, so those commands
find them, their polarity and their cache.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from evalkit.io.limits import MAX_RETRIES

#: A judge's metric name: letters, digits, ``_``, ``-`` and ``.``, starting with a letter.
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]*$"
#: An environment variable's name.
ENV_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
#: The module named as the provider of declared judges in the registry.
PROVIDER_MODULE = "evalkit_judge.declared"

Price = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class PriceEntry(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")
    input: Price
    output: Price
    cache_write: Price | None = None
    cache_read: Price | None = None


class RubricFile(BaseModel):
    """A rubric read from a file (relative to the config's folder)."""

    model_config = ConfigDict(extra="forbid")
    file: str = Field(min_length=1)


class JudgeEntry(BaseModel):
    """One declared judge: a metric graded by a model (docs/judge.md, "Judges in the
    eval config")."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=NAME_PATTERN, description="The metric's name.")
    model: str = Field(min_length=1, description="The judge model id.")
    higher_is_better: bool = Field(description="The metric's polarity (required).")
    rubric: str | RubricFile = Field(description="What a good response is: the text, or "
                                     "{file: PATH} relative to the config.")
    provider: str = Field("anthropic", description="anthropic, openai, or a provider "
                          "registered through the entry points evalkit_judge.providers.")
    scale: int = Field(5, ge=2, le=100, description="The top score; scores run 1..scale.")
    base_url: str | None = Field(None, min_length=1, description="The API's base URL; "
                                 "${NAME} references are read from the environment.")
    api_key_env: str | None = Field(None, pattern=ENV_PATTERN, description="The "
                                    "environment variable holding the API key.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers "
                                    "(values are secrets; ${NAME} references expanded).")
    grade_via: Literal["tool", "json_schema"] = Field("tool", description="A forced, strict "
                                                      "tool call, or a strict JSON schema "
                                                      "reply (openai).")
    cache: str | None = Field(None, min_length=1, description="The SQLite grade cache, "
                              "relative to the config.")
    prices: dict[str, PriceEntry | tuple[Price, Price]] | str | None = Field(
        None, description="{model: [input, output]} or {model: {input, output, cache_write, "
        "cache_read}} in USD per million tokens, or a JSON file of them.")
    retries: int | None = Field(None, ge=0, le=MAX_RETRIES, description="Retries of a "
                                "408, 409, 429, 5xx or transport failure (default 4).")
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False,
                                  description="The deadline in seconds of each whole HTTP "
                                  "attempt (connecting, headers, the complete body).")
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_tokens: int = Field(1024, ge=1, description="The output token cap of a request.")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="The request's name of that cap: max_tokens, or "
        "max_completion_tokens (openai: the o-series models require it).")
    system: str | None = None
    judge_resamples: bool = Field(False, description="With epochs, grade every sample "
                                  "by its own request.")
    description: str = ""

    @field_validator("rubric", mode="before")
    @classmethod
    def _rubric_file_named(cls, value: Any) -> Any:
        """Refuse ``{file: ""}`` in words (pydantic would report the union's ``str`` member)."""
        from evalkit.io.model_errors import rule

        if isinstance(value, Mapping) and isinstance(value.get("file"), str) \
                and not value["file"].strip():
            raise rule("the rubric file name is empty; give the rubric file's path, "
                       "relative to the config (rubric: {file: rubrics/correctness.md}), "
                       "or the rubric text itself (rubric: \"Is the answer correct?\")")
        return value

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        from evalkit_judge.providers import provider_class

        provider_class(value)  # ValueError naming the known ones
        return value


class Judges(RootModel[list[JudgeEntry]]):
    """The ``judges:`` section: a list of :class:`JudgeEntry`, names unique."""

    @model_validator(mode="after")
    def _unique(self) -> Judges:
        seen: set[str] = set()
        for entry in self.root:
            if entry.name in seen:
                raise ValueError(f"two judges are named {entry.name!r}")
            seen.add(entry.name)
        return self


class DeclaredJudge:
    """A judge declared in the eval config, as the registry holds it: ``judge(response,
    case)`` grades; ``details`` and ``summarize_details`` feed the rows and the run
    header, which also keeps :meth:`record` (the whole definition, no secret)."""

    def __init__(self, name: str, higher_is_better: bool, judge: Any) -> None:
        self.name, self.higher_is_better, self.judge = name, higher_is_better, judge
        self.__doc__ = judge.__doc__
        self.__module__ = PROVIDER_MODULE

    def __call__(self, response: Any, case: Any) -> float:
        return float(self.judge(response, case))

    def details(self, case_id: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.judge.details(case_id)
        return found

    def llm_judge(self) -> Any:
        """The :class:`~evalkit_judge.judge.LLMJudge` behind the metric (what
        ``evalkit pairwise --judge NAME`` asks)."""
        return self.judge

    def record(self) -> dict[str, Any]:
        """The judge's definition with its metric name and polarity."""
        return {"name": self.name, "higher_is_better": self.higher_is_better,
                **self.judge.record()}

    def summarize_details(self, rows: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
        from evalkit_judge.grades import summarize

        return {**summarize(rows), "judge": self.record()}


_BUILT: dict[str, DeclaredJudge] = {}
_LOCK = threading.Lock()


def _resolved(entry: JudgeEntry, base: Path) -> dict[str, Any]:
    """The entry with its files read or made absolute (relative to ``base``)."""
    out = entry.model_dump()
    if isinstance(entry.rubric, RubricFile):
        path = base / entry.rubric.file
        from evalkit.io.user_files import MAX_CONFIG_BYTES, read_input

        try:  # a regular file of at most 16 MiB: never a pipe, a device or a huge file
            text = read_input(path, "rubric", max_bytes=MAX_CONFIG_BYTES,
                              error=ValueError).decode("utf-8")
        except UnicodeError as exc:
            raise ValueError(f"judge {entry.name!r}: rubric file {path} cannot be read "
                             f"({type(exc).__name__}: {exc})") from None
        except ValueError as exc:
            # "PATH: why", or "rubric PATH: is a directory; ..."
            raise ValueError(f"judge {entry.name!r}: rubric file "
                             f"{str(exc).removeprefix('rubric ')}") from None
        if not text.strip():
            raise ValueError(f"judge {entry.name!r}: rubric file {path} is empty")
        out["rubric"] = text
    if entry.cache is not None:
        out["cache"] = str(_absolute(base / entry.cache, entry.name, "cache"))
    if isinstance(entry.prices, str):
        out["prices"] = str(_absolute(base / entry.prices, entry.name, "prices"))
    elif entry.prices is not None:
        out["prices"] = {m: (list(p) if isinstance(p, tuple) else p.model_dump())
                         for m, p in entry.prices.items()}
    return out


def build_judge(settings: Mapping[str, Any]) -> DeclaredJudge:
    """The judge of resolved ``settings`` (:func:`_resolved`), the same object for the
    same settings (so that registering it again changes nothing).

    Raises:
        ValueError: the judge refuses a setting (an unknown provider, a bad price).
    """
    from evalkit_judge.grades import canonical_json
    from evalkit_judge.judge import LLMJudge

    key = canonical_json(dict(settings))
    with _LOCK:
        found = _BUILT.get(key)
        if found is not None:
            return found
        s = dict(settings)
        prices = s["prices"]
        if isinstance(prices, Mapping):
            prices = {m: tuple(p) if isinstance(p, list) else
                      {k: v for k, v in p.items() if v is not None}
                      for m, p in prices.items()}
        judge = LLMJudge(
            s["rubric"], model=s["model"], scale=s["scale"], provider=s["provider"],
            base_url=s["base_url"], api_key_env=s["api_key_env"], headers=s["headers"],
            grade_via=s["grade_via"], cache_path=s["cache"], prices=prices,
            retries=s["retries"], timeout=s["timeout"], temperature=s["temperature"],
            max_tokens=s["max_tokens"], max_tokens_field=s["max_tokens_field"],
            system=s["system"],
            judge_resamples=s["judge_resamples"])
        judge.__module__ = PROVIDER_MODULE
        declared = DeclaredJudge(s["name"], s["higher_is_better"], judge)
        _BUILT[key] = declared
        return declared


def _register(declared: DeclaredJudge, description: str, registry: Any) -> None:
    """Register ``declared`` as a metric of ``registry``.

    Raises:
        RegistryError: the name is another metric's (a ``LookupError``).
    """
    from evalkit.core.providers import Provider
    from evalkit.core.specs import MetricSpec
    from evalkit_judge import __version__
    from evalkit_judge.judge import LLMJudge

    judge = declared.judge
    assert isinstance(judge, LLMJudge)
    what = description or (f"LLM judge {judge.provider.name}:{judge.model}, "
                           f"scale 1-{judge.scale}")
    # a grade (or the mean of a case's sampled grades) lies in 1..scale: the declared
    # range an anytime-valid comparison (evalkit run --until-decided) needs
    spec = MetricSpec(declared.name, declared, declared.higher_is_better, description=what,
                      version=f"judge-{judge.definition}", value_type="discrete",
                      bounds=(1.0, float(judge.scale)))
    registry.add(spec, Provider(module=PROVIDER_MODULE, distribution="evalkit-judge",
                                version=__version__, plugin="judge"))


def apply_judges(section: Judges, config: Any) -> None:
    """Register each judge of the ``judges:`` section (``evalkit run``, before the run's
    metric names are checked); files are relative to the config's folder.

    Raises:
        ValueError: a rubric file that cannot be read, a setting the judge refuses.
        Problem: a ``cache`` that is one of the command's files
            (:func:`check_cache_paths`), before any cache is opened.
        RegistryError: a judge named like another metric (a ``LookupError``: reported
            at the section's line, naming both providers).
    """
    from evalkit.plugins.default import default_registry

    base = Path(getattr(config, "path", Path("evalkit.yaml"))).resolve().parent
    registry = default_registry()
    check_cache_paths(section, config, base)  # before any cache is opened
    for entry in section.root:
        declared = build_judge(_resolved(entry, base))
        _register(declared, entry.description, registry)


#: The files of an eval config (its attributes) a judge cache must not be, and their names.
_CONFIG_FILES = (("path", "the eval config"), ("goldens", "the golden file (goldens)"),
                 ("output", "the run artifact (output, run's --output, gate's --run)"),
                 ("checks", "the checks file (checks)"),
                 ("baseline", "the baseline run (baseline, --baseline, gate's -b)"))


def _absolute(path: Path, judge: str, key: str) -> Path:
    """``path`` made absolute, links followed.

    Raises:
        ValueError: a symbolic link loop, naming the judge and the key.
    """
    from evalkit.io.symlink_loops import resolve_input

    return resolve_input(path, f"judge {key}", label=f"judge {judge!r}: {key}",
                         error=ValueError)


def _same_file(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def check_cache_paths(section: Judges, config: Any, base: Path) -> None:
    """Refuse a judge ``cache`` that is one of the command's files, before any cache is
    opened (a cache that is not a judge cache is renamed aside when it is opened): the
    eval config, its goldens, output, checks and baseline (``config``'s attributes, which
    the command sets to its own files: ``evalkit run --output/--baseline``, ``evalkit gate
    --run/--baseline/--checks``), the judge's rubric or price file.

    Raises:
        Problem: located at ``judges[i].cache``, naming the file it is.
        ValueError: a cache, rubric or price path that is a symbolic link loop.
    """
    from evalkit.io.model_errors import Problem

    files: list[tuple[Path, str]] = []
    for attribute, what in _CONFIG_FILES:
        value = getattr(config, attribute, None)
        if isinstance(value, str | Path) and str(value):
            files.append(((base / Path(value)).resolve(), what))
    for entry in section.root:
        if isinstance(entry.rubric, RubricFile):
            files.append((_absolute(base / entry.rubric.file, entry.name, "rubric"),
                          f"the rubric file of judge {entry.name!r}"))
        if isinstance(entry.prices, str):
            files.append((_absolute(base / entry.prices, entry.name, "prices"),
                          f"the price file of judge {entry.name!r}"))
    for i, entry in enumerate(section.root):
        if entry.cache is None:
            continue
        cache = _absolute(base / entry.cache, entry.name, "cache")
        for path, what in files:
            if _same_file(cache, path):
                raise Problem((i, "cache"), f"judge {entry.name!r}: the cache {entry.cache} "
                              f"is {what}; the judge cache is an SQLite file evalkit "
                              "creates and rewrites (a file that is not one is renamed "
                              "aside): name a file of its own, e.g. "
                              ".evalkit/judge-cache.sqlite; nothing was opened")


def check_environment(section: Judges, config: Any = None) -> None:
    """Refuse, before anything is called, a judge whose environment variables are not
    set: the one ``api_key_env`` names, and each ``${NAME}`` of ``base_url`` and
    ``headers`` (the section's ``preflight``: ``evalkit run`` unless ``--dry-run``, and
    ``evalkit pairwise --config``). A judge without ``api_key_env`` is not checked for
    its provider's default variable (the SDK may find other credentials).

    Raises:
        Problem: located at the judge's key (``judges[0].api_key_env``), naming the
            variable, never a value.
    """
    import os

    from evalkit.io.model_errors import Problem
    from evalkit.io.redaction import ENV_REFERENCE

    def state(var: str) -> str | None:
        value = os.environ.get(var)
        if value is None:
            return "not set"
        return "empty" if not value.strip() else None

    for i, entry in enumerate(section.root):
        if entry.api_key_env is not None:
            why = state(entry.api_key_env)
            if why is not None:
                raise Problem((i, "api_key_env"), f"judge {entry.name!r}: api_key_env names "
                              f"{entry.api_key_env}, which is {why}; export it (a --dry-run "
                              "needs no key); nothing was called")
        places: list[tuple[tuple[int | str, ...], str]] = []
        if entry.base_url is not None:
            places.append(((i, "base_url"), entry.base_url))
        places.extend(((i, "headers", name), value) for name, value in entry.headers.items())
        for loc, value in places:
            for var in ENV_REFERENCE.findall(value):
                why = state(var)
                if why is not None:
                    raise Problem(loc, f"judge {entry.name!r}: refers to ${{{var}}}, which "
                                  f"is {why}; export {var} before the run; nothing was "
                                  "called")


def apply_config_judges(path: str | Path, *, preflight: bool = True) -> list[str]:
    """Register the judges of the eval config ``path``'s ``judges:`` section (its other
    plugin sections are validated, not applied), as ``evalkit run`` would: what
    ``evalkit pairwise --config PATH`` does, so that a judge declared there judges runs
    made without it; with ``preflight`` (not under ``--dry-run``) the judges' environment
    variables are checked too (:func:`check_environment`).

    Returns:
        The names of the judges registered, in the order of the file.

    Raises:
        evalkit.execute.evalconfig.ConfigError: the config cannot be read or validated,
            has no ``judges:`` section, or a judge is refused (a rubric file that cannot
            be read, a name another metric has): the file, line and key named.
    """
    from dataclasses import replace

    from evalkit.execute.evalconfig import ConfigError, load_eval_config
    from evalkit.execute.run_checks import apply_config_sections, preflight_config_sections

    cfg = load_eval_config(path)
    section = cfg.sections.get("judges")
    if not isinstance(section, Judges):
        raise ConfigError(f"{cfg.source}: no judges: section; declare the judge there "
                          "(docs/judge.md, Judges in the eval config)")
    judges_only = replace(cfg, sections={"judges": section})
    apply_config_sections(judges_only)
    if preflight:  # a dry run sends nothing: no key needed
        preflight_config_sections(judges_only)
    return [entry.name for entry in section.root]


def restore_judges(header: Mapping[str, Any]) -> None:
    """Register the judges a run header records (``details[name]["judge"]``) whose names
    the registry does not know, so that a command reading the run without its config
    (``evalkit rescore``, ``gate``, ``compare``) finds them. A record that cannot be
    rebuilt (an unknown provider, a malformed entry) or rebuilds another judge than the
    run's (its definition hash differs: a base URL whose user info or query string, a
    secret, the header does not record) is skipped: the command then reports the name as
    unknown, and ``--config`` registers it from the eval config."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    details = header.get("details")
    if not isinstance(details, Mapping):
        return
    registry = default_registry()
    for name, totals in details.items():
        record = totals.get("judge") if isinstance(totals, Mapping) else None
        if not isinstance(record, Mapping) or record.get("name") != name:
            continue
        try:
            registry.resolve(name)
            continue  # known: the config's (or the code's) definition wins
        except RegistryError:
            pass
        try:
            declared = build_judge(_from_record(record))
        except (ValueError, LookupError, TypeError):
            continue
        if declared.judge.definition != record.get("definition"):
            continue  # not the judge of the run: a base URL recorded without its secrets
        try:
            _register(declared, "", registry)
        except (ValueError, LookupError, TypeError):
            continue


def _from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Resolved settings (:func:`_resolved`'s shape) from a header's judge record; header
    values that were not recorded (literal secrets) are left out.

    Raises:
        ValueError: the record does not validate as a judge entry.
    """
    from evalkit_judge.providers import REDACTED

    headers = {k: v for k, v in (record.get("headers") or {}).items() if v != REDACTED}
    prices = record.get("prices") or None
    if isinstance(prices, Mapping):
        prices = {m: {k: v for k, v in p.items() if v is not None}
                  for m, p in prices.items()}
    fields = {k: record.get(k) for k in JudgeEntry.model_fields if k in record}
    fields.update(headers=headers, prices=prices, cache=record.get("cache"))
    entry = JudgeEntry.model_validate({k: v for k, v in fields.items() if v is not None})
    out = entry.model_dump()
    out["cache"] = record.get("cache")
    if isinstance(entry.prices, dict):
        out["prices"] = {m: list(p) if isinstance(p, tuple) else p.model_dump()
                         for m, p in entry.prices.items()}
    return out

__all__ = ["DeclaredJudge", "JudgeEntry", "Judges", "apply_config_judges", "apply_judges",
           "build_judge", "check_cache_paths", "check_environment", "restore_judges"]
