"""``HttpTarget``: POST each golden case as JSON and read the answer from a JSON object.

Retry policy (:mod:`evalkit_http.attempts`):

* a response with status 500-599, or a transport failure (connection refused or reset,
  a timeout of any kind, a broken response), is retried ``retries`` times at most
  (default once), with the very same request body, after a jittered exponential backoff
  from ``retry_backoff_s`` (0.1 s, doubling, at most 8 s);
* a 4xx answer is never retried: the request itself was refused; by default this holds
  for 429 too, and with ``retry_rate_limited=True`` a 429 or 529 is retried after the
  server's ``Retry-After`` (which pauses the whole target) or a jittered backoff, within
  ``rate_limit_retries`` and ``rate_limit_total_s`` (:mod:`evalkit_http.ratelimit`);
* a body larger than ``max_response_bytes`` (decoded), not JSON or not a JSON object is
  an error at once: the next answer would be the same;
* whatever the outcome, ``latency_ms`` spans every attempt and the pause between them.

Bounds (:mod:`evalkit_http.bounds`): ``timeout_s`` is the deadline of each whole attempt
(connecting, sending, the headers and the complete body), so a case takes at most
``(retries + 1) x timeout_s`` plus the backoffs (``2 x timeout_s + retry_backoff_s`` by
default; with the rate-limit retry, ``rate_limit_total_s`` more); the body is read within
``max_response_bytes`` of decoded bytes, gzip and deflate included, without ever being
decoded whole.

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

import time
from typing import TYPE_CHECKING, Unpack

import httpx

from evalkit.data.targets import TargetResponse
from evalkit.io.redaction import (
    RedactingFilter,
    install_log_redaction,
    redact_urls,
)
from evalkit_http.base import (
    DEFAULT_MAX_RESPONSE_BYTES,
    HttpTargetBase,
    default_extract,
    default_payload,
)
from evalkit_http.bounds import (
    attempt_deadline,
    install_client_deadline,
    read_body,
)
from evalkit_http.options import HttpOptionKeywords

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase


#: ``text`` with URL user info, query strings and httpcore header lists hidden (kept
#: under this name; the one implementation is :func:`evalkit.io.redaction.redact_urls`).
redact = redact_urls


class HttpTarget(HttpTargetBase):
    """A target behind an HTTP JSON API.

    Args:
        url: the endpoint; each case is POSTed to it as a JSON body.
        name: the target's name in rows and messages (default: host and path of ``url``).
        transport: an ``httpx`` transport (tests). Without a ``DeadlineBackend`` in it,
            the deadline is checked between body chunks (deadline plus one read).
        **options: the fields of :class:`~evalkit_http.options.HttpOptions`
            (``build_payload``, ``extract``, ``headers``, ``timeout_s``, ... with their
            defaults and meaning there).

    Raises:
        ValueError: a URL without a valid scheme, host or port; an option
            :class:`~evalkit_http.options.HttpOptions` refuses. Nothing is sent before
            these checks.
        TypeError: ``meta_keys`` is one string, or a keyword that is not an option.

    Use it as a context manager, or call :meth:`close`, to release the pool.
    """

    def __init__(self, url: str, name: str | None = None, *,
                 transport: httpx.BaseTransport | None = None,
                 **options: Unpack[HttpOptionKeywords]) -> None:
        super().__init__(url, name, **options)
        self._own_transport = transport is not None
        self._client = httpx.Client(
            headers=self._sent_headers, timeout=httpx.Timeout(self.timeout_s),
            limits=httpx.Limits(max_connections=self.max_connections,
                                max_keepalive_connections=self.max_connections),
            follow_redirects=False, transport=transport,
        )
        # httpx builds its transports (and one per proxy from the environment, which a
        # transport passed to it would disable); each gets the deadline backend
        self.deadline_in_transport = install_client_deadline(self._client)

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (idempotent)."""
        self._client.close()

    # ------------------------------------------------------------------ invoke
    def _attempt(self, body: bytes) -> tuple[int, str, httpx.Headers, bytes]:
        """One request within the attempt deadline: ``(status, reason, headers, body)``;
        the body is read only for a 2xx answer."""
        with attempt_deadline(self.timeout_s) as deadline, \
                self._client.stream("POST", self._url, content=body) as response:
            status, reason = response.status_code, response.reason_phrase
            if not 200 <= status < 300:
                return status, reason, response.headers, b""
            return (status, reason, response.headers,
                    read_body(response, self.max_response_bytes, deadline))

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """POST the case and return the extracted response.

        Returns:
            A :class:`TargetResponse` with ``latency_ms`` across all attempts and waits,
            ``raw`` the decoded JSON object, ``meta`` the ``meta_keys`` present in it
            (and ``wait_ms`` with ``retry_rate_limited``), ``requests`` the requests made.

        Raises:
            TargetError: the payload cannot be built or encoded; a 4xx (not retried, or
                a 429/529 still refused after the rate-limit bounds); a 5xx or transport
                failure (a timeout of the whole attempt included) on every attempt; a body
                over ``max_response_bytes``, not decodable, not JSON or not a JSON object;
                ``extract`` failing or returning an unusable value.
        """
        body = self._body(case)
        start = time.perf_counter()
        seq = self._attempts()
        while True:
            waited = time.monotonic()
            started = self._admitted(case, seq, self.pause_gate.admit(latest=seq.latest), waited)
            cause: BaseException | None = None
            limited = 0
            try:
                try:
                    status, reason, headers, content = self._attempt(body)
                except Exception as exc:
                    cause = exc
                    step = self._step_of_error(case, seq, exc)
                else:
                    limited = int(self.rate_limit.applies(status))
                    step = seq.answered(status, reason, headers)
            finally:
                self.pause_gate.release(started, limited)
            if step.done:
                break
            delay = self._delay_after(case, seq, step, cause)
            if delay > 0:
                time.sleep(delay)
        latency_ms = (time.perf_counter() - start) * 1000.0
        return self._finish(case, status, reason, content, seq, latency_ms)


__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "HttpTarget",
    "RedactingFilter",
    "default_extract",
    "default_payload",
    "install_log_redaction",
    "redact",
]
