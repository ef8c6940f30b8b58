"""What ``evalkit run`` refuses before the target is built or called (after handing the
plugins their config sections): a section whose ``preflight`` fails (a judge's variable
not set), names the registry does not know, a golden set that cannot be read, cases
without a field a metric needs, and an output artifact that cannot be written."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evalkit.data.goldens import GoldenError, GoldenSet, load_goldens
from evalkit.execute.case_needs import require_case_fields
from evalkit.execute.config_sections import apply_sections, preflight_sections
from evalkit.execute.evalconfig import ConfigError, EvalConfig, check_names
from evalkit.execute.factory_errors import yaml_lines
from evalkit.execute.scoring import resolve_metrics
from evalkit.io.model_errors import Problem, located
from evalkit.io.outputs import DestinationError, require_writable


def apply_config_sections(cfg: EvalConfig) -> None:
    """Hand each plugin's section of ``cfg`` to the plugin (its record's ``apply``), so
    that it can register what the section declares (:mod:`evalkit.execute.config_sections`).

    Raises:
        ConfigError: an ``apply`` refused its section (the file, line and key named).
    """
    _located(cfg, apply_sections)


def preflight_config_sections(cfg: EvalConfig) -> None:
    """Call each plugin section's ``preflight`` (after :func:`apply_config_sections`):
    what the section declares is checked to work now (a judge's environment variables
    set), before the target is built or called.

    Raises:
        ConfigError: a ``preflight`` refused its section (the file, line and key named).
    """
    _located(cfg, preflight_sections)


def _located(cfg: EvalConfig, step: Callable[[Mapping[str, Any], EvalConfig], None]) -> None:
    """Run ``step`` over ``cfg``'s sections, a section's refusal as a ``ConfigError`` at
    its file, line and key."""
    try:
        step(cfg.sections, cfg)
    except Problem as exc:
        line_of = yaml_lines(cfg.path)
        source = cfg.source
        if line_of is None and cfg.path.suffix == ".toml" and exc.loc:
            # a pyproject.toml: the line of the section's table ([tool.evalkit.KEY])
            from evalkit.core.pyproject_config import key_line

            line = key_line(cfg.path, str(exc.loc[0]))
            if line is not None:
                source = f"{cfg.path}:{line}: [tool.evalkit]"
        # the plugin's own exception stays the cause (EVALKIT_DEBUG=1 shows its traceback)
        raise ConfigError(located(source, exc, line_of)) from exc.__cause__


def prepare_run(cfg: EvalConfig, output: Path | None, *, resume: bool, dry_run: bool,
                baseline: Path | None = None) -> tuple[GoldenSet, Path]:
    """``(golden set, artifact path)`` of the run ``cfg`` describes, its plugins' config
    sections applied (:func:`apply_config_sections`) and every check passed; ``output``
    (``--output``) replaces the config's output, and ``baseline`` (``--baseline``) its
    baseline, in the config the sections are handed (so that a section can refuse to
    use the command's own files).

    Raises:
        ConfigError: a plugin refused its config section.
        RegistryError: an unknown metric, aggregate, loader or target name.
        ValueError: a golden set that cannot be read, a case without a field a metric
            needs (:func:`~evalkit.execute.case_needs.require_case_fields`).
        DestinationError: the artifact cannot be written (a dry run writes none); when
            the config sets it, the message says where.
    """
    from dataclasses import replace

    # the files of this command, as the sections see them
    from evalkit.io.input_files import InputError
    from evalkit.io.symlink_loops import resolve_input

    if output is not None:
        output = resolve_input(output, "output", label="--output", error=InputError)
    if baseline is not None:
        baseline = resolve_input(baseline, "baseline", label="--baseline", error=InputError)
    cfg = replace(cfg, output=output if output is not None else cfg.output,
                  baseline=baseline if baseline is not None else cfg.baseline)
    apply_config_sections(cfg)  # a plugin's section may register names the run uses
    if not dry_run:  # what a section declares must work before the target is called
        preflight_config_sections(cfg)
    check_names(cfg)
    try:
        goldens = load_goldens(cfg.goldens, cfg.goldens_loader)
    except GoldenError as exc:
        if not Path(cfg.goldens).is_dir():
            raise
        raise GoldenError(f"{exc}; the goldens are set in {cfg.source}") from None
    # before the target is built (building it may start work) and before any call
    require_case_fields(resolve_metrics(cfg.metrics), list(goldens))
    path = output if output is not None else cfg.output
    if not dry_run:
        try:  # a resumed artifact is replaced (rewritten beside it); a new one written into
            require_writable(path, "--output" if output is not None else "output",
                             "run.jsonl", in_place=not resume,
                             inputs=[Path(cfg.goldens), cfg.path])
        except DestinationError as exc:
            if output is not None:
                raise
            raise DestinationError(f"{exc}; the output is set in {cfg.source} (or pass "
                                   "--output)") from None
    return goldens, path
