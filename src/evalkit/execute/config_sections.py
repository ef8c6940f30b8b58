"""The plugins' sections of the eval config: each validated with its plugin's model, handed
to the plugin before the run, and part of the JSON Schema.

A plugin declares a section with a :class:`~evalkit.core.specs.ConfigSectionSpec`
(the hook ``evalkit_register_config_sections``): a key of ``evalkit.yaml`` (a table
``[tool.evalkit.NAME]`` of ``pyproject.toml``) and the pydantic model of its value. Reading
the config (:func:`evalkit.execute.evalconfig.load_eval_config`) takes the sections the
loaded plugins declare out of the file, validates the rest as evalkit's own keys (an
unknown key is still refused, with a did-you-mean over both) and each section with its
model; ``evalkit run`` then calls each section's ``apply`` (:func:`apply_sections`). A key
two plugins declare is blocked, and a config that uses it is refused naming both.

Errors are :class:`~evalkit.io.model_errors.Problem` at the section's location, which the
reader prefixes with the file and line, as for evalkit's own keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.core.specs import ConfigSectionSpec
from evalkit.io.model_errors import (
    Problem,
    did_you_mean,
    first_error,
    is_rule,
    rule_message,
    shown_value,
)
from evalkit.plugins.section_models import model_problem, plugin_bug


def declared_sections(registry: Any = None) -> tuple[dict[str, ConfigSectionSpec],
                                                     dict[str, str]]:
    """``({key: record}, {key: why it is blocked})``: the sections the plugins of
    ``registry`` (default: the process-wide registry, discovered on first use) declare,
    and the keys two of them declare, with the conflict's message."""
    if registry is None:
        from evalkit.plugins.default import default_registry

        registry = default_registry()
    live = {key: entry.spec for _, key, entry in registry.entries("config section")
            if isinstance(entry.spec, ConfigSectionSpec)}
    blocked = {c.name: c.message() for c in registry.conflicts()
               if c.namespace == "config section"}
    return live, blocked


def split_sections(table: Any, sections: Mapping[str, ConfigSectionSpec],
                   blocked: Mapping[str, str]) -> tuple[Any, dict[str, Any]]:
    """``(evalkit's keys, {section: raw value})`` of a parsed config ``table`` (anything
    but a mapping is returned as it is, for the reader to refuse).

    Raises:
        Problem: the table uses a blocked key (the message names both plugins).
    """
    if not isinstance(table, Mapping):
        return table, {}
    for key in table:
        if key in blocked:
            raise Problem((key,), f"key {key!r}: {blocked[key]}")
    own = {k: v for k, v in table.items() if k not in sections}
    return own, {k: v for k, v in table.items() if k in sections}


def section_model(spec: ConfigSectionSpec, registry: Any = None) -> Any:
    """The pydantic model of ``spec`` (:func:`model_problem`).

    Raises:
        Problem: the import string names nothing, or not a pydantic model (the plugin's
            fault, reported at the section's key, naming the plugin that declares it in
            ``registry``, default: the process-wide one).
    """
    model, why = model_problem(spec)
    if why is not None:
        raise Problem((spec.name,), f"key {spec.name!r}: {plugin_bug(spec, why, registry)}")
    return model


def _path(loc: tuple[int | str, ...]) -> str:
    """``judges[0].model``: a location as the key it names."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _rank(err: Any) -> tuple[int, int]:
    # an unknown key first (a typo explains the rest), then a missing one
    return {"extra_forbidden": 0, "missing": 1}.get(err["type"], 2), len(err["loc"])


def validate_section(spec: ConfigSectionSpec, value: Any) -> Any:
    """``value`` (the section as the file holds it) as an instance of the section's model.

    Raises:
        Problem: the first of pydantic's errors, located at its key under the section
            (``key 'example.greeting': Input should be a valid string, got 3``).
    """
    from pydantic import ValidationError

    model = section_model(spec)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        err = first_error(exc, _rank, prefix=(spec.name,))
    loc = tuple(part for part in err["loc"] if part != "[key]")  # a mapping's key's error
    key = _path(loc)
    if is_rule(err):
        message = rule_message(err)
    elif err["type"] == "extra_forbidden" and len(loc) == 2:  # a key of the section itself
        known = [str(k) for k in model.model_fields]
        message = (f"unknown key{did_you_mean(str(loc[-1]), known)}; the keys of "
                   f"{spec.name!r} are {', '.join(known) or 'none'}")
    elif err["type"] == "extra_forbidden":
        message = "unknown key"
    elif err["type"] == "missing":
        message = "missing (required)"
    else:
        message = f"{err['msg']}, got {shown_value(loc, err['input'])}"
    raise Problem(loc, f"key {key!r}: {message}")


def apply_sections(sections: Mapping[str, Any], config: Any, registry: Any = None) -> None:
    """Hand each validated section (``{key: model instance}``) to its plugin's ``apply``
    with ``config`` (the :class:`~evalkit.execute.evalconfig.EvalConfig`), in the order
    of the keys.

    Raises:
        Problem: an ``apply`` raised ``ValueError`` or ``LookupError`` (its message, at
            the section's key, or at the key under it a :class:`Problem` locates), or
            anything else (a bug of the plugin: the message names the section, its plugin
            and the exception, :func:`evalkit.plugins.failures.plugin_call_error`).
    """
    _hand_over(sections, config, registry, "apply")


def preflight_sections(sections: Mapping[str, Any], config: Any, registry: Any = None
                       ) -> None:
    """Call each section's ``preflight`` (the check that what it declares can work now,
    :class:`~evalkit.core.specs.ConfigSectionSpec`), as :func:`apply_sections` calls
    ``apply``, with the same errors."""
    _hand_over(sections, config, registry, "preflight")


def _hand_over(sections: Mapping[str, Any], config: Any, registry: Any, what: str) -> None:
    from evalkit.plugins.failures import PLUGIN_FAILURES

    live, _ = declared_sections(registry)
    for key, value in sections.items():
        spec = live.get(key)
        call = None if spec is None else getattr(spec, what)
        if spec is None or call is None:
            continue
        try:
            call(value, config)
        except Problem as exc:  # located by the plugin under its section
            loc = (key, *(exc.loc or ()))
            raise Problem(loc, f"key {_path(loc)!r}: {exc.message}") from exc
        except (ValueError, LookupError) as exc:
            from evalkit.io.error_messages import message_of

            raise Problem((key,), f"key {key!r}: {message_of(exc)}") from exc
        except PLUGIN_FAILURES as exc:
            from evalkit.plugins.call_errors import plugin_call_error

            failure = plugin_call_error(spec, "config section", f"{what}(section, config)",
                                        exc, registry)
            raise Problem((key,), f"key {key!r}: {failure}") from exc


def settings_schema(model: Any, sections: Mapping[str, ConfigSectionSpec],
                    left_out: list[str] | None = None) -> dict[str, Any]:
    """The JSON Schema of ``model`` (the eval config's) with one optional property per
    section, the section's model's schema. A section whose model cannot be imported or
    is not a pydantic model is left out, its message (naming the section and its plugin)
    appended to ``left_out``; with ``left_out=None`` it is raised.

    Raises:
        Problem: with ``left_out=None``, a section's model cannot be imported or is not a
            pydantic model.
    """
    models: dict[str, Any] = {}
    for name, spec in sorted(sections.items()):
        if left_out is None:
            models[name] = section_model(spec)
            continue
        found, why = model_problem(spec)
        if why is None:
            models[name] = found
        else:
            left_out.append(f"config section {name!r} left out of the schema: "
                            + plugin_bug(spec, why))
    if not models:
        schema: dict[str, Any] = model.model_json_schema()
        return schema
    from pydantic import Field, create_model

    fields: dict[str, Any] = {
        f"section_{i}": (section, Field(
            None, alias=name, description=sections[name].description or None))
        for i, (name, section) in enumerate(models.items())
    }
    combined = create_model(model.__name__, __base__=model, **fields)
    schema = combined.model_json_schema(by_alias=True)
    return schema


__all__ = [
    "apply_sections",
    "declared_sections",
    "preflight_sections",
    "section_model",
    "settings_schema",
    "split_sections",
    "validate_section",
]
