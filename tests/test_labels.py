"""Human labels in golden files (JSON Lines, YAML, CSV) and in labels files."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.labels import (
    LabelError,
    labels_from_goldens,
    load_labels,
    random_subset,
    read_labels,
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_labels_in_every_golden_format(tmp_path: Path) -> None:
    jsonl = _write(tmp_path, "g.jsonl",
                   '{"id": "a", "query": "q", "labels": {"correctness": 4}}\n'
                   '{"id": "b", "query": "q"}\n')
    yaml = _write(tmp_path, "g.yaml",
                  "- {id: a, query: q, labels: {correctness: 4}}\n- {id: b, query: q}\n")
    csv = _write(tmp_path, "g.csv", "id,query,label:correctness\na,q,4\nb,q,\n")
    for path in (jsonl, yaml, csv):
        gset = load_goldens(path)
        assert dict(gset.get("a").labels) == {"correctness": 4.0}
        assert dict(gset.get("b").labels) == {}
        assert "labels" not in gset.get("a").context
        assert "label:correctness" not in gset.get("a").context
        assert read_labels(path).labels == {"a": {"correctness": 4.0}}


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "a", "query": "q", "labels": {"correctness": "good"}}',
     r"g.jsonl:1: case 'a': label of 'correctness': 'good' is a str; a label is a number"),
    ('{"id": "a", "query": "q", "labels": {"correctness": true}}',
     r"g.jsonl:1: case 'a': label of 'correctness': True is a boolean; write 1 or 0"),
    ('{"id": "a", "query": "q", "labels": [4]}',
     r"g.jsonl:1: case 'a': 'labels' must map metric names to numbers"),
])
def test_golden_label_errors(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(GoldenError, match=message):
        load_goldens(_write(tmp_path, "g.jsonl", line + "\n"))


def test_csv_label_errors(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match=r"g.csv:2: column 'label:correctness': 'x' is not"):
        load_goldens(_write(tmp_path, "g.csv", "id,query,label:correctness\na,q,x\n"))


def test_labels_file(tmp_path: Path) -> None:
    p = _write(tmp_path, "l.jsonl", '{"selection": "random", "seed": 7}\n'
               '{"id": "a", "labels": {"correctness": 4, "tone": 1}}\n'
               '{"id": 12, "labels": {"correctness": 2.5}}\n')
    labels = load_labels(p)
    assert labels.selection == "random" and labels.seed == 7
    assert labels.labels == {"a": {"correctness": 4.0, "tone": 1.0},
                             "12": {"correctness": 2.5}}
    assert labels.metrics() == ["correctness", "tone"]
    assert labels.for_metric("tone") == {"a": 1.0}
    assert labels.selection_warning(100) is None
    with pytest.raises(LabelError, match=r"l.jsonl:3: case '12' is not a case of the run"):
        labels.check_ids(["a", "b"])


@pytest.mark.parametrize(("text", "message"), [
    ('{"id": "a", "labels": {"c": 1}}\n{"id": "a", "labels": {"c": 2}}\n',
     r"l.jsonl:2: case 'a' is labelled twice \(first on line 1\)"),
    ('{"id": "a", "labels": {"c": 1}}\n{"selection": "all"}\n',
     r"l.jsonl:2: the selection line must be the file's first line"),
    ('{"selection": "random"}\n{"id": "a", "labels": {"c": 1}}\n',
     r"l.jsonl:1: a random selection records its integer 'seed'"),
    ('{"id": "a", "labels": {"c": NaN}}\n', r"l.jsonl:1: case 'a': label of 'c': nan is not"),
    ('{"id": "a", "label": {"c": 1}}\n', r"l.jsonl:1: unknown key 'label'"),
    ('{"labels": {"c": 1}}\n', r"l.jsonl:1: a label line needs an 'id'"),
    ('{"id": "a", "labels": {}}\n', r"l.jsonl:1: case 'a': 'labels' is empty"),
    ('\n', r"l.jsonl: no labels"),
    ('[1]\n', r"l.jsonl:1: expected a JSON object"),
])
def test_labels_file_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(LabelError, match=message):
        load_labels(_write(tmp_path, "l.jsonl", text))


def test_selection_warnings(tmp_path: Path) -> None:
    gset = load_goldens(_write(tmp_path, "g.yaml",
                               "- {id: a, query: q, labels: {c: 4}}\n- {id: b, query: q}\n"))
    undeclared = labels_from_goldens(gset)
    assert "not declared a random sample" in (undeclared.selection_warning(2) or "")
    assert labels_from_goldens(gset, "random", 3).selection_warning(2) is None
    assert "only 1 of 2" in (labels_from_goldens(gset, "all").selection_warning(2) or "")


def test_random_subset_is_seeded() -> None:
    ids = [f"q{i}" for i in range(50)]
    chosen = random_subset(ids, 10, seed=11)
    assert chosen == random_subset(ids, 10, seed=11)
    assert len(chosen) == 10 and chosen == [i for i in ids if i in set(chosen)]
    import random
    assert set(chosen) == set(random.Random(11).sample(ids, 10))


def test_a_yaml_golden_file_declares_its_labels_selection(tmp_path: Path) -> None:
    cases = ("cases:\n  - {id: a, query: q, labels: {correctness: 4}}\n"
             "  - {id: b, query: q}\n  - {id: c, query: q}\n")
    p = tmp_path / "g.yaml"
    p.write_text("labels_selection: {selection: random, seed: 7}\n" + cases)
    found = read_labels(p)
    assert (found.selection, found.seed) == ("random", 7)
    assert found.selection_warning(3) is None
    assert labels_from_goldens(load_goldens(p), "all").selection == "all"  # given wins
    plain = tmp_path / "plain.yaml"
    plain.write_text(cases)
    undeclared = read_labels(plain)
    assert undeclared.selection is None
    assert "not declared a random sample" in (undeclared.selection_warning(3) or "")
    assert load_goldens(p).digest() == load_goldens(plain).digest()  # labels stay out
    for bad, message in (("{selection: random}", "integer 'seed'"),
                         ("{selection: some}", "must be \"random\" or \"all\""),
                         ("random", "must be a mapping")):
        p.write_text(f"labels_selection: {bad}\n" + cases)
        with pytest.raises(GoldenError, match=f"g.yaml:1: .*{message}"):
            load_goldens(p)
