"""What an import string names: ``"package.module:attr"`` (the attribute may be dotted,
``Class.method``), or ``"package.module"``.

Records name what they would otherwise import at registration by such a string
(:attr:`~evalkit.core.specs.CommandSpec.load`,
:attr:`~evalkit.core.specs.ConfigSectionSpec.model`), and the eval config names a target
factory by one; each is imported only when it is used. A record that takes a function
takes :func:`on_call` of its import string, so that registering imports nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

#: ``package.module`` or ``package.module:attr``, each part an identifier
IMPORT_STRING = r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)?$"


def import_object(text: str) -> Any:
    """The object ``text`` names, imported now: the module ``package.module``, or its
    attribute ``attr`` (dotted: attribute of attribute).

    Raises:
        ImportError: the module cannot be imported.
        AttributeError: the module (or an attribute on the way) has no such attribute.
    """
    module_name, _, attr = text.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def on_call(text: str) -> Callable[..., Any]:
    """The function ``text`` (``"package.module:name"``) names, imported when first called:
    it carries that function's module and name, so that a registered loader reads as the
    function it stands for (``evalkit plugins list``, error messages).

    Raises:
        ImportError, AttributeError: when called, as :func:`import_object`.
    """
    module, _, name = text.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return import_object(text)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = module
    call.__doc__ = f"{module}.{name}, imported on first call."
    return call


def command_target(load: str) -> Any:
    """What a command's ``load`` names (:class:`~evalkit.core.specs.CommandSpec`):
    ``"package.module:attr"``, or ``"package.module"``, whose ``app`` (a group) or else
    ``command`` is taken, as for the kernel's own command modules.

    Raises:
        ImportError: the module cannot be imported.
        AttributeError: no such attribute, or a module with neither ``app`` nor
            ``command``.
    """
    found = import_object(load)
    if ":" in load:
        return found
    for name in ("app", "command"):
        target = getattr(found, name, None)
        if target is not None:
            return target
    raise AttributeError(f"module {load!r} has neither 'app' nor 'command'")


def command_problem(load: str) -> str | None:
    """Why the command ``load`` names cannot run, or ``None`` when it can: it is imported
    now (:func:`command_target`) and must be callable (a function, a ``typer.Typer`` or a
    click command). The message names ``load`` and the error; importing it may run any
    code of the module, so every exception it raises is reported, none is raised."""
    try:
        target = command_target(load)
    except (ImportError, AttributeError) as exc:
        return f"cannot import {load!r} ({exc})"
    except Exception as exc:
        return f"cannot import {load!r} ({type(exc).__name__}: {exc})"
    if not callable(target):
        return f"{load!r} is {target!r}, not a function, a typer.Typer or a click command"
    return None


__all__ = ["IMPORT_STRING", "command_problem", "command_target", "import_object", "on_call"]
