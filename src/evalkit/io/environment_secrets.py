"""Which environment variables hold secrets, and the forms those secrets are sent in.

:func:`evalkit.io.redaction.mask` registers them (:func:`environment_secrets`) before it
first masks anything, so that a credential only the environment holds
(``MLFLOW_TRACKING_TOKEN``, ``MLFLOW_TRACKING_PASSWORD``, an API key a client library
reads itself) is masked when a server echoes it back, in each form it was sent. Only the
standard library is imported.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping

#: Text that makes a word of a variable's name secret wherever it occurs in the word.
SECRET_VARIABLE_FRAGMENTS: tuple[str, ...] = ("token", "secret", "passw", "passphrase")
#: Words ending in ``key`` that are not a key (``hotkey``, ``monkey``): for variables
#: and settings keys alike (:func:`evalkit.io.redaction.is_secret_key`).
PLAIN_KEY_WORDS = frozenset({"hotkey", "monkey", "turkey", "donkey", "jockey", "hockey",
                             "whiskey"})
#: The last words of a variable holding the user of a password variable beside it
#: (``MLFLOW_TRACKING_USERNAME`` for ``MLFLOW_TRACKING_PASSWORD``).
_USER_WORDS = ("USERNAME", "USER")
_PASSWORD_WORDS = ("PASSWORD", "PASSWD", "PASS", "PWD")
#: Last words of a variable that names where a secret is, not the secret
#: (``SSL_KEY_FILE``, ``TOKEN_PATH``).
_LOCATION_WORDS = frozenset({"file", "path", "dir", "directory", "home"})


def is_secret_variable(name: str) -> bool:
    """Whether the environment variable ``name`` holds a secret: a word of its name
    (split at ``_``, ``-`` and ``.``) contains ``token`` (not ``tokenizer``), ``secret``,
    ``passw`` or ``passphrase``, is ``pwd``/``pass``, or is or ends in ``key``
    (``API_KEY``, ``APIKEY``; not ``hotkey``): ``MLFLOW_TRACKING_TOKEN``,
    ``MLFLOW_TRACKING_PASSWORD``, ``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``. Not
    ``PWD`` (the working directory), nor a name ending in ``FILE``, ``PATH``, ``DIR``,
    ``DIRECTORY`` or ``HOME`` (where a secret is kept, not the secret)."""
    words = re.split(r"[_.\-]+", name.lower())
    if name.upper() == "PWD" or words[-1] in _LOCATION_WORDS:
        return False  # the working directory; a path to a key file, not the key
    for word in words:
        if word.startswith("tokeniz"):
            continue
        if any(f in word for f in SECRET_VARIABLE_FRAGMENTS) or word in ("pwd", "pass"):
            return True
        if word.endswith("key") and word not in PLAIN_KEY_WORDS:
            return True
    return False


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secrets of ``environ`` (default ``os.environ``): the value of every variable
    whose name says it is a secret (:func:`is_secret_variable`); for a password variable
    with a user variable beside it (``X_PASSWORD`` and ``X_USERNAME`` or ``X_USER``),
    also ``user:password`` and its base64, the credential HTTP Basic authentication
    sends."""
    env = os.environ if environ is None else environ
    out: list[str] = []
    for name, value in list(env.items()):
        if not value or not is_secret_variable(name):
            continue
        out.append(value)
        upper = name.upper()
        word = next((w for w in _PASSWORD_WORDS if re.search(rf"(^|_){w}$", upper)), None)
        if word is None:
            continue
        stem = upper[:len(upper) - len(word)]
        for user in (env.get(stem + w) for w in _USER_WORDS):
            if user:
                pair = f"{user}:{value}"
                out += [pair, base64.b64encode(pair.encode()).decode()]
    return out


__all__ = ["PLAIN_KEY_WORDS", "SECRET_VARIABLE_FRAGMENTS", "environment_secrets",
           "is_secret_variable"]
