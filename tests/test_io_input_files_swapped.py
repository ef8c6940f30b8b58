"""``evalkit.io.input_messages``' swapped inputs around the YAML files: a run artifact, a TREC
run or qrels file, a golden set (JSON Lines, YAML or CSV), a labels file or another evalkit
YAML file given where a checks file, an eval config, a collections file, a golden set or
labels are read is named as what it is,
with where it goes and what the option takes (:func:`~evalkit.io.input_messages.
swapped_input_message`); and an evalkit YAML file given as a run, a baseline or qrels is named
the same way (:func:`~evalkit.io.input_files.sniff`'s ``"yaml"`` kind)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.comparison.collections_file import CollectionsFileError, load_collections
from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.goldens_yaml import load_yaml
from evalkit.data.labels import LabelError, read_labels
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.gate.checks import CheckError, load_checks
from evalkit.io.input_files import sniff
from evalkit.io.input_messages import swapped_input_message

runner = CliRunner()


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    """One file of each kind a user may swap, by kind."""
    out = {
        "artifact": tmp_path / "run.jsonl",
        "run": tmp_path / "x.run",
        "qrels": tmp_path / "x.qrels",
        "goldens": tmp_path / "goldens.jsonl",
        "checks": tmp_path / "checks.yaml",
        "config": tmp_path / "evalkit.yaml",
        "collections": tmp_path / "collections.yaml",
    }
    out["artifact"].write_text(
        json.dumps({"type": "header", "schema_version": 2, "name": "a"}) + "\n"
        + json.dumps({"type": "row", "id": "q1", "metrics": {"m": 1.0}}) + "\n")
    out["run"].write_text("q1 Q0 d1 1 2.0 sysA\nq1 Q0 d2 2 1.0 sysA\n")
    out["qrels"].write_text("q1 0 d1 1\nq1 0 d2 0\n")
    out["goldens"].write_text('{"id": "c1", "query": "a"}\n{"id": "c2", "query": "b"}\n')
    out["checks"].write_text("checks:\n  - metric: m\n    op: '>='\n    threshold: 0\n")
    out["config"].write_text("goldens: goldens.jsonl\ntarget:\n  factory: m:make\n"
                             "output: run.jsonl\n")
    out["collections"].write_text("collections:\n  - name: a\n    baseline: x.run\n"
                                  "    candidate: x.run\n")
    return out


def test_sniff_names_the_evalkit_yaml_files(files: dict[str, Path], tmp_path: Path) -> None:
    for role in ("checks", "config", "collections"):
        found = sniff(files[role])
        assert (found.kind, found.role, found.line) == ("yaml", role, 1)
    cases = tmp_path / "cases.yaml"
    cases.write_text("# a golden set\ncases:\n  - id: c1\n    query: a\n")
    assert (sniff(cases).kind, sniff(cases).role, sniff(cases).line) == ("yaml", "goldens", 2)
    other = tmp_path / "other.yaml"
    other.write_text("name: x\n")
    assert (sniff(other).kind, sniff(other).role, sniff(other).looks_like) == (
        "yaml", "", "a YAML file")


def test_an_artifact_as_the_checks_file_is_named_with_the_fix(
        files: dict[str, Path]) -> None:
    res = runner.invoke(app, ["gate", "--checks", str(files["artifact"]),
                              "--run", str(files["artifact"])])
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f"error: {files['artifact']}:1: an evalkit run artifact, not a gate checks file "
        "(YAML): pass it as --run (or --baseline) to `evalkit gate`, or as a run to "
        "`evalkit compare` or `evalkit eval`. --checks takes a gate checks file (YAML), "
        "e.g. checks: [{metric: ndcg@10, op: '>=', threshold: 0.5}]\n")


@pytest.mark.parametrize(("kind", "where"), [
    ("run", "a TREC run file (qid Q0 docno rank score tag), not {what}: score it with "
            "`evalkit eval RUN --qrels QRELS`"),
    ("qrels", "a TREC qrels file (4 fields per line: qid 0 docno label), not {what}: pass "
              "it as --qrels"),
    ("goldens", "a golden set (JSON Lines of cases with id and query), not {what}: name it "
                "as goldens: in evalkit.yaml"),
])
def test_every_reader_names_a_swapped_input(files: dict[str, Path], kind: str,
                                            where: str) -> None:
    path = files[kind]
    readers: list[tuple[Callable[[], object], type[Exception], str, str]] = [
        (lambda: load_checks(path), CheckError, "a gate checks file (YAML)", "--checks"),
        (lambda: load_eval_config(path), ConfigError, "an eval config (evalkit.yaml)",
         "`evalkit run CONFIG` (and --config)"),
        (lambda: load_collections(path), CollectionsFileError,
         "a collections file (YAML)", "--collections"),
        (lambda: load_yaml(path), GoldenError,
         "a golden set (JSON Lines, YAML or CSV cases with id and query)",
         "goldens: in evalkit.yaml"),
        (lambda: read_labels(path), LabelError,
         "a labels file (JSON Lines) or a golden file with labels", "--labels"),
    ]
    if kind == "goldens":  # a golden file with labels is a labels file; the golden reader
        del readers[-2:]  # says what is wrong with a golden set's format
    for read, error, what, label in readers:
        with pytest.raises(error) as info:
            read()
        text = str(info.value)
        assert f"{path.name}:1: " + where.format(what=what) in text, text
        assert f"{label} takes {what}, e.g. " in text, text


def test_another_evalkit_yaml_file_is_named_as_what_it_is(files: dict[str, Path],
                                                          tmp_path: Path) -> None:
    with pytest.raises(CheckError, match=r"evalkit.yaml is an eval config \(evalkit.yaml\), "
                       r"not a gate checks file \(YAML\); pass it as `evalkit run CONFIG`"):
        load_checks(files["config"])
    with pytest.raises(CollectionsFileError, match=r"checks.yaml is a gate checks file "
                       r"\(YAML\), not a collections file \(YAML\); pass it as `evalkit gate "
                       r"--checks FILE`"):
        load_collections(files["checks"])
    with pytest.raises(ConfigError, match=r"collections.yaml is a collections file \(YAML\), "
                       r"not an eval config .*`evalkit compare --collections FILE`"):
        load_eval_config(files["collections"])
    with pytest.raises(LabelError, match=r"checks.yaml is a gate checks file \(YAML\), not "
                       r"a labels file .*; pass it as `evalkit gate --checks FILE`. --labels "
                       r"takes "):
        read_labels(files["checks"])
    golden = tmp_path / "labelled.yaml"  # a golden set with labels is a labels file too
    golden.write_text("cases:\n  - id: c1\n    query: a\n    labels: {correctness: 3}\n")
    assert read_labels(golden).labels == {"c1": {"correctness": 3.0}}


def test_a_file_of_its_own_kind_or_unknown_is_left_to_the_reader(
        files: dict[str, Path], tmp_path: Path) -> None:
    assert swapped_input_message(files["checks"], "checks", "--checks") is None
    assert swapped_input_message(files["config"], "config", "CONFIG") is None
    assert swapped_input_message("-", "checks", "--checks") is None  # standard input: read once
    other = tmp_path / "other.jsonl"
    other.write_text('{"a": 1}\n{"b": 2}\n')
    assert swapped_input_message(other, "checks", "--checks") is None
    with pytest.raises(CheckError, match=r"other.jsonl:2: not valid YAML"):
        load_checks(other)


def test_an_evalkit_yaml_file_as_a_run_baseline_or_qrels(files: dict[str, Path]) -> None:
    checks = str(files["checks"])
    res = runner.invoke(app, ["gate", "--checks", checks, "--run", checks])
    assert res.stderr == (
        f"error: run {checks} is a gate checks file (YAML), not an evalkit run artifact; "
        f"pass it as `evalkit gate --checks FILE`. Score a TREC run first: evalkit eval RUN "
        f"--qrels QRELS --save checks.jsonl (or write one with evalkit run)\n")
    res = runner.invoke(app, ["eval", checks, "--qrels", str(files["qrels"])])
    assert res.exit_code == 2
    assert res.stderr.startswith(
        f"error: {checks} is a gate checks file (YAML), not a run; pass it as `evalkit gate "
        "--checks FILE`. This command takes a TREC run file"), res.stderr
    config = str(files["config"])
    res = runner.invoke(app, ["eval", str(files["run"]), "--qrels", config])
    assert res.exit_code == 2
    assert res.stderr == (
        f"error: --qrels {config} is an eval config (evalkit.yaml), not TREC qrels; pass "
        "it as `evalkit run CONFIG` or `evalkit gate --config CONFIG`. Pass a qrels file "
        "with lines `qid 0 docno label`\n")


LABELS = ('{"selection": "random", "seed": 7}\n'
          '{"id": "c1", "labels": {"correctness": 4}}\n')
LABELS_USE = ("pass it as --labels (`evalkit agreement`, `evalkit gate`, `evalkit compare`, "
              "`evalkit run --ppi`)")
GOLDENS_USE = ("name it as goldens: in evalkit.yaml and run it with `evalkit run` (a golden "
               "set with labels is also read by --labels)")


@pytest.mark.parametrize(("name", "text", "kind", "looks_like"), [
    ("goldens.yaml", "# cases\n- {id: c1, query: \"a?\", answers: [b]}\n", "yaml",
     "a golden set (YAML cases with id and query)"),
    ("goldens.yml", "- id: c1\n  query: a\n- id: c2\n  query: b\n", "yaml",
     "a golden set (YAML cases with id and query)"),
    ("goldens.csv", "id,query,answers\nc1,a,b\n", "goldens",
     "a golden set (CSV with id and query columns)"),
    ("goldens.txt", '"query", id\na,c1\n', "goldens",
     "a golden set (CSV with id and query columns)"),
    ("labels.jsonl", LABELS, "labels", "a labels file (JSON Lines of case ids and their labels)"),
    ("labels.txt", LABELS.splitlines(keepends=True)[1], "labels",
     "a labels file (JSON Lines of case ids and their labels)"),
])
def test_sniff_names_goldens_and_labels_in_every_format(
        tmp_path: Path, name: str, text: str, kind: str, looks_like: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    found = sniff(path)
    assert (found.kind, found.looks_like) == (kind, looks_like)
    assert found.role == ("goldens" if kind == "yaml" else "")


def test_a_yaml_list_without_queries_and_a_csv_without_them_are_not_goldens(
        tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- {name: b}\n")
    assert (sniff(listed).kind, sniff(listed).role) == ("yaml", "")
    table = tmp_path / "t.csv"
    table.write_text("id,text\nc1,a\n")
    assert sniff(table).kind == "text"


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "llm_offline"


@pytest.mark.parametrize(("path", "says"), [
    (EXAMPLES / "goldens.yaml", f"{EXAMPLES / 'goldens.yaml'} is a golden set (YAML cases "
     f"with id and query), not a gate checks file (YAML); {GOLDENS_USE}. --checks takes "),
    (EXAMPLES / "labels.jsonl", f"{EXAMPLES / 'labels.jsonl'}:1: a labels file (JSON Lines "
     f"of case ids and their labels), not a gate checks file (YAML): {LABELS_USE}. --checks "
     "takes "),
])
def test_goldens_and_labels_as_the_checks_file_are_named_with_the_fix(
        files: dict[str, Path], path: Path, says: str) -> None:
    res = runner.invoke(app, ["gate", "--checks", str(path), "--run", str(files["artifact"])])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"error: {says}"), res.stderr


def test_a_labels_file_is_named_wherever_it_is_given_in_the_wrong_place(
        files: dict[str, Path], tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(LABELS)
    what = "a labels file (JSON Lines of case ids and their labels)"
    readers: list[tuple[Callable[[], object], type[Exception]]] = [
        (lambda: load_checks(labels), CheckError),
        (lambda: load_eval_config(labels), ConfigError),
        (lambda: load_collections(labels), CollectionsFileError),
        (lambda: load_goldens(labels), GoldenError)]
    for read, error in readers:
        with pytest.raises(error) as info:
            read()
        assert f"labels.jsonl:1: {what}, not " in str(info.value)
        assert LABELS_USE in str(info.value)
    res = runner.invoke(app, ["eval", str(labels), "--qrels", str(files["qrels"])])
    assert res.stderr.startswith(f"error: {labels} is {what}, not a run; {LABELS_USE}. ")
    res = runner.invoke(app, ["eval", str(files["run"]), "--qrels", str(labels)])
    assert res.stderr.startswith(f"error: --qrels {labels} is {what}, not TREC qrels; "
                                 f"{LABELS_USE}. ")
    assert read_labels(labels).labels == {"c1": {"correctness": 4.0}}  # where it belongs


def test_every_golden_reader_names_a_checks_or_labels_file(files: dict[str, Path],
                                                           tmp_path: Path) -> None:
    for suffix in (".jsonl", ".csv", ".yaml"):
        checks = tmp_path / f"checks{suffix}"
        checks.write_text(files["checks"].read_text())
        with pytest.raises(GoldenError, match=r"is a gate checks file \(YAML\), not a "
                           r"golden set .*; pass it as `evalkit gate --checks FILE`"):
            load_goldens(checks)
    for name, good in (("g.csv", "id,query\nc1,a\n"), ("g.yaml", "- {id: c1, query: a}\n")):
        golden = tmp_path / name
        golden.write_text(good)
        assert [c.id for c in load_goldens(golden)] == ["c1"]
