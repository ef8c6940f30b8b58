"""Which settings are secrets: the key-name rule and the token-like URL path parts
(evalkit.io.redaction.is_secret_key, redact_path), and an end-to-end check that a custom
target factory's secret kwargs reach no artifact, baseline, history or report file.

The key names are those a user's factory took (``accessKey``, ``key``, ``private_key``,
``bearer``, ``pwd``, ``passphrase``, a DSN with a password, a token in a URL path); each
value is unique to this module, so a value found anywhere is a leak.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.io.redaction import (
    REDACTED,
    is_secret_key,
    key_words,
    mask,
    public_url,
    redact_path,
    redact_structure,
    redact_url,
    redact_urls,
    register_structure_secrets,
)

runner = CliRunner()
_ids = itertools.count()

SECRET_NAMES = [
    "apiKey", "accessKey", "key", "credentials", "private_key", "bearer", "x-api-key",
    "pwd", "passphrase", "dsn", "client_secret", "refresh_token", "AccessToken",
    "APIToken", "auth", "oauth_token", "password", "db_pass", "card_pin", "signingKey",
    "signature", "sessionId", "session", "jwt", "connection_string", "AccountKey",
    "webhook_url", "hmac", "sas", "cookie", "secret_key", "clientKey", "api_key_env",
    # lists of keys, joined *key words, phrases, tokens by their short names
    "api_keys", "apiKeys", "api-keys", "ssh_keys", "privkey", "sslkey", "keyfile",
    "pass_phrase", "seed_phrase", "mnemonic", "github_pat", "userpass", "pem", "jwk",
    "jwks",
]
PLAIN_NAMES = [
    "url", "base_url", "model", "name", "version", "max_tokens", "max_new_tokens",
    "num_tokens", "token_limit", "tokenizer", "author", "timeout_s", "retries",
    "temperature", "top_k", "k", "asynchronous", "build_payload", "extract", "meta_keys",
    "max_connections", "max_response_bytes", "retry_after_max_s", "index_path",
    "sort_key", "id_key", "pass_threshold", "sortkey", "hotkey", "keys", "path",
    "pattern", "patience", "phrase", "seed",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_looking_names_are_secret(name: str) -> None:
    assert is_secret_key(name), key_words(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_settings_the_kernel_records_are_not_secret(name: str) -> None:
    assert not is_secret_key(name), key_words(name)


def test_key_words_split_camel_case_snake_and_kebab() -> None:
    assert key_words("accessKey") == ["access", "key"]
    assert key_words("X-API-Key") == ["x", "api", "key"]
    assert key_words("APIToken") == ["api", "token"]
    assert key_words("private_key") == ["private", "key"]
    assert key_words("db.password") == ["db", "password"]


TOKEN = "Zq7Hx2Lm9Pw4Rt6Yv8Bn3Kc"  # 23 letters and digits: looks like a token


@pytest.mark.parametrize(("url", "shown"), [
    (f"https://hooks.example/services/T1/B2/{TOKEN}", "https://hooks.example/services/T1/B2/"
     f"{REDACTED}"),
    (f"https://api.example/bot123456:{TOKEN}/send", f"https://api.example/bot123456:{REDACTED}"
     "/send"),
    ("https://x.example/runs/123e4567-e89b-12d3-a456-426614174000",
     f"https://x.example/runs/{REDACTED}"),
    # words and numbers: a model, a project, a region, a short segment
    ("https://b.example/model/anthropic.claude-3-5-sonnet-20241022-v2:0/invoke", None),
    ("https://v.example/v1/projects/my-project-123456/locations/us-central1/models/"
     "gemini-1.5-pro:generateContent", None),
    ("http://127.0.0.1:8000/v1/chat/completions", None),
    ("http://h.example/SEKRETkkkk/x", None),
])
def test_token_like_url_path_parts_are_redacted(url: str, shown: str | None) -> None:
    expected = url if shown is None else shown
    assert redact_url(url) == expected
    assert public_url(url) == expected
    assert redact_urls(f"POST {url} failed") == f"POST {expected} failed"
    assert redact_path("/short") == "/short"


def test_path_parameter_values_are_redacted_and_registered() -> None:
    url = "https://h.example/app;jsessionid=zqS3KRT-sess-0001/x"
    assert redact_url(url) == f"https://h.example/app;jsessionid={REDACTED}/x"
    assert redact_urls(f"GET {url} failed") == \
        f"GET https://h.example/app;jsessionid={REDACTED}/x failed"
    assert redact_path("/a;b") == "/a;b"  # a parameter without a value
    register_structure_secrets({"endpoint": url})
    assert "zqS3KRT-sess-0001" not in mask("the session zqS3KRT-sess-0001 expired")


@pytest.mark.parametrize(("text", "shown"), [
    ("Server=h;Password=zqS3KRT-conn-0001;", f"Server=h;Password={REDACTED};"),
    ("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=zqS3KRT-conn-0002==;"
     "EndpointSuffix=core.windows.net",
     f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={REDACTED};"
     "EndpointSuffix=core.windows.net"),
    ("Endpoint=sb://ns.example/;SharedAccessKey=zqS3KRT-conn-0003",
     f"Endpoint=sb://ns.example/;SharedAccessKey={REDACTED}"),
    ("Data Source=h;User ID=u; pwd=zqS3KRT-conn-0004", f"Data Source=h;User ID=u; pwd={REDACTED}"),
    ("jdbc:sqlserver://h;user=u;password=zqS3KRT-conn-0005",
     f"jdbc:sqlserver://h;user=u;password={REDACTED}"),
    ("a=b; c=d", "a=b; c=d"),
])
def test_secret_pairs_of_a_connection_string_are_redacted_under_any_key(
        text: str, shown: str) -> None:
    assert redact_structure({"conn": text}) == {"conn": shown}
    register_structure_secrets({"conn": text})
    secret = text.rpartition("=zqS3KRT")[2]
    if secret != text:
        assert f"zqS3KRT{secret}" not in mask(f"login failed with zqS3KRT{secret}")


def test_a_list_of_keys_is_redacted_whole() -> None:
    assert redact_structure({"api_keys": ["zqS3KRT-k1", "zqS3KRT-k2"], "meta_keys": ["a"]}) \
        == {"api_keys": REDACTED, "meta_keys": ["a"]}


def test_a_path_token_is_registered_and_masked_in_any_text() -> None:
    token = "Pq4Wz8Ty2Nm6Lk0Hg3Df5Sa"
    register_structure_secrets({"endpoint": f"https://hooks.example/x/{token}"})
    assert token not in mask(f"the server said: unknown hook {token}")


def test_structures_redact_the_secret_names_and_keep_the_plain_ones() -> None:
    kwargs = {name: f"value-of-{name}" for name in SECRET_NAMES + PLAIN_NAMES}
    redacted = redact_structure(kwargs)
    assert {k for k, v in redacted.items() if v == REDACTED} == set(SECRET_NAMES)


# ------------------------------------------------------------------ end to end
KWARGS = {
    "apiKey": "zqS3KRT-aaaa-1111", "accessKey": "zqS3KRT-bbbb-2222",
    "key": "zqS3KRT-cccc-3333", "credentials": "zqS3KRT-dddd-4444",
    "private_key": "zqS3KRT-eeee-5555", "bearer": "zqS3KRT-ffff-6666",
    "x-api-key": "zqS3KRT-gggg-7777", "pwd": "zqS3KRT-hhhh-8888",
    "passphrase": "zqS3KRT-iiii-9999", "dsn": "postgres://u:zqS3KRT-jjjj-0000@h/db",
    "url": f"http://h.example/{TOKEN}zqS3KRTkkkk/x?a=zqS3KRT-llll-1212",
    "api_keys": "zqS3KRT-mmmm-1313", "privkey": "zqS3KRT-nnnn-1414",
    "pass_phrase": "zqS3KRT-oooo-1515", "github_pat": "zqS3KRT-pppp-1616",
    "sslkey": "zqS3KRT-qqqq-1717", "mnemonic": "zqS3KRT-rrrr-1818",
    "conn": "Server=h;Password=zqS3KRT-ssss-1919;",
    "session_url": "https://h.example/x;jsessionid=zqS3KRT-tttt-2020",
}
PLAIN = {"model": "gpt-test-mini", "max_tokens": 256, "base_url": "http://127.0.0.1:9/v1"}


def test_factory_secrets_reach_no_artifact_baseline_history_or_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"evalkit_secret_names_{next(_ids)}"
    (tmp_path / f"{module}.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make(**kwargs):\n"
        "    return CallableTarget(lambda case: ['d1'], name='sec')\n"
    )
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "q1", "query": "a", "expected": ["d1"]}\n'
        '{"id": "q2", "query": "b", "expected": ["d2"]}\n')
    kwargs = "\n".join(f"    {k}: '{v}'" for k, v in {**KWARGS, **PLAIN}.items())
    (tmp_path / "evalkit.yaml").write_text(
        f"goldens: goldens.jsonl\noutput: out/sec.jsonl\nmetrics: [recall@1]\n"
        f"target:\n  factory: {module}:make\n  kwargs:\n{kwargs}\n")
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 0.1}\n")
    monkeypatch.chdir(tmp_path)
    outputs = []
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    outputs.append(res.output)
    res = runner.invoke(app, ["baseline", "promote", "out/sec.jsonl", "--to", "b/base.jsonl"])
    assert res.exit_code == 0, res.output
    outputs.append(res.output)
    res = runner.invoke(app, [
        "gate", "-c", "checks.yaml", "-r", "out/sec.jsonl", "-b", "b/base.jsonl",
        "--report", "junit:rep/g.xml", "--report", "markdown:rep/g.md",
        "--report", "json:rep/g.json", "--report", "html:rep/g.html",
        "--report", "history:rep/h.sqlite"])
    assert res.exit_code == 0, res.output
    outputs.append(res.output)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".py"
             and p.name != "evalkit.yaml"]
    texts = [(str(p), p.read_bytes().decode("utf-8", "replace")) for p in files]
    texts += [("output", "\n".join(outputs))]
    assert any(p.name == "h.sqlite" for p in files)
    leaks = [f"{where}: {v}" for where, text in texts
             for v in [*KWARGS.values(), "zqS3KRT", TOKEN] if v in text]
    assert not leaks
    header = (tmp_path / "out" / "sec.jsonl").read_text().splitlines()[0]
    for value in ("gpt-test-mini", '"max_tokens": "256"', "http://127.0.0.1:9/v1",
                  f'"url": "http://h.example/{REDACTED}/x?{REDACTED}"'):
        assert value in header
