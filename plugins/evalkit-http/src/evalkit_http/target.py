"""``HttpTarget``: POST each golden case as JSON and read the answer from a JSON object.

Retry policy (one rule, no options):

* a response with status 500-599, or a transport failure (connection refused or reset,
  a timeout of any kind, a broken response), is retried exactly once, after
  ``retry_backoff_s``, with the very same request body;
* a 4xx answer, 429 included, is never retried: the request itself was refused, and a
  rate limit is for the caller to respect by lowering ``max_concurrency``;
* a body larger than ``max_response_bytes`` (decoded), not JSON or not a JSON object is
  an error at once: the next answer would be the same;
* whatever the outcome, ``latency_ms`` spans every attempt and the pause between them.

Bounds (:mod:`evalkit_http.bounds`): ``timeout_s`` is the deadline of each whole attempt
(connecting, sending, the headers and the complete body), so a case takes at most
``2 x timeout_s + retry_backoff_s``; the body is read within ``max_response_bytes`` of
decoded bytes, gzip and deflate included, without ever being decoded whole.

Settings that cannot work are refused when the target is built, before any call
(:mod:`evalkit_http.validation`, :mod:`evalkit.io.headers`): a header name or value HTTP
forbids (a token ending in a carriage return), a URL without a valid host or port.

Every failure raises :class:`evalkit.data.targets.TargetError` whose message names the target,
the case, what went wrong and how many requests were made. Header values (API tokens),
URL credentials and query values are registered as secrets with
:mod:`evalkit.io.redaction`, which masks them by value in every message, exception chain,
log record (httpx's and httpcore's included), artifact and report; only header names are
shown, and URLs without user info or query string.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from evalkit.data.rows import DEFAULT_MAX_RAW_BYTES
from evalkit.data.targets import TargetError, TargetResponse
from evalkit.io.headers import check_headers
from evalkit.io.limits import LimitError, loads_json
from evalkit.io.redaction import (
    RedactingFilter,
    install_log_redaction,
    mask,
    public_url,
    redact_urls,
    register_header_secrets,
    register_url_secrets,
    scrub_exception,
)
from evalkit_http.bounds import (
    ACCEPT_ENCODING,
    ResponseTooLarge,
    UndecodableBody,
    attempt_deadline,
    install_deadline,
    read_body,
)
from evalkit_http.validation import check_options, check_url

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase

log = logging.getLogger("evalkit.http")

PayloadFn = Callable[["GoldenCase"], Any]
ExtractFn = Callable[[dict[str, Any]], Any]

#: The default cap on a response body, decoded (10 MB).
DEFAULT_MAX_RESPONSE_BYTES = 10_000_000
#: Headers the target sets itself (a caller's value is replaced).
_OWN_HEADERS = ("content-type", "accept-encoding")


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


#: ``text`` with URL user info, query strings and httpcore header lists hidden (kept
#: under this name; the one implementation is :func:`evalkit.io.redaction.redact_urls`).
redact = redact_urls


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
            stored, shown or logged (they are registered with :mod:`evalkit.io.redaction`).
            ``Content-Type`` and ``Accept-Encoding`` are the target's own.
        timeout_s: the deadline of each whole attempt in seconds: connecting, waiting for
            a pooled connection, sending, the headers and the complete body.
        meta_keys: top-level body fields copied into ``TargetResponse.meta`` when present
            (``"cost_usd"``...).
        retry_backoff_s: pause before the single retry, in seconds.
        max_connections: size of the one connection pool (keep it >= the runner's
            ``max_concurrency``, or requests wait for a free connection).
        max_response_bytes: the cap on a response body after decoding (default 10 MB);
            a larger body is a case error naming the cap.
        max_raw_bytes: how much of the decoded JSON body (``raw``) a row of the runner
            keeps: bodies up to this many bytes (as JSON; default 64 KiB) are kept, larger
            ones are dropped from the row, which records their size in
            ``response.raw_cut``; ``None`` keeps every body in full. Metrics see the whole
            body during the run either way.
        transport: an ``httpx`` transport (tests). Without a ``DeadlineBackend`` in it,
            the deadline is checked between body chunks (deadline plus one read).

    Raises:
        ValueError: a URL without a valid scheme, host or port; a header name or value
            that HTTP forbids (named, its value never shown); a non-positive timeout or
            cap. Nothing is sent before these checks.
        TypeError: ``meta_keys`` is one string.

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
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_raw_bytes: int | None = DEFAULT_MAX_RAW_BYTES,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = dict(headers or {})
        register_url_secrets(str(url))
        register_header_secrets({k: v for k, v in headers.items() if isinstance(v, str)})
        check_url(url)
        check_headers(headers, "HttpTarget")
        check_options(timeout_s=timeout_s, retry_backoff_s=retry_backoff_s,
                      max_connections=max_connections, max_response_bytes=max_response_bytes,
                      max_raw_bytes=max_raw_bytes)
        if isinstance(meta_keys, str):
            raise TypeError("meta_keys must be a sequence of field names, not one string")
        self.url = url
        try:
            # parsed once: httpx would parse the text again on every request
            self._url = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise ValueError(f"HttpTarget url {public_url(url)!r} is not a valid URL: "
                             f"{mask(redact_urls(str(exc)))}") from None
        parts = urlsplit(url)
        self.name = name or f"{parts.hostname}{parts.path}"
        self.build_payload: PayloadFn = build_payload or default_payload
        self.extract: ExtractFn = extract or default_extract
        self.timeout_s = float(timeout_s)
        self.meta_keys = tuple(meta_keys)
        self.retry_backoff_s = float(retry_backoff_s)
        self.max_response_bytes = int(max_response_bytes)
        self.max_raw_bytes = max_raw_bytes
        self._header_names = tuple(sorted(headers))
        install_log_redaction()
        # the target's own headers replace any the caller gave (as a per-request header
        # would), set once on the client rather than merged into every request
        sent = {k: v for k, v in headers.items() if k.lower() not in _OWN_HEADERS}
        sent["content-type"] = "application/json"
        sent["accept-encoding"] = ACCEPT_ENCODING
        self._client = httpx.Client(
            headers=sent, timeout=httpx.Timeout(self.timeout_s),
            limits=httpx.Limits(max_connections=max_connections,
                                max_keepalive_connections=max_connections),
            follow_redirects=False, transport=transport,
        )
        # httpx builds its transports (and one per proxy from the environment, which a
        # transport passed to it would disable); each gets the deadline backend
        built = transport if transport is not None else getattr(self._client, "_transport",
                                                                None)
        self.deadline_in_transport = built is not None and install_deadline(built)
        for mounted in getattr(self._client, "_mounts", {}).values():
            if mounted is not None:
                install_deadline(mounted)

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (idempotent)."""
        self._client.close()

    def __repr__(self) -> str:
        return f"HttpTarget(name={self.name!r}, url={public_url(self.url)!r})"

    def describe(self) -> dict[str, Any]:
        """What identifies this target in a run header: no header values, no query string."""
        return {
            "type": "evalkit_http.HttpTarget",
            "name": self.name,
            "url": public_url(self.url),
            "header_names": list(self._header_names),
            "timeout_s": self.timeout_s,
            "meta_keys": list(self.meta_keys),
            "build_payload": _callable_name(self.build_payload),
            "extract": _callable_name(self.extract),
        }

    # ------------------------------------------------------------------ invoke
    def _fail(self, case: GoldenCase, what: str, attempts: int | None = None,
              cause: BaseException | None = None) -> TargetError:
        tail = "" if attempts is None else (
            f" ({attempts} request{'s' if attempts != 1 else ''} to {public_url(self.url)})"
        )
        if cause is not None:
            scrub_exception(cause)  # the chain behind the error shows no secret either
        # an exception's text (a transport failure, extract) may quote a URL or a secret
        return TargetError(mask(
            f"target {self.name!r} failed on case {case.id!r}: {redact_urls(what)}{tail}"))

    def _attempt(self, body: bytes) -> tuple[int, str, bytes]:
        """One request within the attempt deadline: ``(status, reason, body)``; the body
        is read only for a 2xx answer."""
        with attempt_deadline(self.timeout_s) as deadline, \
                self._client.stream("POST", self._url, content=body) as response:
            status, reason = response.status_code, response.reason_phrase
            if not 200 <= status < 300:
                return status, reason, b""
            return status, reason, read_body(response, self.max_response_bytes, deadline)

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """POST the case and return the extracted response.

        Returns:
            A :class:`TargetResponse` with ``latency_ms`` across all attempts, ``raw`` the
            decoded JSON object and ``meta`` the ``meta_keys`` present in it.

        Raises:
            TargetError: the payload cannot be built or encoded; a 4xx (not retried);
                a 5xx or transport failure (a timeout of the whole attempt included) on
                both attempts; a body over ``max_response_bytes``, not decodable, not JSON
                or not a JSON object; ``extract`` failing or returning an unusable value.
        """
        try:
            payload = self.build_payload(case)
            body = json.dumps(payload).encode("utf-8")
        except Exception as exc:
            raise self._fail(case, f"cannot build the request body: {exc}",
                             cause=exc) from exc
        start = time.perf_counter()
        attempts = 0
        while True:
            attempts += 1
            problem: str
            cause: BaseException | None = None
            try:
                status, reason, content = self._attempt(body)
            except httpx.TimeoutException as exc:
                problem, cause = (f"timed out after {self.timeout_s:g} s (the whole attempt; "
                                  f"{type(exc).__name__})"), exc
            except httpx.TransportError as exc:
                problem, cause = f"transport failure: {type(exc).__name__}: {exc}", exc
            except (ResponseTooLarge, UndecodableBody) as exc:  # the same on a retry
                raise self._fail(case, str(exc), attempts, exc) from exc
            except Exception as exc:  # not a transport failure (e.g. closed client): no retry
                raise self._fail(case, f"{type(exc).__name__}: {exc}", attempts, exc) from exc
            else:
                if status < 500:
                    break
                problem = f"HTTP {status} {reason}".rstrip()
            if attempts >= 2:
                raise self._fail(case, problem, attempts, cause) from cause
            log.info("target %r case %r: %s; retrying once", self.name, case.id,
                     mask(redact_urls(problem)))
            if self.retry_backoff_s > 0:
                time.sleep(self.retry_backoff_s)
        latency_ms = (time.perf_counter() - start) * 1000.0
        if status >= 300:
            reason = f"HTTP {status} {reason}".rstrip()
            if status < 400:
                reason += " (redirects are not followed)"
            else:
                reason += " (4xx answers are not retried)"
            raise self._fail(case, reason, attempts)
        decoded = self._decode(case, content, attempts)
        try:
            out = self.extract(decoded)
        except Exception as exc:
            raise self._fail(case, f"extract failed: {type(exc).__name__}: {exc}",
                             cause=exc) from exc
        meta = {k: decoded[k] for k in self.meta_keys if k in decoded}
        return self._response(case, out, latency_ms, decoded, meta)

    def _decode(self, case: GoldenCase, content: bytes, attempts: int) -> dict[str, Any]:
        try:
            decoded = loads_json(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            snippet = content[:60].decode("utf-8", "replace")
            raise self._fail(
                case, f"the response body is not JSON (starts {snippet!r})", attempts
            ) from None
        except LimitError as exc:
            raise self._fail(case, f"the response body is {exc}", attempts) from None
        if not isinstance(decoded, dict):
            kind = "array" if isinstance(decoded, list) else type(decoded).__name__
            raise self._fail(case, f"the response body is a JSON {kind}, not an object",
                             attempts)
        return decoded

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


__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "HttpTarget",
    "RedactingFilter",
    "default_extract",
    "default_payload",
    "install_log_redaction",
    "redact",
]
