"""A scheduler address, checked before any connection: its form, and whether its port
refuses at once.

distributed's ``connect`` retries a refused connection until its timeout (60 s by
default), and accepts a port above 65535 only to fail when it connects, so a typo in
``--scheduler`` would cost a minute. :func:`check_address` refuses a malformed
``tcp://`` / ``tls://`` address as it is given, and :func:`refused_fast` gives up on a
port that refuses (``ECONNREFUSED``: nothing listens there) after
:data:`REFUSED_RETRY_S`, a scheduler still starting being given that long.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

#: The schemes whose host and port are checked here (others are distributed's to parse).
TCP_SCHEMES = ("tcp", "tls")
#: How long a refused connection is tried again before the run gives up (seconds).
REFUSED_RETRY_S = 3.0
#: The pause between two tries (seconds).
_RETRY_PAUSE_S = 0.25


class RefusedError(ConnectionRefusedError):
    """Nothing listens at the scheduler's address (every try within
    :data:`REFUSED_RETRY_S` was refused), or its host does not resolve."""


def _host_port(address: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a tcp/tls address (``port`` ``None`` when left out),
    ``None`` for another scheme.

    Raises:
        ValueError: a port that is not a number from 0 to 65535, or no host.
    """
    text = address.strip()
    scheme = text.split("://", 1)[0].lower() if "://" in text else "tcp"
    if scheme not in TCP_SCHEMES:
        return None
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    port = parts.port  # ValueError: "Port out of range 0-65535", "Port could not be cast..."
    if not parts.hostname:
        raise ValueError("no host")
    if port == 0:
        raise ValueError("port 0 is not one a scheduler listens on")
    return parts.hostname, port


def check_address(address: str) -> str:
    """``address`` itself, once its tcp/tls host and port have the right form.

    Raises:
        ValueError: ``dask executor: the scheduler address '...' is not one (Port out
            of range 0-65535); write tcp://host:8786``.
    """
    try:
        _host_port(address)
    except ValueError as exc:
        raise ValueError(f"dask executor: the scheduler address {address!r} is not one "
                         f"({exc}); write tcp://host:8786") from None
    return address


def refused_fast(address: str, timeout_s: float) -> None:
    """Return once a TCP connection to ``address``'s host and port is accepted, or at
    once for an address this cannot check (another scheme, no port, a connection that
    neither succeeds nor is refused: the caller's handshake, bounded by ``timeout_s``,
    decides).

    Raises:
        RefusedError: every try for ``min(timeout_s, REFUSED_RETRY_S)`` seconds was
            refused (the message says so and what to do).
    """
    host_port = _host_port(address)
    if host_port is None or host_port[1] is None:
        return
    host, port = host_port
    end = time.monotonic() + min(timeout_s, REFUSED_RETRY_S)
    while True:
        left = end - time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=max(0.1, left)):
                return
        except ConnectionRefusedError:
            if left <= _RETRY_PAUSE_S:
                raise RefusedError(
                    f"dask executor: the scheduler address {address} refused the connection "
                    f"(nothing listens on port {port} of {host}; tried for "
                    f"{min(timeout_s, REFUSED_RETRY_S):g} s); start the scheduler "
                    "(dask scheduler) or fix the address") from None
            time.sleep(_RETRY_PAUSE_S)
        except socket.gaierror as exc:  # no such host (a typo, an IP like 256.1.1.1)
            raise RefusedError(
                f"dask executor: the scheduler host {host!r} of {address} does not resolve "
                f"({exc.strerror or exc}); fix the address") from None
        except OSError:
            return  # a timeout, an unreachable network: the handshake's bound applies


__all__ = ["REFUSED_RETRY_S", "RefusedError", "check_address", "refused_fast"]
