"""What the HTTP targets share: their settings (:mod:`evalkit_http.options`) and
build-time checks, the request body, the error messages (masked), and turning an answer
into a ``TargetResponse``.

:class:`~evalkit_http.target.HttpTarget` (threads, ``httpx.Client``) and
:class:`~evalkit_http.async_target.AsyncHttpTarget` (an event loop, ``httpx.AsyncClient``)
differ only in how a request is sent and how they wait.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import urlsplit

import httpx

from evalkit.data.targets import TargetError, TargetResponse
from evalkit.execute.pacing import Pacing
from evalkit.io.limits import LimitError, NotJsonError, RepeatedKeyError, loads_json
from evalkit.io.redaction import (
    install_log_redaction,
    mask,
    public_url,
    redact_urls,
    register_url_secrets,
    scrub_exception,
)
from evalkit_http.attempts import Attempts, Step
from evalkit_http.bounds import ACCEPT_ENCODING, ResponseTooLarge, UndecodableBody
from evalkit_http.options import DEFAULT_MAX_RESPONSE_BYTES as DEFAULT_MAX_RESPONSE_BYTES
from evalkit_http.options import ExtractFn as ExtractFn
from evalkit_http.options import HttpOptionKeywords, HttpOptions
from evalkit_http.options import PayloadFn as PayloadFn
from evalkit_http.validation import check_credentials, check_url

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase

log = logging.getLogger("evalkit.http")

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


class HttpTargetBase:
    """The settings, checks and answer handling of an HTTP target (see
    :class:`~evalkit_http.target.HttpTarget` for the arguments, and
    :class:`~evalkit_http.options.HttpOptions` for the options)."""

    def __init__(self, url: str, name: str | None = None,
                 **options: Unpack[HttpOptionKeywords]) -> None:
        register_url_secrets(str(url))
        check_url(url)
        opts = HttpOptions.of(type(self).__name__, options)
        check_credentials(url, opts.headers, type(self).__name__)
        #: what a pickle of the target holds (:meth:`__reduce__`): the arguments, not
        #: the connection pool, its locks or the pause gate
        self._given = (url, name, dict(options))
        self._own_transport = False  # set by a subclass given transport=
        self.rate_limit = opts.rate_limit_policy()
        #: what every request passes: the pause of a server's Retry-After, and a limit on
        #: requests in flight that narrows at rate-limit answers (retries included)
        self.pause_gate = Pacing(opts.max_connections)
        self.url = url
        try:
            # parsed once: httpx would parse the text again on every request
            self._url = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise ValueError(f"{type(self).__name__} url {public_url(url)!r} is not a valid "
                             f"URL: {mask(redact_urls(str(exc)))}") from None
        parts = urlsplit(url)
        self.name = name or f"{parts.hostname}{parts.path}"
        self.build_payload: PayloadFn = opts.build_payload or default_payload
        self.extract: ExtractFn = opts.extract or default_extract
        self.timeout_s = float(opts.timeout_s)
        self.meta_keys = tuple(opts.meta_keys)
        self.retries = opts.retries
        self.retry_backoff_s = float(opts.retry_backoff_s)
        self.max_connections = opts.max_connections
        self.max_response_bytes = int(opts.max_response_bytes)
        self.max_raw_bytes = opts.max_raw_bytes
        headers = dict(opts.headers or {})
        self._header_names = tuple(sorted(headers))
        install_log_redaction()
        # the target's own headers replace any the caller gave (as a per-request header
        # would), set once on the client rather than merged into every request
        sent = {k: v for k, v in headers.items() if k.lower() not in _OWN_HEADERS}
        sent["content-type"] = "application/json"
        sent["accept-encoding"] = ACCEPT_ENCODING
        self._sent_headers = sent

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the target as its arguments (url, name, options), so that a remote
        executor's worker (``executor="dask"``) builds its own client on unpickling; the
        client, its connection pool and locks are not pickled. The pickle holds the
        header values (an API key): it is made for the run's workers only, and never
        written to an artifact or a log.

        Raises:
            TypeError: the target was given ``transport=`` (a test's transport belongs
                to this process).
        """
        if self._own_transport:
            raise TypeError(f"{type(self).__name__} with transport= cannot be pickled: "
                            "the transport belongs to this process; leave it out")
        url, name, options = self._given
        return (_rebuilt, (type(self), url, name, options))

    @property
    def retry_rate_limited(self) -> bool:
        return self.rate_limit.enabled

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, url={public_url(self.url)!r})"

    def describe(self) -> dict[str, Any]:
        """What identifies this target in a run header: no header values, no query string."""
        # the retry settings are left out: they decide whether a call gets through, not
        # what an answer is, so a run that met 429s or 5xx can be resumed with more retries
        return {
            "type": f"evalkit_http.{type(self).__name__}",
            "name": self.name,
            "url": public_url(self.url),
            "header_names": list(self._header_names),
            "timeout_s": self.timeout_s,
            "meta_keys": list(self.meta_keys),
            "build_payload": _callable_name(self.build_payload),
            "extract": _callable_name(self.extract),
        }

    # ------------------------------------------------------------------ one case
    def _fail(self, case: GoldenCase, what: str, attempts: int | None = None,
              cause: BaseException | None = None, rate_limited: int = 0) -> TargetError:
        tail = "" if attempts is None else (
            f" ({attempts} request{'s' if attempts != 1 else ''} to {public_url(self.url)})"
        )
        if cause is not None:
            scrub_exception(cause)  # the chain behind the error shows no secret either
        # an exception's text (a transport failure, extract) may quote a URL or a secret
        return TargetError(mask(
            f"target {self.name!r} failed on case {case.id!r}: {redact_urls(what)}{tail}"),
            requests=attempts, rate_limited=rate_limited)

    def _body(self, case: GoldenCase) -> bytes:
        try:
            payload = self.build_payload(case)
            return json.dumps(payload).encode("utf-8")
        except Exception as exc:
            raise self._fail(case, f"cannot build the request body: {exc}",
                             cause=exc) from exc

    def _attempts(self) -> Attempts:
        return Attempts(self.rate_limit, self.pause_gate, self.retry_backoff_s, self.retries)

    def _admitted(self, case: GoldenCase, seq: Attempts, started: float | None,
                  waited_since: float) -> float:
        """The start of the next request of ``seq`` (the gate let it through at
        ``started``, after waiting since ``waited_since``), or the error of a case whose
        request could not start within ``rate_limit_total_s``."""
        seq.add_wait(time.monotonic() - waited_since)
        if started is None:
            raise self._fail(case, seq.paused_too_long(), seq.requests,
                             rate_limited=seq.rate_limited)
        seq.requests += 1
        return started

    def _step_of_error(self, case: GoldenCase, seq: Attempts, exc: Exception) -> Step:
        """What follows an attempt that raised ``exc``: a timeout of the whole attempt
        or a transport failure is retried (up to ``retries`` times); anything else is the
        case's error."""
        if isinstance(exc, TimeoutError | httpx.TimeoutException):
            return seq.failed(f"timed out after {self.timeout_s:g} s (the whole attempt; "
                              f"{type(exc).__name__})")
        if isinstance(exc, httpx.TransportError):
            return seq.failed(f"transport failure: {type(exc).__name__}: {exc}")
        if isinstance(exc, ResponseTooLarge | UndecodableBody):  # the same on a retry
            raise self._fail(case, str(exc), seq.requests, exc) from exc
        # not a transport failure (e.g. a closed client): no retry
        raise self._fail(case, f"{type(exc).__name__}: {exc}", seq.requests, exc) from exc

    def _delay_after(self, case: GoldenCase, seq: Attempts, step: Step,
                     cause: BaseException | None) -> float:
        """The sleep before the retry ``step`` asks for (logged), or its error."""
        if step.error is not None:
            raise self._fail(case, step.error, seq.requests, cause,
                             seq.rate_limited) from cause
        log.info("target %r case %r: %s", self.name, case.id, mask(redact_urls(step.note)))
        if step.delay_s > 0:
            seq.add_wait(step.delay_s)
        return step.delay_s

    def _finish(self, case: GoldenCase, status: int, reason: str, content: bytes,
                seq: Attempts, latency_ms: float) -> TargetResponse:
        """The response of the last answer of ``seq`` (or the error it is)."""
        attempts = seq.requests
        if status >= 300:
            reason = f"HTTP {status} {reason}".rstrip()
            if status < 400:
                reason += " (redirects are not followed)"
            elif not self.rate_limit.applies(status):
                reason += " (4xx answers are not retried)"
            raise self._fail(case, reason, attempts, rate_limited=seq.rate_limited)
        decoded = self._decode(case, content, attempts)
        try:
            out = self.extract(decoded)
        except Exception as exc:
            raise self._fail(case, f"extract failed: {type(exc).__name__}: {exc}",
                             cause=exc) from exc
        meta = {k: decoded[k] for k in self.meta_keys if k in decoded}
        return self._response(case, out, latency_ms, decoded, meta, seq)

    def _decode(self, case: GoldenCase, content: bytes, attempts: int) -> dict[str, Any]:
        try:
            # as strict as a golden file: no repeated key, no NaN/Infinity (not JSON)
            decoded = loads_json(content, unique_keys=True, constants=False)
        except UnicodeDecodeError as exc:
            raise self._fail(
                case, f"the response body is not UTF-8 text (byte 0x{content[exc.start]:02x} "
                f"at offset {exc.start}), so it is not JSON; the server must send UTF-8",
                attempts) from None
        except json.JSONDecodeError:
            snippet = content[:60].decode("utf-8", "replace")
            raise self._fail(
                case, f"the response body is not JSON (starts {snippet!r})", attempts
            ) from None
        except (RepeatedKeyError, NotJsonError) as exc:
            raise self._fail(case, f"the response body is not strict JSON: {exc}",
                             attempts) from None
        except LimitError as exc:
            raise self._fail(case, f"the response body is refused: {exc}",
                             attempts) from None
        if not isinstance(decoded, dict):
            kind = "array" if isinstance(decoded, list) else type(decoded).__name__
            raise self._fail(case, f"the response body is a JSON {kind}, not an object",
                             attempts)
        return decoded

    def _response(
        self, case: GoldenCase, out: Any, latency_ms: float, raw: dict[str, Any],
        meta: dict[str, Any], seq: Attempts,
    ) -> TargetResponse:
        requests, limited = seq.requests, seq.rate_limited
        if isinstance(out, TargetResponse):
            meta = {**meta, **dict(out.meta)}
        if self.rate_limit.enabled:  # the time this case waited, beside latency_ms
            meta["wait_ms"] = round(seq.waited_s * 1000.0, 3)
        if isinstance(out, TargetResponse):
            return TargetResponse(
                ranked_ids=[str(x) for x in out.ranked_ids], text=out.text,
                latency_ms=out.latency_ms or latency_ms,
                raw=raw if out.raw is None else out.raw, meta=meta, requests=requests,
                rate_limited=limited,
            )
        if isinstance(out, str):
            return TargetResponse(text=out, latency_ms=latency_ms, raw=raw, meta=meta,
                                  requests=requests, rate_limited=limited)
        if isinstance(out, list | tuple):
            bad = next((x for x in out if isinstance(x, bool) or not isinstance(x, str | int)),
                       None)
            if bad is not None:
                raise self._fail(case, f"extract returned a list holding {bad!r}; ids must "
                                 "be strings")
            return TargetResponse(ranked_ids=[str(x) for x in out], latency_ms=latency_ms,
                                  raw=raw, meta=meta, requests=requests,
                                  rate_limited=limited)
        raise self._fail(
            case, f"extract returned {type(out).__name__}; return a list of ids, a string "
            "or a TargetResponse"
        )


def _rebuilt(cls: type[HttpTargetBase], url: str, name: str | None,
             options: dict[str, Any]) -> HttpTargetBase:
    """An HTTP target made again from what :meth:`HttpTargetBase.__reduce__` pickled."""
    return cls(url, name, **options)


def _callable_name(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", "?")
    qual = getattr(fn, "__qualname__", type(fn).__name__)
    return f"{module}:{qual}"


__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ExtractFn",
    "HttpTargetBase",
    "PayloadFn",
    "default_extract",
    "default_payload",
]
