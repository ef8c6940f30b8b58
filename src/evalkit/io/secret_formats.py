"""Secrets recognised by their form, wherever they stand: API keys and tokens by their
prefix, PEM private keys, JSON web tokens, ``Bearer`` and ``Basic`` credentials, as
gitleaks and detect-secrets find them, and HTTP Basic credentials (base64 of
``user:password``, RFC 7617) standing alone (:func:`redact_secret_values`).
:func:`evalkit.io.redaction.mask` and :func:`evalkit.io.redaction.redact_structure` apply
it, so it holds wherever evalkit masks text (run headers and rows, logs, error messages,
reports). Only the standard library is imported.
"""

from __future__ import annotations

import binascii
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
#: ``Basic`` (:func:`_secret_format_sub` says which credentials).
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
    r"(?P<credential>[A-Za-z0-9._~+/-]{4,}=*)"
)
#: text one of :data:`_SECRET_FORMATS` holds: a text holding none is not scanned
#: (substring searches are much faster than the scan)
_SECRET_HINTS: tuple[str, ...] = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "ASIA",
    "AIza", "eyJ", "PRIVATE KEY", "earer", "Basic",
)
#: each ASCII character's class for the search of base64 texts: its alphabet as ``A``,
#: ``=`` as itself, ``_`` and ``-`` (a base64url or id character) as ``_``, others a space
_BASE64_CLASSES = bytes(
    ord("A") if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "+/")
    else c if chr(c) in "=_" else ord("_") if chr(c) == "-" else ord(" ")
    for c in range(256))
#: 12 or more characters of base64 (8 bytes or more), among :data:`_BASE64_CLASSES`
#: (written as a literal prefix, which the search looks for instead of trying each place)
_BASE64_RUN = re.compile(rb"AAAAAAAAAAAA+")
#: printable ASCII without white space (``!`` to ``~``)
_PRINTABLE = bytes(range(0x21, 0x7F))
#: the first base64 character of each 4 when every byte of what they encode is printable
#: ASCII (they hold the top six bits of bytes 1, 4, 7...: 8 to 31)
_PRINTABLE_FIRST = frozenset("IJKLMNOPQRSTUVWXYZabcdef")
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"[0-9]")


def _random_looking(text: str) -> bool:
    """Whether ``text`` holds both a letter and a digit, as every generated key does
    (``sk-learn-compatible-wrapper`` and ``Bearer authentication`` do not)."""
    return _LETTER.search(text) is not None and _DIGIT.search(text) is not None


def _decoded(text: str) -> bytes | None:
    """The bytes of base64 ``text`` (standard alphabet; its ``=`` padding may be left
    out), or None when it is not base64."""
    body = text.rstrip("=")
    if len(body) % 4 == 1 or len(text) - len(body) > 2:
        return None
    try:
        return binascii.a2b_base64(body + "=" * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def _basic_credential(text: str) -> bool:
    """Whether base64 ``text`` decodes to what an HTTP Basic credential encodes
    standing alone: printable ASCII without white space, at least 8 bytes, one ``:``
    between a non-empty user and a non-empty password (``user:password``). Words,
    hex digests and ids decode to bytes outside printable ASCII, or without a colon."""
    raw = _decoded(text)
    if raw is None or len(raw) < 8 or raw.count(b":") != 1:
        return False
    if raw.translate(None, _PRINTABLE):  # a byte outside printable ASCII is left
        return False
    user, password = raw.split(b":")
    return bool(user) and bool(password)


def _after_basic(text: str) -> bool:
    """Whether ``text``, after the word ``Basic``, is a credential: base64 of UTF-8 text
    holding a ``:`` (``user-id:password``, RFC 7617, section 2; either part may be
    empty), so ``Basic settings`` in prose is kept."""
    raw = _decoded(text)
    if raw is None or b":" not in raw:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _redact_basic_credentials(text: str) -> str:
    """``text`` with every base64 text standing alone (no base64, ``_`` or ``-``
    character on either side, nor ``=`` after its padding of at most two: ``key=...``
    is a value) that :func:`_basic_credential` takes replaced by :data:`REDACTED`."""
    classes = text.encode("ascii", "replace").translate(_BASE64_CLASSES)  # 1 byte a char
    if b"AAAAAAAAAAAA" not in classes:
        return text
    out: list[str] = []
    last, size = 0, len(classes)
    for m in _BASE64_RUN.finditer(classes):
        start, end = m.span()
        if not _PRINTABLE_FIRST.issuperset(text[start:end:4]):
            continue  # a byte outside printable ASCII: no need to decode
        while end < size and end - m.end() < 2 and classes[end] == 61:  # "="
            end += 1
        if (start and classes[start - 1] == 95) or (  # "_"
                end < size and classes[end] in b"A=_"):
            continue
        if _basic_credential(text[start:end]):
            out += (text[last:start], REDACTED)
            last = end
    return "".join((*out, text[last:])) if out else text


def _secret_format_sub(m: re.Match[str]) -> str:
    if m.group("pem") or m.group("jwt"):
        return REDACTED
    token = m.group("token")
    if token is not None:
        body = token.split("-", 2)[-1] if token.startswith("sk-") else token[4:]
        return REDACTED if _random_looking(body) else token
    credential = m.group("credential")
    if not (len(credential) >= 8 and _random_looking(credential)) and not (
            m.group("scheme") == "Basic" and _after_basic(credential)):
        return m.group(0)
    return f"{m.group('scheme')}{m.group('space')}{REDACTED}"


def redact_secret_values(text: str) -> str:
    """``text`` with every secret of a well-known form (:data:`_SECRET_FORMATS`: API keys
    and tokens by their prefix, PEM private keys, JSON web tokens, ``Bearer`` and
    ``Basic`` credentials; :func:`_basic_credential`: base64 of ``user:password`` standing
    alone) replaced by :data:`REDACTED`, whatever names it: the rule that catches a key
    under a harmless-looking setting (``llm: sk-ant-...``) or in a message. A token must
    hold a letter and a digit (generated keys do), so that words, ids, paths and model
    names (``sk-learn-wrapper``, ``claude-3-5-sonnet-20241022``) are kept; after ``Basic``,
    base64 of text holding a ``:`` is a credential too (``Basic dXNlcjpwYXNz``)."""
    if not text:
        return text
    if any(hint in text for hint in _SECRET_HINTS):
        text = _SECRET_FORMATS.sub(_secret_format_sub, text)
    return _redact_basic_credentials(text)


__all__ = ["REDACTED", "redact_secret_values"]
