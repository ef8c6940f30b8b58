"""An error that names a setting names it as its reader writes it: a keyword argument in
Python (``missing='zero'``), the option on the command line (``--missing zero``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.comparison import compare
from evalkit.comparison.records import ComparisonError
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget
from evalkit.execute.rescore import rescore
from evalkit.execute.run_evaluator import evaluate_run
from evalkit.execute.target_runner import evaluate
from evalkit.io.setting_names import Setting, SettingError
from evalkit.plugins.default import use_registry

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_a_setting_is_spelled_for_python_and_for_the_command_line() -> None:
    err = SettingError("use ", Setting("missing", "zero"), ", ", Setting("resume", True),
                       ", ", Setting("progress", False), ", ", Setting("goldens"), " or ",
                       Setting("seed", 7))
    assert str(err) == ("use missing='zero', resume=True, progress=False, goldens= or "
                        "seed=7")
    options = {"missing": ("--missing", None), "resume": ("--resume", None),
               "progress": ("--progress", "--no-progress"), "goldens": ("--goldens", None)}
    # a setting the command has no option for keeps its Python spelling
    assert err.spelled(options) == ("use --missing zero, --resume, --no-progress, --goldens "
                                    "or seed=7")
    assert isinstance(err, ValueError)


@pytest.fixture
def trec_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    run_a, run_b = tmp_path / "a.trec", tmp_path / "b.trec"
    run_a.write_text("q1 Q0 d1 1 2.0 a\nq2 Q0 d2 1 1.0 a\n")
    run_b.write_text("q1 Q0 d2 1 2.0 b\nq2 Q0 d2 1 1.0 b\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")  # q3: judged, in no run
    return run_a, run_b, qrels


MISSING = ("1 judged query is missing from the run ('q3'); trec_eval 10.0 without -c stops "
           "here too. Score them 0 ({zero}, trec_eval -c) or leave them out ({skip}, as "
           "trec_eval 9.0.8 did)")


@pytest.mark.parametrize("command", [["eval", "{a}"], ["compare", "{a}", "{b}"],
                                     ["power", "{a}", "{b}", "-n", "10"]])
def test_missing_refuse_names_the_missing_option(trec_files: tuple[Path, Path, Path],
                                                 command: list[str]) -> None:
    run_a, run_b, qrels = trec_files
    args = [c.format(a=run_a, b=run_b) for c in command]
    res = runner.invoke(app, [*args, "--qrels", str(qrels), "-m", "ap", "--missing",
                              "refuse"])
    assert res.exit_code == 2
    assert res.stderr == "error: " + MISSING.format(zero="--missing zero",
                                                    skip="--missing skip") + "\n"
    with pytest.raises(SettingError) as err:
        evaluate_run(run_a, qrels, ["ap"], missing="refuse")
    assert str(err.value) == MISSING.format(zero="missing='zero'", skip="missing='skip'")


def test_a_saved_run_names_the_option_it_was_scored_with(
        trec_files: tuple[Path, Path, Path], tmp_path: Path) -> None:
    run_a, _, qrels = trec_files
    saved = tmp_path / "a.jsonl"
    assert runner.invoke(app, ["eval", str(run_a), "--qrels", str(qrels), "-m", "ap",
                               "--save", str(saved)]).exit_code == 0
    res = runner.invoke(app, ["eval", str(saved), "-l", "2"])
    assert res.exit_code == 2
    assert res.stderr == (f"error: {saved}: it was scored with --relevance-level 1, not 2. "
                          "An artifact keeps the values it was saved with; evaluate the TREC "
                          "run file again to change them\n")


def test_an_incomplete_run_names_allow_incomplete(tmp_path: Path) -> None:
    def flaky(case: GoldenCase) -> list[str]:
        if case.id == "b":
            raise RuntimeError("down")
        return ["d"]

    cases = [GoldenCase(i, "q", expected=["d"]) for i in "abc"]
    evaluate(CallableTarget(flaky), cases, ["recall@1"], artifact=tmp_path / "x.jsonl",
             progress=False)
    evaluate(CallableTarget(lambda c: ["d"]), cases, ["recall@1"],
             artifact=tmp_path / "y.jsonl", progress=False)
    res = runner.invoke(app, ["compare", str(tmp_path / "x.jsonl"), str(tmp_path / "y.jsonl"),
                              "-m", "recall@1"])
    assert res.exit_code == 2
    assert res.stderr.rstrip().endswith("; pass --allow-incomplete to compare the cases it has")
    with pytest.raises(ComparisonError) as err:
        compare(tmp_path / "x.jsonl", tmp_path / "y.jsonl", metrics=["recall@1"])
    assert str(err.value).endswith("; pass allow_incomplete=True to compare the cases it has")


def test_a_run_without_recorded_goldens_names_the_goldens_option(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    with use_registry() as reg:  # cases given in Python: the header records no file
        reg.register_metric("length", higher_is_better=True)(lambda r, c: float(len(r.text)))
        evaluate(CallableTarget(lambda c: "x"), [GoldenCase("a", "q")], ["length"],
                 artifact=art, progress=False)
        res = runner.invoke(app, ["rescore", str(art), "-m", "length"])
        assert res.exit_code == 2
        assert res.stderr == (f"error: {art}: the header records no golden file; pass "
                              "--goldens (the golden set it was run on)\n")
        with pytest.raises(SettingError, match=r"; pass goldens= \(the golden set it was run "
                                               r"on\)$"):
            rescore(art, ["length"])


#: Messages that name a setting with ``name=`` although a command has an option of that
#: Python name, and why no command shows them.
NOT_ON_THE_COMMAND_LINE = {
    ("src/evalkit/stats/methods.py", "ci"): "compare checks --ci with --test itself",
    ("plugins/evalkit-retrieval/src/evalkit_retrieval/frames.py", "qrels"):
        "DataFrames are Python's",
    ("src/evalkit/comparison/inputs.py", "qrels"): "DataFrames are Python's",
    ("src/evalkit/core/metric_names.py", "name"): "the name=value syntax of a measure",
    ("src/evalkit/stats/methods.py", "method"): "compare checks --test with --ci itself",
    ("plugins/evalkit-retrieval/src/evalkit_retrieval/trec_names.py", "label"):
        "trec_eval's label=gain parameter syntax",
}


def _option_names() -> set[str]:
    root = typer.main.get_command(app)
    ctx = typer.Context(root)
    names: set[str] = set()

    def walk(cmd: object) -> None:
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name))  # type: ignore[attr-defined]
        else:
            names.update(p.name for p in cmd.params  # type: ignore[attr-defined]
                         if getattr(p, "param_type_name", "") == "option" and p.name)

    walk(root)
    return names


def test_no_error_spells_a_command_line_option_as_a_keyword_argument() -> None:
    """An error raised with a literal ``missing='zero'`` (or ``goldens=``...) would reach
    a command of that option unspelled: such a message is a :class:`SettingError`."""
    keyword = re.compile(r"\b(" + "|".join(sorted(_option_names())) + r")=")
    found = []
    for path in sorted([*(REPO / "src" / "evalkit").rglob("*.py"),
                        *(REPO / "plugins").glob("*/src/**/*.py")]):
        if "cli" in path.relative_to(REPO).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            for sub in ast.walk(node.exc):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    for m in keyword.finditer(sub.value):
                        where = (path.relative_to(REPO).as_posix(), m.group(1))
                        if where not in NOT_ON_THE_COMMAND_LINE:
                            found.append(f"{where[0]}:{sub.lineno}: {m.group(0)}")
    assert found == []
