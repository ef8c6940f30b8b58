"""The eval config that ``evalkit run`` reads: one schema, two places to write it.

The same keys are read from ``evalkit.yaml`` (or ``evalkit.yml``) or from the
``[tool.evalkit]`` table of ``pyproject.toml``::

    # evalkit.yaml
    name: search-v2                      # optional; default: the target's name
    goldens: goldens/cases.jsonl         # required; relative to this file
    goldens_loader: jsonl                # optional; default: chosen by suffix
    target:
      factory: myproject.targets:make    # required: "package.module:callable", or the
                                         # name of a registered target factory ("http")
      kwargs: {url: "http://127.0.0.1:8080/search"}   # optional keyword arguments
    metrics: [recall@10, ndcg@10]        # per-case metrics
    aggregates: [latency_p95]            # optional whole-run aggregates
    output: runs/search-v2.jsonl         # required; relative to this file
    max_concurrency: 8                   # optional; default 8
    epochs: 1                            # optional; samples per case (K), default 1
    reduce: mean                         # optional; mean | max | min | all | all:T
    requests_per_minute: 600             # optional client-side limits (default: none)
    tokens_per_minute: 90000
    executor: {name: dask, address: "tcp://10.0.0.5:8786"}  # optional; default local
    checks: evals/checks.yaml            # evalkit gate's defaults (optional): the checks,
    baseline: baselines/main.jsonl       # the baseline and the reports; the run gated
    reporters: ["junit:reports/gate.xml"]  # is the output

At least one metric or aggregate is required. The factory is called as
``factory(**kwargs)`` and must return a target (``name`` and ``invoke(case)``); the
config file's folder is put first on ``sys.path`` while it is imported, so a project
module next to the config is found. The rules are the pydantic models of
:mod:`evalkit.execute.evalconfig_models`: any unknown key is an error (with a did-you-mean), so a
typo never passes silently, and ``plugins``/``local_plugins`` in ``evalkit.yaml``, where
they would have no effect, are refused with where they belong (``[tool.evalkit]``).

Which file: an explicit path wins. Otherwise the search walks up from the working
directory to the first folder with ``evalkit.yaml`` or ``pyproject.toml``; there
``evalkit.yaml`` wins over ``pyproject.toml``: it is the file written for evalkit alone,
while ``pyproject.toml`` is shared with every other tool. When both hold run settings,
the choice is reported (see :attr:`EvalConfig.notice`).

Every error is a :class:`ConfigError` naming the file (and, in ``evalkit.yaml``, the
line) and the key.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.execute.config_location import CONFIG_KEYS as CONFIG_KEYS
from evalkit.execute.config_location import ConfigError as ConfigError
from evalkit.execute.config_location import _pyproject_table
from evalkit.execute.config_location import find_config as find_config
from evalkit.execute.target_runner import DEFAULT_MAX_CONCURRENCY
from evalkit.io.error_messages import not_utf8_at
from evalkit.io.redaction import (
    redact_structure,
    register_structure_secrets,
    scrub_exception,
)

if TYPE_CHECKING:
    from evalkit.io.bounded_yaml import MarkedYaml



@dataclass(frozen=True)
class EvalConfig:
    """A validated eval config.

    Attributes:
        path: the file it was read from.
        source: ``"<path>"`` or ``"<path> [tool.evalkit]"``.
        goldens: the golden file (absolute).
        goldens_loader: a loader name, or ``None`` to choose by suffix.
        target_factory: the import string or registered target name.
        target_kwargs: keyword arguments of the factory.
        metrics, aggregates: names, in the order given.
        output: the artifact path (absolute).
        max_concurrency: the most calls in flight.
        epochs: K, samples per case (1: each case once).
        reduce: how a case's samples are reduced (:mod:`evalkit.data.samples`).
        requests_per_minute, tokens_per_minute: the run's client-side rate limits, or
            ``None`` (:mod:`evalkit.execute.pacing`).
        executor: the executor's name (``local``, ``dask``).
        executor_options: its keyword arguments (``address``...).
        name: the run name, or ``None`` for the target's name.
        checks: ``evalkit gate``'s checks file (absolute), or ``None``.
        baseline: ``evalkit gate``'s baseline (absolute), or ``None``.
        reporters: ``evalkit gate``'s reports, ``FORMAT:PATH`` (paths absolute, ``-``
            kept).
        sections: the plugins' sections the file holds, ``{key: instance of the
            section's model}`` (:mod:`evalkit.execute.config_sections`); ``evalkit run``
            hands each to its plugin
            (:func:`evalkit.execute.run_checks.apply_config_sections`).
        notice: a message about which config file was chosen, or ``""``.
    """

    path: Path
    source: str
    goldens: Path
    goldens_loader: str | None
    target_factory: str
    target_kwargs: dict[str, Any]
    metrics: tuple[str, ...]
    aggregates: tuple[str, ...]
    output: Path
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    epochs: int = 1
    reduce: str = "mean"
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    executor: str = "local"
    executor_options: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    checks: Path | None = None
    baseline: Path | None = None
    reporters: tuple[str, ...] = ()
    sections: Mapping[str, Any] = field(default_factory=dict)
    notice: str = field(default="", compare=False)

    def recorded(self) -> dict[str, Any]:
        """The settings stored in the run header and compared on resume; secret-looking
        keyword arguments and every header value are replaced by ``"<redacted>"``."""
        return {
            "target_factory": self.target_factory,
            "target_kwargs": redact(self.target_kwargs),
            "goldens_loader": self.goldens_loader,
        }

    def build_target(self) -> Any:
        """Import and call the target factory.

        The secrets of the keyword arguments (header values, secret-looking keys, URL
        credentials and query values) are registered for masking first
        (:mod:`evalkit.io.redaction`), so no message below can show them.

        Raises:
            ConfigError: the factory cannot be imported, raises, or returns something
                without ``invoke``.
        """
        from evalkit.execute.factory_errors import yaml_lines

        line_of = yaml_lines(self.path)
        line = None if line_of is None else line_of(("target", "factory"))
        where = f"{self.source}{'' if line is None else f':{line}'}: target.factory"
        register_structure_secrets(self.target_kwargs)
        try:
            # the config's folder is on the path while the factory is imported and called,
            # so the import strings a factory resolves itself (factory: http's
            # build_payload / extract) find a module next to the config too
            with _on_path(self.path.parent):
                factory = _resolve_factory(self.target_factory, where)
                target = factory(**self.target_kwargs)
        except ConfigError:
            raise
        except Exception as exc:
            from evalkit.execute.factory_errors import factory_error, yaml_lines

            scrub_exception(exc)
            raise ConfigError(factory_error(exc, source=self.source,
                                            factory=self.target_factory,
                                            kwargs=self.target_kwargs,
                                            line_of=yaml_lines(self.path))) from exc
        from evalkit.execute.async_executor import is_async_target

        if not callable(getattr(target, "invoke", None)) and not is_async_target(target):
            if callable(target):
                # a plain function (case -> ids or text) is a target too
                from evalkit.data.targets import CallableTarget

                return CallableTarget(target, name=self.target_factory.rsplit(":", 1)[-1])
            raise ConfigError(
                f"{where}: {self.target_factory} returned {type(target).__name__}, which is "
                "neither a target (no invoke(case) or async ainvoke(case) method) nor a "
                "callable; return a "
                "Target, or a function case -> list of ids or text"
            )
        return target

    def target_recipe(self) -> Any:
        """How an executor's workers build the same target: the factory, its kwargs and
        the config's folder (:class:`~evalkit.execute.executor_api.TargetRecipe`)."""
        from evalkit.execute.executor_api import TargetRecipe

        return TargetRecipe(self.target_factory, dict(self.target_kwargs), str(self.path.parent))


#: ``value`` with every header value, secret-looking key's value, URL query string and
#: URL user-info replaced (:func:`evalkit.io.redaction.redact_structure`).
redact = redact_structure


@contextlib.contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """``folder`` first on ``sys.path`` for the block (removed after, if it was added)."""
    added = str(folder) not in sys.path
    if added:
        sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        if added and str(folder) in sys.path:
            sys.path.remove(str(folder))


def _resolve_factory(spec: str, where: str) -> Any:
    if ":" not in spec:
        from evalkit.core.registry import RegistryError
        from evalkit.core.specs import TargetSpec
        from evalkit.plugins.default import default_registry

        try:
            record = default_registry().get("target", spec)
        except RegistryError as exc:
            raise ConfigError(f"{where}: {exc} (or use 'package.module:callable')") from None
        assert isinstance(record, TargetSpec)
        return record.factory
    from evalkit.core.import_strings import import_object

    try:
        obj = import_object(spec)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}: cannot import {spec!r} ({exc})") from None
    if not callable(obj):
        raise ConfigError(f"{where}: {spec!r} is not callable")
    return obj


# ------------------------------------------------------------------ reading
def load_eval_config(path: str | Path | None = None) -> EvalConfig:
    """Read and validate the eval config.

    Args:
        path: ``evalkit.yaml``/``.yml``, a ``pyproject.toml``, or a folder; default: the
            working directory (see :func:`find_config`).

    Raises:
        ConfigError: no config, unreadable file, or a bad key (file and key named).
    """
    notice = ""
    if path is None or Path(path).is_dir():
        file, kind, notice = find_config(path)
    else:
        file = Path(path)
        if not file.is_file():
            from evalkit.io.symlink_loops import refuse_symlink_loop

            refuse_symlink_loop(file, "config", label="", error=ConfigError)
            raise ConfigError(f"{file}: " + ("no such config file" if not file.exists() else
                              "is a pipe or device, not a regular file; pass the config file"))
        kind = "pyproject" if file.name == "pyproject.toml" or file.suffix == ".toml" \
            else "yaml"
    file = file.resolve()
    line_of: Callable[[Sequence[int | str]], int | None] | None = None
    if kind == "pyproject":
        table: Any = _pyproject_table(file)
        if table is None:
            raise ConfigError(f"{file}: no [tool.evalkit] table")
        source = f"{file} [tool.evalkit]"
    else:
        doc = _read_yaml(file)
        table, line_of, source = doc.data, doc.line, str(file)
    return _validate(table, file, source, line_of, pyproject=kind == "pyproject",
                     notice=notice)


def _read_yaml(file: Path) -> MarkedYaml:
    import yaml

    from evalkit.io.bounded_yaml import load_marked
    from evalkit.io.limits import LimitError

    try:
        from evalkit.io.input_messages import swapped_input_message
        from evalkit.io.user_files import read_input

        data = read_input(file, "config", error=ConfigError)
        other = swapped_input_message(file, "config", "`evalkit run CONFIG` (and --config)")
        if other is not None:
            raise ConfigError(other)
        return load_marked(data.decode("utf-8-sig"))
    except LimitError as exc:
        line = "" if exc.line is None else f":{exc.line}"
        raise ConfigError(f"{file}{line}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{file}{where}: not valid YAML ({problem})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{not_utf8_at(file, exc)}; an eval config is evalkit.yaml or pyproject.toml. "
            "Is this the right file?"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read ({exc.strerror or exc})") from None


def _validate(table: Any, file: Path, source: str,
              line_of: Callable[[Sequence[int | str]], int | None] | None, *,
              pyproject: bool, notice: str) -> EvalConfig:
    from evalkit.execute.config_sections import (
        declared_sections,
        split_sections,
        validate_section,
    )
    from evalkit.execute.evalconfig_models import EvalSettings, ToolSettings, validate_settings
    from evalkit.io.model_errors import Problem, located

    declared, blocked = declared_sections()
    try:
        own, raw_sections = split_sections(table, declared, blocked)
        settings = validate_settings(own, ToolSettings if pyproject else EvalSettings,
                                     sorted(declared))
        sections = {key: validate_section(declared[key], value)
                    for key, value in raw_sections.items()}
    except Problem as exc:
        raise ConfigError(located(source, exc, line_of)) from None
    base = file.parent
    from evalkit.io.model_errors import where
    from evalkit.io.symlink_loops import resolve_input

    def resolved(key: str, value: str) -> Path:
        at = where(source, None if line_of is None else line_of((key,)))
        return resolve_input(base / value, key, label=f"{at}: key {key!r}:",
                             error=ConfigError)

    def path(value: str | None, key: str = "output") -> Path | None:
        return None if value is None else resolved(key, value)

    def report(target: str) -> str:
        fmt, _, dest = target.partition(":")
        return target if dest == "-" else f"{fmt}:{path(dest)}"

    return EvalConfig(
        path=file, source=source,
        goldens=_goldens_path(base, settings.goldens, lambda g: resolved("goldens", g)),
        goldens_loader=settings.goldens_loader, target_factory=settings.target.factory,
        target_kwargs=dict(settings.target.kwargs), metrics=tuple(settings.metrics),
        aggregates=tuple(settings.aggregates), output=resolved("output", settings.output),
        max_concurrency=settings.max_concurrency, epochs=settings.epochs,
        reduce=settings.reduce, name=settings.name,
        requests_per_minute=settings.requests_per_minute,
        tokens_per_minute=settings.tokens_per_minute,
        executor=settings.executor.name, executor_options=settings.executor.factory_options(),
        checks=path(settings.checks, "checks"), baseline=path(settings.baseline, "baseline"),
        reporters=tuple(report(r) for r in settings.reporters), sections=sections,
        notice=notice,
    )


def check_names(cfg: EvalConfig) -> None:
    """Resolve every metric and aggregate name of ``cfg`` before any target call.

    Raises:
        ConfigError: an unknown name, or a metric listed as an aggregate (or the reverse),
            naming the file and key.
    """
    from evalkit.core.registry import RegistryError
    from evalkit.execute.scoring import resolve_metrics
    from evalkit.execute.target_runner import resolve_aggregates

    for key, resolver in (("metrics", resolve_metrics), ("aggregates", resolve_aggregates)):
        for i, n in enumerate(getattr(cfg, key)):
            try:
                resolver([n])
            except RegistryError as exc:
                hint = _factory_registers_hint(cfg) if "unknown" in str(exc) else ""
                text = f"{_at_line(cfg, (key, i))}: key {key!r}: {exc}"
                raise ConfigError(text.rstrip(".") + hint if hint else text) from None


def _at_line(cfg: EvalConfig, loc: tuple[str, int]) -> str:
    """``source:line`` of ``loc`` in an evalkit.yaml (read again: the file is small), or
    ``source`` (a pyproject.toml, or a file that changed since)."""
    if cfg.source != str(cfg.path):
        return cfg.source
    try:
        line = _read_yaml(cfg.path).line(loc)
    except ConfigError:
        return cfg.source
    return cfg.source if line is None else f"{cfg.source}:{line}"


def _factory_registers_hint(cfg: EvalConfig) -> str:
    """When the target factory's module registers metrics (its source calls
    ``register_metric`` or ``register_aggregate``), why they are unknown here and the fix:
    names are resolved before the factory is imported; ``local_plugins`` loads the module
    first. Empty otherwise (the module is read, never imported)."""
    module = cfg.target_factory.partition(":")[0] if ":" in cfg.target_factory else ""
    if not module:
        return ""
    import importlib.util

    from evalkit.io.user_files import read_input

    try:
        with _on_path(cfg.path.parent):
            spec = importlib.util.find_spec(module)
        origin = None if spec is None else spec.origin
        text = "" if not origin else read_input(  # never a pipe, a device, a huge file
            origin, "target factory module", error=ValueError).decode("utf-8", "replace")
    except (ImportError, ValueError, OSError):
        return ""
    if "register_metric" not in text and "register_aggregate" not in text:
        return ""
    return (f". {module} (the target factory's module) registers metrics when it is "
            "imported, but metric names are resolved before the factory is: load it as a "
            f"plugin first, with local_plugins = [\"{module}\"] under [tool.evalkit] in "
            "pyproject.toml (docs/plugins.md)")


def _goldens_path(base: Path, goldens: str, resolve: Callable[[str], Path]) -> Path:
    """The golden file relative to the config's folder, made absolute by ``resolve``; a
    source a goldens loader names by its scheme (``irds:vaswani``,
    :attr:`LoaderSpec.scheme`) as given."""
    from evalkit.plugins.default import scheme_loader

    if scheme_loader("goldens", goldens) is not None:
        return Path(goldens)
    return resolve(goldens)
