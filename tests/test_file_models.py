"""The pydantic models of the declarative files: lines named, misplaced keys refused, the
leniency of golden rows, and the key sets the start-up path spells out by hand.

Expected lines are found in the test's own text (the line that holds the offending key),
never taken from evalkit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.core.pyproject_config import OTHER_KEYS, RUN_KEYS
from evalkit.data.goldens import GoldenError, case_from_record, load_goldens
from evalkit.data.goldens_models import KNOWN_FIELDS, GoldenRow
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.execute.evalconfig_models import EvalSettings, ToolSettings
from evalkit.gate.checks import CheckError, CheckSpec, load_checks
from evalkit.gate.checks_models import CHECK_KEYS, CheckModel
from evalkit.io.bounded_yaml import load_marked


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the only line of ``text`` containing ``needle``."""
    (line,) = [i for i, t in enumerate(text.splitlines(), start=1) if needle in t]
    return line


CHECKS = """\
checks:
  - id: floor
    metric: recall@10
    op: ">="
    threshold: 0.5
  - id: noreg
    metric: ndcg@10
    vs_baseline: no_significant_regression
    alpha: 0.01
"""


# ------------------------------------------------------------------ line marks
def test_marked_yaml_maps_locations_to_lines() -> None:
    text = "a:\n  b:\n    - x\n    -\n      c: 1\n      d: [1, 2]\nz: 3\n"
    doc = load_marked(text)
    assert doc.data == {"a": {"b": ["x", {"c": 1, "d": [1, 2]}]}, "z": 3}
    assert doc.line(()) == 1
    assert doc.line(("z",)) == line_of(text, "z: 3")
    assert doc.line(("a", "b", 0)) == line_of(text, "- x")
    assert doc.line(("a", "b", 1, "d")) == line_of(text, "d: [")
    assert doc.line(("a", "b", 1, "d", 1)) == line_of(text, "d: [")
    # a key that is not there: the deepest part that is
    assert doc.line(("a", "b", 1, "nope")) == line_of(text, "c: 1")
    assert doc.line(("a", "missing", 3)) == 1
    assert load_marked("").line(("a",)) is None


@pytest.mark.parametrize(("edit", "needle", "words"), [
    (("    threshold: 0.5", "    treshold: 0.5"), "treshold", "did you mean 'threshold'?"),
    (('    op: ">="', "    op: '>'"), "op: '>'", "'op' is '>'"),
    (("    threshold: 0.5", "    threshold: .nan"), "threshold", "finite"),
    (("    alpha: 0.01", "    alpha: 1.5"), "alpha", "strictly between 0 and 1"),
    (("    vs_baseline: no_significant_regression\n    alpha: 0.01",
      "    vs_baseline: no_significant_regression\n    op: '<='"), "vs_baseline", "both"),
    (("    threshold: 0.5", "    threshold: 0.5\n    alpha: 0.05"), "alpha: 0.05",
     "'alpha' is set on a threshold check"),
    (("    metric: ndcg@10", "    metric: ndcg@10\n    scope: [a, 010]"), "scope", 'quote "010"'),
])
def test_a_check_problem_names_the_line_of_its_key(tmp_path: Path, edit: tuple[str, str],
                                                   needle: str, words: str) -> None:
    text = CHECKS.replace(*edit)
    path = tmp_path / "checks.yaml"
    path.write_text(text)
    with pytest.raises(CheckError) as info:
        load_checks(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: check '") and words in msg
    assert msg.endswith(f" (line {line_of(text, needle)})"), msg


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    text = CHECKS.replace("id: noreg", "id: floor")
    path = tmp_path / "checks.yaml"
    path.write_text(text)
    with pytest.raises(CheckError) as info:
        load_checks(path)
    assert str(info.value) == (
        f"{path}: check 'floor': duplicate id 'floor' (also check #1); ids must be unique so "
        "each verdict names one check (lines 2 and 6)")


def test_a_check_loaded_equals_the_check_built_and_the_model() -> None:
    spec = CheckSpec("floor", "recall@10", op=">=", threshold=0.5)
    model = CheckModel.model_validate({"id": "floor", "metric": "recall@10", "op": ">=",
                                       "threshold": 0.5})
    assert CheckSpec(**model.model_dump()) == spec
    assert set(CheckModel.model_fields) == set(CHECK_KEYS)
    # a record leaves a key out with None (a file may not write a key without a value)
    with pytest.raises(CheckError, match=r"^check 'x': has 'op' but no 'threshold'$"):
        CheckSpec("x", "m", op=">=", threshold=None)
    with pytest.raises(CheckError, match=r"^check 'x': 'scope' is empty"):
        CheckSpec("x", "m", op=">=", threshold=1, scope=())
    assert CheckSpec("x", " m ", vs_baseline="no_significant_regression").metric == " m "


def test_a_key_written_without_a_value_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS.replace("alpha: 0.01", "alpha:"))
    with pytest.raises(CheckError, match=r"'alpha' must be a number, got None \(line 9\)"):
        load_checks(path)


# ------------------------------------------------------------------ golden rows
def test_golden_rows_keep_their_leniency() -> None:
    row = GoldenRow.model_validate({"id": 7, "query": None, "topic": {"x": [1]}, "n": 2})
    assert (row.id, row.query, row.context()) == ("7", None, {"topic": {"x": [1]}, "n": 2})
    case = case_from_record({"id": 7, "query": None, "relevant": ("d1", "d2"),
                             "relevance": {"d1": 2, "d2": 0}}, "x:1")
    assert (case.id, case.query, case.relevant) == ("7", "", frozenset({"d1", "d2"}))
    assert dict(case.relevance) == {"d1": 2, "d2": 0}
    assert set(GoldenRow.model_fields) == set(KNOWN_FIELDS)


@pytest.mark.parametrize(("record", "message"), [
    ({"id": True, "query": "q"}, "x:1: id True is not an id; write ids as text"),
    ({"id": "a", "query": "q", "relevance": {"d": True}},
     "x:1: case 'a': relevance label of 'd' must be an integer, got True"),
    ({"id": "a", "query": "q", "relevance": {"": 1}}, "x:1: empty case 'a': 'relevance' key"),
    ({"id": "a", "query": "q", "relevant": ["d", None]},
     "x:1: case 'a': 'relevant' item None is not an id; write ids as text"),
    ({"id": "a" * 1025, "query": "q"}, "x:1: the id is 1025 characters long"),
])
def test_golden_row_messages(record: dict[str, object], message: str) -> None:
    with pytest.raises(GoldenError) as info:
        case_from_record(record, "x:1")
    assert str(info.value).startswith(message), str(info.value)


def test_a_golden_jsonl_problem_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "a", "query": "x"}\n\n{"id": "b", "query": "y", "expected": 3}\n')
    with pytest.raises(GoldenError, match=rf"^{path}:3: case 'b': 'expected' must be"):
        load_goldens(path)


# ------------------------------------------------------------------ the eval config
RUN = ("goldens: g.jsonl\ntarget:\n  factory: m:make\nmetrics: [recall@1]\n"
       "output: o.jsonl\n")


@pytest.mark.parametrize("key", ["plugins", "local_plugins"])
def test_plugin_keys_in_evalkit_yaml_are_refused_with_where_they_belong(
    tmp_path: Path, key: str
) -> None:
    text = RUN + f"{key}: [evalkit-retrieval]\n"
    path = tmp_path / "evalkit.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value) == (
        f"{path}:{line_of(text, key)}: key {key!r}: has no effect in evalkit.yaml: plugin "
        "selection is read from [tool.evalkit] in pyproject.toml, where it applies to every "
        "command; move it there")


@pytest.mark.parametrize(("extra", "needle", "words"), [
    ("metric: [x]\n", "metric:", "key 'metric': unknown key (did you mean 'metrics'?)"),
    ("gate: {checks: c.yaml}\n", "gate:",
     "key 'gate': unknown key (the gate's settings are the keys checks, baseline and "
     "reporters)"),
    ("reporters: [junit]\n", "reporters", "key 'reporters': must be a list of reports "
     "FORMAT:PATH"),
    ("checks: ''\n", "checks", "key 'checks': must be a non-empty string"),
])
def test_config_problems_name_the_line(tmp_path: Path, extra: str, needle: str,
                                       words: str) -> None:
    text = RUN + extra
    path = tmp_path / "evalkit.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value).startswith(f"{path}:{line_of(text, needle)}: {words}"), info.value


def test_a_pyproject_problem_names_the_table_and_key(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.evalkit]\ngoldens = "g.jsonl"\noutput = "o.jsonl"\n'
                    'metrics = ["m"]\nmax_concurrency = "8"\n[tool.evalkit.target]\n'
                    'factory = "m:make"\n')
    with pytest.raises(ConfigError) as info:
        load_eval_config(path)
    assert str(info.value) == (f"{path.resolve()} [tool.evalkit]: key 'max_concurrency': "
                               "must be a positive integer, got '8'")


def test_gate_settings_are_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "evalkit.yaml"
    path.write_text(RUN + "checks: evals/checks.yaml\nbaseline: ../base.jsonl\n"
                    "reporters: ['junit:out/g.xml', 'json:-']\n")
    cfg = load_eval_config(path)
    assert cfg.checks == tmp_path / "sub" / "evals" / "checks.yaml"
    assert cfg.baseline == tmp_path / "base.jsonl"
    assert cfg.reporters == (f"junit:{tmp_path / 'sub' / 'out' / 'g.xml'}", "json:-")


def test_the_hand_spelt_key_sets_match_the_models() -> None:
    # plugin selection checks [tool.evalkit]'s keys on every command's start-up without
    # importing pydantic, so it spells them out; they must be the model's
    assert set(ToolSettings.model_fields) == RUN_KEYS | OTHER_KEYS
    assert set(ToolSettings.model_fields) - set(EvalSettings.model_fields) == {
        "plugins", "local_plugins"}
    assert set(EvalSettings.model_fields) >= RUN_KEYS
