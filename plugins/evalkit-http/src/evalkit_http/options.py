"""The options of an HTTP target, declared once: their types, defaults, meaning and checks.

:class:`~evalkit_http.target.HttpTarget`, :class:`~evalkit_http.async_target.AsyncHttpTarget`
and the ``http`` factory of eval configs (:func:`~evalkit_http.factory.make_http_target`)
take every field of :class:`HttpOptions` as a keyword argument and build the record
with :meth:`HttpOptions.of`, which refuses settings that cannot work before anything is
sent. :class:`HttpOptionKeywords` is the same fields as a ``TypedDict``, so that a type
checker checks the keywords (``**options: Unpack[HttpOptionKeywords]``, PEP 692 accepts
nothing else); a test holds the two to the same names and types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypedDict

from evalkit.data.rows import DEFAULT_MAX_RAW_BYTES
from evalkit.io.headers import check_headers
from evalkit.io.redaction import register_header_secrets
from evalkit_http.ratelimit import RateLimitPolicy
from evalkit_http.validation import check_options

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase

PayloadFn = Callable[["GoldenCase"], Any]
ExtractFn = Callable[[dict[str, Any]], Any]

#: The default cap on a response body, decoded (10 MB).
DEFAULT_MAX_RESPONSE_BYTES = 10_000_000


@dataclass(frozen=True, kw_only=True)
class HttpOptions:
    """The settings of an HTTP target (every field is a keyword argument of the targets
    and of the ``http`` factory, with the default shown).

    Raises:
        ValueError: a header name or value that HTTP forbids (named, its value never
            shown); a non-positive timeout or cap, a negative backoff or
            ``rate_limit_retries``, ``retries`` that is not an integer from 0 to 10, a
            non-boolean ``retry_rate_limited``.
        TypeError: ``meta_keys`` is one string.
    """

    build_payload: PayloadFn | None = None
    """``(case) -> JSON-able`` request body (default
    :func:`~evalkit_http.base.default_payload`)."""
    extract: ExtractFn | None = None
    """``(body: dict) -> list of ids | str | TargetResponse``: turns the decoded JSON
    object into ranked ids (best first) or a generated text (default
    :func:`~evalkit_http.base.default_extract`)."""
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    """Sent with every request (e.g. ``Authorization``); values are never stored in a
    run, shown or logged (they are registered with :mod:`evalkit.io.redaction`).
    ``Content-Type`` and ``Accept-Encoding`` are the target's own. An ``Authorization``
    header with a URL carrying ``user:password@`` is refused (``ValueError``): the URL's
    Basic authentication would be sent in its place."""
    timeout_s: float = 30.0
    """The deadline of each whole attempt in seconds: connecting, waiting for a pooled
    connection, sending, the headers and the complete body."""
    meta_keys: Sequence[str] = ()
    """Top-level body fields copied into ``TargetResponse.meta`` when present
    (``"cost_usd"``...)."""
    retries: int = 1
    """How many times a 5xx answer or a transport failure (a timeout of the whole attempt
    included) is retried per case, with the same body: an integer from 0 to
    :data:`evalkit.io.limits.MAX_RETRIES` (10); default once. The row's
    ``requests`` counts every request sent, and ``evalkit run`` reports the requests sent
    again."""
    retry_backoff_s: float = 0.1
    """The pause before the first retry of a 5xx or transport failure, in seconds; it
    doubles before each further retry, up to 8 s (or ``retry_backoff_s`` when larger),
    less up to 25 % jitter: ``min(b x 2^(n-1), max(b, 8)) x (1 - 0.25 u)`` before retry
    ``n``, the rate-limit backoff's rule (:func:`evalkit_http.ratelimit.backoff_s`)."""
    max_connections: int = 100
    """Size of the connection pool (keep it >= the runner's ``max_concurrency``, or
    requests wait for a free connection)."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    """The cap on a response body after decoding (default 10 MB); a larger body is a case
    error naming the cap."""
    max_raw_bytes: int | None = DEFAULT_MAX_RAW_BYTES
    """How much of the decoded JSON body (``raw``) a row of the runner keeps: bodies up to
    this many bytes (as JSON; default 64 KiB) are kept, larger ones are dropped from the
    row, which records their size in ``response.raw_cut``; ``None`` keeps every body in
    full. Metrics see the whole body during the run either way."""
    retry_rate_limited: bool = False
    """Retry 429 and 529 answers (default ``False``: a 4xx is never retried, as in the
    seed). The wait is the server's ``retry-after-ms`` or ``Retry-After`` (seconds or an
    HTTP date), at most ``retry_after_max_s``, and it pauses every call of this target;
    without one, a jittered exponential backoff (0.5 s doubling up to 8 s). Responses
    then carry ``meta["wait_ms"]``, the milliseconds the case spent waiting."""
    rate_limit_retries: int = 20
    """The most retries of rate-limit answers per case."""
    rate_limit_total_s: float = 120.0
    """No request of a case starts later than this many seconds after the case started."""
    retry_after_max_s: float = 60.0
    """The cap on a server's wait, in seconds."""
    who: InitVar[str] = "HttpTarget"
    """What the options are for, first in a header's error message (not a field)."""

    def __post_init__(self, who: str) -> None:
        headers = dict(self.headers or {})
        register_header_secrets({k: v for k, v in headers.items() if isinstance(v, str)})
        check_headers(headers, who)
        check_options(timeout_s=self.timeout_s, retries=self.retries,
                      retry_backoff_s=self.retry_backoff_s,
                      max_connections=self.max_connections,
                      max_response_bytes=self.max_response_bytes,
                      max_raw_bytes=self.max_raw_bytes)
        if isinstance(self.meta_keys, str):
            raise TypeError("meta_keys must be a sequence of field names, not one string")
        if not isinstance(self.retry_rate_limited, bool):
            raise ValueError(f"retry_rate_limited must be true or false, got "
                             f"{self.retry_rate_limited!r}")
        self.rate_limit_policy()  # refuses bad rate-limit bounds now

    @classmethod
    def of(cls, who: str, options: Mapping[str, Any]) -> HttpOptions:
        """The options given as keyword arguments to ``who`` (a class name).

        Raises:
            TypeError: a keyword that is not an option (as Python says it of a call).
            ValueError, TypeError: as :class:`HttpOptions`.
        """
        unknown = [key for key in options if key not in OPTION_NAMES]
        if unknown:
            raise TypeError(f"{who}.__init__() got an unexpected keyword argument "
                            f"{unknown[0]!r}")
        return cls(**options, who=who)

    def rate_limit_policy(self) -> RateLimitPolicy:
        """The bounds of the rate-limit retry (:class:`evalkit_http.ratelimit.RateLimitPolicy`).

        Raises:
            ValueError: a negative ``rate_limit_retries`` or a non-positive bound.
        """
        return RateLimitPolicy(self.retry_rate_limited, self.rate_limit_retries,
                               self.rate_limit_total_s, self.retry_after_max_s)


#: The names of the options, in declaration order.
OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(HttpOptions))


class HttpOptionKeywords(TypedDict, total=False):
    """The fields of :class:`HttpOptions` as keyword arguments, for typing ``**options``
    (their meaning, defaults and checks are :class:`HttpOptions`')."""

    build_payload: PayloadFn | None
    extract: ExtractFn | None
    headers: Mapping[str, str] | None
    timeout_s: float
    meta_keys: Sequence[str]
    retries: int
    retry_backoff_s: float
    max_connections: int
    max_response_bytes: int
    max_raw_bytes: int | None
    retry_rate_limited: bool
    rate_limit_retries: int
    rate_limit_total_s: float
    retry_after_max_s: float


__all__ = ["OPTION_NAMES", "HttpOptionKeywords", "HttpOptions"]
