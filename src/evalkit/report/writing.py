"""Reports written: a reporter found by name in the registry, ``--report FORMAT:PATH``
targets checked before any work, and each report rendered, masked and written.

Nothing here imports a reporter: :func:`get_reporter` looks it up in the default
registry by name, so ``Comparison.to_html()`` and ``GateReport.to_html()`` reach the
``evalkit-report-html`` plugin without importing it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.core.specs import ReporterSpec
from evalkit.io.interrupts import (
    STDOUT_DOCUMENT,
    Outputs,
    report_label,
    write_whole,
)


class ReportTargetError(ValueError):
    """A ``--report FORMAT:PATH`` value that cannot be used."""


#: Reporters that a plugin distribution of this repository provides: ``{name:
#: distribution}``, so that asking for one that is not installed says what to install.
PLUGIN_REPORTERS: dict[str, str] = {"html": "evalkit-report-html", "history": "evalkit-history",
                                     "mlflow": "evalkit-mlflow",
                                     "latex": "evalkit-report-tables"}


def get_reporter(name: str) -> ReporterSpec:
    """The reporter registered as ``name`` in the default registry.

    Raises:
        RegistryError: no such reporter (the message lists the known ones and, for a
            reporter of :data:`PLUGIN_REPORTERS`, names its plugin: what to install, or
            the plugin selection that disables it and how to enable it), or two plugins
            provide it.
    """
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry
    from evalkit.plugins.loading import unavailable_plugin

    registry = default_registry()
    try:
        spec = registry.get("reporter", name)
    except RegistryError as exc:
        dist = PLUGIN_REPORTERS.get(name)
        blocked = any(c.namespace == "reporter" and c.name == name
                      for c in registry.conflicts())
        if dist is None or blocked:
            raise  # not a plugin's reporter, or a conflict: the registry's message
        # not installed (what to install), disabled by the plugin selection (which one,
        # and how to enable it) or failed to load (why): as for a plugin's command
        why = unavailable_plugin(registry, dist, f"the {name!r} reporter")
        raise RegistryError(f"{exc}. {why[:1].upper()}{why[1:]}" if why else str(exc)
                            ) from None
    assert isinstance(spec, ReporterSpec)
    return spec


def parse_report_target(text: str) -> tuple[str, str]:
    """``"junit:gate.xml"`` -> ``("junit", "gate.xml")``; a path ``-`` means stdout.

    The format is what precedes the first ``:``.

    Raises:
        ReportTargetError: no ``:``, or an empty format or path.
    """
    fmt, sep, path = text.partition(":")
    if not sep or not fmt.strip() or not path.strip():
        raise ReportTargetError(
            f"--report {text!r}: expected FORMAT:PATH, for example junit:gate.xml or "
            "markdown:- (a path of - writes to standard output)"
        )
    return fmt.strip(), path.strip()


def is_recorder(fmt: str) -> bool:
    """Whether the reporter registered as ``fmt`` records objects (a database, a tracking
    server: ``ReporterSpec.record``) rather than rendering text.

    Raises:
        RegistryError: no reporter ``fmt``.
    """
    return get_reporter(fmt).record is not None


def check_report_targets(targets: Sequence[str], *, as_json: bool = False,
                         inputs: Sequence[Path | None] = (),
                         records_only: str | None = None) -> bool:
    """Refuse, before any work, a ``--report FORMAT:PATH`` value that is malformed, names an
    unknown format, names one of the command's ``inputs`` or a file that cannot be
    written, or would share standard output with another report or with ``--json``
    (``as_json``). The targets of a recording reporter (``ReporterSpec.record``) are
    not files and are not checked as such; ``records_only`` (the command's name) refuses
    every other reporter.

    Returns:
        Whether a report goes to standard output (the command's own output then goes to
        standard error).

    Raises:
        ReportTargetError: a malformed target, two reports on one file or on standard
            output, a rendering reporter with ``records_only``.
        RegistryError: an unknown format.
        evalkit.io.outputs.DestinationError: an input, or a file that cannot be written.
    """
    from evalkit.io.outputs import (
        DestinationError,
        UnwritableError,
        check_writable,
        refuse_overwriting_inputs,
    )

    parsed = [parse_report_target(t) for t in targets]
    recorders = {t for t, (fmt_name, _) in zip(targets, parsed, strict=True)
                 if is_recorder(fmt_name)}
    if records_only is not None:
        rendered = [t for t in targets if t not in recorders]
        if rendered:
            raise ReportTargetError(
                f"--report {rendered[0]}: {records_only} only records its result with a "
                "reporter that stores runs (such as history:PATH of evalkit-history); "
                "render reports of a gate or a comparison with evalkit gate or evalkit "
                "compare")
    targets = [t for t in targets if t not in recorders]
    parsed = [parse_report_target(t) for t in targets]
    for text, (_, path) in zip(targets, parsed, strict=True):
        if path == "-":
            continue
        refuse_overwriting_inputs(Path(path), "--report", inputs)
        try:
            check_writable(Path(path), in_place=True)
        except UnwritableError as exc:
            raise DestinationError(f"--report {text}: cannot be written: {exc.reason}"
                                   ) from None
    files: dict[str, str] = {}
    for text, (_, path) in zip(targets, parsed, strict=True):
        if path == "-":
            continue
        key = os.path.realpath(path)
        if key in files:
            raise ReportTargetError(
                f"--report {files[key]} and --report {text} write the same file, where the "
                "second would replace the first; give each its own path")
        files[key] = text
    to_stdout = [t for t, (_, path) in zip(targets, parsed, strict=True) if path == "-"]
    if len(to_stdout) > 1:
        raise ReportTargetError(
            f"--report {' and '.join(to_stdout)} both write to standard output, where they "
            "would run together; send all but one to a file"
        )
    if to_stdout and as_json:
        raise ReportTargetError(
            f"--json and --report {to_stdout[0]} both write to standard output, where they "
            "would run together; send the report to a file, or use --report json:- alone"
        )
    return bool(to_stdout)


def file_targets(targets: Sequence[str], *, records_last: bool = True
                 ) -> tuple[list[str], list[str]]:
    """``(targets written to files, targets handled after the result is printed)``: a
    command writes its files first, so that a write failure is reported before any
    verdict; then, after its result, the reports on standard output and last the
    recording reporters (a tracking server, a database: ``ReporterSpec.record``), so
    that a server that cannot be reached never hides the result already computed. With
    ``records_last=False`` the recording reporters are with the files (a gate: its
    verdict line states the exit code, which a failed recording would contradict).

    Raises:
        ReportTargetError: a malformed target.
        RegistryError: an unknown format.
    """
    parsed = [(t, *parse_report_target(t)) for t in targets]
    recorders = [t for t, fmt, _ in parsed if records_last and is_recorder(fmt)]
    to_files = [t for t, _, path in parsed if path != "-" and t not in recorders]
    to_std = [t for t, _, path in parsed if path == "-" and t not in recorders]
    return to_files, [*to_std, *recorders]


def write_reports(obj: Any, targets: Sequence[str], outputs: Outputs | None = None
                  ) -> list[str]:
    """Render ``obj`` once per ``FORMAT:PATH`` target and write each (``-`` = stdout); a
    recording reporter (``ReporterSpec.record``) is handed ``obj`` itself and its target,
    and the line it returns is printed on standard error.

    Every target is parsed, its reporter looked up and every text rendered before
    anything is written; the recording reporters run next, and the texts are written
    last, so that a reporter that fails (or a recording refused) leaves no report behind
    whose outcome the command's exit code would contradict. A file is replaced
    atomically, and a report on standard output is written whole or not at
    all (:func:`evalkit.io.interrupts.write_whole`); each target written is marked done
    in ``outputs`` (as :func:`evalkit.io.interrupts.report_label` names it), so that a
    Ctrl-C names the reports written and those not.

    Returns:
        The paths written (``"-"`` for stdout).

    Raises:
        ReportTargetError: a malformed target.
        RegistryError: an unknown format.
        evalkit.io.outputs.UnwritableError: an :class:`OSError` naming the file that cannot
            be written and why.
        ValueError: a recording reporter refused ``obj`` or its target (its message).
        evalkit.plugins.failures.PluginCallError: a reporter's ``render`` or ``record``
            raised anything else, or returned something other than text.
    """
    from evalkit.io.outputs import write_output
    from evalkit.io.redaction import mask

    if not targets:
        return []
    plan = [(get_reporter(fmt), path) for fmt, path in map(parse_report_target, targets)]
    report: Any = None
    if any(spec.record is None for spec, _ in plan):
        from evalkit.report.model import as_report

        report = as_report(obj)
    # every text is rendered before anything is written or recorded: a reporter that
    # fails leaves no report behind whose outcome the exit code would contradict
    texts = [None if spec.record is not None else rendered(spec, report)
             for spec, _ in plan]
    written: list[str] = []
    order = sorted(range(len(plan)), key=lambda i: plan[i][0].record is None)
    for i in order:  # the recording reporters first, then the texts
        target, (spec, path), text = targets[i], plan[i], texts[i]
        label = report_label(target)
        if text is None:  # a database, a tracking server: the object itself
            line = recorded(spec, obj, path)
            if outputs is not None:
                outputs.done(label)
            sys.stderr.write(mask(line).rstrip("\n") + "\n")
            written.append(path)
            continue
        if path == "-":
            write_whole(sys.stdout, text, label, outputs)
        else:
            before = _identity(Path(path))
            try:
                write_output(Path(path), text)
            except KeyboardInterrupt:
                # the interrupt may come after the rename that put the new file in place
                if outputs is not None and _identity(Path(path)) != before:
                    outputs.done(label)
                raise
            if outputs is not None:
                outputs.done(label)
        written.append(path)
    return written


def _what(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def rendered(spec: ReporterSpec, report: Any) -> str:
    """``spec.render(report)`` with registered secrets masked.

    Raises:
        evalkit.plugins.failures.PluginCallError: ``render`` raised, or returned something
            other than text (the message names the reporter and its plugin).
    """
    from evalkit.io.redaction import mask
    from evalkit.plugins.call_errors import plugin_call_error
    from evalkit.plugins.failures import PLUGIN_FAILURES

    try:
        text = spec.render(report)
    except PLUGIN_FAILURES as exc:
        raise plugin_call_error(spec, "reporter", "render(report)", exc) from exc
    if not isinstance(text, str):
        raise plugin_call_error(spec, "reporter", "render(report)",
                                f"returned {_what(text)}, not text (a str)")
    return mask(text)


def recorded(spec: ReporterSpec, obj: Any, target: str) -> str:
    """``spec.record(obj, target)``: the line a recording reporter returns.

    Raises:
        ValueError: the reporter refused ``obj`` or ``target`` (its message, as the
            record's contract says).
        evalkit.plugins.failures.PluginCallError: ``record`` raised anything else, or
            returned something other than text.
    """
    from evalkit.plugins.call_errors import plugin_call_error
    from evalkit.plugins.failures import PLUGIN_FAILURES

    assert spec.record is not None
    try:
        line = spec.record(obj, target)
    except (ValueError, OSError):
        raise  # a refusal, or a database or server that cannot be reached: its message
    except PLUGIN_FAILURES as exc:
        raise plugin_call_error(spec, "reporter", "record(obj, target)", exc) from exc
    if not isinstance(line, str):
        raise plugin_call_error(spec, "reporter", "record(obj, target)",
                                f"returned {_what(line)}, not text (a str)")
    return line


def _identity(path: Path) -> tuple[int, int, int] | None:
    """``path``'s device, inode and change time, or None when it does not exist: a file
    :func:`~evalkit.io.outputs.write_output` replaced is a new inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_ctime_ns


def show_result(result: Any, targets: Sequence[str], *, as_json: bool, table: Any,
                console: Any, outputs: Outputs | None = None) -> None:
    """Write ``result``'s report (``result.to_report()``: a comparison's) to the
    ``--report`` files, then print its JSON (``as_json``: ``result.write_json`` when it
    has one, a comparison's, written row by row) or ``table(report, console)``,
    then the report that goes to standard output: files first, so that a report that
    cannot be written stops the command before any result is printed (nothing printed is
    contradicted by the exit code), and a report on standard output is the only thing
    there (``json:-`` is parsed by scripts; ``console`` then writes to standard error);
    recording reporters last (:func:`file_targets`). The JSON document is written whole
    or not at all (:func:`evalkit.io.interrupts.write_whole`); what is written is marked
    done in ``outputs`` (the document as :data:`~evalkit.io.interrupts.STDOUT_DOCUMENT`).

    Raises:
        As :func:`write_reports`.
    """
    import json

    rendered = result.to_report()
    to_files, to_std = file_targets(targets)
    write_reports(rendered, to_files, outputs)
    if as_json:
        write_json = getattr(result, "write_json", None)  # a comparison: row by row
        write_whole(sys.stdout, write_json if write_json is not None else json.dumps(
            result.to_json(), indent=2, allow_nan=False), STDOUT_DOCUMENT, outputs)
    else:
        table(rendered, console)
    write_reports(rendered, to_std, outputs)



def render_report(obj: Any, fmt: str) -> str:
    """``obj`` (a :class:`Report`, a ``Comparison``, a ``GateReport``) rendered by the
    reporter registered as ``fmt``, looked up in the registry, with registered secrets
    masked: the text :func:`write_report` writes. ``Comparison.to_latex()`` is
    ``render_report(comparison, "latex")``.

    Raises:
        RegistryError: no reporter ``fmt`` (for a plugin's reporter the message names the
            distribution to install).
        evalkit.plugins.failures.PluginCallError: the reporter's ``render`` raised, or
            returned something other than text.
    """
    from evalkit.report.model import as_report

    return rendered(get_reporter(fmt), as_report(obj))


def render_text(obj: Any, fmt: str, path: str | os.PathLike[str] | None = None) -> str:
    """:func:`render_report`, also written to ``path`` when one is given (its folder made
    when missing, replaced atomically): ``Comparison.to_latex(path)``.

    Raises:
        RegistryError: no reporter ``fmt``.
        evalkit.io.outputs.UnwritableError: ``path`` cannot be written.
    """
    text = render_report(obj, fmt)
    if path is not None:
        from evalkit.io.outputs import write_output

        write_output(Path(path), text)
    return text


def write_report(obj: Any, fmt: str, path: str | os.PathLike[str]) -> Path:
    """Render ``obj`` (a :class:`Report`, a ``Comparison``, a ``GateReport``) with the
    reporter registered as ``fmt``, looked up in the registry, and write it to the file
    ``path`` (its folder is made when missing; secrets masked and the file replaced
    atomically, as :func:`write_reports` does). ``Comparison.to_html(path)`` is
    ``write_report(comparison, "html", path)``.

    Returns:
        The path written.

    Raises:
        RegistryError: no reporter ``fmt``; for ``html`` the message names the
            distribution to install.
        evalkit.io.outputs.UnwritableError: the file cannot be written (the message says
            why).
    """
    from evalkit.io.outputs import write_output

    return write_output(Path(path), render_report(obj, fmt))
