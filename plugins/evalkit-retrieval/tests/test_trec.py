"""TREC run and qrels loading: trec_eval's tolerance, its refusals, and both readers."""

from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
from evalkit_retrieval import trec
from evalkit_retrieval.ranking import rank_arrays
from evalkit_retrieval.trec import TrecFormatError, load_qrels, load_run, parse_qrels, parse_run

from evalkit.plugins.default import default_registry

DATA = Path(__file__).parent / "data"
RUNS = ["results.test", "results.trunc", "results.comment.test"]
QRELS = ["qrels.test", "qrels.test.with-comments", "qrels.rel_level", "qrels.comment.test"]


def careful_rankings(data: bytes) -> dict[str, list[str]]:
    cols = trec._careful_run(trec._text_bytes(data, "x"), "x")
    return rank_arrays(cols.qids, cols.docids, cols.scores)


@pytest.mark.parametrize("name", RUNS)
def test_bulk_and_careful_readers_agree_on_runs(name: str) -> None:
    data = (DATA / name).read_bytes()
    bulk = parse_run(data)
    assert bulk.meta["parser"] == "bulk"
    assert bulk.rankings == careful_rankings(data)


@pytest.mark.parametrize("name", QRELS)
def test_bulk_and_careful_readers_agree_on_qrels(name: str) -> None:
    data = (DATA / name).read_bytes()
    bulk = trec._bulk_qrels(trec._text_bytes(data, "x"))
    assert bulk is not None
    assert bulk == trec._careful_qrels(trec._text_bytes(data, "x"), "x")


def test_comment_lines_are_skipped_and_hash_inside_an_id_is_kept() -> None:
    # the file adds three comment lines and spells one docno CR#93E-1860 for CR93E-1860
    with_comments = load_qrels(DATA / "qrels.test.with-comments")
    plain = load_qrels(DATA / "qrels.test")
    assert with_comments["301"].pop("CR#93E-1860") == plain["301"].pop("CR93E-1860")
    assert with_comments == plain


def test_run_facts_of_trec_eval_test_files() -> None:
    run = load_run(DATA / "results.test")
    assert run.name == "STANDARD"
    assert sorted(run.rankings) == ["301", "302", "303"]
    assert all(len(docs) == 500 for docs in run.rankings.values())
    assert run.path == str(DATA / "results.test")
    assert run.sha256 == hashlib.sha256((DATA / "results.test").read_bytes()).hexdigest()
    trunc = load_run(DATA / "results.trunc")  # extra columns after the tag are ignored
    assert trunc.name == "STANDARD"
    assert {q: len(d) for q, d in trunc.rankings.items()} == {"301": 500, "303": 84}
    comment = load_run(DATA / "results.comment.test")
    assert any("#" in doc for doc in comment.rankings[next(iter(comment.rankings))])


def test_gzip_files_read_the_same(tmp_path: Path) -> None:
    for name in ("results.test", "qrels.test"):
        with (DATA / name).open("rb") as src, gzip.open(tmp_path / f"{name}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    gz_run = load_run(tmp_path / "results.test.gz")
    assert gz_run.rankings == load_run(DATA / "results.test").rankings
    assert gz_run.sha256 == hashlib.sha256((tmp_path / "results.test.gz").read_bytes()).hexdigest()
    assert load_qrels(tmp_path / "qrels.test.gz") == load_qrels(DATA / "qrels.test")
    (tmp_path / "broken.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(TrecFormatError, match=r"broken\.gz: the gzip stream is cut short: "
                       r"the file ends at byte 11 before the stream does"):
        load_run(tmp_path / "broken.gz")


def test_registered_loaders_are_found_by_kind() -> None:
    from evalkit_retrieval import plugin

    reg = default_registry()
    assert reg.loader("run", path="runs/bm25.txt").fn is plugin.load_run
    assert reg.loader("run", path="x.run.gz").fn is plugin.load_run
    assert reg.loader("qrels", path="data/qrels").fn is plugin.load_qrels
    assert reg.loader("qrels", name="trec").fn is plugin.load_qrels
    assert plugin.load_run(DATA / "results.trunc", name="x").rankings == load_run(
        DATA / "results.trunc").rankings
    assert plugin.load_qrels(DATA / "qrels.test") == load_qrels(DATA / "qrels.test")


def test_discovering_the_plugin_does_not_import_numpy() -> None:
    import os
    import subprocess
    import sys

    code = ("import sys; from evalkit.core.registry import Registry; from evalkit.plugins import "
            "load_plugins; load_plugins(Registry()); print('numpy' in sys.modules)")
    env = {**os.environ, "EVALKIT_PLUGINS": "evalkit-retrieval"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_rank_column_and_line_order_are_ignored() -> None:
    text = b"q1 Q0 a 1 0.1 t\nq1 Q0 b 2 0.9 t\nq2 Q0 c 1 3 t\nq1 Q0 c 3 0.5 t\n"
    assert parse_run(text).rankings == {"q1": ["b", "c", "a"], "q2": ["c"]}


def test_whitespace_tolerance() -> None:
    text = (b"  q1\tQ0   a 1  0.5 t   extra junk \r\n\n \t \nq1 Q0 b 2 0.7 t2\x0b\n"
            b"# a comment\n   # an indented comment\nq1 Q0 x#1 3 0.1 t3")
    parsed = parse_run(text)
    assert parsed.rankings == {"q1": ["b", "a", "x#1"]}
    assert parsed.name == "t3"  # the last line's tag, as trec_eval reports runid


def test_lone_carriage_return_is_whitespace_as_in_trec_eval() -> None:
    # trec_eval splits lines on \n only: this is one line whose extra fields are ignored
    parsed = parse_run(b"q1 Q0 a 1 0.5 t\rq1 Q0 b 2 0.9 t\n")
    assert parsed.rankings == {"q1": ["a"]}
    assert parsed.meta["parser"] == "careful"


def test_line_and_field_breaks_are_trec_evals() -> None:
    # trec_eval (get_trec_results.c, get_qrels.c) ends a line at '\n' and a field at C
    # isspace() in the C locale: ' \t\n\v\f\r'. U+2028, U+0085 (bytes e2 80 a8, c2 85)
    # and \x1c are neither: they stay inside an id; \x0b and \x0c separate fields.
    run = parse_run("q1 Q0 a\u2028b 1 0.5 t\nq1 Q0 c\x85d 2 0.4 t\nq1\x0bQ0\x0ce\x1cf 3 0.3 t\n"
                    .encode())
    assert run.rankings == {"q1": ["a\u2028b", "c\x85d", "e\x1cf"]}
    qrels = parse_qrels("q1 0 a\u2028b 1\nq1\x0c0\x0bc\x85d 2\n".encode())
    assert {q: dict(j) for q, j in qrels.items()} == {"q1": {"a\u2028b": 1, "c\x85d": 2}}


def test_ids_longer_than_the_sampled_ones(tmp_path: Path) -> None:
    lines = [f"q1 Q0 d{i} {i} {1000 - i} t\n" for i in range(3000)]
    long_id = "L" * 500
    lines.append(f"q1 Q0 {long_id} 0 5000 t\n")
    lines.append(f"{'Q' * 300} Q0 d1 1 1.0 t\n")
    parsed = parse_run("".join(lines).encode())
    assert parsed.rankings["q1"][0] == long_id
    assert parsed.rankings["Q" * 300] == ["d1"]


def test_non_ascii_ids(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q\u00e9 Q0 z 1 1 t\nq\u00e9 Q0 \u00e9 2 1 t\nq\u00e9 Q0 a 3 2 t\n",
                    encoding="utf-8")
    # equal scores: doc ids descending by bytes (UTF-8) = by code point
    assert load_run(path).rankings == {"q\u00e9": ["a", "\u00e9", "z"]}


@pytest.mark.parametrize("token", [b"1e5", b"+.5", b"-2.", b"7", b"1E-3", b"0.000001",
                                   b"1.7976931348623157e308", b"-1e-400"])
def test_score_forms_agree_between_readers(token: bytes) -> None:
    text = b"q1 Q0 a 1 " + token + b" t\nq1 Q0 b 2 0.25 t\n"
    assert parse_run(text).rankings == careful_rankings(text)


# ------------------------------------------------------------------------ refusals
def refusal(tmp_path: Path, text: bytes, loader: object = load_run) -> str:
    path = tmp_path / "input.txt"
    path.write_bytes(text)
    with pytest.raises(TrecFormatError) as err:
        loader(path)  # type: ignore[operator]
    assert str(path) in str(err.value)
    return str(err.value)


def test_run_line_with_too_few_fields(tmp_path: Path) -> None:
    message = refusal(tmp_path, b"q1 Q0 a 1 0.5 t\n# c\nq1 Q0 b 2 0.4\n")
    assert ":3: expected at least 6 fields" in message and "found 5" in message


@pytest.mark.parametrize(("token", "what"), [(b"abc", "is not a number"), (b"nan", "NaN"),
                                              (b"1_0", "is not a number"),
                                              (b"0x10", "is not a number")])
def test_run_score_that_is_not_a_number(tmp_path: Path, token: bytes, what: str) -> None:
    message = refusal(tmp_path, b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 " + token + b" t\n")
    assert ":2: " in message and what in message


@pytest.mark.parametrize("token", [b"nan", b"-NaN", b"NAN"])
@pytest.mark.parametrize("first_line", [b"", "q\u00e9 Q0 z 1 1 t\n".encode()],
                         ids=["bulk", "careful"])
def test_run_score_that_is_nan(tmp_path: Path, token: bytes, first_line: bytes) -> None:
    # refused alike whichever reader starts (a non-ASCII id sends the file to the careful
    # one at once), with the line, the value and the fix
    text = first_line + b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 " + token + b" t\n"
    lineno = 3 if first_line else 2
    message = refusal(tmp_path, text)
    assert f":{lineno}: the score {token.decode()!r} of document 'b' is not a number " \
        "(NaN)" in message
    assert "Write a number in the score column (field 5)" in message
    assert "NaN has no place" in message
    if not first_line:
        assert trec._bulk_run(text) is None  # the bulk reader declines, never ranks it


@pytest.mark.parametrize(("token", "first"), [
    (b"inf", True), (b"+INF", True), (b"Infinity", True), (b"1e999", True),
    (b"-inf", False), (b"-infinity", False), (b"-1e400", False),
])
@pytest.mark.parametrize("first_line", [b"", "q\u00e9 Q0 z 1 1 t\n".encode()],
                         ids=["bulk", "careful"])
def test_an_infinite_score_ranks_as_trec_eval_reads_it(tmp_path: Path, token: bytes,
                                                      first: bool, first_line: bytes) -> None:
    # trec_eval reads the score with atof: inf (and 1e999, beyond a double) above every
    # finite score, -inf below, whichever reader reads the file
    path = tmp_path / "run.txt"
    path.write_bytes(first_line + b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 " + token + b" t\n")
    assert list(load_run(path).rankings["q1"]) == (["b", "a"] if first else ["a", "b"])


def test_run_duplicate_across_separate_blocks(tmp_path: Path) -> None:
    message = refusal(tmp_path, b"q1 Q0 a 1 0.5 t\nq2 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n")
    assert ":3: document 'a' is listed again for query 'q1' (first on line 1)" in message


def test_run_not_utf8_and_nul(tmp_path: Path) -> None:
    assert "not valid UTF-8" in refusal(tmp_path, b"q1 Q0 \xff\xfe 1 0.5 t\n")
    assert "NUL byte" in refusal(tmp_path, b"q1 Q0 a\x00 1 0.5 t\n")


@pytest.mark.parametrize("gz", [False, True], ids=["text", "gz"])
@pytest.mark.parametrize(("loader", "good", "bad"), [
    (load_run, b"1 Q0 d%d 1 0.5 t\n", b"1 Q0 caf\xe9 1 0.5 t\n"),
    (load_qrels, b"1 0 d%d 1\n", b"1 0 caf\xe9 1\n"),
], ids=["run", "qrels"])
def test_latin1_text_names_the_line_and_the_iconv_fix(
        tmp_path: Path, loader: object, good: bytes, bad: bytes, gz: bool) -> None:
    # a Latin-1 document id on line 3001, past what the command-line sniffer reads
    data = b"".join(good % i for i in range(3000)) + bad
    path = tmp_path / ("input.txt.gz" if gz else "input.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(TrecFormatError) as err:
        loader(path)  # type: ignore[operator]
    message = str(err.value)
    assert f"{path}:3001: the document id b'caf\\xe9' is not valid UTF-8" in message
    fix = (f"gunzip -c {path} | iconv -f latin1 -t utf-8 > input.txt.utf8" if gz else
           f"iconv -f latin1 -t utf-8 {path} > input.txt.utf8")
    assert fix in message


@pytest.mark.parametrize("gz", [False, True], ids=["text", "gz"])
@pytest.mark.parametrize(("kind", "text"), [
    ("run", b"1 Q0 d1 1 0.5 t\n1 Q0 caf\xe9 2 0.4 t\n"), ("qrels", b"1 0 d1 1\n1 0 caf\xe9 1\n"),
])
def test_eval_refuses_latin1_input_naming_line_and_fix(
        tmp_path: Path, kind: str, text: bytes, gz: bool) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    bad = tmp_path / ("bad.txt.gz" if gz else "bad.txt")
    bad.write_bytes(gzip.compress(text) if gz else text)
    ok_run, ok_qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    ok_run.write_text("1 Q0 d1 1 0.5 t\n")
    ok_qrels.write_text("1 0 d1 1\n")
    args = ["--qrels", str(ok_qrels), str(bad)] if kind == "run" else [
        "--qrels", str(bad), str(ok_run)]
    res = CliRunner().invoke(app, ["eval", *args])
    assert res.exit_code != 0
    assert f"{bad}:2: a binary file, or text that is not UTF-8 (byte 0xe9 on line 2)" \
        in res.output
    assert "iconv -f latin1 -t utf-8" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("gz", [False, True], ids=["text", "gz"])
def test_latin1_topics_name_the_line_and_the_fix(tmp_path: Path, gz: bool) -> None:
    from evalkit_retrieval.topics import TopicsError, load_topics

    data = b"<top>\n<num> Number: 1\n<title> caf\xe9\n</top>\n"
    path = tmp_path / ("topics.txt.gz" if gz else "topics.txt")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(TopicsError, match=r"topics\.txt(\.gz)?:3: not UTF-8 text \(byte "
                       r"0xe9 on line 3\)\. .*iconv -f latin1 -t utf-8"):
        load_topics(path)


def test_empty_files(tmp_path: Path) -> None:
    assert "the run file has no data lines" in refusal(tmp_path, b"")
    assert "the qrels file has no data lines" in refusal(tmp_path, b"\n# only\n", load_qrels)


@pytest.mark.parametrize(("line", "what"), [
    (b"q1 0 d1\n", "expected 4 fields `qid iter docno label`, found 3"),
    (b"q1 0 d1 1 x\n", "found 5"),
    (b"q1 0 d1 1.5\n", "label '1.5' is not an integer"),
    (b"q1 0 d1 yes\n", "label 'yes' is not an integer"),
])
def test_qrels_malformed_lines(tmp_path: Path, line: bytes, what: str) -> None:
    message = refusal(tmp_path, b"q1 0 d0 1\n" + line, load_qrels)
    assert ":2: " in message and what in message


def test_qrels_iteration_column_may_be_q0_and_order_is_kept() -> None:
    qrels = parse_qrels(b"q2 Q0 b 2\nq1 0 a 0\nq2 Q0 a -1\n")
    assert qrels == {"q2": {"b": 2, "a": -1}, "q1": {"a": 0}}
    assert list(qrels) == ["q2", "q1"]


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_run(tmp_path / "nope.txt")


def test_name_override() -> None:
    assert load_run(DATA / "results.test", name="mine").name == "mine"


def test_bulk_reader_declines_rather_than_guesses() -> None:
    # the bulk reader hands anything odd to the careful one (None), never a wrong table
    assert trec._bulk_run(b"q1 Q0 a 1 0.5\n") is None
    assert trec._bulk_run(b"q1 Q0 a 1 nan t\n") is None
    assert trec._bulk_qrels(b"q1 0 a 1 extra\n") is None
    cols = trec._bulk_run(b"q1 Q0 a 1 0.5 t\n")
    assert cols is not None and np.asarray(cols.scores).tolist() == [0.5]


@pytest.mark.parametrize("from_file", [True, False])
def test_the_parsed_table_is_freed_before_the_run_keys_are_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, from_file: bool
) -> None:
    # the bulk table (ids, scores and tag of every line) is the largest array of a load:
    # nothing may keep it alive while the ranked run's keys are made (docs/performance.md)
    import weakref

    from evalkit_retrieval import columns, trec_bulk
    from evalkit_retrieval.doc_keys import PairKeys

    tables: list[weakref.ref[np.ndarray]] = []
    alive_at_keys: list[bool] = []
    real_loadtxt = trec_bulk._loadtxt

    def loadtxt(*args: object) -> np.ndarray | None:
        table = real_loadtxt(*args)  # type: ignore[arg-type]
        if table is not None:
            tables.append(weakref.ref(table))
        return table

    def pair_keys(*args: object) -> PairKeys:
        alive_at_keys.append(any(t() is not None for t in tables))
        return PairKeys(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(trec_bulk, "_loadtxt", loadtxt)
    monkeypatch.setattr(columns, "PairKeys", pair_keys)
    text = b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq2 Q0 a 1 0.2 t\n"
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    run = load_run(path) if from_file else parse_run(text)
    assert run.meta["parser"] == "bulk" and tables and alive_at_keys == [False]
    assert {q: list(r) for q, r in run.rankings.items()} == {"q1": ["b", "a"], "q2": ["a"]}


@pytest.mark.parametrize(("text", "what"), [
    (b"q1 Q0 d1 1 " + b"9x" * 100_000 + b" r\n", "score"),
    (b"q1 Q0 d1 1 1.0 r\nq1 Q0 d1 2 " + b"1" * 100_000 + b" r\n", "document"),
])
def test_a_run_error_echoes_a_field_cut(text: bytes, what: str) -> None:
    """A 200 KB field is echoed by its start and its length, as ids are cut, whichever
    error names it (a score that is not a number, a duplicate's score)."""
    with pytest.raises(TrecFormatError) as err:
        parse_run(text, source="<r>")
    message = str(err.value)
    assert len(message) < 1000, message[:300]
    assert what in message


@pytest.mark.parametrize("text", [
    b"q1 0 d1 " + b"x" * 200_000 + b"\n",  # not an integer
    b"q1 0 d1 " + b"9" * 200_000 + b"\n",  # beyond 64 bits (and int()'s 4300 digits)
    b"q1 0 d1 " + b"9" * 30 + b"\n",
    b"q1 1 d1 1\nq1 2 d1 " + b"x" * 200_000 + b"\n",  # subtopic qrels
    b"q1 0 \xff" + b"\xfe" * 200_000 + b" 1\n",  # not UTF-8
])
def test_a_qrels_error_echoes_a_field_cut(text: bytes) -> None:
    for subtopics in (False, True):
        with pytest.raises(TrecFormatError, match=r"<q>:\d+: ") as err:
            parse_qrels(text, source="<q>", subtopics=subtopics)
        assert len(str(err.value)) < 1000, str(err.value)[:300]


def test_a_too_long_field_is_told_in_its_own_words() -> None:
    """The hint of an over-long field fits the field: ids are not run tags."""
    long_doc = b"q1 Q0 " + b"d" * 2000 + b" 1 1.0 r\n"
    with pytest.raises(TrecFormatError, match="document id is 2,000 bytes long") as err:
        parse_run(long_doc)
    assert "run tag" not in str(err.value)
    assert "ids name queries and documents" in str(err.value)
    with pytest.raises(TrecFormatError, match=r"run tag is 300 bytes long.*A run tag names"):
        parse_run(b"q1 Q0 d1 1 1.0 " + b"t" * 300 + b"\n")


@pytest.mark.parametrize(("lines", "flagged"), [
    (b"1 Q0 a 1 1 t\n1 Q0 c 2 1 t\n2 Q0 b 1 5 t\n2 Q0 d 2 5 t\n", True),
    (b"1 Q0 a 1 1 t\n2 Q0 b 1 5 t\n1 Q0 c 2 1 t\n", True),  # a query in two blocks
    (b"1 Q0 a 1 1 t\n1 Q0 c 2 0.5 t\n", False),  # the scores order them
    (b"1 Q0 a 0 1 t\n1 Q0 c 0 1 t\n", False),  # the ranks are tied too
    (b"1 Q0 a 1 1 t\n2 Q0 c 1 1 t\n", False),  # one document per query
    (b"1 Q0 a 1 1 t\n2 Q0 b 1 2 t\n1 Q0 c 2 3 t\n", False),  # split query, two scores
])
def test_rank_column_ignored_when_every_score_is_tied(tmp_path: Path, lines: bytes,
                                                      flagged: bool) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(lines)
    run = load_run(path)
    assert bool(run.meta.get("rank_column_ignored")) is flagged
    if flagged:  # ranked by document id, descending, as trec_eval ranks ties
        assert list(run.rankings["1"]) == ["c", "a"]


def test_eval_warns_once_that_the_rank_column_is_ignored(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("1 Q0 a 1 1 t\n1 Q0 c 2 1 t\n2 Q0 b 1 1 t\n2 Q0 d 2 1 t\n")
    qrels.write_text("1 0 a 1\n2 0 b 1\n")
    res = CliRunner().invoke(app, ["eval", "--qrels", str(qrels), str(run), "-m", "rr"])
    assert res.exit_code == 0
    assert res.output.count("the rank column is ignored, as trec_eval ignores it") == 1
    assert res.output.split()[-1] == "0.5000"  # rr: a and b ranked second, by document id


@pytest.mark.parametrize("first_line", [b"", "q\u00e9 0 z 0\n".encode()],
                         ids=["bulk", "careful"])
def test_integral_decimal_labels_are_their_integers(tmp_path: Path, first_line: bytes) -> None:
    # trec_eval reads labels with atol: 1.0 is 1, -1.00 is -1, +2. is 2 (pandas' and
    # ir_datasets' exports write 1.0), 1e0 is 1 (tests/test_trec_labels.py); 2.5, 1.5e0,
    # .0 stay refused, by either reader
    path = tmp_path / "qrels.txt"
    path.write_bytes(first_line + b"q 0 a 1.0\nq 0 b -1.00\nq 0 c +2.\nq 0 d 3\nq 0 e 1e0\n")
    assert dict(load_qrels(path)["q"]) == {"a": 1, "b": -1, "c": 2, "d": 3, "e": 1}
    path.write_bytes(first_line + b"q 0 a 1.0\nq 0 b -1.00\nq 0 c +2.\nq 0 d 3\n")
    if not first_line:
        bulk = trec._bulk_qrels(path.read_bytes())
        assert bulk is not None and dict(bulk["q"]) == {"a": 1, "b": -1, "c": 2, "d": 3}
    for label in (b"2.5", b"1.5e0", b".0", b"+-1.0"):
        message = refusal(tmp_path, first_line + b"q 0 a " + label + b"\n", load_qrels)
        assert f"the relevance label {label.decode()!r} is not an integer" in message
