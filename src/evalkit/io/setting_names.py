"""A message that names a setting, spelled for whoever reads it.

The library and the command line share their errors, but not their spelling of a
setting: ``evaluate_run(..., missing="zero")`` is ``evalkit eval --missing zero``. An error
that tells its reader which setting to change is a :class:`SettingError` built from text
and :class:`Setting` parts: ``str()`` spells each setting as Python's keyword argument
(``missing='zero'``), and the command line prints :meth:`SettingError.spelled` with the
options of the running command, matched by their Python name (``--missing zero``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Setting", "SettingError"]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: No value shown: the setting is named alone (``goldens=``, ``--goldens``).
UNSET: Any = _Unset()


@dataclass(frozen=True)
class Setting:
    """One setting named in a message: the keyword argument ``name`` (a command line
    option of the same Python name spells it there), shown with ``value`` unless
    :data:`UNSET`."""

    name: str
    value: Any = UNSET

    def as_keyword(self) -> str:
        """Python's spelling: ``missing='zero'``, ``allow_incomplete=True``, ``goldens=``."""
        return f"{self.name}=" if self.value is UNSET else f"{self.name}={self.value!r}"

    def as_option(self, flags: tuple[str, str | None]) -> str:
        """The command line's spelling with ``flags``, the option's ``(flag, negative
        flag or None)``: ``--missing zero``, ``--allow-incomplete`` for ``True``,
        ``--no-progress`` for ``False``, ``--goldens`` without a value."""
        flag, negative = flags
        if self.value is UNSET or self.value is True:
            return flag
        if self.value is False and negative:
            return negative
        value = getattr(self.value, "value", self.value)  # an enum's own text
        return f"{flag} {value}"


class SettingError(ValueError):
    """A ``ValueError`` whose message names settings to change.

    Built from parts, text and :class:`Setting`: ``SettingError("score them 0 (",
    Setting("missing", "zero"), ")")``. ``str()`` (and ``args[0]``) is the Python spelling;
    :meth:`spelled` the command line's.

    Attributes:
        parts: the text and settings, in order.
    """

    def __init__(self, *parts: str | Setting) -> None:
        self.parts = parts
        super().__init__("".join(p if isinstance(p, str) else p.as_keyword() for p in parts))

    def spelled(self, options: Mapping[str, tuple[str, str | None]]) -> str:
        """The message with each setting spelled as the option ``options`` gives for its
        name (``{python name: (flag, negative flag or None)}``, a command's options); a
        setting the command has no option for keeps its keyword spelling."""
        return "".join(
            p if isinstance(p, str) else
            p.as_option(options[p.name]) if p.name in options else p.as_keyword()
            for p in self.parts)
