"""exact_match, f1 and rouge_l on a case with no reference answers (no ``answers``, no
text ``expected``) are refused before the first target call, by evaluate(), rescore()
and `evalkit run`, as a relevance metric without judgments is; contains, regex and the
JSON checks read only the response and score every case."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.rescore import rescore
from evalkit.execute.scoring import UnansweredCasesError, UnjudgedCasesError
from evalkit.execute.target_runner import evaluate

runner = CliRunner()


class Counting:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def invoke(self, case: GoldenCase) -> TargetResponse:
        self.calls += 1
        return TargetResponse(text="Paris")


def cases() -> list[GoldenCase]:
    return [GoldenCase("answers", "q", answers=["Paris", "City of Paris"]),
            GoldenCase("text-expected", "q", expected="Paris"),
            GoldenCase("ids-only", "q", expected=["d1"]),
            GoldenCase("nothing", "q"),
            GoldenCase("empty-text", "q", expected="")]


@pytest.mark.parametrize("metric", ["exact_match", "f1", "rouge_l"])
def test_a_case_without_answers_is_refused_before_any_call(metric: str) -> None:
    target = Counting()
    with pytest.raises(UnansweredCasesError) as err:
        evaluate(target, cases(), [metric, "contains(text=Paris)"], progress=False)
    assert target.calls == 0
    assert str(err.value).startswith(
        f"{metric} compares the response with reference answers, but 3 case(s) of the golden "
        "set have none: 'ids-only', 'nothing', 'empty-text'.")
    assert isinstance(err.value, UnjudgedCasesError)  # caught wherever that one is


def test_a_text_expected_is_an_answer_and_checks_of_the_response_score_every_case() -> None:
    answered = cases()[:2]
    run = evaluate(Counting(), answered, ["exact_match", "f1", "rouge_l"], progress=False)
    assert run.scores("exact_match") == {"answers": 1.0, "text-expected": 1.0}
    every = evaluate(Counting(), cases(), ["contains(text=Paris)", "regex(pattern=^P)",
                                           "json_valid"], progress=False)
    assert every.scores("contains(text=Paris)") == dict.fromkeys(
        [c.id for c in cases()], 1.0)
    assert set(every.scores("json_valid").values()) == {0.0}


def test_rescore_refuses_them_too(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    evaluate(Counting(), cases(), ["json_valid"], artifact=art, progress=False)
    with pytest.raises(UnansweredCasesError, match="'ids-only', 'nothing', 'empty-text'"):
        rescore(art, ["f1"], goldens=cases())


def test_the_cli_refuses_before_writing_anything(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "a", "query": "q", "answers": ["x"]}\n{"id": "b", "query": "q"}\n')
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget: {factory: 'nothing_here:make'}\n"
        "metrics: [f1]\noutput: run.jsonl\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: f1 compares the response with reference answers, "
                                 "but 1 case(s) of the golden set have none: 'b'.")
    assert "Traceback" not in res.output
    assert not (tmp_path / "run.jsonl").exists()
