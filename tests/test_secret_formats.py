"""Secrets recognised by their form (``evalkit.io.redaction.redact_secret_values``): a key
under a harmless-looking setting, in a log record or in an error message is masked in the
run header, the rows, the logs and ``--json`` output of a real ``evalkit run``; ordinary
values (ids, paths, model names, hashes, words) are kept.

The formats are those gitleaks and detect-secrets flag (Anthropic, OpenAI, GitHub, Slack,
AWS, Google keys, PEM private keys, JSON web tokens, ``Bearer`` credentials), and HTTP
Basic credentials (base64 of ``user:password``, RFC 7617) after ``Basic`` or alone. The
values below are made up in those forms; the base64 ones are encoded here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from evalkit.io.redaction import REDACTED, mask, redact_structure
from evalkit.io.secret_formats import redact_secret_values

SECRETS = {
    "anthropic": "sk-ant-api03-Q7vR2xLm9PzT4kWb8NcY3dHf6JsA1uE5gO0iKp",
    "openai": "sk-Zq3Xw8Rt5Yu2Io9Pa6Sd4Fg7Hj1Kl0ZxCvBn",
    "openai_project": "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
    "github": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github_oauth": "gho_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8",
    "github_fine": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws": "AKIAZ3Q5W7E9R1T3Y5U7",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
}
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU0x9Q\n"
       "-----END OPENSSH PRIVATE KEY-----")
PEM_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU0x9Q"
BEARER = "Q9w8E7r6T5y4U3i2O1p0"
#: values that are not secrets and must come through as they are
ORDINARY = [
    "claude-3-5-sonnet-20241022", "gpt-4o-mini-2024-07-18", "sk-learn-compatible-wrapper",
    "task-1234567890abcdefghijklmnop", "/data/runs/run.vaswani.bm25.txt",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "123e4567-e89b-12d3-a456-426614174000", "AKIA", "Bearer authentication is used",
    "msmarco-passage/trec-dl-2019/judged", "ghp_", "my-project-123456", "eyJ", "q1",
    "ask-the-oracle-about-it-2024", "BM25 k1=0.9 b=0.4",
]


@pytest.fixture(autouse=True)
def _no_registered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values other tests of this process registered (``register_secret`` holds them for
    the process's life, e.g. a made-up key ``...1234567890...``) would be masked by
    :func:`mask` too; these tests check the forms alone."""
    from evalkit.io import redaction

    monkeypatch.setattr(redaction, "_values", set())
    monkeypatch.setattr(redaction, "_forms", ())


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_format_is_masked_in_text(name: str) -> None:
    text = f"calling with {SECRETS[name]}, then stopping"
    assert redact_secret_values(text) == f"calling with {REDACTED}, then stopping"
    assert mask(json.dumps({"v": SECRETS[name]})) == json.dumps({"v": REDACTED})


def test_a_pem_private_key_is_masked_whole_and_without_its_end_line() -> None:
    assert redact_secret_values(f"key: {PEM} done") == f"key: {REDACTED} done"
    # as a JSON string (newlines escaped), and cut short before its END line
    line = json.dumps({"k": PEM, "n": 1})
    assert json.loads(mask(line)) == {"k": REDACTED, "n": 1}
    cut = json.dumps({"k": PEM.split("-----END")[0], "n": 1})
    assert json.loads(mask(cut)) == {"k": REDACTED, "n": 1}


def test_a_bearer_credential_is_masked_and_the_word_kept() -> None:
    assert mask(f"Authorization: Bearer {BEARER}") == f"Authorization: Bearer {REDACTED}"
    assert mask(f"bearer {BEARER}") == f"bearer {REDACTED}"


@pytest.mark.parametrize("value", ORDINARY)
def test_ordinary_values_are_kept(value: str) -> None:
    assert redact_secret_values(value) == value
    assert mask(value) == value
    assert redact_structure({"model": value}) == {"model": value}


def test_a_settings_structure_masks_a_secret_under_a_harmless_key() -> None:
    settings = {"llm": SECRETS["anthropic"], "nested": [{"x": SECRETS["github"]}],
                "model": "claude-3-5-sonnet-20241022"}
    assert redact_structure(settings) == {"llm": REDACTED, "nested": [{"x": REDACTED}],
                                          "model": "claude-3-5-sonnet-20241022"}


def b64(text: str, padded: bool = True) -> str:
    encoded = base64.b64encode(text.encode()).decode()
    return encoded if padded else encoded.rstrip("=")


#: HTTP Basic credentials (``user:password``, base64) standing alone
BASIC_ALONE = [b64("user:password"), b64("admin:hunter2"), b64("svc-reader:Xy9!q_w"),
               b64("alice:correcthorse"), b64("user:password", padded=False),
               b64("me@example.org:pa$$w0rd")]
#: base64 values that decode to something else than ``user:password``, and ordinary
#: values of base64's alphabet (hex digests, UUIDs, words, numbers, paths)
NOT_BASIC = [
    b64("no colon in this text"), b64("passwordonly123"), b64("user: password"),
    b64(":password123"), b64("username12:"), b64("a:b:c:d:e:f"), b64("ab:cd"),
    b64("tab\there:pass"), b64("caf\u00e9:cr\u00e8me"),
    hashlib.md5(b"x").hexdigest(), hashlib.sha1(b"x").hexdigest(),
    hashlib.sha256(b"x").hexdigest(), str(uuid.UUID(int=12345678901234567890)),
    uuid.UUID(int=98765432109876543210).hex, "representations", "construction",
    "internationalization", "ThisIsAnOrdinaryCamelCaseIdentifier", "12345678901234567890",
    "/data/runs/run.vaswani.bm25.txt", "runs/2024/dl19/bm25+rm3/run.txt",
    "msmarco_passage_00001234_9876", "Basic settings are fine", "Basic authentication",
    "Basic usage", "dGVzdA==",
]


@pytest.mark.parametrize("credential", BASIC_ALONE)
def test_a_basic_credential_is_masked_alone_and_after_basic(credential: str) -> None:
    assert redact_secret_values(credential) == REDACTED
    assert redact_secret_values(f"auth: {credential} sent") == f"auth: {REDACTED} sent"
    assert redact_secret_values(f"?auth={credential}&x=1") == f"?auth={REDACTED}&x=1"
    assert mask(json.dumps({"v": credential})) == json.dumps({"v": REDACTED})
    assert (redact_secret_values(f"Authorization: Basic {credential}")
            == f"Authorization: Basic {REDACTED}")


def test_after_basic_any_credential_is_masked_even_short_or_without_digits() -> None:
    # alone, these are too short (under 8 bytes) or not ``user:password``
    for text in ("a:b", "user:", ":secret", "us er:pass word", "caf\u00e9:cr\u00e8me"):
        assert redact_secret_values(f"Basic {b64(text)}") == f"Basic {REDACTED}", text
    assert redact_secret_values(b64("a:b")) == b64("a:b")


@pytest.mark.parametrize("value", NOT_BASIC)
def test_values_that_are_no_basic_credential_are_kept(value: str) -> None:
    assert redact_secret_values(value) == value
    assert mask(f"value {value} kept") == f"value {value} kept"


def test_a_base64_credential_within_a_longer_token_is_kept() -> None:
    # part of an id or a path: not a value standing alone
    for text in (f"id_{b64('user:password')}", f"{b64('user:password')}-2",
                 f"x{b64('user:password')}"):
        assert redact_secret_values(text) == text


def test_generated_ids_and_digests_are_kept() -> None:
    values = [f(str(i).encode()).hexdigest() for i in range(2000)
              for f in (hashlib.md5, hashlib.sha1, hashlib.sha256)]
    values += [str(uuid.UUID(int=i * 7919 ** 9)) for i in range(2000)]
    values += [base64.b64encode(hashlib.sha256(str(i).encode()).digest()).decode()
               for i in range(2000)]
    assert [v for v in values if redact_secret_values(v) != v] == []


FACTORY = '''
import logging
from evalkit import CallableTarget

def make(**kw):
    logging.getLogger("fac").warning("connecting with %s", kw)
    def answer(query):
        if "y" in str(query):
            raise RuntimeError("upstream refused " + kw["llm"] + " and " + kw["gh"])
        return ["d1"]
    return CallableTarget(answer, name="t")
'''


def test_a_real_run_shows_no_secret_in_artifact_logs_or_json(tmp_path: Path) -> None:
    kwargs = {**SECRETS, "llm": SECRETS["anthropic"], "gh": SECRETS["github"], "pem": PEM,
              "auth_line": f"Bearer {BEARER}", "model": "claude-3-5-sonnet-20241022",
              "index": "/data/index/msmarco-v1"}
    (tmp_path / "fac.py").write_text(FACTORY)
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "q1", "query": "x", "expected": ["d1"]}\n'
        '{"id": "q2", "query": "y", "expected": ["d2"]}\n')
    (tmp_path / "evalkit.yaml").write_text(json.dumps({
        "goldens": "goldens.jsonl", "target": {"factory": "fac:make", "kwargs": kwargs},
        "metrics": ["recall@10"], "output": "out/run.jsonl"}))
    code = ("import logging; logging.basicConfig(level=logging.DEBUG); "
            "from evalkit.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", code, "run", "--no-progress", "--json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    artifact = (tmp_path / "out" / "run.jsonl").read_text()
    assert "connecting with" in done.stderr  # the log record was written, masked
    assert "upstream refused" in artifact  # the failed case's error, masked
    json.loads(done.stdout)
    secrets = [*SECRETS.values(), PEM_BODY, BEARER]
    for where, text in {"artifact": artifact, "stdout": done.stdout,
                        "stderr": done.stderr}.items():
        for secret in secrets:
            assert secret not in text, (where, secret)
    header = json.loads(artifact.splitlines()[0])
    shown = header["config"]["target_kwargs"]
    assert shown["llm"] == shown["pem"] == REDACTED
    assert shown["auth_line"] == REDACTED  # a secret-looking key: the whole value
    assert shown["model"] == "claude-3-5-sonnet-20241022"
    assert shown["index"] == "/data/index/msmarco-v1"
