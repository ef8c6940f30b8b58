"""The JSON Schemas of evalkit's declarative files, generated from their pydantic models.

``evalkit schema checks|config|goldens`` prints them (the eval config's with the sections
the loaded plugins declare); an editor's YAML language server validates and completes a
file against them (docs/configuration.md). The schemas say what JSON Schema can: types,
allowed values, required and unknown keys, the threshold-or-baseline choice of a check.
Rules across entries (unique ids, scope ids among the golden set's) are evalkit's own,
checked at load.
"""

from __future__ import annotations

from typing import Any

#: the file kinds, and what each describes
KINDS: dict[str, str] = {
    "checks": "a checks file (evalkit gate --checks)",
    "config": "evalkit.yaml, the eval config (the keys of [tool.evalkit] but the plugins), "
              "with the config sections of the loaded plugins",
    "goldens": "a YAML golden set (a list of cases, or a mapping with 'cases'); each "
               "JSON Lines line is one case",
}

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(kind: str, left_out: list[str] | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one file kind of :data:`KINDS`. With a list
    ``left_out``, a plugin's config section whose model cannot be imported is left out
    of the eval config's, and a message naming it and its plugin appended there.

    Raises:
        ValueError: an unknown kind (the message lists the kinds), or (``left_out`` is
            ``None``) a plugin's config section whose model cannot be imported.
    """
    from pydantic import TypeAdapter

    if kind == "checks":
        from evalkit.gate.checks_models import ChecksFile

        schema = ChecksFile.model_json_schema()
    elif kind == "config":
        from evalkit.execute.config_sections import declared_sections, settings_schema
        from evalkit.execute.evalconfig_models import EvalSettings

        schema = settings_schema(EvalSettings, declared_sections()[0], left_out)
    elif kind == "goldens":
        from evalkit.data.goldens_models import GoldenCases, GoldenRow

        schema = TypeAdapter(list[GoldenRow] | GoldenCases).json_schema()
        schema["title"] = "evalkit golden set"
    else:
        raise ValueError(f"no schema for {kind!r}; the files are {', '.join(KINDS)}")
    return {"$schema": DIALECT, **schema, "description": f"evalkit: {KINDS[kind]}."}


__all__ = ["DIALECT", "KINDS", "json_schema"]
