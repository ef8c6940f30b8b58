"""An LLM judge's credentials: found, checked and registered before any request.

The ``anthropic`` SDK takes its credential from the client's ``api_key`` or
``auth_token`` (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``), a credentials profile,
or a header of its own. :func:`check_credentials` registers every one it can see as a
secret (:mod:`evalkit.io.redaction`), so that it is masked in every message, exception
chain and log record (the SDK's own ``httpx2``/``httpcore2`` traces included), and
refuses, before any request, one that HTTP cannot send. :func:`lacks_credentials` tells
a client that has none; :func:`is_credentials_failure` and :func:`is_refusal` classify
what a request raised.
"""

from __future__ import annotations

import sys
from typing import Any

from evalkit.execute.scoring import RunAborted
from evalkit_judge.budget import JudgeUnavailable

#: The client attributes and default headers that carry a credential.
_CREDENTIAL_ATTRIBUTES = (("api_key", "ANTHROPIC_API_KEY"), ("auth_token", "ANTHROPIC_AUTH_TOKEN"))
_CREDENTIAL_HEADERS = ("x-api-key", "authorization")


def check_credentials(client: Any, model: str) -> None:
    """Register the client's credentials as secrets (:mod:`evalkit.io.redaction`: masked in
    every message, exception chain and log record, the SDK's own HTTP loggers included),
    and refuse, before any request, one that HTTP cannot send: a key read with its line
    end (``\\n``, ``\\r``) would be refused by the HTTP library on every request and
    retry, in an error that quotes the whole key.

    Raises:
        RunAborted: with a :class:`JudgeUnavailable` naming the setting, never its value.
    """
    from evalkit.io.headers import header_problem
    from evalkit.io.redaction import register_header_secrets, register_secret

    found: list[tuple[str, str]] = []
    for attribute, variable in _CREDENTIAL_ATTRIBUTES:
        value = getattr(client, attribute, None)
        if isinstance(value, str):
            register_secret(value)
            found.append((f"the {attribute} ({variable} unless passed to the client)", value))
    try:
        headers = {str(k): str(v) for k, v in dict(client.default_headers).items()}
    except Exception:  # not the SDK's shape
        headers = {}
    auth = {k: v for k, v in headers.items() if k.lower() in _CREDENTIAL_HEADERS}
    register_header_secrets(auth)
    found.extend((f"the client's {k} header", v) for k, v in auth.items())
    for what, value in found:
        problem = header_problem(value)
        if problem is not None:
            raise RunAborted(JudgeUnavailable(
                f"judge {model!r}: {what} cannot be sent: {problem.replace('its value', 'it')}"
                "; no request was sent"))


def lacks_credentials(client: Any) -> bool:
    """Whether ``client`` is an ``anthropic`` SDK client that cannot authenticate.

    The SDK refuses, before sending anything, a request with no credential: no API key or
    auth token (they become its ``Authorization`` header), no credentials provider (a
    profile, workload identity federation), and no ``Authorization`` or ``X-Api-Key``
    header of its own (or one it was told to omit). Other clients (no ``api_key``
    attribute) are not judged here.
    """
    if not hasattr(client, "api_key") or not hasattr(client, "auth_token"):
        return False
    if getattr(client, "credentials", None) is not None:
        return False
    try:
        headers = client.default_headers
        names = {str(name).lower() for name in headers}
    except Exception:  # not the SDK's shape: let the request decide
        return False
    return not names & {"authorization", "x-api-key"}


def is_credentials_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the SDK failing to resolve its credentials on this machine, before
    the request is sent (``anthropic.CredentialsError``: a missing or broken credentials
    profile, an identity token that cannot be read or exchanged)."""
    sdk = sys.modules.get("anthropic")
    kind = getattr(sdk, "CredentialsError", None)
    return isinstance(kind, type) and isinstance(exc, kind)


def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is the API refusing the request's credentials (HTTP 401)."""
    return getattr(exc, "status_code", None) == 401


__all__ = ["check_credentials", "is_credentials_failure", "is_refusal", "lacks_credentials"]


def build_client(model: str, *, max_retries: int, timeout: float | None,
                 base_url: str | None, **extra: Any) -> Any:
    """An ``anthropic.Anthropic`` client with the credentials the SDK finds (or the
    ``api_key`` and ``default_headers`` of ``extra``).

    Raises:
        RunAborted: with a :class:`JudgeUnavailable`: the client cannot be built (the SDK
            is missing or refuses the settings); no request was sent.
    """
    kwargs: dict[str, Any] = {"max_retries": max_retries, **extra}
    if timeout is not None:
        kwargs["timeout"] = timeout
    if base_url is not None:
        kwargs["base_url"] = base_url
    try:
        import anthropic

        return anthropic.Anthropic(**kwargs)
    except Exception as exc:
        raise RunAborted(JudgeUnavailable(
            f"judge {model!r}: cannot build the Anthropic client "
            f"({type(exc).__name__}: {exc}); no request was sent"
        )) from exc


def require_credentials(client: Any, model: str) -> None:
    """:func:`check_credentials`, and refuse a client that has none.

    Raises:
        RunAborted: with a :class:`JudgeUnavailable` saying what to set (a ``--dry-run``
            needs no credentials).
    """
    check_credentials(client, model)
    if lacks_credentials(client):
        raise RunAborted(JudgeUnavailable(
            f"judge {model!r}: no Anthropic API credentials, so no grade can "
            "be requested: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or pass "
            "client=... to LLMJudge; no request was sent (a --dry-run needs no "
            "credentials)"
        ))


def unusable_message(model: str, exc: Exception) -> str:
    """Why no request can be sent when the client cannot resolve its credentials (a
    missing or broken credentials profile, an identity token that cannot be read)."""
    return (f"judge {model!r}: the Anthropic client's credentials cannot be used "
            f"({type(exc).__name__}: {exc}); fix them, set ANTHROPIC_API_KEY (or "
            "ANTHROPIC_AUTH_TOKEN), or pass client=... to LLMJudge; no request was sent")


def refusal_message(model: str, exc: Exception) -> str:
    """Why the run stops when the API refused the credentials (401)."""
    return (f"judge {model!r}: the Anthropic API refused the credentials (401: "
            f"{exc}); check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or the client "
            "passed to LLMJudge); the run stops here, and no more requests are sent")
