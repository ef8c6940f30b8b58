"""evalkit.io.headers: header names and values checked against HTTP's grammar (RFC 9110,
sections 5.1 and 5.5) before anything is sent, and no message quoting a value."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.io.headers import check_headers, header_problem

SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize("value", [SECRET, "Bearer " + SECRET, "a\tb", "x", "",
                                   "!#$%&'*+-.^_`|~"])
def test_values_http_allows_pass(value: str) -> None:
    assert header_problem(value) is None
    check_headers({"Authorization": value})


@pytest.mark.parametrize(("value", "says"), [
    (SECRET + "\r", "a carriage return (CR, \\r) at its end"),
    (SECRET + "\n", "a line feed (LF, \\n) at its end"),
    (" " + SECRET, "a space at its start"),
    ("ab\x00cd", "a NUL byte at character 3 of 5"),
    ("caf\u00e9", "the non-ASCII character U+00E9 at its end"),
    ("a\x7fb", "the control character U+007F at character 2 of 3"),
])
def test_forbidden_characters_are_named_without_the_value(value: str, says: str) -> None:
    problem = header_problem(value)
    assert problem is not None and says in problem
    with pytest.raises(ValueError) as exc:
        check_headers({"Authorization": value}, "HttpTarget")
    assert str(exc.value).startswith("HttpTarget header 'Authorization': ")
    assert SECRET not in str(exc.value) and "caf" not in str(exc.value)


@pytest.mark.parametrize("name", ["X Key", "X:Key", "", "Schl\u00fcssel"])
def test_names_that_are_not_tokens_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a valid HTTP header name"):
        check_headers({name: "v"})


@pytest.mark.parametrize(("value", "hint"), [
    (["text/html", "application/json"], "joined by ', '"),
    (("a", "b"), "joined by ', '"),
    (42, "give it as text"),
    ({"k": "v"}, "give it as text"),
])
def test_a_value_that_is_not_text_says_how_to_write_it(value: Any, hint: str) -> None:
    with pytest.raises(ValueError) as exc:
        check_headers({"Accept": value})
    message = str(exc.value)
    assert f"its value must be text, not {type(value).__name__}" in message
    assert hint in message
