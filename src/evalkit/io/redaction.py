"""Secrets are masked by value wherever evalkit could show them: one implementation.

Every configured secret is *registered* (:func:`register_secret`): the values of an HTTP
target's headers, the user info and query values of its URL, the values that ``${VAR}``
expanded to, the values of secret-looking config keys, an LLM judge's API key. From then
on :func:`mask` replaces each occurrence of a registered value by ``<redacted>``, and
every path that shows text goes through it: error messages and the exception chains
behind them (:func:`scrub_exception`), the log records of *every* logger of the process
(a log record factory, :func:`install_log_redaction`: ``httpx``, ``httpcore``, the
``anthropic`` SDK's ``httpx2``/``httpcore2``, and any other), run artifacts, reports and
what the command line prints.

A value is matched in the forms it takes when it is shown: as is, stripped, escaped as
Python's ``repr`` shows it (once and twice: an exception's ``repr`` inside another), as a
JSON string, and URL-quoted. Each run of printable characters of a secret is registered
too (``Bearer sk-abc...\\r`` registers ``sk-abc...``), so that a token is masked however
the characters around it (a CR or LF read from a CRLF ``.env`` file) are escaped.
Values shorter than :data:`MIN_SECRET_CHARS` are not registered, so that a short value
(``1``, ``yes``) is not masked everywhere; such values are still never printed by evalkit
(header values appear in no message by construction).

Besides masking by value, :func:`redact_urls` hides the user info, query string and
fragment of every URL in a text, and the header lists that ``httpcore`` traces; it applies
to the records of the HTTP loggers (:data:`URL_LOGGERS`) whether or not a secret is
registered. :func:`redact_structure` replaces the secret-looking values of a settings
mapping (headers, tokens, passwords, URL query strings) for run headers.

Secrets of a well-known form (API keys and tokens by their prefix, PEM private keys,
JSON web tokens, ``Bearer`` and ``Basic`` credentials, base64 ``user:password`` alone:
:func:`redact_secret_values`) are masked by
:func:`mask` and :func:`redact_structure` whether or not anything registered them.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

from evalkit.io.environment_secrets import PLAIN_KEY_WORDS as _PLAIN_KEY_WORDS
from evalkit.io.environment_secrets import environment_secrets
from evalkit.io.secret_formats import REDACTED, redact_secret_values

#: Values (and printable runs of values) shorter than this are not registered.
MIN_SECRET_CHARS = 8
#: Header names whose values are not credentials, so not registered as secrets (they
#: are still never shown with the value in evalkit's own messages).
PLAIN_HEADERS = frozenset({
    "accept", "accept-language", "cache-control", "connection", "content-type",
    "user-agent",
})
#: Logger name prefixes whose records also get :func:`redact_urls`: the HTTP stacks of
#: ``HttpTarget`` (httpx, httpcore) and of the ``anthropic`` SDK (httpx2, httpcore2).
URL_LOGGERS: tuple[str, ...] = ("httpx", "httpcore")
#: Text that makes a word of a settings key secret wherever it occurs in the word
#: (``clientsecret``, ``apikey``, ``accesstoken``, ``oauth``).
SECRET_FRAGMENTS: tuple[str, ...] = (
    "secret", "passw", "passphrase", "passcode", "credential", "cookie", "bearer",
    "apikey", "privatekey", "accesskey", "secretkey", "signingkey", "clientkey", "token",
    "auth", "seedphrase", "userpass",
)
#: Words that make a settings key secret wherever they stand in it.
SECRET_WORDS = frozenset({
    "key", "pwd", "pw", "jwt", "dsn", "signature", "otp", "totp", "hmac", "salt", "sas",
    "webhook", "cred", "creds", "connstr", "pat", "pem", "jwk", "jwks", "mnemonic",
    "keyfile", "keypair", "keystore", "keyring",
})
#: Words before ``keys`` that make it a list of keys, not of names (``api_keys``,
#: ``ssh_keys``; not ``meta_keys``).
KEY_OWNER_WORDS = frozenset({
    "api", "private", "priv", "ssh", "access", "secret", "signing", "client", "encryption",
    "master", "ssl", "tls", "gpg", "pgp", "auth", "service", "account", "license",
})
#: Words ending in ``key`` that are not a key (``hotkey``, ``monkey``).
#: Words that make a settings key secret when they end it (``db_pass``, ``card_pin``,
#: ``request_sig``, ``session``; not ``pass_threshold``).
SECRET_LAST_WORDS = frozenset({"pass", "pin", "sig", "session", "sessionid"})
#: Words before ``key`` that make it the name of a field, not a key (``sort_key``,
#: ``id_key``, ``text_key``).
FIELD_WORDS = frozenset({
    "sort", "group", "id", "ids", "text", "field", "column", "label", "score", "doc",
    "result", "results", "response", "json", "dict", "join", "partition", "shard",
    "order", "primary", "foreign", "dedup", "cache", "lookup", "name", "tag", "query",
})
#: Words that make ``token``/``tokens`` a count of tokens (``max_tokens``,
#: ``max_new_tokens``, ``num_tokens``, ``token_limit``, ``tokens_per_minute``).
TOKEN_COUNT_WORDS = frozenset({
    "max", "min", "num", "n", "total", "count", "limit", "budget", "per", "new",
    "completion", "prompt", "input", "output", "context", "reasoning", "thinking",
})
#: Fragments looked for in two neighbouring words joined (``pass_phrase``, ``seed_phrase``).
_JOINED_FRAGMENTS: tuple[str, ...] = ("passphrase", "passcode", "seedphrase", "userpass")
#: Words of text, not of a secret, that contain a fragment (``tokenizer``, ``author``).
_PLAIN_WORDS = re.compile(r"tokeni[sz]\w*|authors?|authored|authority")
#: the words of a key: split at ``_``, ``-``, ``.``, spaces and camelCase boundaries
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+")


def key_words(name: str) -> list[str]:
    """The lowercase words of a settings key: ``"accessKey"`` -> ``["access", "key"]``,
    ``"X-API-Key"`` -> ``["x", "api", "key"]``, ``"private_key"`` -> ``["private",
    "key"]``, ``"APIToken"`` -> ``["api", "token"]``."""
    return [w.lower() for w in _WORD.findall(name)]


def is_secret_key(name: str) -> bool:
    """Whether a settings key names a secret, so that a run header, a message or a report
    shows ``<redacted>`` for its value. The rule (docs/runner.md, "Recorded in the
    header"), on the key's words (:func:`key_words`):

    * a word containing ``secret``, ``passw``, ``passphrase``, ``passcode``,
      ``credential``, ``cookie``, ``bearer``, ``token``, ``auth`` (not ``tokenizer``,
      ``author``, ``authority``), ``apikey``, ``accesskey``, ``privatekey``...
      (:data:`SECRET_FRAGMENTS`: ``clientsecret``, ``accesstoken``, ``apikey``);
    * or a word among :data:`SECRET_WORDS` (``key``, ``pwd``, ``pw``, ``jwt``, ``dsn``,
      ``signature``, ``otp``, ``hmac``, ``salt``, ``sas``, ``webhook``, ``creds``,
      ``pat``, ``pem``, ``jwk``, ``mnemonic``, ``keyfile``...);
    * or a word ending in ``key`` (``privkey``, ``sslkey``), unless what comes before it
      names a field (:data:`FIELD_WORDS`: ``sortkey``) or it is a word such as ``hotkey``;
    * or ``keys`` after a word of :data:`KEY_OWNER_WORDS` (``api_keys``, ``apiKeys``,
      ``ssh_keys``);
    * or two neighbouring words that, joined, contain ``passphrase``, ``passcode``,
      ``seedphrase`` or ``userpass`` (``pass_phrase``, ``seed_phrase``);
    * or a last word among :data:`SECRET_LAST_WORDS` (``pass``, ``pin``, ``sig``,
      ``session``), or ``session`` followed by ``id``;
    * or ``connection``/``conn`` with ``string``/``str`` (a connection string).

    Not secret: ``key`` right after a word of :data:`FIELD_WORDS` (``sort_key``,
    ``id_key``: the name of a field), other ``keys`` (a list of names: ``meta_keys``), and
    ``token``/``tokens`` with a word of :data:`TOKEN_COUNT_WORDS` (``max_tokens``,
    ``token_limit``: a count). A harmless value under a secret-looking name is redacted
    rather than a secret shown.
    """
    words = key_words(name)
    if not words:
        return False
    counts_tokens = any(w in TOKEN_COUNT_WORDS for w in words)
    for i, word in enumerate(words):
        if word == "key":
            if i == 0 or words[i - 1] not in FIELD_WORDS:
                return True
            continue
        if word in SECRET_WORDS:
            return True
        if word == "keys" and i > 0 and words[i - 1] in KEY_OWNER_WORDS:
            return True
        if word.endswith("key") and len(word) > 3 and word[:-3] not in FIELD_WORDS \
                and word not in _PLAIN_KEY_WORDS:
            return True
        if i > 0 and any(f in words[i - 1] + word for f in _JOINED_FRAGMENTS):
            return True
        if word in ("token", "tokens") and counts_tokens:
            continue
        if not _PLAIN_WORDS.fullmatch(word) and any(f in word for f in SECRET_FRAGMENTS):
            return True
    if words[-1] in SECRET_LAST_WORDS or (
            len(words) > 1 and words[-2] == "session" and words[-1] == "id"):
        return True
    return bool({"connection", "conn"} & set(words) and {"string", "str"} & set(words))


_lock = threading.Lock()
_values: set[str] = set()
#: every form to replace, longest first (replaced atomically; read without the lock)
_forms: tuple[str, ...] = ()
_PRINTABLE_RUN = re.compile(r"[^\x00-\x20\x7f]+")


# ------------------------------------------------------------------ the registry
def _shown_forms(value: str) -> set[str]:
    """The forms in which ``value`` can appear in text (see the module docstring)."""
    once = value.encode("unicode_escape").decode("ascii")
    forms = {
        value, value.strip(), once, once.replace("\\", "\\\\"),
        repr(value.encode("utf-8"))[2:-1],
        json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""), quote(value), quote_plus(value),
    }
    forms.update(_PRINTABLE_RUN.findall(value))
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


def register_secret(value: str | bytes | None) -> bool:
    """Mask ``value`` from now on, for the life of the process (see :func:`mask`).

    Returns:
        Whether anything was registered (``False`` for ``None``, text shorter than
        :data:`MIN_SECRET_CHARS`, or a value already registered).
    """
    global _forms
    if value is None:
        return False
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    value = str(value)
    if value in _values:
        return False
    forms = _shown_forms(value)
    if not forms:
        return False
    with _lock:
        _values.add(value)
        _forms = tuple(sorted(set(_forms) | forms, key=lambda f: (-len(f), f)))
    install_log_redaction()
    return True


def register_secrets(values: Iterable[str | bytes | None]) -> None:
    """:func:`register_secret` each value."""
    for value in values:
        register_secret(value)


def register_url_secrets(url: str) -> None:
    """Register the password (and ``user:password``), every query value and the
    token-like path parts (:func:`path_tokens`) of ``url``."""
    try:
        parts = urlsplit(url)
        password = parts.password
        query = parse_qsl(parts.query, keep_blank_values=False)
    except ValueError:
        return
    if password:
        pair = f"{parts.username or ''}:{password}"
        # httpx sends URL credentials as Basic authentication: base64 of the pair
        register_secrets([password, pair, base64.b64encode(pair.encode()).decode()])
    register_secrets(v for _, v in query)
    register_secrets(path_tokens(parts.path))


#: a reference to an environment variable in a header value of a config (``${NAME}``)
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def register_header_secrets(headers: Mapping[str, str]) -> None:
    """Register the value of every header but the :data:`PLAIN_HEADERS`. The ``${NAME}``
    references of a config's header value are not secrets (a variable's name is shown,
    ``header 'Authorization' refers to ${MY_TOK}, which is not set``): the text around
    them is registered, and what they expand to is registered when they are expanded."""
    for k, v in headers.items():
        if str(k).lower() not in PLAIN_HEADERS:
            register_secrets(ENV_REFERENCE.split(v)[::2] if ENV_REFERENCE.search(v) else [v])


def register_environment_secrets(environ: Mapping[str, str] | None = None) -> None:
    """Register the secrets of ``environ`` (default ``os.environ``):
    :func:`evalkit.io.environment_secrets.environment_secrets`. :func:`mask` calls this
    once, before it first masks anything."""
    register_secrets(environment_secrets(environ))


_environment_registered = False


def mask(text: str) -> str:
    """``text`` with every registered secret (in each of its shown forms), every secret
    of the process's environment (:func:`register_environment_secrets`, registered at
    the first call) and every secret of a well-known form
    (:func:`redact_secret_values`) replaced by :data:`REDACTED`. Costs one
    regular-expression scan and one substring search per registered form."""
    global _environment_registered
    if not _environment_registered:
        _environment_registered = True
        register_environment_secrets()
    if not text:
        return text
    for form in _forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return redact_secret_values(text)


def scrub_exception(exc: BaseException) -> BaseException:
    """Mask the secrets in ``exc`` and every exception of its chain (causes, contexts),
    in place: their string arguments and notes. Returns ``exc``."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        args = tuple(_masked_arg(a) for a in current.args)
        if args != current.args:
            with contextlib.suppress(AttributeError, TypeError):  # read-only args
                current.args = args
        for name in ("strerror", "filename", "filename2", "reason"):
            value = getattr(current, name, None)
            if isinstance(value, str) and mask(value) != value:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(current, name, mask(value))
        notes = getattr(current, "__notes__", None)
        if isinstance(notes, list):
            current.__notes__ = [mask(n) if isinstance(n, str) else n for n in notes]
        todo.extend([current.__cause__, current.__context__])
    return exc


def _masked_arg(arg: Any) -> Any:
    if isinstance(arg, str):
        return mask(arg)
    if isinstance(arg, bytes):
        text = arg.decode("utf-8", "replace")
        masked = mask(text)
        return arg if masked == text else masked.encode("utf-8")
    return arg


def error_text(exc: BaseException) -> str:
    """``"TypeName: message"`` of ``exc``, masked; ``SystemExit(0) (a sys.exit() call)``
    for a ``SystemExit``, whose message is only its code."""
    if isinstance(exc, SystemExit):
        return mask(f"SystemExit({exc.code!r}) (a sys.exit() call)")
    return mask(f"{type(exc).__name__}: {exc}")


# ------------------------------------------------------------------ URLs and settings
#: A URL in free text: scheme, optional ``user:password@``, host and path, then an optional
#: query string and fragment (which may hold keys).
_URL_IN_TEXT = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/\s@'\"<>]*@)?"
    r"(?P<rest>[^\s?#'\"<>]*)(?P<query>\?[^\s#'\"<>]*)?(?P<fragment>#[^\s'\"<>]*)?"
)
#: A header list as httpcore traces it at DEBUG: ``[(b'Name', b'value'), ...]``.
_HEADER_LIST_START = "[(b"


def redact_urls(text: str) -> str:
    """``text`` with every URL's user info and query string (and fragment) and its
    path's token-like parts (:func:`redact_path`) replaced by ``<redacted>``, and every
    httpcore-style header list by ``[<headers redacted>]``."""
    if "://" in text:
        def sub(m: re.Match[str]) -> str:
            userinfo = f"{REDACTED}@" if m.group("userinfo") else ""
            query = f"?{REDACTED}" if m.group("query") else ""
            fragment = f"#{REDACTED}" if m.group("fragment") else ""
            host, slash, path = m.group("rest").partition("/")
            rest = f"{host}{slash}{redact_path(path)}"
            return f"{m.group('head')}{userinfo}{rest}{query}{fragment}"

        text = _URL_IN_TEXT.sub(sub, text)
    start = text.find(_HEADER_LIST_START)
    if start >= 0:
        end = text.rfind("])")
        end = len(text) if end < start else end + 1
        text = text[:start] + "[<headers redacted>]" + text[end:]
    return text


#: a part of a URL path that may be a token: 20 or more letters, digits, ``-`` and ``_``
_PATH_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,}")
_LETTER_AND_DIGIT = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")


def _is_path_token(part: str) -> bool:
    return _PATH_TOKEN.fullmatch(part) is not None and any(
        _LETTER_AND_DIGIT.search(piece) for piece in re.split(r"[-_]", part))


def path_tokens(path: str) -> list[str]:
    """The parts of a URL path that :func:`redact_path` hides: those that look like tokens
    and the values of path parameters (``;jsessionid=...``)."""
    tokens: list[str] = []
    for segment in path.split("/"):
        head, *params = segment.split(";")
        tokens += [part for part in head.split(":") if _is_path_token(part)]
        tokens += [value for _, eq, value in (p.partition("=") for p in params)
                   if eq and value]
    return tokens


def _redact_segment(segment: str) -> str:
    head, *params = segment.split(";")
    shown = [":".join(REDACTED if _is_path_token(part) else part for part in head.split(":"))]
    for param in params:
        name, eq, value = param.partition("=")
        shown.append(f"{name}={REDACTED}" if eq and value else param)
    return ";".join(shown)


def redact_path(path: str) -> str:
    """``path`` (a URL's path) with each part that looks like a token replaced by
    ``<redacted>``. A part is a segment between ``/``, or a piece of one between ``:``
    (``/bot123456:AAH...``); it looks like a token when it has 20 or more characters, all
    letters, digits, ``-`` and ``_``, and a letter next to a digit (``xoxb7Hq2...``, a hex
    digest, a UUID). Words and numbers joined by ``-`` or ``_`` are kept
    (``claude-3-5-sonnet-20241022``, ``my-project-123456``), and so is a short segment,
    whatever it holds: a credential belongs in a header, the query string or a
    secret-named setting, all of which are redacted. The value of every path parameter
    (``/x;jsessionid=ABC`` becomes ``/x;jsessionid=<redacted>``) is hidden too: a session
    id travels there."""
    if len(path) < 20 and ";" not in path:
        return path
    return "/".join(_redact_segment(segment) for segment in path.split("/"))


#: the scheme of a URL (``https://``, ``postgresql://``) at the start of a value
_URL_START = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def redact_url(url: str) -> str:
    """``url`` as evalkit records it (run headers, artifacts, caches, reports, messages):
    without its user info (``user:password@``) and fragment, its query string replaced
    by ``?<redacted>``: ``http://u:pw@h:9/v1?api-key=k`` becomes
    ``http://h:9/v1?<redacted>``; the path's token-like parts are redacted too
    (:func:`redact_path`). A value that is not a URL (no ``scheme://``, such as a
    ``${NAME}`` reference) is returned unchanged, and so is one that cannot be parsed
    (then only with its user info and query cut off in text, :func:`redact_urls`)."""
    if not _URL_START.match(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_urls(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = f"?{REDACTED}" if parts.query else ""
    # spelled out, not urlunsplit: sqlite:////abs/path keeps its four slashes
    return f"{parts.scheme}://{netloc}{redact_path(parts.path)}{query}"


def public_url(url: str) -> str:
    """``url`` without user info, query string and fragment, and with the path's
    token-like parts redacted (:func:`redact_path`)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, redact_path(parts.path), "", ""))


def redact_structure(value: Any, key: str = "") -> Any:
    """``value`` (settings: mappings, lists, text) with every header value, the value of
    every secret-looking key (:func:`is_secret_key`), URL query strings and URL user info
    and the secret-looking pairs of connection strings in any text
    (:func:`redact_connection_pairs`) replaced by ``<redacted>`` (URLs by
    :func:`redact_url`)."""
    if isinstance(value, Mapping):
        if key.lower() == "headers":
            return {str(k): REDACTED for k in value}
        return {str(k): redact_structure(v, str(k)) for k, v in value.items()}
    if key and is_secret_key(key):
        return REDACTED
    if isinstance(value, list | tuple):
        return [redact_structure(v) for v in value]
    if isinstance(value, str):
        return redact_secret_values(redact_connection_pairs(redact_url(value)))
    return value


#: a ``name=value`` pair of a connection string (``Server=h;Password=p;``): ``name`` after
#: the start or a ``;``, ``value`` up to the next ``;``
_CONNECTION_PAIR = re.compile(r"(?P<lead>(?:^|;)\s*)(?P<name>[A-Za-z][A-Za-z0-9 _.-]*?)"
                              r"(?P<eq>\s*=)(?P<value>[^;]*)")


def connection_secrets(text: str) -> list[str]:
    """The values of the secret-looking ``name=value;`` pairs in ``text`` (a connection
    string, ``Server=h;Password=p;``, wherever it stands): those whose name
    :func:`is_secret_key` calls secret (``Password``, ``pwd``, ``AccountKey``,
    ``SharedAccessKey``)."""
    if ";" not in text or "=" not in text:
        return []
    return [m.group("value") for m in _CONNECTION_PAIR.finditer(text)
            if m.group("value").strip() and is_secret_key(m.group("name"))]


def redact_connection_pairs(text: str) -> str:
    """``text`` with the value of each secret-looking ``name=value;`` pair
    (:func:`connection_secrets`) replaced by ``<redacted>``."""
    if ";" not in text or "=" not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        if not m.group("value").strip() or not is_secret_key(m.group("name")):
            return m.group(0)
        return f"{m.group('lead')}{m.group('name')}{m.group('eq')}{REDACTED}"

    return _CONNECTION_PAIR.sub(sub, text)


def register_structure_secrets(value: Any, key: str = "") -> None:
    """Register the secrets of a settings structure: what :func:`redact_structure` hides
    (header values, secret-looking keys' values, URL credentials, query values and path
    parameters, the secret-looking pairs of connection strings), and make every log
    record masked (:func:`install_log_redaction`: secrets of a well-known form are
    masked there whether or not anything is registered)."""
    install_log_redaction()
    if isinstance(value, Mapping):
        if key.lower() == "headers":
            register_header_secrets({str(k): str(v) for k, v in value.items()})
            return
        for k, v in value.items():
            register_structure_secrets(v, str(k))
        return
    if isinstance(value, list | tuple):
        for v in value:
            register_structure_secrets(v, key)
        return
    if isinstance(value, str):
        if key and is_secret_key(key):
            register_secret(value)
        if "://" in value:
            register_url_secrets(value)
        register_secrets(connection_secrets(value))


# ------------------------------------------------------------------ logging
def scrub_record(record: logging.LogRecord) -> None:
    """Mask a log record in place before any handler sees it: its message, its exception
    text (the traceback is formatted, masked and kept as ``exc_text``) and its stack
    text; records of :data:`URL_LOGGERS` also get :func:`redact_urls`."""
    urls = record.name.startswith(URL_LOGGERS)
    try:
        message = record.getMessage()
    except Exception:  # a broken record: let logging report it as it would
        return
    clean = _clean(message, urls)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and record.exc_info[1] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text, record.exc_info = _clean(text, urls), None
    elif record.exc_text:
        record.exc_text = _clean(record.exc_text, urls)
    if record.stack_info:
        record.stack_info = _clean(record.stack_info, urls)


def _clean(text: str, urls: bool) -> str:
    return mask(redact_urls(text) if urls else text)


class RedactingFilter(logging.Filter):
    """A logging filter that passes every record after :func:`scrub_record`. The log
    record factory of :func:`install_log_redaction` already does this for every record
    of the process; the filter is for handlers fed from elsewhere."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub ``record`` in place (:func:`scrub_record`) and let it through."""
        scrub_record(record)
        return True


_installed = False


def install_log_redaction() -> None:
    """Make every log record of the process pass :func:`scrub_record` when it is made
    (idempotent): the current log record factory is wrapped, whoever set it. It costs
    nothing for log calls below their logger's level (no record is made), and one
    message formatting per record otherwise."""
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            scrub_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


__all__ = [
    "ENV_REFERENCE",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "RedactingFilter",
    "error_text",
    "install_log_redaction",
    "is_secret_key",
    "key_words",
    "mask",
    "path_tokens",
    "public_url",
    "redact_path",
    "redact_secret_values",
    "redact_structure",
    "redact_url",
    "redact_urls",
    "register_environment_secrets",
    "register_header_secrets",
    "register_secret",
    "register_secrets",
    "register_structure_secrets",
    "register_url_secrets",
    "scrub_exception",
    "scrub_record",
]
