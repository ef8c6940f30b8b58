"""What can be wrong with a config section a plugin declares, as its plugin's fault: the
model its :class:`~evalkit.core.specs.ConfigSectionSpec` names cannot be imported or is no
pydantic model. ``evalkit plugins list --check``, the conformance suite and the reading of
an eval config (:mod:`evalkit.execute.config_sections`) all ask here.
"""

from __future__ import annotations

from typing import Any

from evalkit.core.import_strings import import_object
from evalkit.core.specs import ConfigSectionSpec


def model_problem(spec: ConfigSectionSpec) -> tuple[Any, str | None]:
    """``(model, None)``: the pydantic model of ``spec``, imported when it is given as
    ``"package.module:Model"``; or ``(None, why)`` when the import string names nothing,
    or not a pydantic model (``"the section's model 'x:Nope' cannot be imported (...)"``)."""
    model = spec.model
    if isinstance(model, str):
        try:
            model = import_object(model)
        except (ImportError, AttributeError) as exc:
            return None, f"the section's model {spec.model!r} cannot be imported ({exc})"
    from pydantic import BaseModel

    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None, f"the section's model {spec.model!r} is not a pydantic model"
    return model, None


def plugin_bug(spec: ConfigSectionSpec, why: str, registry: Any = None) -> str:
    """``why`` (a fault of the section ``spec`` itself, such as its model), followed by the
    plugin that declares it (in ``registry``, default: the process-wide one) and that
    this is a bug of that plugin."""
    from evalkit.plugins.call_errors import provider_text

    who = provider_text(spec, "config section", registry)
    plugin = "" if who == "an unknown provider" else f"{who}, which declares the section"
    return (f"{why}. This is a bug of {plugin or 'the plugin that declares the section'}, "
            "not of your files or options: report it to the plugin's authors")
