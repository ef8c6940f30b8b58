"""Correctness faults: an unjudged golden case is refused before any call
when a metric needs judgments; `factory: http` resolves build_payload/extract next to
the config, wherever evalkit run is started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from evalkit_http.testing import Reply, ScriptedServer
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.rescore import rescore
from evalkit.execute.scoring import UnjudgedCasesError, resolve_metrics
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
runner = CliRunner()


class Counting:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def invoke(self, case: GoldenCase) -> TargetResponse:
        self.calls += 1
        return TargetResponse(ranked_ids=["d1"], text="an answer")


def cases() -> list[GoldenCase]:
    return [GoldenCase("judged", "q", expected=["d1"]),
            GoldenCase("no-ids", "q", expected=None),
            GoldenCase("text-only", "q", expected="a reference answer"),
            GoldenCase("empty", "q", expected=[])]


def test_a_case_without_expected_ids_is_refused_before_any_call() -> None:
    target = Counting()
    with pytest.raises(UnjudgedCasesError) as err:
        evaluate(target, cases(), ["recall@10", "ndcg@10"], progress=False)
    assert target.calls == 0
    assert str(err.value).startswith(
        "recall@10, ndcg@10 need relevance judgments, but 3 case(s) of the golden set have "
        "no expected ids: 'no-ids', 'text-only', 'empty'.")
    assert all(s.needs_judgments for s in resolve_metrics(["recall@10", "ndcg@10", "ap"]))
    # a metric that reads no judgments scores every case
    with use_registry() as reg:
        reg.register_metric("has_text", higher_is_better=True)(
            lambda r, c: float(bool(r.text)))
        reg.register_metric("needs", higher_is_better=True, needs_judgments=True)(
            lambda r, c: 1.0)
        run = evaluate(target, cases(), ["has_text"], progress=False)
        assert run.scores("has_text") == dict.fromkeys(["judged", "no-ids", "text-only",
                                                        "empty"], 1.0)
        with pytest.raises(UnjudgedCasesError, match=r"^needs needs relevance judgments"):
            evaluate(target, cases(), ["needs"], progress=False)


def test_rescore_refuses_them_too(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    with use_registry() as reg:
        reg.register_metric("has_text", higher_is_better=True)(
            lambda r, c: float(bool(r.text)))
        evaluate(Counting(), cases(), ["has_text"], artifact=art, progress=False)
        with pytest.raises(UnjudgedCasesError, match="'no-ids', 'text-only', 'empty'"):
            rescore(art, ["recall@1"], goldens=cases())


def test_the_cli_refuses_before_writing_anything(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "a", "query": "q", "expected": ["d1"]}\n{"id": "b", "query": "q"}\n')
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget: {factory: 'nothing_here:make'}\n"
        "metrics: [recall@5]\noutput: run.jsonl\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2
    assert res.output.startswith("error: recall@5 needs relevance judgments, but 1 case(s) of "
                                 "the golden set have no expected ids: 'b'.")
    assert not (tmp_path / "run.jsonl").exists()


PAYLOADS = '''
def build(case):
    return {"question": case.query, "built_by": "payloads.build"}

def extract(body):
    return body["hits"]
'''


def test_http_import_strings_resolve_next_to_the_config(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "payloads_beside_config.py").write_text(PAYLOADS)
    (project / "goldens.jsonl").write_text('{"id": "a", "query": "alpha", "expected": ["d1"]}\n')
    with ScriptedServer([Reply(body={"hits": ["d1", "d2"]})]).start() as server:
        (project / "evalkit.yaml").write_text(
            "goldens: goldens.jsonl\ntarget:\n  factory: http\n  kwargs:\n"
            f"    url: {server.url}search\n"
            "    build_payload: payloads_beside_config:build\n"
            "    extract: payloads_beside_config:extract\n"
            "metrics: [recall@1]\noutput: run.jsonl\n")
        elsewhere = tmp_path / "elsewhere"  # started from another folder
        elsewhere.mkdir()
        proc = subprocess.run([*EVALKIT, "run", str(project / "evalkit.yaml"), "--no-progress",
                               "--json"], cwd=elsewhere, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["means"] == {"recall@1": 1.0}
        assert [r.json() for r in server.requests] == [
            {"question": "alpha", "built_by": "payloads.build"}]
    # and the folder is not left on sys.path after the factory ran
    assert str(project) not in sys.path


def test_a_callable_target_needs_no_expected_ids_for_aggregates() -> None:
    run = evaluate(CallableTarget(lambda c: ["x"]), cases(), [], ["latency_p50"],
                   progress=False)
    assert run.header["status"] == "complete" and "latency_p50" in run.header["aggregates"]
