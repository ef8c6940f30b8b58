"""What an ``HttpTarget`` checks of its URL when it is built, before any call.

A URL without a host, with an invalid host or port, fails the same way on every call and
on every retry, so it is refused at once with a ``ValueError`` saying what is wrong (the
URL shown without user info or query string). Headers are checked by the kernel's
:func:`evalkit.headers.check_headers`.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from evalkit.redaction import public_url

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


__all__ = ["check_url"]
