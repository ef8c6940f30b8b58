"""The ``http`` target factory of eval configs: import strings and ``${VAR}`` headers.

``evalkit.yaml`` names the target ``factory: http`` and passes ``kwargs`` that are
:class:`~evalkit_http.target.HttpTarget`'s, with two conveniences for a text file:
``build_payload`` and ``extract`` may be import strings (``"pkg.mod:fn"``), and a header
value may refer to environment variables as ``${NAME}``, so that tokens stay out of
config files. The values ``${NAME}`` expands to are registered as secrets
(:mod:`evalkit.io.redaction`), so they are masked wherever they could be shown.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from typing import Any

from evalkit.io.model_errors import Problem, did_you_mean
from evalkit.io.redaction import ENV_REFERENCE, register_secret
from evalkit_http.async_target import AsyncHttpTarget
from evalkit_http.options import OPTION_NAMES
from evalkit_http.target import HttpTarget


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
            raise Problem(("headers", name), f"header {name!r} refers to ${{{var}}}, which "
                          f"is not set; export {var} before the run")
        if not os.environ[var].strip():
            raise Problem(("headers", name), f"header {name!r} refers to ${{{var}}}, which "
                          f"is {'empty' if not os.environ[var] else 'only white space'}; "
                          f"set {var} to the value to send")
        register_secret(os.environ[var])  # masked wherever it could be shown
        return os.environ[var]

    return ENV_REFERENCE.sub(sub, value)


def _header_text(name: str, value: Any) -> str:
    """A header value of the config as text: a string or a number; a list, a table or a
    boolean is refused, naming the header and never the value (a secret)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise Problem(("headers", name), f"header {name!r}: its value must be text, not "
                  f"{type(value).__name__} (the value is not shown: header values are "
                  "secrets); write it as one string")


class UnknownOptionError(Problem, TypeError):
    """An option the ``http`` factory does not take (a ``TypeError``, as Python's own for
    an unexpected keyword argument, and a :class:`~evalkit.io.model_errors.Problem`
    located at the key)."""


def _check_names(options: dict[str, Any]) -> None:
    known = ["url", "name", "asynchronous", *OPTION_NAMES]
    for key in options:
        if key not in known:
            raise UnknownOptionError((key,), f"the http target has no option {key!r}"
                          f"{did_you_mean(key, known)}; its options are {', '.join(known)}")


def make_http_target(*, url: str, name: str | None = None, asynchronous: bool = False,
                     **options: Any) -> HttpTarget | AsyncHttpTarget:
    """The ``http`` target factory (for eval configs).

    Takes ``url``, ``name`` and the options of :class:`~evalkit_http.options.HttpOptions`
    as keywords, with two conveniences for a text file: ``build_payload`` and ``extract``
    may be import strings (``"pkg.mod:fn"``), and header values may refer to environment
    variables as ``${NAME}``, so that tokens stay out of config files; the values they
    expand to are registered as secrets (:mod:`evalkit.io.redaction`).
    ``asynchronous: true`` builds an :class:`~evalkit_http.async_target.AsyncHttpTarget`
    (one event loop, no thread per call in flight) instead of an :class:`HttpTarget`.

    Raises:
        ValueError, TypeError, ImportError: a bad import string or argument, or a URL or
            header that cannot be sent (see :class:`HttpTarget`).
        UnknownOptionError: an unknown option (with a did-you-mean; a ``TypeError``).
        evalkit.io.model_errors.Problem: a header refers to an environment variable that
            is unset or empty (the variable is named, never its value), or its value is
            not text (a list, a table); ``loc`` is the key under ``kwargs`` (a
            ``ValueError``).
    """
    _check_names(options)
    for key in ("build_payload", "extract"):
        if isinstance(options.get(key), str):
            options[key] = _import_string(options[key], key)
    options["headers"] = {str(k): _expand_env(str(k), _header_text(str(k), v))
                          for k, v in (options.get("headers") or {}).items()}
    if not isinstance(asynchronous, bool):
        raise ValueError(f"asynchronous must be true or false, got {asynchronous!r}")
    kind = AsyncHttpTarget if asynchronous else HttpTarget
    return kind(url, name, **options)


__all__ = ["UnknownOptionError", "make_http_target"]
