"""The one masking of secrets (evalkit.io.redaction): by value, in every shown form, above a
minimum length, in exception chains and in the records of any logger.

Each test registers values of its own (the registry lasts for the process), written so
that they cannot occur in another test's text.
"""

from __future__ import annotations

import io
import json
import logging
import traceback

import pytest

from evalkit.io.redaction import (
    MIN_SECRET_CHARS,
    REDACTED,
    mask,
    redact_structure,
    register_secret,
    register_structure_secrets,
    scrub_exception,
)


def test_a_secret_is_masked_in_each_form_it_is_shown_in() -> None:
    secret = "rdx-FORMS-a1b2c3\r\n"
    assert register_secret(secret)
    shown = {
        "raw": f"token {secret} end",
        "repr": repr(f"token {secret}"),  # 'token rdx-FORMS-a1b2c3\r\n'
        "repr of repr": repr(ValueError(repr(secret))),
        "json": json.dumps({"t": secret}),
        "url": "https://h/x?t=rdx-FORMS-a1b2c3%0D%0A",
        "stripped": "Bearer rdx-FORMS-a1b2c3",
        "bytes repr": repr(secret.encode()),
    }
    for name, text in shown.items():
        masked = mask(text)
        assert "rdx-FORMS-a1b2c3" not in masked, name
        assert REDACTED in masked, name


def test_short_values_are_not_registered() -> None:
    short = "rdx-sh"  # 6 characters
    assert len(short) < MIN_SECRET_CHARS
    assert not register_secret(short)
    assert mask(f"x {short} y") == f"x {short} y"
    assert not register_secret(None)
    assert register_secret("rdx-long-enough")
    assert not register_secret("rdx-long-enough")  # already known


def test_the_exception_chain_is_masked_in_place() -> None:
    secret = "rdx-CHAIN-99887766\n"
    register_secret(secret)
    try:
        try:
            raise OSError(f"Illegal header value b'Bearer {secret}'")
        except OSError as inner:
            raise RuntimeError(f"wrapped: {inner!r}") from inner
    except RuntimeError as outer:
        outer.add_note(f"note with {secret.strip()}")
        text = "".join(traceback.format_exception(scrub_exception(outer)))
    assert "rdx-CHAIN" not in text
    assert text.count(REDACTED) >= 3


def test_records_of_any_logger_are_masked_with_their_tracebacks() -> None:
    secret = "rdx-LOGS-5544332211"
    register_secret(secret)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("some.library.nobody.configured")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        logger.debug("sending %s", {"authorization": f"Bearer {secret}"})
        try:
            raise ValueError(f"bad key {secret!r}")
        except ValueError:
            logger.exception("failed")
        logger.warning("stack", stack_info=True, extra={"k": secret})
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "sending" in text and "ValueError: bad key" in text and "Traceback" in text
    assert "rdx-LOGS" not in text


def test_settings_structures_are_redacted_and_their_secrets_registered() -> None:
    kwargs = {
        "url": "https://u:rdx-PASSWORD-1@h.example/x?api_key=rdx-QUERYVAL-2&k=10",
        "headers": {"Authorization": "Bearer rdx-HEADER-3", "Accept": "application/json"},
        "client_secret": "rdx-KEYED-4",
        "timeout_s": 5,
    }
    assert redact_structure(kwargs) == {
        "url": "https://h.example/x?<redacted>",
        "headers": {"Authorization": REDACTED, "Accept": REDACTED},
        "client_secret": REDACTED,
        "timeout_s": 5,
    }
    register_structure_secrets(kwargs)
    text = mask(json.dumps(kwargs))
    for value in ("rdx-PASSWORD-1", "rdx-QUERYVAL-2", "rdx-HEADER-3", "rdx-KEYED-4"):
        assert value not in text
    assert "application/json" in text  # not a credential: not registered
    assert "k=10" in mask("k=10")


def test_redact_url_drops_user_info_and_query_and_leaves_other_values() -> None:
    from evalkit.io.redaction import redact_url

    assert redact_url("http://user:sk-URL-SECRET-55@127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"
    assert redact_url("http://127.0.0.1:9/v1?api-key=sk-QS-SECRET-66#f") == \
        "http://127.0.0.1:9/v1?<redacted>"
    assert redact_url("postgresql://u:pw@db/x") == "postgresql://db/x"
    assert redact_url("${JUDGE_URL}") == "${JUDGE_URL}"


@pytest.mark.parametrize(("name", "secret"), [
    ("MLFLOW_TRACKING_TOKEN", True), ("MLFLOW_TRACKING_PASSWORD", True),
    ("OPENAI_API_KEY", True), ("AWS_SECRET_ACCESS_KEY", True), ("HF_TOKEN", True),
    ("DB_PWD", True), ("MYAPIKEY", True), ("TOKENIZERS_PARALLELISM", False),
    ("MLFLOW_TRACKING_USERNAME", False), ("HOME", False), ("PATH", False),
    ("KEYBOARD_LAYOUT", False), ("HOTKEY", False), ("PWD", False), ("OLDPWD", False),
    ("SSL_KEY_FILE", False), ("GOOGLE_APPLICATION_CREDENTIALS", False),
    ("TOKEN_PATH", False), ("SECRETS_DIR", False),
])
def test_environment_variables_named_as_secrets(name: str, secret: bool) -> None:
    from evalkit.io.environment_secrets import is_secret_variable

    assert is_secret_variable(name) is secret


def test_environment_secrets_are_masked_with_their_basic_form() -> None:
    import base64

    from evalkit.io.redaction import register_environment_secrets

    env = {"SVC_TOKEN": "tok-env-ABCDEF123456", "SVC_USERNAME": "alice",
           "SVC_PASSWORD": "pw-env-QWERTY98765", "SVC_HOST": "db.internal.example"}
    register_environment_secrets(env)
    basic = base64.b64encode(b"alice:pw-env-QWERTY98765").decode()
    text = (f"token {env['SVC_TOKEN']} pass {env['SVC_PASSWORD']} basic {basic} "
            f"pair alice:pw-env-QWERTY98765 host {env['SVC_HOST']}")
    assert mask(text) == ("token <redacted> pass <redacted> basic <redacted> "
                          "pair <redacted> host db.internal.example")


def test_the_working_directory_and_key_file_paths_are_not_masked() -> None:
    from evalkit.io.redaction import register_environment_secrets

    register_environment_secrets({"PWD": "/home/ci/project-dir", "OLDPWD": "/home/ci/old-dir",
                                  "SSL_KEY_FILE": "/etc/ssl/private/site.pem"})
    text = "/home/ci/project-dir/out/run.jsonl, /home/ci/old-dir, /etc/ssl/private/site.pem"
    assert mask(text) == text
