"""The golden field ``answers``: a text or a list of texts, read alike from JSON Lines,
YAML (as written: ``yes`` and ``3.10`` stay text) and CSV; refused with the file, line
and a fix when it is empty or not text; recorded in a case's digest only when given, so
the digests of existing golden sets do not change."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenError, case_digest, load_goldens


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
