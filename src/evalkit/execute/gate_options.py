"""``evalkit gate``'s options, the ones left out filled from the eval config.

``--checks``, ``--run``, ``--baseline`` and ``--report`` default to the gate settings of
the eval config (``checks``, ``output``, ``baseline``, ``reporters`` of ``evalkit.yaml``
or ``[tool.evalkit]``), so ``evalkit run && evalkit gate`` gates the run just written.
The config is read only when ``--checks`` or ``--run`` is missing, or ``--config`` names
it; an option given always wins. A config that is read has its plugins' sections applied
(:func:`evalkit.execute.run_checks.apply_config_sections`), as ``evalkit run`` applies them,
so that a metric a section registers (in its ``apply``) is known to the gate's checks.

When the run is the config's ``output`` or ``--config`` names the config, the run must
have been made from that config as it is now: :attr:`GateOptions.origin` is what
``evalkit run`` would record (:func:`run_origin`), and the gate takes a run that differs
(another golden set, target or metrics) as incomplete evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.data.run_origin import RunOrigin
from evalkit.execute.evalconfig import ConfigError, EvalConfig, find_config, load_eval_config


@dataclass(frozen=True)
class GateOptions:
    """What ``evalkit gate`` reads and writes: the checks file, the run artifact, the
    baseline (or None) and the ``FORMAT:PATH`` reports; and the eval config, when it was
    read (its sections applied), else None."""

    checks: Path
    run: Path
    baseline: Path | None
    reports: list[str]
    config: EvalConfig | None = None
    #: what the run must have been made from (the config's settings and golden set),
    #: when the run is the config's output or ``--config`` was given; else None
    origin: RunOrigin | None = None


def gate_options(checks: Path | None, run: Path | None, baseline: Path | None,
                 reports: Sequence[str], config: Path | None) -> GateOptions:
    """The options given, with those left out taken from the eval config (``config``, or
    the one found from the working directory). A config that is read has its plugins'
    sections applied (their ``apply``), as ``evalkit run`` does.

    Raises:
        ConfigError: ``--checks`` or ``--run`` is missing and no eval config is found, or
            the config sets no checks; the config itself is unusable (file and key named),
            or a plugin's ``apply`` refused its section.
        GoldenError: the run must be the config's (:attr:`GateOptions.origin`) and the
            golden set the config names cannot be read.
    """
    missing = "--checks/-c" if checks is None else "--run/-r" if run is None else None
    if missing is not None or config is not None:
        usage = f"evalkit gate: missing option {missing} (see `evalkit gate --help`)"
        if config is None:
            try:
                find_config()
            except ConfigError:
                raise ConfigError(usage) from None
        from evalkit.core.pyproject_config import YAML_NAMES
        from evalkit.io.input_files import refuse_directory

        refuse_directory(config, "config", label="--config",
                         inside=(*YAML_NAMES, "pyproject.toml"), error=ConfigError)
        cfg = load_eval_config(config)
        if checks is None and cfg.checks is None:
            raise ConfigError(f"evalkit gate: missing option --checks/-c, and {cfg.source} "
                              "sets no 'checks' (see `evalkit gate --help`)")
        checks = checks if checks is not None else cfg.checks
        made_by_config = run is None or config is not None
        run = run if run is not None else cfg.output
        baseline = baseline if baseline is not None else cfg.baseline
        reports = list(reports) if reports else list(cfg.reporters)
        from dataclasses import replace

        from evalkit.execute.run_checks import apply_config_sections

        # a section may register a metric the checks name; it sees this command's files
        apply_config_sections(replace(cfg, output=run, baseline=baseline, checks=checks))
        assert checks is not None and run is not None  # the config's output is required
        return GateOptions(checks, run, baseline, list(reports), cfg,
                           run_origin(cfg) if made_by_config else None)
    assert checks is not None and run is not None
    return GateOptions(checks, run, baseline, list(reports))


def run_origin(cfg: EvalConfig) -> RunOrigin:
    """What ``evalkit run`` with ``cfg`` would record now, for the comparison with a run's
    header (:func:`evalkit.data.run_origin.header_changes`, the comparison ``--resume``
    makes): the config's recorded settings (:meth:`EvalConfig.recorded`), its metrics and
    aggregates (canonical names) with their definitions, and its golden set's record. A
    name this process does not know is compared as written, without a definition (the
    gate's check on it says it is unknown).

    Raises:
        GoldenError: the golden set cannot be read (the file and the config named).
    """
    from evalkit.core.registry import RegistryError
    from evalkit.data.goldens import GoldenError, load_goldens
    from evalkit.data.provenance import metric_provenance
    from evalkit.execute.run_header import goldens_record

    def known(names: tuple[str, ...]) -> tuple[list[str], dict[str, dict[str, str]]]:
        canonical: list[str] = []
        definitions: dict[str, dict[str, str]] = {}
        for name in names:
            try:
                found = metric_provenance([name])
            except RegistryError:
                found = {}
            definitions.update(found)
            name = next(iter(found), name)
            if name not in canonical:
                canonical.append(name)
        return canonical, definitions

    try:
        gset = load_goldens(cfg.goldens, cfg.goldens_loader)
    except GoldenError as exc:
        raise GoldenError(f"{exc}; the gate reads the golden set {cfg.source} names to "
                          "check that the run was made from it") from None
    metrics, metric_defs = known(cfg.metrics)
    aggregates, aggregate_defs = known(cfg.aggregates)
    config = {**cfg.recorded(), "metrics": metrics, "aggregates": aggregates}
    header = {"config": config, "metrics": metric_defs,
              "aggregate_definitions": aggregate_defs, "goldens": goldens_record(gset)}
    return RunOrigin(cfg.source, header, tuple(config),
                     f"evalkit run {cfg.path} --overwrite")


__all__ = ["GateOptions", "gate_options", "run_origin"]
