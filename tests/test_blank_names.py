"""A blank run name ("" or only whitespace) is refused wherever a name is taken, as the
eval config refuses ``name: "  "``: ``evalkit eval --name``, ``evaluate_run(name=)`` and
``evaluate(name=)``; nothing is saved under it and ``--name ""`` does not fall back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import CallableTarget, GoldenCase, evaluate, evaluate_run
from evalkit.io.limits import check_name

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
RUN = {"q1": {"d1": 1.0}}
QRELS = {"q1": {"d1": 1}}


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_api_refuses_blank_names(blank: str) -> None:
    with pytest.raises(ValueError, match="is blank"):
        evaluate_run(RUN, QRELS, ["ap"], name=blank)
    target = CallableTarget(lambda case: ["d1"], name="t")
    with pytest.raises(ValueError, match="is blank"):
        evaluate(target, [GoldenCase(id="c1", query="q", expected=["d1"])], ["recall@1"],
                 name=blank, progress=False)
    with pytest.raises(ValueError, match="is blank"):
        check_name(blank)


@pytest.mark.parametrize("name", ["x\x1b[31my", "x\ny", "a\x85b"])
def test_names_with_control_characters_are_refused(name: str) -> None:
    # a terminal escape or a line break would be printed raw into tables and headers
    with pytest.raises(ValueError, match="holds a control character"):
        check_name(name)
    with pytest.raises(ValueError, match="holds a control character"):
        evaluate_run(RUN, QRELS, ["ap"], name=name)


def test_names_with_a_visible_character_pass() -> None:
    assert evaluate_run(RUN, QRELS, ["ap"], name=" bm25 ").name == " bm25 "
    assert check_name("x") == "x"


@pytest.mark.parametrize("blank", ["", "   "])
def test_eval_name_option_refuses_blank(tmp_path: Path, blank: str) -> None:
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 r\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    proc = subprocess.run([*EVALKIT, "eval", "run", "--qrels", "qrels", "--name", blank,
                           "--save", "x.jsonl"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "--name" in proc.stderr and "blank" in proc.stderr
    assert not (tmp_path / "x.jsonl").exists()
