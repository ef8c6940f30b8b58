"""The HTTP targets' options are declared once (:class:`evalkit_http.options.HttpOptions`):
the typing mirror names the same fields with the same types, the defaults are those of
the 0.3.0 release's constructors (written out here from its signatures), and every constructor and
the ``http`` factory refuse what the record refuses, naming themselves."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from evalkit_http import AsyncHttpTarget, HttpTarget
from evalkit_http.factory import make_http_target
from evalkit_http.options import OPTION_NAMES, HttpOptionKeywords, HttpOptions

URL = "http://127.0.0.1:9/search"

#: the defaults of HttpTarget(...) in 0.3.0, copied from its keyword list (``retries``
#: came later; its default, once, is the single retry 0.3.0 always made)
FORMER_DEFAULTS = {
    "build_payload": None, "extract": None, "headers": None, "timeout_s": 30.0,
    "meta_keys": (), "retries": 1, "retry_backoff_s": 0.1, "max_connections": 100,
    "max_response_bytes": 10_000_000, "max_raw_bytes": 64 * 1024,
    "retry_rate_limited": False, "rate_limit_retries": 20, "rate_limit_total_s": 120.0,
    "retry_after_max_s": 60.0,
}


def test_the_typing_mirror_has_the_records_fields_and_types() -> None:
    fields = {f.name: f.type for f in dataclasses.fields(HttpOptions)}
    # both modules' annotations are text (``from __future__ import annotations``)
    mirror = {k: getattr(v, "__forward_arg__", v)
              for k, v in HttpOptionKeywords.__annotations__.items()}
    assert mirror == fields
    assert list(HttpOptionKeywords.__annotations__) == list(OPTION_NAMES)
    assert HttpOptionKeywords.__total__ is False


def test_the_defaults_are_the_former_signatures() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(HttpOptions)}
    assert defaults == FORMER_DEFAULTS
    with HttpTarget(URL) as target:
        assert (target.timeout_s, target.retry_backoff_s, target.max_connections,
                target.max_response_bytes, target.max_raw_bytes, target.meta_keys) == (
            30.0, 0.1, 100, 10_000_000, 65536, ())
        assert target.retry_rate_limited is False
        assert (target.rate_limit.retries, target.rate_limit.total_s,
                target.rate_limit.retry_after_max_s) == (20, 120.0, 60.0)


@pytest.mark.parametrize("kind", [HttpTarget, AsyncHttpTarget])
def test_an_unknown_keyword_is_refused_naming_the_class(kind: type) -> None:
    with pytest.raises(TypeError, match=rf"^{kind.__name__}\.__init__\(\) got an "
                       r"unexpected keyword argument 'timeout'$"):
        kind(URL, timeout=3)
    with pytest.raises(TypeError, match="'who'"):  # the record's message owner is not one
        kind(URL, who="x")


@pytest.mark.parametrize("kind", [HttpTarget, AsyncHttpTarget])
def test_a_forbidden_header_names_the_class_and_not_the_value(kind: type) -> None:
    with pytest.raises(ValueError) as err:
        kind(URL, headers={"Authorization": "Bearer s3cr3t-token\r"})
    assert str(err.value).startswith(f"{kind.__name__} header 'Authorization'")
    assert "s3cr3t" not in str(err.value)


def test_the_record_refuses_bad_rate_limit_bounds_and_meta_keys() -> None:
    with pytest.raises(ValueError, match="rate_limit_retries must be an integer >= 0"):
        HttpOptions(rate_limit_retries=-1)
    with pytest.raises(ValueError, match="rate_limit_total_s must be a positive number"):
        HttpTarget(URL, rate_limit_total_s=0)
    with pytest.raises(TypeError, match="meta_keys must be a sequence of field names"):
        AsyncHttpTarget(URL, meta_keys="cost_usd")
    with pytest.raises(ValueError, match="retry_rate_limited must be true or false"):
        HttpOptions(retry_rate_limited=1)  # type: ignore[arg-type]


def test_the_records_repr_shows_no_header_value() -> None:
    options = HttpOptions(headers={"X-Api-Key": "k-123456"})
    assert "k-123456" not in repr(options) and "headers" not in repr(options)


def test_the_factory_passes_every_option(tmp_path: Path) -> None:
    target = make_http_target(url=URL, name="svc", asynchronous=True, timeout_s=2.5,
                              meta_keys=["cost_usd"], max_connections=3,
                              max_raw_bytes=None, retry_rate_limited=True,
                              rate_limit_retries=2, retries=4,
                              extract="evalkit_http.base:default_extract")
    assert isinstance(target, AsyncHttpTarget)
    assert (target.name, target.timeout_s, target.meta_keys, target.max_connections,
            target.max_raw_bytes, target.rate_limit.retries, target.retries) == (
        "svc", 2.5, ("cost_usd",), 3, None, 2, 4)
    assert target.retry_rate_limited is True
    assert target.extract.__name__ == "default_extract"
    with pytest.raises(TypeError, match=r"^the http target has no option 'max_retries' "
                       r"\(did you mean 'retries'\?\); its options are url, name, "
                       r"asynchronous, build_payload, "):
        make_http_target(url=URL, max_retries=3)
    with pytest.raises(TypeError, match=r"no option 'timeot_s' \(did you mean 'timeout_s'"):
        make_http_target(url=URL, timeot_s=3)

