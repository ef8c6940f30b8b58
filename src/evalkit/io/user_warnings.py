"""Warnings meant for the person running a command.

A :class:`UserNotice` (or a subclass, such as a plugin's) says something the user must
know that does not stop the command (a file set aside, a fallback taken). In Python it
is an ordinary ``UserWarning``; the command line prints each one as a single
``warning: ...`` line on stderr, without Python's file and source line
(:func:`evalkit.cli.errors.plugin_warnings_as_lines`). Code that issues one should not
also log it at WARNING level, or the user reads it twice.
"""

from __future__ import annotations


class UserNotice(UserWarning):
    """A warning the command line prints as one ``warning: ...`` line."""


__all__ = ["UserNotice"]
