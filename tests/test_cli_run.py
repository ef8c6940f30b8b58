"""`evalkit run` and `evalkit rescore`: the eval config (evalkit.yaml or [tool.evalkit]),
which file wins, config errors naming file and key, exit codes, resume and rescore."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult
from evalkit.execute.evalconfig import ConfigError, load_eval_config, redact

runner = CliRunner()
_ids = itertools.count()

GOLDENS = (
    '{"id": "q1", "query": "alpha", "expected": ["d1"]}\n'
    '{"id": "q2", "query": "beta", "expected": ["d2"]}\n'
    '{"id": "q3", "query": "gamma", "expected": ["d9"]}\n'
)


def project(tmp_path: Path, fail_file: bool = False) -> str:
    """A project folder with goldens and a target module; returns the module name."""
    module = f"evalkit_test_targets_{next(_ids)}"
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / f"{module}.py").write_text(
        "from pathlib import Path\n"
        "from evalkit.data.targets import CallableTarget\n"
        "HERE = Path(__file__).parent\n"
        "def make(prefix='d', name='mine'):\n"
        "    def rank(case):\n"
        "        if (HERE / f'fail-{case.id}').exists():\n"
        "            raise RuntimeError('flaky ' + case.id)\n"
        "        return [prefix + case.id[1:], 'other']\n"
        "    return CallableTarget(rank, name=name)\n"
    )
    return module


def yaml_config(module: str, **extra: str) -> str:
    lines = [
        "goldens: goldens.jsonl",
        "target:",
        f"  factory: {module}:make",
        "  kwargs: {prefix: d, name: mine}",
        "metrics: [recall@1, ndcg@10]",
        "aggregates: [latency_p50, max_item_share@1]",
        "output: runs/mine.jsonl",
        "max_concurrency: 2",
    ]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def toml_config(module: str, output: str = "runs/py.jsonl") -> str:
    return (
        "[project]\nname = 'demo'\n\n[tool.evalkit]\n"
        'plugins = ["evalkit-retrieval"]\n'
        'goldens = "goldens.jsonl"\n'
        'metrics = ["recall@1"]\n'
        f'output = "{output}"\n'
        "[tool.evalkit.target]\n"
        f'factory = "{module}:make"\n'
        "kwargs = { prefix = 'd' }\n"
    )


def test_run_from_evalkit_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "recall@1    0.6667" in res.stdout  # q1, q2 hit at rank 1; q3 misses
    assert "max_item_share@1: 0.3333" in res.stdout
    assert "complete: 3 cases" in res.stdout
    run = RunResult.load(tmp_path / "runs" / "mine.jsonl")
    assert run.scores("recall@1") == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    cfg = run.header["config"]
    assert cfg["target_factory"] == f"{module}:make"
    assert cfg["target_kwargs"] == {"prefix": "d", "name": "mine"}


def test_run_from_pyproject_and_json_summary(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(toml_config(module))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress", "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["status"] == "complete" and summary["cases"] == 3
    assert summary["means"]["recall@1"] == pytest.approx(2 / 3)
    assert (tmp_path / "runs" / "py.jsonl").exists()


def test_evalkit_yaml_wins_over_pyproject_and_says_so(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    (tmp_path / "pyproject.toml").write_text(toml_config(module))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert f"using {tmp_path / 'evalkit.yaml'}; the run settings in " \
           f"{tmp_path / 'pyproject.toml'} [tool.evalkit] are ignored" in res.stderr.replace(
               "\n", "")
    assert (tmp_path / "runs" / "mine.jsonl").exists()
    assert not (tmp_path / "runs" / "py.jsonl").exists()
    # a pyproject with only plugin keys is no competitor: no notice
    (tmp_path / "pyproject.toml").write_text("[tool.evalkit]\nplugins = []\n")
    assert load_eval_config(tmp_path).notice == ""


def test_incomplete_run_exits_1_and_resume_completes_it(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    (tmp_path / "fail-q2").write_text("")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 1
    assert "INCOMPLETE: 1 of 3 cases errored ('q2'); not scored" in res.stdout
    assert "recall@1" not in res.stdout  # no mean of an incomplete run
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2 and "already exists; resume it (--resume)" in res.stderr
    (tmp_path / "fail-q2").unlink()
    res = runner.invoke(app, ["run", "--no-progress", "--resume"])
    assert res.exit_code == 0, res.output
    run = RunResult.load(tmp_path / "runs" / "mine.jsonl")
    assert run.header["status"] == "complete" and run.header["resumed"] == 1
    # a changed config is refused with what changed
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module).replace("prefix: d", "prefix: x"))
    res = runner.invoke(app, ["run", "--no-progress", "--resume"])
    assert res.exit_code == 2
    assert "config target_kwargs.prefix: 'd' -> 'x'" in res.stderr


def test_resume_says_how_many_rows_were_kept_and_cases_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"evalkit_test_targets_{next(_ids)}"
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    calls = tmp_path / "calls.log"  # every call the target receives, one id per line
    (tmp_path / f"{module}.py").write_text(
        "from pathlib import Path\n"
        "from evalkit.data.targets import CallableTarget\n"
        "HERE = Path(__file__).parent\n"
        "def make(prefix='d', name='mine'):\n"
        "    def rank(case):\n"
        "        with open(HERE / 'calls.log', 'a') as fh:\n"
        "            fh.write(case.id + '\\n')\n"
        "        if (HERE / f'fail-{case.id}').exists():\n"
        "            raise RuntimeError('flaky ' + case.id)\n"
        "        return [prefix + case.id[1:], 'other']\n"
        "    return CallableTarget(rank, name=name)\n"
    )
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    (tmp_path / "fail-q2").write_text("")
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["run", "--no-progress"]).exit_code == 1
    (tmp_path / "fail-q2").unlink()
    calls.write_text("")
    res = runner.invoke(app, ["run", "--no-progress", "--resume"])
    assert res.exit_code == 0, res.output
    assert calls.read_text().split() == ["q2"]  # only the errored case was called again
    assert ("resume: 2 row(s) kept from the earlier run, 1 case(s) called now (1 of them "
            "had errored before)") in res.stdout.splitlines()
    # a run cut short: its last row never reached the file
    artifact = tmp_path / "runs" / "mine.jsonl"
    lines = artifact.read_text().splitlines(keepends=True)
    artifact.write_text("".join(lines[:-2]))  # the last row and the trailer
    calls.write_text("")
    res = runner.invoke(app, ["run", "--no-progress", "--resume", "--json"])
    assert res.exit_code == 0, res.output
    assert calls.read_text().split() == ["q3"]
    assert json.loads(res.stdout)["resume"] == {"kept": 2, "called": 1, "retried": 0,
                                                "rescored": 0}
    # nothing to resume: a new run, and it says so
    calls.write_text("")
    res = runner.invoke(app, ["run", "--no-progress", "--resume", "-o", "runs/other.jsonl"])
    assert res.exit_code == 0, res.output
    assert sorted(calls.read_text().split()) == ["q1", "q2", "q3"]
    assert "resume: no earlier run in the artifact; all 3 case(s) were called" in res.stdout
    # without --resume nothing is said about resuming
    res = runner.invoke(app, ["run", "--no-progress", "--overwrite"])
    assert res.exit_code == 0 and "resume:" not in res.stdout


def test_rescore_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["run", "--no-progress"]).exit_code == 0
    (tmp_path / f"{module}.py").write_text("raise SystemExit('the target must not be used')\n")
    res = runner.invoke(app, ["rescore", "runs/mine.jsonl", "-m", "recall@2,success@1",
                              "-o", "runs/re.jsonl"])
    assert res.exit_code == 0, res.output
    assert "success@1    0.6667" in res.stdout
    assert "max_item_share@1: 0.3333" in res.stdout  # the recorded aggregates by default
    run = RunResult.load(tmp_path / "runs" / "re.jsonl")
    assert run.scores("recall@2") == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    res = runner.invoke(app, ["rescore", "runs/mine.jsonl", "-m", "nope@1"])
    assert res.exit_code == 2 and "unknown metric 'nope@1'" in res.stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("metric: [recall@1]\n", "key 'metric': unknown key"),
        ("max_concurrency: eight\n", "key 'max_concurrency': must be a positive integer"),
        ("max_concurrency: 0\n", "key 'max_concurrency': must be a positive integer"),
        ("aggregates: latency_p50\n", "key 'aggregates': must be a list of names"),
    ],
)
def test_config_errors_name_file_and_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         text: str, needle: str) -> None:
    module = project(tmp_path)
    base = yaml_config(module).replace("aggregates: [latency_p50, max_item_share@1]\n", "")
    base = base.replace("max_concurrency: 2\n", "")
    (tmp_path / "evalkit.yaml").write_text(base + text)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2
    assert str(tmp_path / "evalkit.yaml") in res.stderr and needle in res.stderr


def test_more_config_errors(tmp_path: Path) -> None:
    module = project(tmp_path)
    cfg = tmp_path / "evalkit.yaml"
    cases = {
        "goldens: goldens.jsonl\noutput: o.jsonl\nmetrics: [recall@1]\n":
            "key 'target': missing (required)",
        yaml_config(module).replace(f"  factory: {module}:make\n", ""):
            "key 'target.factory': missing",
        yaml_config(module).replace("  kwargs:", "  kwarg:"): "key 'target.kwarg': unknown key",
        yaml_config(module).replace("metrics: [recall@1, ndcg@10]\n", "metrics: []\n")
        .replace("aggregates: [latency_p50, max_item_share@1]\n", ""):
            "key 'metrics': name at least one metric or aggregate",
    }
    for text, needle in cases.items():
        cfg.write_text(text)
        with pytest.raises(ConfigError) as info:
            load_eval_config(cfg)
        assert str(cfg) in str(info.value) and needle in str(info.value)
    with pytest.raises(ConfigError, match=r"goldens.jsonl:1: a golden set .*, not an eval "
                       r"config .*name it as goldens: in evalkit.yaml"):
        load_eval_config(tmp_path / "goldens.jsonl")  # a golden set is told as one
    (tmp_path / "other.jsonl").write_text('{"a": 1}\n{"b": 2}\n')
    with pytest.raises(ConfigError, match=r"other.jsonl:2: not valid YAML"):
        load_eval_config(tmp_path / "other.jsonl")  # any other file is read as YAML
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "pyproject.toml").write_text("[tool.evalkit]\nplugins = []\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: no eval config: its "
                       r"\[tool.evalkit\] has no run settings"):
        load_eval_config(empty)


def test_config_found_in_a_parent_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    cfg = load_eval_config()
    assert cfg.path == (tmp_path / "evalkit.yaml").resolve()
    assert cfg.output == (tmp_path / "runs" / "mine.jsonl").resolve()
    # a pyproject.toml below it stops the search, as for plugin selection
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match="no eval config"):
        load_eval_config()


def test_config_errors_from_the_target_and_names(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "evalkit.yaml"
    cfg.write_text(yaml_config(module).replace(":make", ":absent"))
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2 and "key 'target.factory'" not in res.stderr
    assert re.search(rf"{re.escape(str(cfg))}:\d+: target.factory: cannot import "
                     rf"'{module}:absent'", res.stderr)
    cfg.write_text(yaml_config(module).replace("recall@1, ndcg@10", "recall@1, latency_p95"))
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2
    assert re.search(rf"{re.escape(str(cfg))}:\d+: key 'metrics': 'latency_p95' is a "
                     "whole-run aggregate", res.stderr)
    cfg.write_text(yaml_config(module).replace("kwargs: {prefix: d, name: mine}",
                                               "kwargs: {unexpected: 1}"))
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2
    assert res.stderr == (f"error: {cfg}:4: target.kwargs.unexpected: {module}:make(**kwargs) "
                          "takes no keyword argument 'unexpected'\n")


def test_registered_target_name_as_factory_and_redaction(tmp_path: Path) -> None:
    project(tmp_path)
    cfg = tmp_path / "evalkit.yaml"
    cfg.write_text(
        "goldens: goldens.jsonl\noutput: o.jsonl\nmetrics: [recall@1]\n"
        "target:\n  factory: http\n  kwargs:\n    url: http://127.0.0.1:9/x\n"
        "    headers: {Authorization: Bearer abc}\n    timeout_s: 5\n"
    )
    loaded = load_eval_config(cfg)
    target = loaded.build_target()
    try:
        assert type(target).__name__ == "HttpTarget"
    finally:
        target.close()
    recorded = loaded.recorded()
    assert recorded["target_kwargs"] == {"url": "http://127.0.0.1:9/x",
                                         "headers": {"Authorization": "<redacted>"},
                                         "timeout_s": 5}
    assert redact({"api_key": "k", "nested": {"password": "p", "keep": [1]}}) == \
        {"api_key": "<redacted>", "nested": {"password": "<redacted>", "keep": [1]}}


def test_run_with_the_http_factory_keeps_tokens_out_of_the_artifact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit_http.testing import Reply, ScriptedServer

    project(tmp_path)
    monkeypatch.setenv("EVALKIT_RUN_TOKEN", "sk-live-do-not-store")
    monkeypatch.chdir(tmp_path)
    with ScriptedServer([Reply(200, {"ranked_ids": ["d1"]})]) as server:
        url = server.url
        (tmp_path / "evalkit.yaml").write_text(
            "goldens: goldens.jsonl\noutput: runs/http.jsonl\nmetrics: [recall@1]\n"
            "target:\n  factory: http\n  kwargs:\n"
            f"    url: {server.url}search?key=query-secret\n    name: svc\n"
            "    headers: {Authorization: 'Bearer ${EVALKIT_RUN_TOKEN}'}\n"
        )
        res = runner.invoke(app, ["run", "--no-progress"])
        assert res.exit_code == 0, res.output
        assert len(server.requests) == 3
        assert server.requests[0].headers["authorization"] == "Bearer sk-live-do-not-store"
    text = (tmp_path / "runs" / "http.jsonl").read_text()
    assert "sk-live-do-not-store" not in text and "query-secret" not in text
    header = json.loads(text.splitlines()[0])
    assert header["target"]["header_names"] == ["Authorization"]
    assert header["config"]["target_kwargs"]["headers"] == {"Authorization": "<redacted>"}
    assert header["config"]["target_kwargs"]["url"] == f"{url}search?<redacted>"


@pytest.mark.parametrize("value", ["[sk-LITERAL-SECRET-1234567]",
                                   "{token: sk-LITERAL-SECRET-1234567}"])
def test_a_header_value_that_is_not_text_is_refused_without_showing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\noutput: runs/http.jsonl\nmetrics: [recall@1]\n"
        "target:\n  factory: http\n  kwargs:\n    url: http://127.0.0.1:9/x\n"
        f"    headers: {{X-Api-Key: {value}}}\n"
    )
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2, res.output
    assert "evalkit.yaml:8:" in res.output and "header 'X-Api-Key'" in res.output
    assert "must be text" in res.output
    assert "sk-LITERAL-SECRET" not in res.output
    assert not (tmp_path / "runs").exists()


def test_resume_and_overwrite_together_are_refused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = runner.invoke(app, ["run", "--resume", "--overwrite"])
    assert res.exit_code == 2
    assert "--resume and --overwrite contradict each other" in res.output
    assert not (tmp_path / "runs" / "mine.jsonl").exists()


def test_a_factory_returning_a_plain_function_is_wrapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"evalkit_test_plain_{next(_ids)}"
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / f"{module}.py").write_text(
        "def make():\n"
        "    return lambda case: ['d' + case.id[1:]]\n"
    )
    (tmp_path / "evalkit.yaml").write_text(
        f"goldens: goldens.jsonl\ntarget:\n  factory: {module}:make\n"
        "metrics: [recall@1]\noutput: runs/plain.jsonl\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = runner.invoke(app, ["run"])
    assert res.exit_code == 0, res.output
    run = RunResult.load(tmp_path / "runs" / "plain.jsonl")
    # q1 -> d1 and q2 -> d2 are relevant; q3 expects d9 but gets d3
    assert run.scores("recall@1") == {"q1": 1.0, "q2": 1.0, "q3": 0.0}


def test_invalid_yaml_config_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "evalkit.yaml"
    cfg.write_text("goldens: goldens.jsonl\ntarget: [unclosed\nmetrics: [a]\n")
    with pytest.raises(ConfigError) as info:
        load_eval_config(cfg)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{cfg}:") and "not valid YAML" in message


def test_run_and_rescore_never_write_over_their_own_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The output of `run` may be neither its config nor its goldens, and the output of
    `rescore` not the golden set it reads; refused before the target is even built."""
    module = project(tmp_path)
    cfg = tmp_path / "evalkit.yaml"
    cfg.write_text(yaml_config(module))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["run", "--no-progress"]).exit_code == 0
    before = {p: p.read_bytes() for p in (cfg, tmp_path / "goldens.jsonl")}
    (tmp_path / f"{module}.py").write_text("raise SystemExit('the target must not be built')\n")
    for args in (["run", "-o", "evalkit.yaml", "--overwrite"],
                 ["run", "-o", "./goldens.jsonl", "--overwrite"],
                 ["rescore", "runs/mine.jsonl", "-m", "recall@1", "-o", "goldens.jsonl"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, res.output
        assert "is also an input of this command" in res.stderr, res.stderr
    assert {p: p.read_bytes() for p in before} == before
