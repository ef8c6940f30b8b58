"""What an ``HttpTarget`` checks of its URL and options when it is built, before any call.

A URL without a host, with an invalid host or port, fails the same way on every call and
on every retry, so it is refused at once with a ``ValueError`` saying what is wrong (the
URL shown without user info or query string). Headers are checked by the kernel's
:func:`evalkit.io.headers.check_headers`. The numeric options are checked by
:func:`check_options`: a NaN, infinite, negative or boolean ``timeout_s`` would otherwise
surface on the first call (or never bound a call at all).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from evalkit.io.limits import MAX_RETRIES, MAX_WAIT_S
from evalkit.io.redaction import public_url
from evalkit.stats.numeric import finite_real

_HOST = re.compile(r"[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\]")


def check_url(url: str) -> None:
    """Refuse a URL that cannot be called: not http(s), no host, an invalid host or port.

    Raises:
        ValueError: says why, showing the URL without user info or query string.
    """
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"HttpTarget url must start with http:// or https://, got "
                         f"{public_url(str(url))!r}")
    shown = public_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"HttpTarget url {shown!r} is not a valid URL: {exc}") from None
    host = parts.netloc.rsplit("@", 1)[-1]
    host = host.rsplit(":", 1)[0] if port is not None or host.endswith(":") else host
    if not host:
        raise ValueError(f"HttpTarget url {shown!r} has no host")
    odd = any(c.isspace() or not c.isprintable() for c in host)
    if odd or (host.isascii() and not _HOST.fullmatch(host)):  # IDNA names are encoded
        raise ValueError(f"HttpTarget url {shown!r}: the host {host!r} is not a valid host "
                         "name or address")
    if port == 0:
        raise ValueError(f"HttpTarget url {shown!r}: port 0 cannot be called")


def check_credentials(url: str, headers: Mapping[str, str] | None, who: str) -> None:
    """Refuse a URL carrying ``user:password@`` together with an ``Authorization``
    header: the client would send the URL's Basic authentication in place of the header,
    so every call would be made as another user (or refused).

    Raises:
        ValueError: names both and the fix, showing the URL without its user info.
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc or not any(str(k).lower() == "authorization"
                                          for k in (headers or {})):
        return
    raise ValueError(
        f"{who} url {public_url(url)!r} carries a user name and password (user:password@) "
        "and headers set 'Authorization': the URL's credentials would be sent in place of "
        "the header; keep one of them (remove user:password@ from the url, or the "
        "Authorization header)")


__all__ = ["check_credentials", "check_options", "check_url"]


def _seconds(name: str, value: object, *, zero_ok: bool) -> float:
    if (seconds := finite_real(value)) is None or seconds < 0 or (seconds == 0
                                                                  and not zero_ok):
        bound = "a finite number >= 0" if zero_ok else "a finite number > 0"
        raise ValueError(f"HttpTarget {name} must be {bound} (seconds), got {value!r}")
    if seconds > MAX_WAIT_S:
        raise ValueError(f"HttpTarget {name} must be at most {MAX_WAIT_S:g} seconds (one "
                         f"hour), got {value!r}")
    return seconds


def _count(name: str, value: object, *, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"HttpTarget {name} must be an integer >= {least}, got {value!r}")
    return value


def check_options(*, timeout_s: object, retries: object, retry_backoff_s: object,
                  max_connections: object, max_response_bytes: object,
                  max_raw_bytes: object) -> None:
    """Refuse numeric options no call could honour.

    ``timeout_s`` (the deadline of one attempt) is a finite number of seconds > 0;
    ``retry_backoff_s`` a finite number >= 0; both at most one hour
    (:data:`evalkit.io.limits.MAX_WAIT_S`); ``retries`` an integer from 0 to
    :data:`evalkit.io.limits.MAX_RETRIES` (10); ``max_connections`` and
    ``max_response_bytes`` integers >= 1; ``max_raw_bytes`` an integer >= 0 or ``None``
    (no cap). Booleans are refused where numbers are asked (``True`` is not 1 second, nor
    one retry).

    Raises:
        ValueError: names the option, the bound and the value given.
    """
    _seconds("timeout_s", timeout_s, zero_ok=False)
    if isinstance(retries, bool) or not isinstance(retries, int) \
            or not 0 <= retries <= MAX_RETRIES:
        raise ValueError(f"HttpTarget retries must be an integer from 0 to {MAX_RETRIES}, "
                         f"got {retries!r}")
    _seconds("retry_backoff_s", retry_backoff_s, zero_ok=True)
    _count("max_connections", max_connections, least=1)
    _count("max_response_bytes", max_response_bytes, least=1)
    if max_raw_bytes is not None:
        _count("max_raw_bytes", max_raw_bytes, least=0)
