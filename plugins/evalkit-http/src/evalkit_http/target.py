"""``HttpTarget``: POST each golden case as JSON and read the answer from a JSON object.

Retry policy (one rule, no options):

* a response with status 500-599, or a transport failure (connection refused or reset,
  a timeout of any kind, a broken response), is retried exactly once, after
  ``retry_backoff_s``, with the very same request body;
* a 4xx answer, 429 included, is never retried: the request itself was refused, and a
  rate limit is for the caller to respect by lowering ``max_concurrency``;
* whatever the outcome, ``latency_ms`` spans every attempt and the pause between them.

Every failure raises :class:`evalkit.targets.TargetError` whose message names the target,
the case, what went wrong and how many requests were made. Header values (API tokens)
appear in no message, ``repr``, ``describe()`` or log line; only header names do. The URL
is shown without its query string, which may also hold a key.

That includes the log lines of ``httpx`` itself (``HTTP Request: POST <url> ...`` at
INFO) and of ``httpcore`` (connection and header traces at DEBUG): the first
``HttpTarget`` of a process attaches :class:`RedactingFilter` to those loggers, which
rewrites their records before any handler sees them.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from evalkit.targets import TargetError, TargetResponse

if TYPE_CHECKING:
    from evalkit.cases import GoldenCase

log = logging.getLogger("evalkit.http")

PayloadFn = Callable[["GoldenCase"], Any]
ExtractFn = Callable[[dict[str, Any]], Any]


def default_payload(case: GoldenCase) -> dict[str, Any]:
    """``{"id": case.id, "query": case.query}``."""
    return {"id": case.id, "query": case.query}


def default_extract(body: dict[str, Any]) -> Any:
    """``body["ranked_ids"]`` (a list of ids) or else ``body["text"]`` (a string)."""
    if "ranked_ids" in body:
        return body["ranked_ids"]
    if "text" in body:
        return body["text"]
    raise KeyError("the body has neither 'ranked_ids' nor 'text'; pass extract=")


def _public_url(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]  # drop user:password@
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# ------------------------------------------------------------------ log redaction
#: A URL in free text: scheme, optional ``user:password@``, host and path, then an optional
#: query string and fragment (which may hold keys).
_URL_IN_TEXT = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/\s@'\"<>]*@)?"
    r"(?P<rest>[^\s?#'\"<>]*)(?P<query>\?[^\s#'\"<>]*)?(?P<fragment>#[^\s'\"<>]*)?"
)
#: A header list as httpcore traces it at DEBUG: ``[(b'Name', b'value'), ...]``.
_HEADER_LIST_START = "[(b"

#: The loggers whose records can carry a URL or headers of an ``HttpTarget`` request.
REDACTED_LOGGERS: tuple[str, ...] = (
    "httpx", "httpcore", "httpcore.connection", "httpcore.http11", "httpcore.http2",
    "httpcore.proxy", "httpcore.socks",
)


def redact(text: str) -> str:
    """``text`` with every URL's user info and query string (and fragment) replaced by
    ``<redacted>``, and every httpcore-style header list by ``[<headers redacted>]``."""
    if "://" in text:
        def sub(m: re.Match[str]) -> str:
            userinfo = "<redacted>@" if m.group("userinfo") else ""
            query = "?<redacted>" if m.group("query") else ""
            fragment = "#<redacted>" if m.group("fragment") else ""
            return f"{m.group('head')}{userinfo}{m.group('rest')}{query}{fragment}"

        text = _URL_IN_TEXT.sub(sub, text)
    start = text.find(_HEADER_LIST_START)
    if start >= 0:
        end = text.rfind("])")
        end = len(text) if end < start else end + 1
        text = text[:start] + "[<headers redacted>]" + text[end:]
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that passes every record after :func:`redact`-ing its message.

    A filter on a logger applies to the records logged on that very logger, so it is
    attached to each name of :data:`REDACTED_LOGGERS`. It costs nothing when the logger
    is not enabled for the record's level: the record is never built then.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record: let logging report it as it would
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


_redaction_lock = threading.Lock()


def install_log_redaction() -> None:
    """Attach one :class:`RedactingFilter` to every logger of :data:`REDACTED_LOGGERS`
    (idempotent; :class:`HttpTarget` calls it). It applies to every httpx client of the
    process, not only to those of ``HttpTarget``."""
    with _redaction_lock:
        for name in REDACTED_LOGGERS:
            logger = logging.getLogger(name)
            if not any(isinstance(f, RedactingFilter) for f in logger.filters):
                logger.addFilter(RedactingFilter())


class HttpTarget:
    """A target behind an HTTP JSON API.

    Args:
        url: the endpoint; each case is POSTed to it as a JSON body.
        name: the target's name in rows and messages (default: host and path of ``url``).
        build_payload: ``(case) -> JSON-able`` request body (default :func:`default_payload`).
        extract: ``(body: dict) -> list of ids | str | TargetResponse``: turns the decoded
            JSON object into ranked ids (best first) or a generated text (default
            :func:`default_extract`).
        headers: sent with every request (e.g. ``Authorization``); values are never
            stored, shown or logged (``httpx``/``httpcore`` log lines included: see
            :func:`install_log_redaction`).
        timeout_s: per-attempt timeout in seconds (connect, read, write and pool wait).
        meta_keys: top-level body fields copied into ``TargetResponse.meta`` when present
            (``"cost_usd"``...).
        retry_backoff_s: pause before the single retry, in seconds.
        max_connections: size of the one connection pool (keep it >= the runner's
            ``max_concurrency``, or requests wait for a free connection).
        transport: an ``httpx`` transport (tests).

    Use it as a context manager, or call :meth:`close`, to release the pool.
    """

    def __init__(
        self,
        url: str,
        name: str | None = None,
        *,
        build_payload: PayloadFn | None = None,
        extract: ExtractFn | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 30.0,
        meta_keys: Sequence[str] = (),
        retry_backoff_s: float = 0.1,
        max_connections: int = 100,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"HttpTarget url must start with http:// or https://, got {url!r}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        if isinstance(meta_keys, str):
            raise TypeError("meta_keys must be a sequence of field names, not one string")
        self.url = url
        try:
            # parsed once: httpx would parse the text again on every request
            self._url = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise ValueError(f"HttpTarget url {_public_url(url)!r} is not a valid URL: "
                             f"{redact(str(exc))}") from None
        parts = urlsplit(url)
        self.name = name or f"{parts.hostname}{parts.path}"
        self.build_payload: PayloadFn = build_payload or default_payload
        self.extract: ExtractFn = extract or default_extract
        self.timeout_s = float(timeout_s)
        self.meta_keys = tuple(meta_keys)
        self.retry_backoff_s = float(retry_backoff_s)
        self._header_names = tuple(sorted(headers or {}))
        install_log_redaction()
        # the JSON content type replaces any the caller gave (as a per-request header
        # would), set once on the client rather than merged into every request
        sent = {k: v for k, v in (headers or {}).items() if k.lower() != "content-type"}
        sent["content-type"] = "application/json"
        self._client = httpx.Client(
            headers=sent,
            timeout=httpx.Timeout(self.timeout_s),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            follow_redirects=False,
            transport=transport,
        )

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (idempotent)."""
        self._client.close()

    def __repr__(self) -> str:
        return f"HttpTarget(name={self.name!r}, url={_public_url(self.url)!r})"

    def describe(self) -> dict[str, Any]:
        """What identifies this target in a run header: no header values, no query string."""
        return {
            "type": "evalkit_http.HttpTarget",
            "name": self.name,
            "url": _public_url(self.url),
            "header_names": list(self._header_names),
            "timeout_s": self.timeout_s,
            "meta_keys": list(self.meta_keys),
            "build_payload": _callable_name(self.build_payload),
            "extract": _callable_name(self.extract),
        }

    # ------------------------------------------------------------------ invoke
    def _fail(self, case: GoldenCase, what: str, attempts: int | None = None) -> TargetError:
        tail = "" if attempts is None else (
            f" ({attempts} request{'s' if attempts != 1 else ''} to {_public_url(self.url)})"
        )
        # an exception's text (a transport failure, extract) may quote a URL
        return TargetError(
            f"target {self.name!r} failed on case {case.id!r}: {redact(what)}{tail}")

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """POST the case and return the extracted response.

        Returns:
            A :class:`TargetResponse` with ``latency_ms`` across all attempts, ``raw`` the
            decoded JSON object and ``meta`` the ``meta_keys`` present in it.

        Raises:
            TargetError: the payload cannot be built or encoded; a 4xx (not retried);
                a 5xx or transport failure on both attempts; a body that is not JSON or
                not a JSON object; ``extract`` failing or returning an unusable value.
        """
        try:
            payload = self.build_payload(case)
            body = json.dumps(payload).encode("utf-8")
        except Exception as exc:
            raise self._fail(case, f"cannot build the request body: {exc}") from exc
        start = time.perf_counter()
        attempts = 0
        response: httpx.Response | None = None
        while True:
            attempts += 1
            problem: str
            cause: BaseException | None = None
            try:
                response = self._client.post(self._url, content=body)
            except httpx.TimeoutException as exc:
                problem, cause = f"timed out after {self.timeout_s:g} s ({type(exc).__name__})", exc
            except httpx.TransportError as exc:
                problem, cause = f"transport failure: {type(exc).__name__}: {exc}", exc
            except Exception as exc:  # not a transport failure (e.g. closed client): no retry
                raise self._fail(case, f"{type(exc).__name__}: {exc}", attempts) from exc
            else:
                status = response.status_code
                if status < 500:
                    break
                problem = f"HTTP {status} {response.reason_phrase}".rstrip()
            if attempts >= 2:
                raise self._fail(case, problem, attempts) from cause
            log.info("target %r case %r: %s; retrying once", self.name, case.id,
                     redact(problem))
            if self.retry_backoff_s > 0:
                time.sleep(self.retry_backoff_s)
        latency_ms = (time.perf_counter() - start) * 1000.0
        assert response is not None
        if response.status_code >= 300:
            reason = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
            if response.status_code < 400:
                reason += " (redirects are not followed)"
            else:
                reason += " (4xx answers are not retried)"
            raise self._fail(case, reason, attempts)
        try:
            decoded = json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            snippet = response.content[:60].decode("utf-8", "replace")
            raise self._fail(
                case, f"the response body is not JSON (starts {snippet!r})", attempts
            ) from None
        if not isinstance(decoded, dict):
            kind = "array" if isinstance(decoded, list) else type(decoded).__name__
            raise self._fail(case, f"the response body is a JSON {kind}, not an object",
                             attempts)
        try:
            out = self.extract(decoded)
        except Exception as exc:
            raise self._fail(case, f"extract failed: {type(exc).__name__}: {exc}") from exc
        meta = {k: decoded[k] for k in self.meta_keys if k in decoded}
        return self._response(case, out, latency_ms, decoded, meta)

    def _response(
        self, case: GoldenCase, out: Any, latency_ms: float, raw: dict[str, Any],
        meta: dict[str, Any],
    ) -> TargetResponse:
        if isinstance(out, TargetResponse):
            return TargetResponse(
                ranked_ids=[str(x) for x in out.ranked_ids], text=out.text,
                latency_ms=out.latency_ms or latency_ms,
                raw=raw if out.raw is None else out.raw, meta={**meta, **dict(out.meta)},
            )
        if isinstance(out, str):
            return TargetResponse(text=out, latency_ms=latency_ms, raw=raw, meta=meta)
        if isinstance(out, list | tuple):
            bad = next((x for x in out if isinstance(x, bool) or not isinstance(x, str | int)),
                       None)
            if bad is not None:
                raise self._fail(case, f"extract returned a list holding {bad!r}; ids must "
                                 "be strings")
            return TargetResponse(ranked_ids=[str(x) for x in out], latency_ms=latency_ms,
                                  raw=raw, meta=meta)
        raise self._fail(
            case, f"extract returned {type(out).__name__}; return a list of ids, a string "
            "or a TargetResponse"
        )


def _callable_name(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", "?")
    qual = getattr(fn, "__qualname__", type(fn).__name__)
    return f"{module}:{qual}"


# ------------------------------------------------------------------ factory
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _import_string(text: str, what: str) -> Callable[..., Any]:
    module_name, sep, attr = text.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{what} must be an import string 'package.module:function', "
                         f"got {text!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{what} {text!r} is not callable")
    return obj  # type: ignore[no-any-return]


def _expand_env(name: str, value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        var = m.group(1)
        if var not in os.environ:
            raise KeyError(f"header {name!r} refers to ${{{var}}}, which is not set")
        return os.environ[var]

    return _ENV_RE.sub(sub, value)


def make_http_target(
    *,
    url: str,
    name: str | None = None,
    build_payload: str | PayloadFn | None = None,
    extract: str | ExtractFn | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    meta_keys: Sequence[str] = (),
    retry_backoff_s: float = 0.1,
    max_connections: int = 100,
) -> HttpTarget:
    """The ``http`` target factory (for eval configs).

    ``build_payload`` and ``extract`` may be import strings (``"pkg.mod:fn"``). Header
    values may refer to environment variables as ``${NAME}``, so that tokens stay out of
    config files.

    Raises:
        ValueError, TypeError, ImportError: a bad import string or argument.
        KeyError: a header refers to an unset environment variable.
    """
    payload_fn = (_import_string(build_payload, "build_payload")
                  if isinstance(build_payload, str) else build_payload)
    extract_fn = _import_string(extract, "extract") if isinstance(extract, str) else extract
    resolved = {str(k): _expand_env(str(k), str(v)) for k, v in (headers or {}).items()}
    return HttpTarget(
        url, name, build_payload=payload_fn, extract=extract_fn, headers=resolved,
        timeout_s=timeout_s, meta_keys=meta_keys, retry_backoff_s=retry_backoff_s,
        max_connections=max_connections,
    )
