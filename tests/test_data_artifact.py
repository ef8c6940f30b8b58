"""Artifact schema 2: the trailer detects a file cut anywhere, a line boundary
included; per-metric errors and ``sample`` on rows; schema 1 files still read."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.artifact import ArtifactError
from evalkit.data.coverage import IncompleteRunError, coverage_of
from evalkit.data.results import MetricFailedError, QueryResult, RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse

ROOT = Path(__file__).resolve().parents[1]
VASWANI = ROOT / "examples" / "vaswani" / "data"
V1_BASELINE = ROOT / "tests" / "data" / "schema1" / "baseline.jsonl"
runner = CliRunner()
#: the installed command, as users run it (a real subprocess)
EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]


def small_run() -> RunResult:
    rows = [QueryResult(f"q{i}", [f"d{i}"], {"m": i / 4}) for i in range(4)]
    return RunResult("small", rows, header={"notes": {"num_queries": 4}})


@pytest.fixture(scope="module")
def vaswani(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Vaswani BM25 run scored by `evalkit eval --save`: 93 rows, written in one go."""
    out = tmp_path_factory.mktemp("vaswani") / "bm25.jsonl"
    res = runner.invoke(app, ["eval", str(VASWANI / "runs" / "run.vaswani.bm25.txt"),
                              "--qrels", str(VASWANI / "qrels"), "-m", "ap,ndcg@10",
                              "--save", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_the_trailer_counts_the_rows_and_hashes_every_byte_before_it(tmp_path: Path) -> None:
    path = small_run().save(tmp_path / "r.jsonl")
    data = path.read_bytes()
    body, _, trailer_line = data.rstrip(b"\n").rpartition(b"\n")
    trailer = json.loads(trailer_line)
    assert trailer == {"type": "trailer", "rows": 4,
                       "sha256": hashlib.sha256(body + b"\n").hexdigest()}
    header = json.loads(data.splitlines()[0])
    assert header["schema_version"] == 2
    back = RunResult.load(path)
    assert back.integrity is not None and back.integrity.ok and back.integrity.has_trailer
    assert back.coverage().complete and back.scores("m") == {"q0": 0.0, "q1": 0.25,
                                                             "q2": 0.5, "q3": 0.75}


def test_a_cut_at_any_line_boundary_is_detected(tmp_path: Path) -> None:
    lines = small_run().save(tmp_path / "r.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == 6  # header, 4 rows, trailer
    cut = tmp_path / "cut.jsonl"
    for keep in range(1, len(lines)):  # every prefix that ends at a line boundary
        cut.write_bytes(b"".join(lines[:keep]))
        run = RunResult.load(cut)
        cov = run.coverage()
        assert not cov.complete, keep
        assert "ends without its trailer line" in cov.message()
        if keep < 5:  # rows are missing too: the header's count names how many
            assert f"it holds {keep - 1} of the 4 queries its header records" in cov.message()
        with pytest.raises(IncompleteRunError, match=r"is incomplete"):
            run.require_complete()


def test_a_trailer_that_disagrees_with_the_rows_is_detected(tmp_path: Path) -> None:
    path = small_run().save(tmp_path / "r.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    (tmp_path / "gap.jsonl").write_bytes(b"".join(lines[:2] + lines[3:]))  # q1 dropped
    cov = RunResult.load(tmp_path / "gap.jsonl").coverage()
    assert "the trailer records 4 row(s) but the file holds 3" in cov.message()
    edited = path.read_text().replace('"m": 0.25', '"m": 0.95')
    (tmp_path / "edit.jsonl").write_text(edited)
    cov = RunResult.load(tmp_path / "edit.jsonl").coverage()
    assert not cov.complete and "sha256 does not match" in cov.message()
    (tmp_path / "more.jsonl").write_bytes(path.read_bytes() + lines[1])
    with pytest.raises(ArtifactError, match=r"more.jsonl:7: content after the trailer"):
        RunResult.load(tmp_path / "more.jsonl")


def test_a_retrieval_artifact_cut_at_a_line_boundary_fails_the_gate(
        vaswani: Path, tmp_path: Path) -> None:
    lines = vaswani.read_bytes().splitlines(keepends=True)
    assert len(lines) == 95  # header, 93 queries, trailer
    cut = tmp_path / "half.jsonl"
    cut.write_bytes(b"".join(lines[:47]))  # the header and 46 of the 93 rows
    checks = tmp_path / "checks.yaml"
    checks.write_text('checks:\n  - {id: floor, metric: ap, op: ">=", threshold: 0.0}\n')
    proc = subprocess.run([*EVALKIT, "gate", "-c", str(checks),
                           "-r", str(cut)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "floor: error (46/93 cases)" in proc.stdout
    assert "it holds 46 of the 93 queries its header records" in proc.stdout
    assert "pass" not in proc.stdout.replace("passed", "")  # no check reads as passed
    assert "gate error: the evidence is incomplete" in proc.stdout
    # the whole file passes the same gate
    full = subprocess.run([*EVALKIT, "gate", "-c", str(checks),
                           "-r", str(vaswani)], capture_output=True, text=True, timeout=60)
    assert full.returncode == 0, full.stdout + full.stderr
    assert "floor: pass (93/93 cases)" in full.stdout


def test_schema_1_files_are_read_with_a_note(tmp_path: Path) -> None:
    run = RunResult.load(V1_BASELINE)
    assert run.integrity is not None and run.integrity.schema_version == 1
    cov = coverage_of(run)
    assert cov.complete and cov.rows == 93 and cov.expected == 93
    assert len(cov.notes) == 1 and "schema 1 artifact (no trailer)" in cov.notes[0]
    # a schema 1 file cut at a line boundary is still caught by its header's count
    lines = V1_BASELINE.read_bytes().splitlines(keepends=True)
    (tmp_path / "v1cut.jsonl").write_bytes(b"".join(lines[:60]))
    cov = RunResult.load(tmp_path / "v1cut.jsonl").coverage()
    assert not cov.complete
    assert "it holds 59 of the 93 queries its header records" in cov.message()
    # and saving it again writes schema 2 with a trailer: the migration
    again = run.save(tmp_path / "v2.jsonl")
    assert json.loads(again.read_text().splitlines()[0])["schema_version"] == 2
    assert RunResult.load(again).integrity.has_trailer  # type: ignore[union-attr]
    res = runner.invoke(app, ["eval", str(V1_BASELINE), "-m", "ap"])
    assert res.exit_code == 0 and "note:" in res.output and "schema 1" in res.output


def test_a_cut_mid_line_is_refused_in_schema_1(tmp_path: Path) -> None:
    data = V1_BASELINE.read_bytes()
    (tmp_path / "mid.jsonl").write_bytes(data[: len(data) - 40])
    with pytest.raises(ArtifactError, match=r"mid.jsonl:94: not valid JSON"):
        RunResult.load(tmp_path / "mid.jsonl")


def test_metric_errors_and_samples_round_trip(tmp_path: Path) -> None:
    first = CaseResult("a", TargetResponse(ranked_ids=["x"]), {"recall@1": 1.0},
                       metric_errors={"judge": "judge failed on case 'a': 529"})
    rows = [first, CaseResult("b", TargetResponse(text="t"), {"recall@1": 0.0, "judge": 3.0}),
            QueryResult("c", [], {"m": 1.0}, sample=0),
            QueryResult("c", [], {"m": 0.5}, sample=1)]
    path = RunResult("r", rows).save(tmp_path / "r.jsonl")
    objs = [json.loads(x) for x in path.read_text().splitlines()[1:-1]]
    assert objs[0]["metric_errors"] == {"judge": "judge failed on case 'a': 529"}
    assert "metric_errors" not in objs[1] and "sample" not in objs[1]
    assert [o.get("sample") for o in objs[2:]] == [0, 1]
    back = RunResult.load(path)
    assert back.per_query[0].metric_errors == first.metric_errors
    # the rows are kept as samples; per_query holds one reduced row per case
    assert [r.sample for r in back.samples] == [None, None, 0, 1]
    assert [(r.query_id, r.sample) for r in back.per_query] == [
        ("a", None), ("b", None), ("c", None)]
    assert back.per_query[2].metrics == {"m": 0.75}
    bad = path.read_text().replace('"sample": 1', '"sample": -1')
    (tmp_path / "bad.jsonl").write_text(bad)
    with pytest.raises(ArtifactError, match=r"row 'c'.*'sample' is -1"):
        RunResult.load(tmp_path / "bad.jsonl")
    twice = path.read_text().replace('"sample": 1', '"sample": 0')
    (tmp_path / "twice.jsonl").write_text(twice)
    with pytest.raises(ArtifactError, match=r"'c' sample 0 has a second row \(first on line 4\)"):
        RunResult.load(tmp_path / "twice.jsonl")


def test_mean_of_a_metric_that_failed_on_a_case_names_run_metric_and_cases() -> None:
    rows = [CaseResult("a", TargetResponse(), {"recall@1": 1.0},
                       metric_errors={"judge": "judge call failed: 529 overloaded"}),
            CaseResult("b", TargetResponse(), {"recall@1": 0.5, "judge": 4.0}),
            CaseResult("c", TargetResponse(), {"recall@1": 0.0},
                       metric_errors={"judge": "stop_reason max_tokens"})]
    run = RunResult("sys", rows)
    assert run.mean("recall@1") == 0.5  # the other metric keeps every case
    with pytest.raises(MetricFailedError) as err:
        run.mean("judge")
    assert isinstance(err.value, KeyError)
    text = str(err.value)
    assert text.startswith("run 'sys' has no 'judge' value on 2 case(s): ")
    assert "case 'a' failed: judge call failed: 529 overloaded" in text
    assert "case 'c' failed: stop_reason max_tokens" in text
    assert err.value.cases.keys() == {"a", "c"}
    assert run.metric_failures() == {"judge": {"a": "judge call failed: 529 overloaded",
                                               "c": "stop_reason max_tokens"}}
    assert run.coverage().complete  # a failed metric leaves coverage alone


def test_schema_1_target_rows_with_a_metric_error_become_per_metric(tmp_path: Path) -> None:
    header = {"type": "header", "schema_version": 1, "name": "old", "kind": "target",
              "config": {"metrics": ["recall@1", "judge"]}, "status": "incomplete",
              "goldens": {"n_cases": 2, "case_digests": {"a": "x", "b": "y"}}}
    ok = {"type": "row", "id": "a", "metrics": {"recall@1": 1.0, "judge": 3.0},
          "response": {"ranked_ids": ["d"]}, "latency_ms": 1.0, "error": None}
    failed = {"type": "row", "id": "b", "metrics": {}, "response": {"ranked_ids": ["d"]},
              "latency_ms": 1.0, "error": "metric 'judge' failed on case 'b': boom"}
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in (header, ok, failed)))
    run = RunResult.load(path)
    row = run.per_query[1]
    assert row.error is None
    assert row.metric_errors == {"recall@1": failed["error"], "judge": failed["error"]}
    assert run.coverage().complete  # both cases answered: schema 1 "incomplete" was a metric


def test_shutil_copy_keeps_a_finished_file_verifiable(tmp_path: Path) -> None:
    path = small_run().save(tmp_path / "r.jsonl")
    copy = Path(shutil.copy(path, tmp_path / "copy.jsonl"))
    assert RunResult.load(copy).coverage().complete


def test_promote_refuses_a_failed_metric_and_an_incomplete_run(tmp_path: Path) -> None:
    from evalkit.gate.baseline import promote
    from evalkit.gate.fingerprint import BaselineError

    rows = [CaseResult("a", TargetResponse(), {"recall@1": 1.0},
                       metric_errors={"judge": "judge call failed: 529"}),
            CaseResult("b", TargetResponse(), {"recall@1": 0.5, "judge": 4.0})]
    with pytest.raises(BaselineError, match=r"metric judge scored on 1 of 2 cases; 1 "
                                            r"error\(s\) \('a'\).*"
                                            r"A baseline must hold every metric"):
        promote(RunResult("r", rows), tmp_path / "b.jsonl")
    lines = small_run().save(tmp_path / "r.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_bytes(b"".join(lines[:-1]))  # only the trailer lost
    with pytest.raises(BaselineError, match=r"ends without its trailer line after 4 row"):
        promote(tmp_path / "cut.jsonl", tmp_path / "b.jsonl")
    assert not (tmp_path / "b.jsonl").exists()


def test_every_reporter_says_why_an_incomplete_gate_judged_nothing(tmp_path: Path) -> None:
    from evalkit.gate import evaluate_gate
    from evalkit.gate.checks import CheckSpec
    from evalkit.report.writing import write_reports

    lines = small_run().save(tmp_path / "r.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_bytes(b"".join(lines[:3]))
    run = RunResult.load(tmp_path / "cut.jsonl")
    report = evaluate_gate([CheckSpec("floor", "m", op=">=", threshold=0.0)], run)
    assert report.exit_code == 2 and report.status == "error"
    assert [r.verdict for r in report.results] == ["error"]
    assert report.to_dict()["incomplete"] == list(report.incomplete)
    write_reports(report, [f"{fmt}:{tmp_path / fmt}" for fmt in ("json", "markdown", "junit")])
    for fmt in ("json", "markdown", "junit"):
        text = (tmp_path / fmt).read_text()
        assert "it holds 2 of the 4 queries its header records" in text, fmt


def test_rescoring_an_altered_file_keeps_it_incomplete(tmp_path: Path) -> None:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.rescore import rescore
    from evalkit.execute.target_runner import evaluate

    cases = [GoldenCase(c, "q", expected=[c]) for c in ("a", "b")]
    art = tmp_path / "run.jsonl"
    evaluate(CallableTarget(lambda c: [c.id]), cases, ["recall@1"], artifact=art,
             progress=False)
    art.write_text(art.read_text().replace('"ranked_ids": ["b"]', '"ranked_ids": ["x"]'))
    out = rescore(art, ["recall@1"], goldens=cases, output=tmp_path / "again.jsonl")
    assert out.header["status"] == "incomplete"
    cov = RunResult.load(tmp_path / "again.jsonl").coverage()
    assert not cov.complete and "its header marks it incomplete (rescored from a file that " \
        "was altered" in cov.message() and "sha256 does not match" in cov.message()


def test_the_example_baseline_is_schema_2_and_holds_what_schema_1_did() -> None:
    """examples/gate/baseline.jsonl is schema 2, promoted again from the same scored run as
    the schema 1 file (docs/artifacts.md): the same queries, counts, settings and
    fingerprint, scores equal to 1e-12 (nDCG's sum may differ in its last bit), and only
    provenance differs (timestamps, provider names, plugin versions); its trailer covers
    the bytes before it (computed here with hashlib)."""
    example = ROOT / "examples" / "gate" / "baseline.jsonl"
    lines = example.read_bytes().splitlines(keepends=True)
    trailer = json.loads(lines[-1])
    assert trailer == {"type": "trailer", "rows": 93,
                       "sha256": hashlib.sha256(b"".join(lines[:-1])).hexdigest()}
    old = V1_BASELINE.read_bytes().splitlines(keepends=True)
    new_header, old_header = json.loads(lines[0]), json.loads(old[0])
    assert new_header["schema_version"] == 2 and old_header["schema_version"] == 1

    provenance = {"schema_version", "created", "promoted", "provider", "plugins", "counts"}

    def without_provenance(value: object) -> object:
        if isinstance(value, dict):
            return {k: without_provenance(v) for k, v in value.items() if k not in provenance}
        if isinstance(value, list):
            return [without_provenance(v) for v in value]
        return value

    assert without_provenance(new_header) == without_provenance(old_header)
    assert set(new_header) - {"counts"} == set(old_header)
    new_rows = [json.loads(line) for line in lines[1:-1]]
    old_rows = [json.loads(line) for line in old[1:]]
    assert [r["id"] for r in new_rows] == [r["id"] for r in old_rows]
    for new_row, old_row in zip(new_rows, old_rows, strict=True):
        assert {k: v for k, v in new_row.items() if k != "metrics"} == \
            {k: v for k, v in old_row.items() if k != "metrics"}
        assert new_row["metrics"].keys() == old_row["metrics"].keys()
        for name, value in old_row["metrics"].items():
            assert new_row["metrics"][name] == pytest.approx(value, abs=1e-12, rel=0)
    run = RunResult.load(example)
    assert run.coverage().complete and run.coverage().notes == ()


_HEAD = '{"type": "header", "schema_version": 2, "name": "r"}\n'
_ROW = '{"type": "row", "id": "q%d", "metrics": {"ap": 0.%d}, "retrieved": []}\n'


def _finished(rows: list[str], head: str = _HEAD) -> str:
    body = head + "".join(rows)
    digest = hashlib.sha256(body.encode()).hexdigest()
    return body + json.dumps({"type": "trailer", "rows": len(rows), "sha256": digest}) + "\n"


@pytest.mark.parametrize("text", [
    _finished([_ROW % (i, i) for i in range(3)]),
    _finished([_ROW % (i, i) for i in range(3)]) + "\n  \n",  # blank lines after the trailer
    _finished([_ROW % (0, 0), "\n", "  \t\n", _ROW % (1, 1)]),  # blank lines are hashed
    _finished([(_ROW % (i, i)).replace("\n", "\r\n") for i in range(2)]),
    _finished([" " + _ROW % (0, 0)]),  # white space around a line's object
    "\ufeff" + _finished([_ROW % (0, 0)]),  # a byte order mark
    _HEAD + _ROW % (0, 0),  # no trailer: unfinished
    _HEAD + _ROW % (0, 0) + '{"type": "row", "id": "q1", "metr',  # cut mid-line
    _finished([_ROW % (0, 0)]) + '{"type": "row"}\n',  # content after the trailer
    _HEAD + '{"type": "row", "id": "a", "m": [1,\n2]}\n' + _ROW % (1, 1),  # spans lines
    _HEAD + '{"type": "row", "id": "a"} {"type": "row", "id": "b"}\n',  # two on one line
    _HEAD + '{"type": "row", "id": "a"},{"type": "row", "id": "b"}\n',
    _HEAD + '{"type": "row", "id": "a", "x": ' + "[" * 80 + "]" * 80 + "}\n",  # too deep
    _HEAD + '{"type": "row", "id": "a\\u0000"}\n\x1c\n',  # not blank to bytes.isspace
    _finished([_ROW % (0, 0)]).replace('"schema_version": 2', '"schema_version": 9'),
    '{"type": "row", "id": "a"}\n',  # no header
    _HEAD + '[1]\n',
    _finished([_ROW % (0, 0), '{"type": "trailer", "rows": 0}\n']),  # a second trailer
    # what orjson refuses or reads otherwise than json: the file is read by json's scanner
    _finished([_ROW.replace("0.%d", "NaN") % 0, _ROW.replace("0.%d", "-Infinity") % 1]),
    _finished([_ROW.replace("0.%d", "1e400") % 0]),  # beyond the float range: inf
    _finished([_ROW.replace("0.%d", "123456789012345678901234567890") % 0]),
    _finished([_ROW.replace("0.%d", "-9223372036854775809") % 0]),  # an exact integer
    _finished(['{"type": "row", "id": "q0", "sample": 18446744073709551616}\n']),
    _finished(['{"type": "row", "id": "q0", "counts": {"n": 1234567890123456789012}}\n']),
    _finished(['{"type": "row", "id": "q0", "x": 1.5e0000000000000000000001}\n']),
    _finished(['{"type": "row", "id": "\\ud800"}\n']),  # a lone surrogate
    _finished(['{"type": "row", "id": "q0", "id": "q1", "metrics": {"a": 1, "a": 2}}\n']),
    # what both read alike: read at once
    _finished([_ROW.replace("0.%d", "0.0012345678901234567890123") % 0]),
    _finished(['{"type": "row", "id": "12345678901234567890123", "metrics": {}}\n']),
    _finished([_ROW.replace("0.%d", "9223372036854775807") % 0]),
])
@pytest.mark.parametrize("orjson", [True, False])
def test_reading_a_file_at_once_gives_what_reading_it_line_by_line_gives(
        tmp_path: Path, text: str, orjson: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-file reader (one UTF-8 decode, orjson or else the JSON scanner on each
    line) returns exactly what the line reader returns, or hands the file to it (which
    names the problem): a value spanning lines or two values on one line are never read
    as rows, and what orjson reads otherwise than json is read by json."""
    from evalkit.data import artifact
    from evalkit.data.artifact import _read_lines, _read_whole, read_artifact

    if not orjson:
        monkeypatch.setattr(artifact, "_orjson_loads", None)

    data = text.encode("utf-8")
    data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    p = tmp_path / "r.jsonl"
    p.write_bytes(text.encode("utf-8"))
    whole = _read_whole(p, data)
    try:
        by_line = _read_lines(p, data)
    except ArtifactError as exc:
        assert whole is None
        with pytest.raises(ArtifactError) as err:
            read_artifact(p)
        assert str(err.value) == str(exc)
        return
    if text.endswith("}\n") and "trailer" in text.splitlines()[-1] and "\\u" not in text:
        assert whole is not None  # a well-formed file is read at once
    if whole is not None:
        assert whole[:3] == by_line[:3] and whole[4] is None and by_line[4] is None
        if whole[2] is not None:
            assert whole[3] == by_line[3]


def test_a_file_that_is_not_utf8_is_named_by_line(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes((_HEAD + _ROW % (0, 0)).encode() + b'{"type": "row", "id": "\xff"}\n')
    with pytest.raises(ArtifactError, match=r"not UTF-8 text \(line 3, byte 0xff"):
        read_artifact_of(p)


def read_artifact_of(p: Path) -> object:
    from evalkit.data.artifact import read_artifact

    return read_artifact(p)


def test_orjson_decodes_a_plain_file_and_json_what_orjson_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson reads every line of a plain file; a file with a NaN score (which orjson
    refuses) or a 20-digit integer (which orjson would read as a float) is read by json,
    with the values json gives."""
    from evalkit.data import artifact

    calls: list[str] = []
    real = artifact._orjson_loads
    assert real is not None

    def counted(line: str) -> object:
        calls.append(line)
        return real(line)

    monkeypatch.setattr(artifact, "_orjson_loads", counted)
    p = tmp_path / "r.jsonl"
    p.write_text(_finished([_ROW % (i, i) for i in range(3)]))
    _, rows, info = artifact.read_artifact(p)
    assert len(calls) == 5 and [r["metrics"]["ap"] for _, r in rows] == [0.0, 0.1, 0.2]
    assert info.ok
    p.write_text(_finished([_ROW.replace("0.%d", "NaN") % 0]))
    _, rows, info = artifact.read_artifact(p)
    assert math.isnan(rows[0][1]["metrics"]["ap"]) and info.ok
    calls.clear()
    p.write_text(_finished([_ROW.replace("0.%d", "18446744073709551617") % 0]))
    _, rows, _ = artifact.read_artifact(p)
    assert calls == [] and rows[0][1]["metrics"]["ap"] == 18446744073709551617


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    """small_run()'s artifact with ``old`` replaced by ``new`` in its text, the trailer
    recomputed (so only the edit can be refused)."""
    path = small_run().save(tmp_path / "edited.jsonl")
    lines = path.read_text().splitlines()[:-1]
    body = "\n".join(lines).replace(old, new, 1) + "\n"
    rows = sum(1 for line in body.splitlines() if '"type": "row"' in line)
    trailer = {"type": "trailer", "rows": rows,
               "sha256": hashlib.sha256(body.encode()).hexdigest()}
    path.write_text(body + json.dumps(trailer) + "\n")
    return path


@pytest.mark.parametrize(("old", "new", "says"), [
    ('"m": 0.25', '"m": 1' + "0" * 400, ":3: row 'q1': metric 'm' is an integer of 1329 bits, "
                                        "beyond the float range"),
    ('"id": "q1"', '"id": "q\\ud800"', ":3: row id 'q\\ud800' holds a lone surrogate "
                                       "(U+D800 at position 1, \\ud800 in JSON)"),
    ('"name": "small"', '"name": "sm\\udc00"', ":1: the run name 'sm\\udc00' holds a lone "
                                                "surrogate (U+DC00 at position 2"),
    ('"id": "q1"', '"id": null', ":3: row id null is not text"),
    ('"id": "q1"', '"id": true', ":3: row id true is not text"),
    ('"id": "q1"', '"id": 7', ':3: row id 7 is not text; an artifact\'s ids are JSON '
                              'strings: write it in quotes ("7")'),
    ('"metrics": {"m": 0.25}', '"metrics": [0.25]', ":3: row 'q1': 'metrics' is list, not "
                                                    "an object"),
])
def test_what_a_row_cannot_hold_is_refused_naming_file_and_line(
        tmp_path: Path, old: str, new: str, says: str) -> None:
    path = _edited(tmp_path, old, new)
    with pytest.raises(ArtifactError) as exc:
        RunResult.load(path)
    assert says in str(exc.value) and str(exc.value).startswith(str(path))


@pytest.mark.parametrize("token", ["NaN", "-Infinity", "1e400"])
def test_a_non_finite_metric_is_a_failed_metric_whatever_decoder_reads_it(
        tmp_path: Path, token: str) -> None:
    path = _edited(tmp_path, '"m": 0.25', f'"m": {token}')
    run = RunResult.load(path)
    assert run.integrity is not None and run.integrity.ok
    row = next(r for r in run.per_query if r.query_id == "q1")
    assert row.metrics == {} and "not a finite number (read as an error)" in \
        row.metric_errors["m"]
    assert list(run.metric_failures()) == ["m"] and list(run.metric_failures()["m"]) == ["q1"]
