"""Golden-set loading: ids stay text (C13), BOM/CRLF (C14), and every fail-loud rule.

The golden field ``answers``: a text or a list of texts, read alike from JSON Lines,
YAML (as written: ``yes`` and ``3.10`` stay text) and CSV; refused with the file, line
and a fix when it is empty or not text; recorded in a case's digest only when given, so
the digests of existing golden sets do not change.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evalkit.core.registry import RegistryError
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenError, GoldenSet, case_digest, case_from_record, load_goldens
from evalkit.plugins.default import use_registry

C13_YAML = (
    "- id: 010\n  query: alpha\n  relevant: [d1]\n"
    "- id: 10\n  query: beta\n  relevant: [d2]\n"
    "- id: 12:30\n  query: gamma\n  relevant: [d3]\n"
)
C13_CSV = "id,query,relevant\n007,alpha,d1\n7,beta,d2\n"
C13_RUN = ["010 Q0 d1 1 1.0 sysA", "10 Q0 d2 1 1.0 sysA", "12:30 Q0 d3 1 1.0 sysA"]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_bytes(text.encode("utf-8"))
    return p


# ------------------------------------------------------------------ C13
def test_c13_yaml_ids_keep_their_source_text(tmp_path: Path) -> None:
    gs = load_goldens(write(tmp_path, "cases.yaml", C13_YAML))
    assert gs.ids() == ["010", "10", "12:30"]
    naive: list[object] = [8, 10, 750]  # what yaml.safe_load would have produced
    assert gs.ids() != naive
    assert sorted(gs.get("010").relevant) == ["d1"]
    assert sorted(gs.get("12:30").relevant) == ["d3"]


def test_c13_csv_ids_keep_leading_zeros(tmp_path: Path) -> None:
    gs = load_goldens(write(tmp_path, "cases.csv", C13_CSV))
    assert gs.ids() == ["007", "7"]
    assert gs.get("007").query == "alpha" and gs.get("7").query == "beta"


def test_c13_recall_at_1_against_the_trec_run(tmp_path: Path) -> None:
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.target_runner import evaluate

    ranking: dict[str, list[str]] = {}
    for line in C13_RUN:
        qid, _, doc, _, _, _ = line.split()
        ranking.setdefault(qid, []).append(doc)
    gs = load_goldens(write(tmp_path, "cases.yaml", C13_YAML))
    run = evaluate(CallableTarget(lambda c: ranking[c.id], name="sysA"), gs, ["recall@1"],
                   progress=False)
    assert len(run.per_query) == 3
    assert run.scores("recall@1") == {"010": 1.0, "10": 1.0, "12:30": 1.0}


def test_yaml_ids_inside_lists_and_relevance_stay_text(tmp_path: Path) -> None:
    text = "- id: q1\n  query: a\n  expected: [010, 0x1F, 1e3]\n  relevance: {010: 2, 8: 1}\n"
    case = load_goldens(write(tmp_path, "c.yml", text)).get("q1")
    assert case.expected == ["010", "0x1F", "1e3"]
    assert dict(case.relevance) == {"010": 2, "8": 1}
    assert case.relevant == frozenset({"010", "8"})


def test_yaml_scalar_expected_is_kept_as_written(tmp_path: Path) -> None:
    text = "- id: a\n  query: q\n  expected: yes\n- id: b\n  query: q\n  expected: ~\n"
    gs = load_goldens(write(tmp_path, "c.yaml", text))
    assert gs.get("a").expected == "yes"
    assert gs.get("b").expected is None


# ------------------------------------------------------------------ C14
def test_c14_csv_with_bom_and_crlf(tmp_path: Path) -> None:
    gs = load_goldens(write(tmp_path, "g.csv", "\ufeffid,query\r\nq1,alpha\r\n"))
    assert gs.ids() == ["q1"]
    case = gs.get("q1")
    assert case.query == "alpha"
    assert dict(case.context) == {}  # no column named '\ufeffid' slipped into context


def test_c14_jsonl_with_bom_crlf_and_trailing_blank_line(tmp_path: Path) -> None:
    text = '\ufeff{"id": "q1", "query": "alpha"}\r\n{"id": "q2", "query": "beta"}\r\n\r\n'
    gs = load_goldens(write(tmp_path, "g.jsonl", text))
    assert gs.ids() == ["q1", "q2"]
    assert gs.get("q2").query == "beta"


def test_yaml_with_bom_and_crlf(tmp_path: Path) -> None:
    gs = load_goldens(write(tmp_path, "g.yaml", "\ufeff- id: 010\r\n  query: a\r\n"))
    assert gs.ids() == ["010"]


# ------------------------------------------------------------------ fields
def test_expected_ids_text_or_null_and_extra_fields_as_context(tmp_path: Path) -> None:
    text = (
        '{"id": "r", "query": "find", "expected": ["d1", "d2"], "topic": "x", "weight": 2}\n'
        '{"id": "t", "query": "say", "expected": "hello"}\n'
        '{"id": "n", "query": "none", "expected": null}\n'
        '{"id": 42, "query": "int id"}\n'
    )
    gs = load_goldens(write(tmp_path, "g.jsonl", text))
    r = gs.get("r")
    assert r.expected == ["d1", "d2"]
    assert r.relevant == frozenset({"d1", "d2"})
    assert dict(r.relevance) == {"d1": 1, "d2": 1}
    assert dict(r.context) == {"topic": "x", "weight": 2}
    assert gs.get("t").expected == "hello" and gs.get("t").relevant == frozenset()
    assert gs.get("n").expected is None
    assert gs.ids()[3] == "42"


def test_csv_cells_for_expected_relevant_and_relevance(tmp_path: Path) -> None:
    text = (
        'id,query,expected,relevant,relevance,note\n'
        'a,q,"[""d1"", ""d2""]",,,n1\n'
        'b,q,plain answer,d3 d4,,\n'
        'c,q,,,"{""d5"": 2, ""d6"": 0}",\n'
    )
    gs = load_goldens(write(tmp_path, "g.csv", text))
    assert gs.get("a").expected == ["d1", "d2"]
    assert gs.get("a").relevant == frozenset({"d1", "d2"})
    assert dict(gs.get("a").context) == {"note": "n1"}
    assert gs.get("b").expected == "plain answer"
    assert gs.get("b").relevant == frozenset({"d3", "d4"})
    assert gs.get("c").expected is None
    assert dict(gs.get("c").relevance) == {"d5": 2, "d6": 0}
    assert gs.get("c").relevant == frozenset({"d5"})


# ------------------------------------------------------------------ fail loud
@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        ("dup.jsonl", '{"id": "a", "query": "x"}\n{"id": "a", "query": "y"}\n',
         r"dup.jsonl:2: duplicate case id 'a' \(first on line 1\)"),
        ("noid.jsonl", '{"query": "x"}\n', r"noid.jsonl:1: the case has no 'id'"),
        ("nullid.jsonl", '{"id": null, "query": "x"}\n', r"nullid.jsonl:1: id None"),
        ("floatid.jsonl", '{"id": 1.5, "query": "x"}\n', r"floatid.jsonl:1: .*quote it"),
        ("noquery.jsonl", '{"id": "a"}\n', r"noquery.jsonl:1: case 'a' has no 'query'"),
        ("empty.jsonl", "", r"empty.jsonl: zero cases"),
        ("blank.jsonl", "\r\n\n", r"blank.jsonl: zero cases"),
        ("array.jsonl", '["a"]\n', r"array.jsonl:1: expected a JSON object"),
        ("bad.jsonl", '{"id": "a", "query": "x"}\n{oops\n', r"bad.jsonl:2: not valid JSON"),
        ("exp.jsonl", '{"id": "a", "query": "x", "expected": {"k": 1}}\n',
         r"exp.jsonl:1: case 'a': 'expected' must be a list of ids, a text or null"),
        ("expnum.jsonl", '{"id": "a", "query": "x", "expected": 3}\n',
         r"'expected' must be a list of ids"),
        ("twice.jsonl", '{"id": "a", "query": "x", "expected": ["d1", "d1"]}\n',
         r"'expected' lists 'd1' twice"),
        ("surplus.csv", "id,query\na,x,extra\n",
         r"surplus.csv:2: 3 cells but the header has 2 columns \(more cells"),
        ("short.csv", "id,query,note\na,x\n", r"short.csv:2: 2 cells .*fewer"),
        ("nohead.csv", "", r"nohead.csv: empty file; zero cases"),
        ("onlyhead.csv", "id,query\r\n", r"onlyhead.csv: zero cases"),
        ("dupcol.csv", "id,query,id\na,b,c\n", r"dupcol.csv:1: column 'id' appears twice"),
        ("noidcol.csv", "key,query\na,b\n", r"noidcol.csv:1: the header has no 'id' column"),
        ("dup.csv", "id,query\n007,a\n007,b\n", r"dup.csv:3: duplicate case id '007'"),
        ("empty.yaml", "", r"empty.yaml: empty file; zero cases"),
        ("emptylist.yaml", "[]\n", r"emptylist.yaml: zero cases"),
        ("nullid.yaml", "- id:\n  query: a\n", r"nullid.yaml:1: missing id"),
        ("listid.yaml", "- id: [1]\n  query: a\n", r"listid.yaml:1: an id must be a single"),
        ("dupkey.yaml", "- id: a\n  query: x\n  query: y\n",
         r"dupkey.yaml:3: key 'query' appears twice"),
        ("dupid.yaml", "- id: 010\n  query: x\n- id: '010'\n  query: y\n",
         r"dupid.yaml:3: duplicate case id '010'"),
        ("scalar.yaml", "hello\n", r"scalar.yaml:1: expected a list of cases"),
        ("notmap.yaml", "- just text\n", r"notmap.yaml:1: a case must be a mapping"),
        ("badyaml.yaml", "- id: a\n  query: [x\n", r"badyaml.yaml:\d+: invalid YAML"),
    ],
)
def test_fail_loud(tmp_path: Path, name: str, text: str, pattern: str) -> None:
    with pytest.raises(GoldenError, match=pattern):
        load_goldens(write(tmp_path, name, text))


def test_missing_file_and_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match="no such golden file"):
        load_goldens(tmp_path / "absent.jsonl")
    p = write(tmp_path, "cases.parquet", "x")
    with pytest.raises(RegistryError, match=r"no goldens loader for the suffix of .*parquet.*"
                       r"known goldens loaders: csv, (irds, )?jsonl, yaml"):
        load_goldens(p)


def test_loader_chosen_by_name_overrides_suffix(tmp_path: Path) -> None:
    p = write(tmp_path, "cases.txt", '{"id": "a", "query": "x"}\n')
    assert load_goldens(p, loader="jsonl").ids() == ["a"]
    with pytest.raises(RegistryError, match="no goldens loader for nope"):
        load_goldens(p, loader="nope")


def test_register_loader_adds_a_format(tmp_path: Path) -> None:
    with use_registry() as reg:

        @reg.register_loader("pipes")
        def load_pipes(path: Path) -> list[dict[str, str]]:
            rows = [line.split("|") for line in path.read_text().splitlines() if line]
            return [{"id": i, "query": q} for i, q in rows]

        p = write(tmp_path, "cases.pipes", "001|first\n1|second\n")
        gs = load_goldens(p)
        assert gs.ids() == ["001", "1"]
        assert gs.get("1").query == "second"
        write(tmp_path, "dup.pipes", "a|x\na|y\n")
        with pytest.raises(GoldenError, match="duplicate case id 'a'"):
            load_goldens(tmp_path / "dup.pipes")

        @reg.register_loader("broken", suffixes=(".brk",))
        def load_broken(path: Path) -> None:
            return None

        with pytest.raises(GoldenError, match="loader 'broken' returned NoneType"):
            load_goldens(write(tmp_path, "x.brk", ""))


def test_golden_set_api() -> None:
    gs = GoldenSet([GoldenCase("b", "q"), GoldenCase("a", "q")])
    assert gs.ids() == ["b", "a"]
    assert [c.id for c in gs] == ["b", "a"]
    assert len(gs) == 2 and "a" in gs and "c" not in gs
    with pytest.raises(KeyError, match="has no case 'c'"):
        gs.get("c")
    with pytest.raises(GoldenError, match="zero cases"):
        GoldenSet([])
    with pytest.raises(GoldenError, match="duplicate case id 'a'"):
        GoldenSet([GoldenCase("a"), GoldenCase("a")])
    same = GoldenSet([GoldenCase("b", "q"), GoldenCase("a", "q")])
    changed = GoldenSet([GoldenCase("b", "q"), GoldenCase("a", "other")])
    assert gs.digest() == same.digest() != changed.digest()
    assert gs.case_digests()["b"] == changed.case_digests()["b"]
    assert gs.case_digests()["a"] != changed.case_digests()["a"]


def test_case_from_record_is_usable_by_custom_loaders() -> None:
    case = case_from_record({"id": "x", "query": "q", "relevant": ["d1"],
                             "expected": "text answer"}, "mine:1")
    assert case.relevant == frozenset({"d1"}) and case.expected == "text answer"
    with pytest.raises(GoldenError, match=r"^mine:7: the case has no 'id'"):
        case_from_record({"query": "q"}, "mine:7")


def test_jsonl_yaml_and_csv_read_answers_alike(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text(
        '{"id": "a", "query": "q", "answers": ["Paris", "City of Paris"]}\n'
        '{"id": "b", "query": "q", "answers": "yes"}\n'
        '{"id": "c", "query": "q", "expected": "Rome"}\n')
    (tmp_path / "g.yaml").write_text(
        "- {id: a, query: q, answers: [Paris, City of Paris]}\n"
        "- {id: b, query: q, answers: yes}\n"
        "- {id: c, query: q, expected: Rome}\n")
    (tmp_path / "g.csv").write_text(
        'id,query,answers,expected\na,q,"[""Paris"", ""City of Paris""]",\nb,q,yes,\n'
        "c,q,,Rome\n")
    for name in ("g.jsonl", "g.yaml", "g.csv"):
        gs = load_goldens(tmp_path / name)
        got = [(c.id, c.answers, c.reference_answers()) for c in gs]
        assert got == [("a", ("Paris", "City of Paris"), ("Paris", "City of Paris")),
                       ("b", ("yes",), ("yes",)),
                       ("c", (), ("Rome",))], name
        assert "answers" not in gs.get("a").context


def test_yaml_scalars_are_not_converted(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text("- {id: a, query: q, answers: [yes, 3.10, 010, ~x]}\n")
    assert load_goldens(tmp_path / "g.yaml").get("a").answers == ("yes", "3.10", "010", "~x")


@pytest.mark.parametrize(("record", "message"), [
    ({"answers": []}, "'answers' is an empty list; write a text or a list of texts"),
    ({"answers": ""}, "'answers' is an empty text"),
    ({"answers": ["a", ""]}, "an item of 'answers' is an empty text"),
    ({"answers": "  "}, "'answers' is blank ('  ', only white space); write a text or a "
                        "list of texts (answers: [Paris, City of Paris]), or leave the "
                        "field out"),
    ({"answers": ["a", " \t"]}, "an item of 'answers' is blank (' \\t', only white "
                                 "space); remove it or write a text"),
    ({"answers": [1]}, "an item of 'answers' must be text, got int 1 (quote it: \"1\")"),
    ({"answers": 2.5}, "'answers' must be text, got float 2.5 (quote it: \"2.5\")"),
    ({"answers": {"a": 1}}, "'answers' must be text, got dict"),
])
def test_bad_answers_are_refused_with_the_line(tmp_path: Path, record: dict[str, object],
                                               message: str) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "ok", "query": "q"}\n'
                    + json.dumps({"id": "a", "query": "q", **record}) + "\n")
    with pytest.raises(GoldenError) as err:
        load_goldens(path)
    assert str(err.value).startswith(f"{path}:2: case 'a': {message}")


def test_the_digest_records_answers_only_when_given() -> None:
    plain = GoldenCase("a", "q", expected="Rome", context={"k": 1})
    doc = {"id": "a", "query": "q", "expected": "Rome", "relevance": {}, "relevant": [],
           "context": {"k": 1}}
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    assert case_digest(plain) == hashlib.sha256(text.encode()).hexdigest()[:16]
    with_answers = GoldenCase("a", "q", expected="Rome", context={"k": 1}, answers=["Roma"])
    assert case_digest(with_answers) != case_digest(plain)


def test_answers_must_be_texts_in_python_too() -> None:
    with pytest.raises(TypeError, match="answers must be texts"):
        GoldenCase("a", answers=[1])  # type: ignore[list-item]
    assert GoldenCase("a", expected=["d1"]).reference_answers() == ()


def test_blank_answers_and_ids_in_yaml_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text('- {id: ok, query: q, answers: [Paris]}\n- id: a\n  query: q\n'
                    '  answers: "  "\n')
    with pytest.raises(GoldenError) as err:
        load_goldens(path)
    assert str(err.value).startswith(f"{path}:2: case 'a': 'answers' is blank ('  ', only "
                                     "white space)")
    for record, what in (({"id": "   "}, "id '   '"),
                         ({"id": "a", "expected": ["d1", " "]}, "case 'a': 'expected' item ' '"),
                         ({"id": "a", "relevance": {"\t": 1}},
                          "case 'a': 'relevance' key '\\t'")):
        path = tmp_path / "g.jsonl"
        path.write_text(json.dumps({"query": "q", **record}) + "\n")
        with pytest.raises(GoldenError) as err:
            load_goldens(path)
        assert str(err.value).startswith(f"{path}:1: {what}"), str(err.value)
        assert str(err.value).endswith(" is blank (only white space); write the id, or "
                                       "leave the entry out")


def test_a_blank_text_expected_is_no_reference_answer() -> None:
    # "  " as the expected text would make exact_match compare with the empty text (1.0
    # for an empty response); it counts as no answer, like "", so the text metrics
    # refuse the case before the run
    assert GoldenCase("a", expected=" \n ").reference_answers() == ()
    assert GoldenCase("a", expected=" Rome ").reference_answers() == (" Rome ",)
    with pytest.raises(ValueError, match="answers must not be empty or only white space"):
        GoldenCase("a", answers=["Rome", "  "])


def test_csv_header_column_cap_and_repeated_column(tmp_path: Path) -> None:
    from evalkit.data.goldens import GoldenError
    from evalkit.io.limits import MAX_CSV_COLUMNS

    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(MAX_CSV_COLUMNS)) + ",id,query\n")
    with pytest.raises(GoldenError, match=r"wide.csv:1: the header has 10,002 columns"):
        load_goldens(wide)
    twice = tmp_path / "twice.csv"
    twice.write_text(",".join(f"c{i}" for i in range(5000)) + ",c7,id,query\n")
    with pytest.raises(GoldenError, match=r"twice.csv:1: column 'c7' appears twice"):
        load_goldens(twice)


def test_jsonl_files_joined_with_cat_keep_their_byte_order_marks(tmp_path: Path) -> None:
    path = tmp_path / "ab.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "query": "q"}\n'
                     b'\xef\xbb\xbf{"id": "b", "query": "q"}\n')
    assert [c.id for c in load_goldens(path)] == ["a", "b"]
