"""A blank run name ("" or only whitespace) is refused wherever a name is taken, as the
eval config refuses ``name: "  "``: ``evalkit eval --name``, ``evaluate_run(name=)`` and
``evaluate(name=)``; nothing is saved under it and ``--name ""`` does not fall back.

A run name given with ``--name`` (``evaluate_run(name=)``) obeys the limit of a TREC run
tag (evalkit.io.limits.MAX_NAME_CHARS, 256 characters): a longer one is refused with its
length and a short prefix, never printed back whole; so is a check id beyond the id limit
(MAX_ID_CHARS, 1024).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import CallableTarget, GoldenCase, evaluate, evaluate_run
from evalkit.io.limits import MAX_NAME_CHARS, LimitError, check_name

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


def test_the_limit_is_256_and_holds_at_its_edge() -> None:
    assert MAX_NAME_CHARS == 256
    assert evaluate_run(RUN, QRELS, ["ap"], name="n" * 256).name == "n" * 256
    with pytest.raises(LimitError, match=r"the run name is 257 characters long \(starts "
                                         r"'nnnnnnnnnnnnnnnnnnnn'\); the limit is 256"):
        evaluate_run(RUN, QRELS, ["ap"], name="n" * 257)


def test_the_command_refuses_it_without_echoing_it(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 r\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    name = "x" * 300
    proc = subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           "eval", "run", "--qrels", "qrels", "--name", name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "" and name not in proc.stderr
    assert "the run name is 300 characters long" in proc.stderr


def test_an_overlong_check_id_is_refused_not_printed_back(tmp_path: Path) -> None:
    from evalkit.gate.checks import load_checks

    long_id = "c" * 100_000
    path = tmp_path / "checks.yaml"
    path.write_text(f"checks:\n  - id: {long_id}\n    metric: ap\n    op: '>='\n"
                    "    threshold: 0.1\n")
    with pytest.raises(ValueError) as info:
        load_checks(path)
    message = str(info.value)
    assert long_id not in message and len(message) < 300
    assert "check #1: the check id is 100000 characters long" in message
    assert "the limit is 1024" in message and "(line 2)" in message
