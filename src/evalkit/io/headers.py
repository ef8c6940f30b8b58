"""HTTP header names and values that can be sent, checked before anything is sent.

A header value with a carriage return at its end (a token read from a ``.env`` file with
Windows line endings) fails the same way on every request and every retry, and the
error the HTTP library raises quotes the whole value, credential included. The HTTP
target and the LLM judge check their headers (and API keys) with :func:`check_headers`
and :func:`header_problem` when they are built, and say what is wrong without quoting
the value.

The grammar is HTTP's (RFC 9110, sections 5.1 and 5.5): a field name is a token (letters,
digits and ``!#$%&'*+-.^_`|~``); a field value is visible ASCII characters, with spaces
and tabs allowed between them but not at either end (httpx sends header values as ASCII,
and ``h11`` refuses exactly these characters when a request is sent).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20\x09\x21-\x7e]*[\x21-\x7e])?)?")
_NAMES = {"\r": "a carriage return (CR, \\r)", "\n": "a line feed (LF, \\n)",
          "\x00": "a NUL byte", "\t": "a tab", " ": "a space"}


def _character(ch: str) -> str:
    if ch in _NAMES:
        return _NAMES[ch]
    if ord(ch) < 0x20 or ord(ch) == 0x7f:
        return f"the control character U+{ord(ch):04X}"
    return f"the non-ASCII character U+{ord(ch):04X}"


def header_problem(value: str) -> str | None:
    """Why ``value`` cannot be sent as a header value, without quoting it; ``None`` when
    it can."""
    if _VALUE.fullmatch(value):
        return None
    for i, ch in enumerate(value):
        bad = not ("\x21" <= ch <= "\x7e" or (ch in " \t" and 0 < i < len(value) - 1))
        if bad:
            where = ("at its end" if i == len(value) - 1 else
                     "at its start" if i == 0 else f"at character {i + 1} of {len(value)}")
            hint = ("; was it read from a file with Windows (CRLF) line endings? Strip it"
                    if ch in "\r\n" else "; remove it")
            return f"its value holds {_character(ch)} {where}, which HTTP forbids{hint}"
    return "its value is not a valid HTTP header value"  # pragma: no cover


def check_headers(headers: Mapping[str, str], who: str = "HTTP") -> None:
    """Refuse a header name that is not an HTTP token, or a value HTTP forbids.

    Args:
        headers: names and values.
        who: what sends them, first in the message (``"HttpTarget"``).

    Raises:
        ValueError: names the header, never its value.
    """
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"{who} header name {name!r} is not a valid HTTP header "
                             "name (letters, digits and !#$%&'*+-.^_`|~ only)")
        if not isinstance(value, str):
            hint = (": give several values as one text, joined by ', ' (HTTP's list form, "
                    f"{name}: 'a, b')" if isinstance(value, list | tuple) else
                    "; give it as text (quote it in YAML)")
            raise ValueError(f"{who} header {name!r}: its value must be text, not "
                             f"{type(value).__name__}{hint}")
        problem = header_problem(value)
        if problem is not None:
            raise ValueError(f"{who} header {name!r}: {problem}")


__all__ = ["check_headers", "header_problem"]
