"""Secrets recognised by their form, wherever they stand: API keys and tokens by their
prefix, PEM private keys, JSON web tokens, ``Bearer`` credentials, as gitleaks and
detect-secrets find them (:func:`redact_secret_values`). :func:`evalkit.io.redaction.mask`
and :func:`evalkit.io.redaction.redact_structure` apply it, so it holds wherever evalkit
masks text (run headers and rows, logs, error messages, reports). Only the standard
library is imported.
"""

from __future__ import annotations

import re

#: What a masked value is replaced by, here and in :mod:`evalkit.io.redaction`.
REDACTED = "<redacted>"

#: Secrets recognised by their form, wherever they stand (as gitleaks and detect-secrets
#: find them): Anthropic (``sk-ant-``) and OpenAI (``sk-``, ``sk-proj-``) keys, GitHub
#: tokens (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``), Slack tokens
#: (``xoxb-``, ``xoxp-``...), AWS access key ids (``AKIA``/``ASIA`` and 16 capitals or
#: digits), Google API keys (``AIza`` and 35 characters), PEM private keys (from
#: ``-----BEGIN ... PRIVATE KEY-----`` to its ``END`` line, or to the end of its base64
#: text), JSON web tokens (``eyJ...``.``eyJ...``.) and the credential after ``Bearer`` or
#: ``Basic``. Group ``secret`` is what is replaced.
_SECRET_FORMATS = re.compile(
    r"(?P<pem>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*))"
    r"|(?P<jwt>(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)"
    r"|(?<![A-Za-z0-9_-])(?P<token>"
    r"sk-ant-[A-Za-z0-9_-]{16,}"
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"
    r")"
    r"|(?<![A-Za-z0-9_])(?P<scheme>[Bb]earer|Basic)(?P<space>\s+)"
    r"(?P<credential>[A-Za-z0-9._~+/-]{8,}=*)"
)
#: text one of :data:`_SECRET_FORMATS` holds: a text holding none is not scanned
#: (substring searches are much faster than the scan)
_SECRET_HINTS: tuple[str, ...] = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "ASIA",
    "AIza", "eyJ", "PRIVATE KEY", "earer", "Basic",
)
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"[0-9]")


def _random_looking(text: str) -> bool:
    """Whether ``text`` holds both a letter and a digit, as every generated key does
    (``sk-learn-compatible-wrapper`` and ``Bearer authentication`` do not)."""
    return _LETTER.search(text) is not None and _DIGIT.search(text) is not None


def _secret_format_sub(m: re.Match[str]) -> str:
    if m.group("pem") or m.group("jwt"):
        return REDACTED
    token = m.group("token")
    if token is not None:
        body = token.split("-", 2)[-1] if token.startswith("sk-") else token[4:]
        return REDACTED if _random_looking(body) else token
    credential = m.group("credential")
    if not _random_looking(credential):
        return m.group(0)
    return f"{m.group('scheme')}{m.group('space')}{REDACTED}"


def redact_secret_values(text: str) -> str:
    """``text`` with every secret of a well-known form (:data:`_SECRET_FORMATS`: API keys
    and tokens by their prefix, PEM private keys, JSON web tokens, ``Bearer``
    credentials) replaced by :data:`REDACTED`, whatever names it: the rule that catches a
    key under a harmless-looking setting (``llm: sk-ant-...``) or in a message. A token
    must hold a letter and a digit (generated keys do), so that words, ids, paths and
    model names (``sk-learn-wrapper``, ``claude-3-5-sonnet-20241022``) are kept."""
    if not text or not any(hint in text for hint in _SECRET_HINTS):
        return text
    return _SECRET_FORMATS.sub(_secret_format_sub, text)


__all__ = ["REDACTED", "redact_secret_values"]
