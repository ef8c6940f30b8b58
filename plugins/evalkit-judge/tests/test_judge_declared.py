"""Judges declared in the eval config (``judges:``), through ``evalkit`` in subprocesses
against a Chat Completions server on 127.0.0.1; and a provider added by another package
through the entry-point group ``evalkit_judge.providers``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import LLMJudge
from evalkit_judge.testing import ChatCompletionsServer, chat_tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetResponse

KEY = "sk-declared-judge-key-7f3a91"
ORG = "literal-org-header-value-5521"
SCORES = {"c0": 2, "c1": 5, "c2": 4}

TARGETS = '''
from evalkit.data.targets import CallableTarget


def make_target():
    return CallableTarget(lambda case: "an answer to " + case.query, name="echo")
'''

CONFIG = '''
goldens: cases.jsonl
target: {factory: "project_targets:make_target"}
judges:
  - name: unhelpfulness
    provider: openai
    model: gpt-test
    base_url: ${JUDGE_URL}
    api_key_env: JUDGE_KEY
    headers: {X-Org: ORG_VALUE}
    rubric: {file: rubrics/unhelpful.md}
    higher_is_better: false
    cache: judge.sqlite
    prices: {gpt-test: [1.0, 5.0]}
    retries: 1
    max_tokens_field: max_completion_tokens
metrics: [unhelpfulness]
output: runs/judged.jsonl
'''.replace("ORG_VALUE", ORG)


def grade(request: dict[str, Any]) -> dict[str, Any]:
    text = request["messages"][-1]["content"]
    case = next(c for c in SCORES if f"question {c}\n" in text)
    return chat_tool_reply(SCORES[case], model="gpt-test")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ChatCompletionsServer, dict[str, str]]]:
    root = tmp_path / "project"
    (root / "rubrics").mkdir(parents=True)
    (root / "rubrics" / "unhelpful.md").write_text("5: the answer does not help. 1: it "
                                                   "answers the question.\n")
    (root / "project_targets.py").write_text(textwrap.dedent(TARGETS))
    (root / "evalkit.yaml").write_text(textwrap.dedent(CONFIG))
    (root / "cases.jsonl").write_text("".join(
        json.dumps({"id": c, "query": f"question {c}"}) + "\n" for c in SCORES))
    with ChatCompletionsServer(grade) as server:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update({"JUDGE_URL": server.api_base, "JUDGE_KEY": KEY,
                    "PYTHONPATH": str(root), "COLUMNS": "200"})
        yield root, server, env


def evalkit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def header(path: Path) -> dict[str, Any]:
    with path.open() as fh:
        first: dict[str, Any] = json.loads(fh.readline())
    return first


def test_a_declared_judge_runs_and_its_definition_travels_with_the_run(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]], tmp_path: Path) -> None:
    root, server, env = project
    done = evalkit(root, env, "run", "--no-progress")
    assert done.returncode == 0, done.stderr
    # (2 + 5 + 4) / 3
    assert "unhelpfulness    3.6667" in done.stdout
    artifact = root / "runs" / "judged.jsonl"
    head = header(artifact)
    assert head["metrics"]["unhelpfulness"]["provider"] == "evalkit-judge"
    version = head["metrics"]["unhelpfulness"]["version"]
    record = head["details"]["unhelpfulness"]["judge"]
    assert record["name"] == "unhelpfulness" and record["higher_is_better"] is False
    assert record["provider"] == "openai" and record["base_url"] == "${JUDGE_URL}"
    assert record["api_key_env"] == "JUDGE_KEY" and record["headers"] == {"X-Org": "<redacted>"}
    assert record["rubric"].startswith("5: the answer does not help.")
    assert record["prices"]["gpt-test"]["input"] == 1.0
    assert version == f"judge-{record['definition']}"
    assert len(server.requests) == 3
    # the output cap under the name o-series models require, and in the header
    assert server.requests[0]["max_completion_tokens"] == 1024
    assert "max_tokens" not in server.requests[0]
    assert record["max_tokens_field"] == "max_completion_tokens"
    assert server.headers[0]["x-org"] == ORG and server.headers[0]["authorization"] == \
        f"Bearer {KEY}"

    # elsewhere, without the config: rescore, compare and gate find the judge in the header
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(artifact, elsewhere / "a.jsonl")
    other = RunResult.load(artifact)  # as another run of the same values (a copy of the
    other.name = "b"                  # run gated is refused as its baseline)
    other.save(elsewhere / "b.jsonl")
    rescored = evalkit(elsewhere, env, "rescore", "a.jsonl", "-m", "unhelpfulness")
    assert rescored.returncode == 0, rescored.stderr
    assert "unhelpfulness    3.6667" in rescored.stdout
    assert len(server.requests) == 3  # every grade from the cache the header names
    assert header(elsewhere / "a.jsonl")["metrics"]["unhelpfulness"]["version"] == version
    compared = evalkit(elsewhere, env, "compare", "a.jsonl", "b.jsonl", "-m",
                       "unhelpfulness", "--json")
    assert compared.returncode == 0, compared.stderr
    (elsewhere / "checks.yaml").write_text(textwrap.dedent('''
        checks:
          - id: judge_holds
            metric: unhelpfulness
            vs_baseline: no_significant_regression
          - id: judge_ceiling
            metric: unhelpfulness
            op: "<="
            threshold: 4.0
    '''))
    gated = evalkit(elsewhere, env, "gate", "--checks", "checks.yaml", "--run", "a.jsonl",
                    "--baseline", "b.jsonl")
    # the polarity came from the header (lower is better), so the baseline check reached
    # its test; on 3 cases no test can fail, so it is not judged and the gate exits 2
    assert gated.returncode == 2, gated.stdout + gated.stderr
    assert "judge_ceiling: pass" in gated.stdout
    assert "judge_holds: error" in gated.stdout
    assert "cannot fail whatever the data" in gated.stdout
    listed = evalkit(elsewhere, env, "compare", "a.jsonl", "b.jsonl", "-m", "unhelpfulness")
    assert "unhelpfulness" in listed.stdout

    # no secret anywhere: outputs, artifacts, the cache
    outputs = [done, rescored, compared, gated, listed]
    texts = [p.stdout + p.stderr for p in outputs]
    files = [p for p in [*root.rglob("*"), *elsewhere.rglob("*")]
             if p.is_file() and p.name != "evalkit.yaml"]  # the user's own file holds it
    for secret in (KEY, ORG):
        assert not any(secret in t for t in texts), secret
        for f in files:
            assert secret.encode() not in f.read_bytes(), (secret, f)


def test_the_config_schema_includes_judges(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]]) -> None:
    root, _, env = project
    done = evalkit(root, env, "schema", "config")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    judges = schema["properties"]["judges"]
    entry = schema["$defs"]["JudgeEntry"]
    assert "judges" in json.dumps(judges)
    assert {"name", "model", "higher_is_better", "rubric"} <= set(entry["required"])
    assert {"provider", "base_url", "api_key_env", "headers", "scale", "cache", "prices",
            "retries", "timeout", "temperature", "grade_via"} <= set(entry["properties"])


@pytest.mark.parametrize(("edit", "message"), [
    (("    retries: 1\n", "    retries: 1\n    retry: 2\n"),
     "evalkit.yaml:16: key 'judges[0].retry': unknown key"),
    (("    higher_is_better: false\n", ""),
     "key 'judges[0].higher_is_better': missing (required)"),
    (("provider: openai", "provider: openia"), "no judge provider 'openia'; known: "
     "anthropic, openai"),
    (("name: unhelpfulness", "name: exact_match"), "metric name 'exact_match' is already "
     "provided by evalkit-text"),
    (("rubrics/unhelpful.md", "rubrics/missing.md"), "rubric file"),
    (("{file: rubrics/unhelpful.md}", '{file: ""}'), "evalkit.yaml:{rubric}: key "
     "'judges[0].rubric': the rubric file name is empty; give the rubric file's path, "
     "relative to the config (rubric: {file: rubrics/correctness.md}), or the rubric "
     "text itself"),
])
def test_a_bad_judge_entry_is_refused_with_its_file_and_line(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]],
        edit: tuple[str, str], message: str) -> None:
    root, server, env = project
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace(*edit))
    rubric = 1 + next(i for i, line in enumerate(config.read_text().splitlines())
                      if "rubric:" in line)
    message = message.replace("{rubric}", str(rubric))
    done = evalkit(root, env, "run", "--no-progress")
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "evalkit.yaml:" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert server.requests == []


def listing(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    done = evalkit(root, env, "plugins", "list", "--json", *args)
    out: dict[str, Any] = json.loads(done.stdout)
    out["returncode"], out["stderr"] = done.returncode, done.stderr
    return out


def test_plugins_list_shows_the_declared_judges_as_metrics(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]], tmp_path: Path) -> None:
    root, server, env = project
    found = listing(root, env, "--check")  # evalkit.yaml of the working directory
    assert found["returncode"] == 0, found["stderr"]
    assert found["eval_config"] == str(root / "evalkit.yaml")
    judge = next(n for n in found["names"] if n["name"] == "unhelpfulness")
    assert (judge["kind"], judge["polarity"]) == ("metric", "lower")
    assert judge["distribution"] == "evalkit-judge"
    assert judge["definition_version"].startswith("judge-")
    text = evalkit(root, env, "plugins", "list")
    assert text.returncode == 0, text.stderr
    row = next(line.split() for line in text.stdout.splitlines()
               if line.split()[:1] == ["unhelpfulness"])
    assert row[1:3] == ["metric", "lower"] and "evalkit-judge" in row
    assert f"eval config: {root / 'evalkit.yaml'}" in text.stdout
    # from another folder, the file named by --eval-config
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert "unhelpfulness" not in {n["name"] for n in listing(elsewhere, env)["names"]}
    named = listing(elsewhere, env, "--eval-config", str(root / "evalkit.yaml"))
    assert "unhelpfulness" in {n["name"] for n in named["names"]}
    assert server.requests == []  # listing never asks the model
    assert not any(KEY in t or ORG in t for t in (text.stdout, text.stderr,
                                                  json.dumps(found), json.dumps(named)))


def test_plugins_list_shows_a_declared_judge_clash_as_a_conflict(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]]) -> None:
    root, _, env = project
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace("name: unhelpfulness", "name: exact_match"))
    found = listing(root, env, "--check")
    assert found["returncode"] == 1 and not found["ok"]
    (conflict,) = found["conflicts"]
    assert conflict["name"] == "exact_match"
    assert {p["distribution"] for p in conflict["providers"]} == {"evalkit-text",
                                                                   "evalkit-judge"}
    assert "exact_match" not in {n["name"] for n in found["names"]}  # blocked


def test_plugins_list_warns_of_an_eval_config_it_cannot_read(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]]) -> None:
    root, _, env = project
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace("    higher_is_better: false\n", ""))
    found = listing(root, env)
    assert found["returncode"] == 0  # the listing is still made
    # line 5: the entry (the file opens with an empty line)
    where = f"{config}:5: key 'judges[0].higher_is_better': missing (required)"
    assert found["eval_config_error"] == where
    assert found["stderr"] == f"warning: {where}; the names its plugin sections declare " \
        "are not listed\n"
    assert listing(root, env, "--check")["returncode"] == 1
    missing = evalkit(root, env, "plugins", "list", "--eval-config", "nowhere.yaml")
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: --eval-config nowhere.yaml: no such file")


# ---------------------------------------------------------------- a third-party provider
PROVIDER_MODULE = '''
from evalkit_judge import JudgeProvider, Sent


class EchoProvider(JudgeProvider):
    """Grades every request 2: a provider another package adds."""

    name = "echo-cloud"
    sent = []

    def request(self, prompt, message):
        return {"model": prompt.model, "prompt": message}

    def send(self, body):
        type(self).sent.append(body)
        return Sent({"grade": {"score": 2, "reason": "echo"}, "model": body["model"]})

    def parse(self, reply, scale):
        return reply["grade"]["score"], reply["grade"]["reason"]
'''


def test_a_provider_registered_through_an_entry_point_is_used_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "echo_cloud_judge.py").write_text(textwrap.dedent(PROVIDER_MODULE))
    info = tmp_path / "echo_cloud_judge-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-cloud-judge\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text("[evalkit_judge.providers]\n"
                                           "echo-cloud = echo_cloud_judge:EchoProvider\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from evalkit_judge.providers import provider_names

    assert "echo-cloud" in provider_names()
    judge = LLMJudge("Is it right?", model="echo-1", provider="echo-cloud",
                     cache_path=tmp_path / "c.sqlite")
    case, response = GoldenCase("c1", "q"), TargetResponse(text="a")
    assert judge(response, case) == 2.0
    assert judge.record()["provider"] == "echo-cloud"
    module = sys.modules["echo_cloud_judge"]
    assert len(module.EchoProvider.sent) == 1
    assert judge(response, case) == 2.0 and len(module.EchoProvider.sent) == 1  # cached
    details = judge.details("c1")
    assert details is not None and details["cached"] is True
    # its cache key names the provider, so another provider never shares its grades
    assert judge.scope() == {"provider": "echo-cloud", "endpoint": None}


URL_PASSWORD = "sk-URL-SECRET-55"
URL_QUERY_KEY = "sk-QS-SECRET-66"


def test_a_base_url_with_credentials_is_recorded_without_them(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]], tmp_path: Path) -> None:
    root, server, env = project
    literal = server.api_base.replace("http://", f"http://judge:{URL_PASSWORD}@") + \
        f"?api-key={URL_QUERY_KEY}"
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace("${JUDGE_URL}", literal))
    done = evalkit(root, env, "run", "--no-progress")
    # (the server does not serve the query string: the grades failed, the run is saved)
    assert done.returncode in (0, 4), done.stderr
    record = header(root / "runs" / "judged.jsonl")["details"]["unhelpfulness"]["judge"]
    assert record["base_url"] == f"{server.api_base}?<redacted>"
    # elsewhere, the header's judge is not the run's (its URL lost its secrets): it is
    # not restored, so nothing is sent to a URL without them
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(root / "runs" / "judged.jsonl", elsewhere / "a.jsonl")
    shutil.copy(root / "runs" / "judged.jsonl", elsewhere / "b.jsonl")
    sent = len(server.requests)
    rescored = evalkit(elsewhere, env, "rescore", "a.jsonl", "-m", "unhelpfulness")
    assert rescored.returncode == 2 and "Traceback" not in rescored.stderr
    assert len(server.requests) == sent
    paired = evalkit(root, env, "pairwise", str(elsewhere / "a.jsonl"),
                     str(elsewhere / "b.jsonl"), "--judge", "unhelpfulness", "--config",
                     "evalkit.yaml", "-o", str(elsewhere / "pairs.jsonl"))
    texts = [p.stdout + p.stderr for p in (done, rescored, paired)]
    files = [p for p in [*root.rglob("*"), *elsewhere.rglob("*")]
             if p.is_file() and p.name != "evalkit.yaml"]
    assert (elsewhere / "pairs.jsonl").is_file(), paired.stderr
    for secret in (URL_PASSWORD, URL_QUERY_KEY):
        assert not any(secret in t for t in texts), secret
        for f in files:
            assert secret.encode() not in f.read_bytes(), (secret, f)


@pytest.mark.parametrize(("edit", "key"), [
    (("headers: {X-Org: ", "headers: {X-Api-Key: [sk-LITERAL-SECRET-1234567], X-Org: "),
     "judges[0].headers.X-Api-Key"),
    (("base_url: ${JUDGE_URL}",
      "base_url: ['http://u:sk-URL-SECRET-55@h/v1?api-key=sk-QS-SECRET-66']"),
     "judges[0].base_url"),
])
def test_a_bad_secret_setting_is_refused_without_echoing_it(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]],
        edit: tuple[str, str], key: str) -> None:
    root, _, env = project
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace(*edit))
    done = evalkit(root, env, "run", "--dry-run")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"key {key!r}" in done.stderr and "evalkit.yaml:" in done.stderr, done.stderr
    for secret in ("sk-LITERAL-SECRET-1234567", "sk-URL-SECRET-55", "sk-QS-SECRET-66"):
        assert secret not in done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["fifo", "device", "large", "directory"])
def test_a_rubric_file_that_is_not_a_small_regular_file_is_refused_at_once(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]], kind: str) -> None:
    root, server, env = project
    rubric = root / "rubrics" / "hostile.md"
    if kind == "fifo":
        os.mkfifo(rubric)  # no writer: reading it would block for ever
        expected = "is a pipe or device, not a regular file"
    elif kind == "device":
        rubric = Path("/dev/zero")  # reading it whole would fill memory
        expected = "is a pipe or device, not a regular file"
    elif kind == "large":
        with rubric.open("wb") as fh:  # sparse: 16 MiB + 1 byte, nothing written
            fh.truncate((16 << 20) + 1)
        expected = "larger than 16 MiB"
    else:
        rubric.mkdir()
        expected = "is a directory"
    config = root / "evalkit.yaml"
    config.write_text(config.read_text().replace("rubrics/unhelpful.md", str(rubric)))
    line = 1 + config.read_text().splitlines().index("judges:")
    for args in (("run", "--no-progress"), ("run", "--dry-run")):
        done = evalkit(root, env, *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"evalkit.yaml:{line}: key 'judges': judge 'unhelpfulness': rubric file " \
            f"{rubric}" in done.stderr, done.stderr
        assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert server.requests == []


def test_a_rubric_of_16_mib_is_read(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]]) -> None:
    root, server, env = project
    rubric = root / "rubrics" / "unhelpful.md"
    text = "5: unhelpful. 1: it answers.\n"
    rubric.write_text(text + " " * ((16 << 20) - len(text)))
    done = evalkit(root, env, "run", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert server.requests == []  # a dry run sends nothing


def test_a_declared_judge_can_decide_a_run_until_decided(
        project: tuple[Path, ChatCompletionsServer, dict[str, str]]) -> None:
    root, server, env = project
    first = evalkit(root, env, "run", "--no-progress", "-o", "runs/base.jsonl")
    assert first.returncode == 0, first.stderr
    done = evalkit(root, env, "run", "--no-progress", "--until-decided", "--baseline",
                   "runs/base.jsonl", "-o", "runs/seq.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    record = header(root / "runs" / "seq.jsonl")["sequential"]
    assert record["metric"] == "unhelpfulness"
    assert record["bounds"] == [1.0, 5.0]  # the judge's scale, 1..5
    assert record["units"] == len(SCORES)
    assert json.loads(done.stdout)["cases_planned"] == len(SCORES)
    assert len(server.requests) == len(SCORES)  # the same grades: from the judge's cache
