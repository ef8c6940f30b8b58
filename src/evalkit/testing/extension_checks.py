"""The conformance checks of what a plugin adds to the command line and the eval config.

``command:<name>:loads``: the record's ``load`` imports, and names a function, a
``typer.Typer`` or a click command (each is callable). ``config-section:<name>:model``:
the record's ``model`` imports (when an import string), is a pydantic model, and makes
its JSON Schema (what ``evalkit schema config`` prints).
"""

from __future__ import annotations

from evalkit.core.import_strings import command_problem
from evalkit.core.specs import CommandSpec, ConfigSectionSpec
from evalkit.execute.config_sections import section_model
from evalkit.io.model_errors import Problem


def command_loads(spec: CommandSpec) -> None:
    """Raise ``AssertionError`` unless ``spec.load`` imports and names what a command
    runs (:func:`evalkit.core.import_strings.command_problem`, as ``evalkit plugins list
    --check`` checks it)."""
    problem = command_problem(spec.load)
    if problem is not None:
        raise AssertionError(f"command {spec.name!r}: {problem}")


def section_model_works(spec: ConfigSectionSpec) -> None:
    """Raise ``AssertionError`` unless the section's model imports, is a pydantic model
    and makes its JSON Schema."""
    try:
        model = section_model(spec)
    except Problem as exc:
        why = exc.message.removeprefix(f"key {spec.name!r}: ")
        raise AssertionError(f"config section {spec.name!r}: {why}") from exc
    try:
        model.model_json_schema()
    except Exception as exc:
        raise AssertionError(f"config section {spec.name!r}: its model makes no JSON "
                             f"Schema ({type(exc).__name__}: {exc})") from exc


__all__ = ["command_loads", "section_model_works"]
