"""Hostile files, each refused quickly with one line naming the file and line: YAML alias
bombs, nesting 100,000 levels deep in JSON, JSON Lines, YAML, TOML and run artifacts,
NUL bytes in CSV golden files, ids and run tags far longer than any real one.

The bomb is the classic "billion laughs": nine anchors, each a list of nine aliases of
the one before, so the last names 9**9 = 387,420,489 strings (computed here, not by
evalkit); it fits in about 600 bytes.

"Quickly" is counted in Python function calls (``sys.setprofile``), not in seconds, so
that no result depends on the machine's load: any walk of the bomb makes at least one
call per node it expands (387 million), while refusing it takes about 10,000 calls, and
about 100,000 more on a loader's first use (the modules it imports then).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from evalkit.cli.app import app
from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.results import ArtifactError, RunResult
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.gate.checks import CheckError, load_checks
from evalkit.io.limits import MAX_ALIAS_NODES, MAX_DEPTH, MAX_ID_CHARS, MAX_NAME_CHARS

runner = CliRunner()
DEEP = 100_000
#: the most Python calls a refusal may take: far below the 9**9 nodes of the bomb
MOST_CALLS = 2_000_000


def billion_laughs(indent: str = "") -> str:
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 9):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"{indent}l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


def one_error(res: Result) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output and "RecursionError" not in res.output
    return lines[0]


def quickly(fn: object, *args: object) -> tuple[int, BaseException]:
    """``(Python function calls made, the exception raised)`` by ``fn(*args)``."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        fn(*args)  # type: ignore[operator]
    except Exception as exc:
        return calls, exc
    finally:
        sys.setprofile(None)
    raise AssertionError("no error")


def test_the_bomb_is_what_it_claims() -> None:
    text = billion_laughs()
    assert len(text.encode()) < 650
    assert 9 ** 9 == 387_420_489 > MAX_ALIAS_NODES


# ------------------------------------------------------------------ alias bombs
def test_a_yaml_bomb_in_a_golden_file_is_refused_before_it_expands(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: q1\n  query: boom\n  payload:\n" + billion_laughs("    "))
    calls, exc = quickly(load_goldens, path)
    assert calls < MOST_CALLS
    assert isinstance(exc, GoldenError)
    assert str(exc).startswith(f"{path}:")
    assert f"aliases expand to more than {MAX_ALIAS_NODES} nodes" in str(exc)


def test_a_yaml_bomb_in_a_checks_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(billion_laughs() + "checks: []\n")
    calls, exc = quickly(load_checks, path)
    assert calls < MOST_CALLS and isinstance(exc, CheckError)
    assert str(exc).startswith(f"{path}:") and "alias bomb" in str(exc)


def test_a_yaml_bomb_in_the_eval_config_kwargs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "q1", "query": "a"}\n')
    path = tmp_path / "evalkit.yaml"
    path.write_text("goldens: cases.jsonl\noutput: run.jsonl\nmetrics: [recall@1]\n"
                    "target:\n  factory: http\n  kwargs:\n    url: http://127.0.0.1:9/\n"
                    "    junk:\n" + billion_laughs("      "))
    calls, exc = quickly(load_eval_config, path)
    assert calls < MOST_CALLS and isinstance(exc, ConfigError)
    assert str(exc).startswith(f"{path.resolve()}:") and "alias bomb" in str(exc)
    line = one_error(runner.invoke(app, ["run", str(path)]))
    assert str(path.resolve()) in line and "aliases expand to more than" in line


def test_reasonable_aliases_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: q1\n  query: a\n  ctx: &shared {lang: en, tags: [x, y]}\n"
                    "- id: q2\n  query: b\n  ctx: *shared\n")
    gs = load_goldens(path)
    assert gs.get("q2").context["ctx"] == {"lang": "en", "tags": ["x", "y"]}


# ------------------------------------------------------------------ nesting
def test_deep_json_lines_golden_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "q1", "query": "a"}\n\n'
                    '{"id": "q2", "query": "b", "x": ' + "[" * DEEP + "]" * DEEP + "}\n")
    calls, exc = quickly(load_goldens, path)
    assert calls < MOST_CALLS and isinstance(exc, GoldenError)  # unbounded: a RecursionError
    assert str(exc) == (f"{path}:3: nested more than {MAX_DEPTH} levels deep (lists and "
                        "objects); evalkit refuses deeper JSON")


def test_nesting_at_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    # the case object is level 1, so MAX_DEPTH - 1 lists inside it reach the bound
    inner = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    path.write_text('{"id": "q1", "query": "a", "x": ' + inner + "}\n")
    assert len(load_goldens(path)) == 1
    path.write_text('{"id": "q1", "query": "a", "x": [' + inner + "]}\n")
    with pytest.raises(GoldenError, match=f"nested more than {MAX_DEPTH} levels"):
        load_goldens(path)


def test_deep_yaml_golden_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("- id: q1\n  query: a\n- id: q2\n  query: b\n  x: " + "[" * DEEP + "\n")
    calls, exc = quickly(load_goldens, path)
    assert calls < MOST_CALLS and isinstance(exc, GoldenError)  # unbounded: a RecursionError
    assert str(exc) == (f"{path}:5: lists and mappings nested more than {MAX_DEPTH} levels "
                        "deep; evalkit refuses deeper nesting")


def test_deep_csv_cell_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text('id,query,relevance\nq1,a,{}\nq2,b,"' + "[" * DEEP + '"\n')
    with pytest.raises(GoldenError) as info:
        load_goldens(path)
    assert str(info.value).startswith(f"{path}:3: column 'relevance': nested more than")


def test_deep_checks_and_eval_config_yaml(tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: a\n    metric: " + "[" * DEEP + "\n")
    with pytest.raises(CheckError, match=rf"^{checks}:3: lists and mappings nested more"):
        load_checks(checks)
    config = tmp_path / "evalkit.yaml"
    config.write_text("goldens: g.jsonl\nname: " + "{a: " * DEEP + "\n")
    with pytest.raises(ConfigError, match="nested more than 100 levels"):
        load_eval_config(config)


def test_deep_toml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.evalkit]\nmetrics = " + "[" * DEEP + "]" * DEEP + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_eval_config(path)


def artifact(tmp_path: Path, row: str) -> Path:
    path = tmp_path / "run.jsonl"
    header = {"type": "header", "schema_version": 1, "name": "r"}
    path.write_text(json.dumps(header) + "\n" +
                    '{"type": "row", "id": "q1", "metrics": {"ap": 0.5}}\n' + row + "\n")
    return path


def test_a_deep_artifact_row_names_file_and_line(tmp_path: Path) -> None:
    path = artifact(tmp_path, '{"type": "row", "id": "q2", "x": ' + "[" * DEEP + "]" * DEEP
                    + "}")
    with pytest.raises(ArtifactError) as info:
        RunResult.load(path)
    assert str(info.value).startswith(f"{path}:3: nested more than")
    line = one_error(runner.invoke(app, ["eval", str(path)]))
    assert f"{path}:3: nested more than" in line


# ------------------------------------------------------------------ bytes and lengths
def test_csv_goldens_refuse_nul_bytes_as_jsonl_does(tmp_path: Path) -> None:
    csv_path = tmp_path / "cases.csv"
    csv_path.write_bytes(b"id,query\nq1,a\nq2,b\x00c\n")
    with pytest.raises(GoldenError) as info:
        load_goldens(csv_path)
    assert str(info.value).startswith(f"{csv_path}:3: the line contains a NUL byte")
    jsonl = tmp_path / "cases.jsonl"
    jsonl.write_bytes(b'{"id": "q1", "query": "a"}\n{"id": "q2", "query": "b\x00"}\n')
    with pytest.raises(GoldenError, match=rf"^{jsonl}:2: the line contains a NUL byte"):
        load_goldens(jsonl)


def test_an_overlong_case_id_is_refused_not_printed_back(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    long_id = "q" * 1_000_000
    path.write_text(json.dumps({"id": long_id, "query": "a"}) + "\n")
    with pytest.raises(GoldenError) as info:
        load_goldens(path)
    message = str(info.value)
    assert message == (f"{path}:1: the id is 1000000 characters long (starts "
                       f"{'q' * 20!r}); the limit is {MAX_ID_CHARS}")
    ok = "q" * MAX_ID_CHARS
    path.write_text(json.dumps({"id": ok, "query": "a", "expected": ["d" * MAX_ID_CHARS]})
                    + "\n")
    assert load_goldens(path).ids() == [ok]


def test_an_overlong_run_tag_is_refused(tmp_path: Path) -> None:
    from evalkit_retrieval.trec import TrecFormatError, load_run

    run = tmp_path / "run.txt"
    tag = "t" * 100_000
    run.write_text(f"q1 Q0 d1 1 2.5 short\nq1 Q0 d2 2 1.5 {tag}\n")
    with pytest.raises(TrecFormatError) as info:
        load_run(run)
    message = str(info.value)
    assert "line 2" in message or f"{run}:2" in message
    assert f"the run tag is 100,000 bytes long (starts {'t' * 20!r}); the limit is " \
        f"{MAX_NAME_CHARS}" in message
    assert len(message) < 1000
    run.write_text(f"q1 Q0 d1 1 2.5 {'t' * MAX_NAME_CHARS}\n")
    assert load_run(run).name == "t" * MAX_NAME_CHARS


def test_an_overlong_document_id_is_refused(tmp_path: Path) -> None:
    from evalkit_retrieval.trec import TrecFormatError, load_run

    run = tmp_path / "run.txt"
    run.write_text(f"q1 Q0 d1 1 2.5 tag\nq1 Q0 {'d' * 5000} 2 1.5 tag\n")
    with pytest.raises(TrecFormatError, match=f"the document id is 5,000 bytes long .*the "
                       f"limit is {MAX_ID_CHARS}"):
        load_run(run)


def test_an_overlong_run_name_in_an_artifact_or_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    header = {"type": "header", "schema_version": 1, "name": "n" * 10_000}
    path.write_text(json.dumps(header) + "\n" + '{"type": "row", "id": "q1", "metrics": {}}\n')
    with pytest.raises(ArtifactError, match=rf"^{path}:1: the run name is 10000 characters"):
        RunResult.load(path)
    config = tmp_path / "evalkit.yaml"
    config.write_text(f"name: {'n' * 300}\ngoldens: g.jsonl\noutput: o.jsonl\nmetrics: [ap]\n"
                      "target: {factory: 'm:f'}\n")
    with pytest.raises(ConfigError, match="key 'name': the run name is 300 characters"):
        load_eval_config(config)


def test_a_deep_line_in_an_artifact_being_resumed_names_file_and_line(tmp_path: Path) -> None:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import GoldenSet
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.target_runner import evaluate

    path = tmp_path / "run.jsonl"
    gs = GoldenSet([GoldenCase("q1", "a"), GoldenCase("q2", "b")])
    target = CallableTarget(lambda case: ["d1"], name="t")
    evaluate(target, gs, aggregates=["latency_p50"], artifact=path, progress=False)
    lines = path.read_text().splitlines()
    lines[2] = '{"type": "row", "id": "q2", "x": ' + "[" * DEEP + "]" * DEEP + "}"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ArtifactError, match=rf"^{path}:3: nested more than 105 levels"):
        evaluate(target, gs, aggregates=["latency_p50"], artifact=path, resume=True,
                 progress=False)


def judged_runs(tmp_path: Path) -> tuple[Path, Path]:
    from evalkit.data.rows import CaseResult
    from evalkit.data.targets import TargetResponse

    paths = []
    for name, scores in (("a", (1.0, 2.0, 3.0)), ("b", (2.0, 2.0, 4.0))):
        rows = [CaseResult(f"c{i}", TargetResponse(text="x"), {"correctness": s})
                for i, s in enumerate(scores)]
        RunResult(name, rows, {"kind": "target"}).save(tmp_path / f"{name}.jsonl")
        paths.append(tmp_path / f"{name}.jsonl")
    return paths[0], paths[1]


@pytest.mark.parametrize("golden", [False, True])
def test_a_deep_labels_file_names_file_and_line_in_every_command(
        tmp_path: Path, golden: bool) -> None:
    a, b = judged_runs(tmp_path)
    labels = tmp_path / "labels.jsonl"
    query = '"query": "q", ' if golden else ""
    labels.write_text('{"id": "c0", ' + query + '"labels": {"correctness": '
                      + "[" * 1000 + "]" * 1000 + "}}\n")
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: floor\n    metric: correctness\n    op: '>='\n"
                      "    threshold: 0\n")
    for args in (["agreement", str(b), "--labels", str(labels)],
                 ["compare", str(a), str(b), "-m", "correctness", "--ppi",
                  "--labels", str(labels), "--labels", str(labels)],
                 ["gate", "--checks", str(checks), "--run", str(b), "--labels", str(labels)]):
        line = one_error(runner.invoke(app, args))
        assert f"{labels}:1: nested more than" in line, (args, line)


def test_a_deep_first_line_is_sniffed_without_recursion(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * DEEP + "]" * DEEP + "\n")
    line = one_error(runner.invoke(app, ["eval", str(path)]))
    assert str(path) in line


@pytest.mark.parametrize("ids", [
    ["q1", "q2"], [], [""], ["a b"], ["x" * MAX_ID_CHARS], ["x" * (MAX_ID_CHARS + 1)],
    ["q1", "q\x002"], ["q1", " q2"], ["q2 "], ["   "], ["q\u2028"], ["q\x7f"],
    ["caf\u00e9", "\u00a0x"], ["a", "b\t"],
])
def test_ids_pass_never_accepts_what_check_id_refuses(ids: list[str]) -> None:
    from evalkit.io.limits import LimitError, check_id, ids_pass

    refused = []
    for text in ids:
        try:
            check_id(text)
        except LimitError:
            refused.append(text)
    if ids_pass(ids):
        assert refused == []
    if not refused and all(t.isprintable() and t.strip() == t for t in ids):
        assert ids_pass(ids)  # the usual ids are passed at once


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_loads_json_without_constants_refuses_what_json_does_not_have(literal: str) -> None:
    from evalkit.io.limits import NotJsonError, loads_json

    text = '{"score": ' + literal + "}"
    assert str(loads_json(text)["score"]) in {"nan", "inf", "-inf"}  # json.loads' default
    with pytest.raises(NotJsonError, match=f"^{literal} is not JSON \\(RFC 8259"):
        loads_json(text, constants=False)
    # a string that reads "NaN" is JSON
    assert loads_json('{"score": "NaN"}', unique_keys=True, constants=False) == {
        "score": "NaN"}


def test_repeated_and_first_repeated_are_linear_scans() -> None:
    from evalkit.io.limits import first_repeated, repeated

    assert repeated(["a", "b", "a", "c", "b", "a"]) == ["a", "b"]
    assert first_repeated(["a", "b", "b", "a"]) == "b"
    assert first_repeated(range(10)) is None

    class Counted(str):
        compared = 0

        def __eq__(self, other: object) -> bool:
            Counted.compared += 1
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    names = [Counted(f"c{i}") for i in range(5000)]
    assert repeated(names) == [] and first_repeated(names) is None
    # a set lookup compares only on a hash collision: far fewer than n*(n-1)/2 comparisons
    assert Counted.compared < 100


def test_shown_cuts_a_long_value_and_names_its_length() -> None:
    from evalkit.io.limits import MAX_SHOWN_CHARS, shown

    text = shown("x" * 10_000_000)
    assert len(text) < MAX_SHOWN_CHARS + 40 and "(10,000,000 characters)" in text
    assert shown("abc") == "'abc'"
    assert len(shown(list(range(1_000_000)))) < 100


def test_loads_json_lets_bytes_that_are_not_utf8_through_as_such() -> None:
    # UnicodeDecodeError is a ValueError: it is not reported as an integer too long
    from evalkit.io.limits import loads_json

    with pytest.raises(UnicodeDecodeError):
        loads_json(b'{"text": "\xff\xfe bad"}')


def test_a_deep_json_collections_file_is_not_called_yaml(tmp_path: Path) -> None:
    from evalkit.comparison.collections_file import CollectionsFileError, load_collections

    path = tmp_path / "col.json"
    path.write_text('{"collections": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}")
    with pytest.raises(CollectionsFileError) as info:
        load_collections(path)
    assert "YAML" not in str(info.value) and "deeper nesting" in str(info.value)
