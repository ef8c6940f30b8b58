"""What the command line says when the input is not what it expects, found by a fresh user.

Each test gives the CLI an input a newcomer is likely to get wrong (a qrels file where the
run goes, a binary file, a directory, an unquoted YAML operator, a run that answers one
query of 93...) and checks that the message names the file, says what is wrong and how to
fix it. Numbers in the expectations are counted from the data files here, not taken from
evalkit.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from evalkit.cli.app import app

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani"
QRELS = VASWANI / "data" / "qrels"
#: not UTF-8 (0xd7 then a non-continuation byte), and no NUL byte
GARBAGE = b"\xd7\x41 garbage \xff\xfe binary \x80\x81\n" * 20

runner = CliRunner()


def invoke(*args: str | Path, input: str | None = None) -> Result:
    return runner.invoke(app, [str(a) for a in args], input=input)


def error_of(res: Result) -> str:
    """The one error message (exit 2, ``error:`` on stderr, continuation lines joined)."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stderr.startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    return " ".join(line.strip() for line in res.stderr.splitlines())


def judged_queries() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for line in QRELS.read_text().splitlines():
        q, _, d, label = line.split()
        out[q][d] = int(label)
    return out


def artifact_rows(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [x for x in lines if x.get("type") == "row"]


@dataclass(frozen=True)
class Runs:
    """Two Vaswani systems as TREC run files and run artifacts (examples/vaswani/main.py)."""

    trec: Path  # run.tfidf.txt
    trec_bm25: Path  # run.bm25.txt
    tfidf: Path  # tfidf.jsonl
    bm25: Path  # bm25.jsonl


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    out = tmp_path_factory.mktemp("vaswani")
    proc = subprocess.run(
        [sys.executable, str(VASWANI / "main.py"), "--out", str(out), "--resamples", "200"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return Runs(out / "run.tfidf.txt", out / "run.bm25.txt", out / "tfidf.jsonl",
                out / "bm25.jsonl")


@pytest.fixture()
def garbage(tmp_path: Path) -> Path:
    p = tmp_path / "garbage.bin"
    p.write_bytes(GARBAGE)
    return p


# --------------------------------------------------------- 1. compare notes the inputs
def test_compare_warns_about_judged_queries_a_run_lacks(runs: Runs, tmp_path: Path) -> None:
    judged = judged_queries()
    first = runs.trec.read_text().splitlines()[0]
    one = tmp_path / "one.txt"
    one.write_text(first + "\n")
    answered = {first.split()[0]}
    lacking = len(set(judged) - answered)
    assert (lacking, len(judged)) == (92, 93)

    res = invoke("compare", runs.trec, one, "--qrels", QRELS, "-m", "ap", "-B", "200")
    assert res.exit_code == 0, res.output
    assert f"lacks {lacking} of the {len(judged)} judged queries" in res.stderr
    assert "scored 0" in res.stderr

    res = invoke("compare", runs.trec, one, "--qrels", QRELS, "-m", "ap", "-B", "200", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["warnings"]) == 1 and f"lacks {lacking} of" in doc["warnings"][0]
    assert doc["comparisons"][0]["warnings"][0] == doc["warnings"][0]


def test_compare_warns_about_run_topics_without_judgments(runs: Runs, tmp_path: Path) -> None:
    judged = judged_queries()
    extra = "unjudged-topic"
    assert extra not in judged
    lines = runs.trec.read_text().splitlines()
    with_extra = tmp_path / "extra.txt"
    with_extra.write_text("\n".join([*lines, f"{extra} Q0 d1 1 1.0 extra"]) + "\n")
    res = invoke("compare", runs.trec, with_extra, "--qrels", QRELS, "-m", "ap", "-B", "200",
                 "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert any("1 topic(s)" in w and extra in w and "ignored" in w for w in doc["warnings"])
    assert extra in res.stderr


# ------------------------------------------------------------- 2. reports on stdout
def test_gate_report_on_stdout_is_the_only_thing_there(runs: Runs, tmp_path: Path) -> None:
    values = [float(r["metrics"]["ap"]) for r in artifact_rows(runs.tfidf)]  # type: ignore[index]
    mean_ap = math.fsum(values) / len(values)
    checks = tmp_path / "checks.yaml"
    checks.write_text(f'checks:\n  - id: floor\n    metric: ap\n    op: ">="\n'
                      f"    threshold: {mean_ap + 0.01}\n")
    res = invoke("gate", "-c", checks, "-r", runs.tfidf, "--report", "json:-")
    assert res.exit_code == 1  # the mean is below the threshold
    doc = json.loads(res.stdout)  # nothing but the report on stdout
    assert doc["status"] == "failed" and doc["rows"][0]["value"] == pytest.approx(mean_ap)
    assert "floor: fail" in res.stderr  # the verdict lines moved to stderr
    both = invoke("gate", "-c", checks, "-r", runs.tfidf, "--report", "json:-",
                  "--report", "markdown:-")
    assert "both write to standard output" in error_of(both)
    # --json is named as itself, as compare names it, not as a second json:-
    clash = invoke("gate", "-c", checks, "-r", runs.tfidf, "--json", "--report", "json:-")
    assert "--json and --report json:- both write to standard output" in error_of(clash)


# ------------------------------------------------------------ 3. why cases errored
def test_run_prints_why_cases_errored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = "evalkit_test_down_service"
    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"00{i}", "query": f"q{i}", "relevant": ["d1"]}) + "\n"
        for i in range(1, 5)))
    (tmp_path / f"{module}.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n"
        "    def rank(case):\n"
        "        raise ConnectionError('connection refused by localhost:9')\n"
        "    return CallableTarget(rank, name='svc')\n"
    )
    (tmp_path / "evalkit.yaml").write_text(
        f"goldens: goldens.jsonl\ntarget:\n  factory: {module}:make\nmetrics: [recall@1]\n"
        "output: runs/svc.jsonl\nmax_concurrency: 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 1
    assert "INCOMPLETE: 4 of 4 cases errored" in res.stdout
    # one group: the messages differ only in the case id
    assert ("4 cases ('001', '002', '003', ...): target 'svc' failed on case '001': "
            "connection refused by localhost:9") in res.stdout
    res = runner.invoke(app, ["run", "--no-progress", "--json", "--overwrite"])
    assert res.exit_code == 1
    groups = json.loads(res.stdout)["error_messages"]
    assert [g["cases"] for g in groups] == [4]
    assert groups[0]["ids"] == ["001", "002", "003", "004"]
    assert "connection refused by localhost:9" in groups[0]["message"]


# -------------------------------------------------- 4. inputs that are something else
@pytest.mark.parametrize(
    ("name", "content", "needles"),
    [
        ("qrels.txt", QRELS.read_text()[:200],
         ["looks like a TREC qrels file", "Pass it as --qrels"]),
        ("goldens.jsonl", '{"id": "q1", "query": "hello", "relevant": ["d1"]}\n',
         ["looks like a golden set", "evalkit run"]),
        ("list.json", "[1, 2, 3]\n", [":1: JSON (a list), not a run"]),
        ("garbage.bin", GARBAGE, [":1: a binary file, or text that is not UTF-8 (byte 0xd7 on "
                                  "line 1)", "iconv -f latin1 -t utf-8"]),
        ("nul.bin", b"\x00\x01\x02", ["is a binary file (it contains NUL bytes)"]),
        ("empty.txt", "", ["is an empty file"]),
    ],
)
def test_eval_says_what_a_non_run_looks_like(tmp_path: Path, name: str,
                                             content: str | bytes, needles: list[str]) -> None:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    message = error_of(invoke("eval", p))
    assert str(p) in message
    assert "is a TREC run file" not in message
    for needle in needles:
        assert needle in message


def test_swapped_run_and_qrels_are_named_as_such(runs: Runs) -> None:
    # the CLI checks both inputs before scoring
    msg = error_of(invoke("eval", QRELS, "--qrels", runs.trec))
    assert f"{QRELS} looks like a TREC qrels file" in msg and "swapped" in msg
    msg = error_of(invoke("eval", runs.trec, "--qrels", runs.trec))
    assert f"--qrels {runs.trec} looks like a TREC run file" in msg and "swapped" in msg


def test_the_trec_loaders_suggest_a_swap(runs: Runs) -> None:
    from evalkit_retrieval.trec import TrecFormatError

    from evalkit import evaluate_run

    with pytest.raises(TrecFormatError) as info:
        evaluate_run(QRELS, QRELS, ["ap"])  # qrels where the run goes
    assert "found 4" in str(info.value) and "were the run and the qrels swapped" in str(
        info.value)
    with pytest.raises(TrecFormatError) as info:
        evaluate_run(runs.trec, runs.trec, ["ap"])  # a run where the qrels go
    assert "found 6" in str(info.value) and "were the run and the qrels swapped" in str(
        info.value)


def test_counts_are_selectable_and_printed_as_counts(runs: Runs) -> None:
    judged = judged_queries()
    relevant = {q: sum(1 for g in docs.values() if g >= 1) for q, docs in judged.items()}
    total = sum(relevant.values())
    res = invoke("eval", runs.trec, "--qrels", QRELS, "-m", "num_rel,ap")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.stdout.splitlines() if x.startswith("num_rel "))
    assert line.split()[1:] == [str(total), f"{total / len(judged):.2f}"]
    res = invoke("eval", runs.trec, "--qrels", QRELS, "-m", "num_rel", "--json", "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["counts"] == {"num_rel": total} and doc["metrics"] == []
    assert {r["id"]: r["counts"]["num_rel"] for r in doc["per_query"]} == relevant
    # compare explains that counts are reported, not compared
    msg = error_of(invoke("compare", runs.tfidf, runs.bm25, "-m", "num_rel"))
    assert "per-query count" in msg and "not compared" in msg


def test_evaluate_run_puts_requested_counts_in_counts(runs: Runs) -> None:
    from evalkit import evaluate_run
    from evalkit.core.registry import RegistryError

    judged = judged_queries()
    result = evaluate_run(runs.trec, QRELS, ["num_rel"])
    assert result.header["counts"] == ["num_rel"]
    assert {r.query_id: r.counts["num_rel"] for r in result.per_query} == {
        q: sum(1 for g in docs.values() if g >= 1) for q, docs in judged.items()}
    with pytest.raises(RegistryError, match="num_rell"):
        evaluate_run(runs.trec, QRELS, ["num_rell"])


def test_unquoted_operators_are_explained(runs: Runs, tmp_path: Path) -> None:
    folded = tmp_path / "folded.yaml"  # `op: >` is a YAML folded scalar: ''
    folded.write_text("checks:\n  - id: a\n    metric: ap\n    op: >\n    threshold: 0.1\n")
    msg = error_of(invoke("gate", "-c", folded, "-r", runs.tfidf))
    assert f"{folded}: check 'a': 'op' is ''" in msg and 'quote the operator: op: ">="' in msg
    broken = tmp_path / "broken.yaml"  # `op: >=` is not YAML at all
    broken.write_text("checks:\n  - id: a\n    metric: ap\n    op: >=\n    threshold: 0.1\n")
    msg = error_of(invoke("gate", "-c", broken, "-r", runs.tfidf))
    assert f"{broken}:4: not valid YAML" in msg and 'quote the operator: op: ">="' in msg


def test_gate_checks_from_a_directory_or_stdin(runs: Runs, tmp_path: Path) -> None:
    folder = tmp_path / "ci"
    folder.mkdir()
    (folder / "checks.yaml").write_text(
        'checks:\n  - id: a\n    metric: ap\n    op: ">="\n    threshold: 0.0\n')
    msg = error_of(invoke("gate", "-c", folder, "-r", runs.tfidf))
    assert f"checks {folder}: is a directory (it holds checks.yaml)" in msg
    assert f"-c {folder / 'checks.yaml'}" in msg
    if not Path("/dev/stdin").exists():
        pytest.skip("no /dev/stdin on this system")
    for source in ("/dev/stdin", "-"):
        proc = subprocess.run(
            [sys.executable, "-c", "from evalkit.cli import main; main()",
             "gate", "-c", source, "-r", str(runs.tfidf)],
            input=(folder / "checks.yaml").read_text(), capture_output=True, text=True,
        )
        assert proc.returncode == 0, proc.stderr
        assert "a: pass (93/93 cases)" in proc.stdout


# ------------------------------------------------- 5. file-system and encoding errors
def test_binary_files_are_named(runs: Runs, tmp_path: Path, garbage: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text('checks:\n  - id: a\n    metric: ap\n    op: ">="\n    threshold: 0\n')
    cases: list[tuple[list[str | Path], str]] = [
        (["gate", "-c", garbage, "-r", runs.tfidf], "a checks file is YAML text"),
        (["rescore", garbage, "-m", "ap"], "not an evalkit run artifact"),
        (["run", garbage], "an eval config is evalkit.yaml or pyproject.toml"),
        (["plugins", "list", "--config", garbage], "--config takes a pyproject.toml"),
        (["gate", "-c", checks, "-r", garbage], "not an evalkit run artifact"),
    ]
    for args, what in cases:
        msg = error_of(invoke(*args))
        assert str(garbage) in msg, args
        assert "codec can't decode" not in msg and what in msg, (args, msg)


def test_directories_where_files_go(runs: Runs, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    msg = error_of(invoke("eval", runs.trec, "--qrels", QRELS, "-m", "ap", "--save", folder))
    assert msg == (f"error: --save {folder}: is a directory; name the file to write, e.g. "
                   f"--save {folder / 'run.tfidf.jsonl'}")
    msg = error_of(invoke("baseline", "promote", runs.tfidf, "--to", folder))
    assert f"--to {folder}: is a directory" in msg
    assert "Errno" not in msg


def test_an_artifact_without_rows_says_so(runs: Runs, tmp_path: Path) -> None:
    header = tmp_path / "hdr_only.jsonl"
    header.write_text(json.dumps({"type": "header", "schema_version": 1, "name": "x"}) + "\n")
    (tmp_path / "c.yaml").write_text(
        'checks:\n  - id: a\n    metric: ap\n    op: ">="\n    threshold: 0\n')
    cases: list[list[str | Path]] = [
        ["eval", header], ["compare", header, runs.tfidf],
        ["gate", "-c", tmp_path / "c.yaml", "-r", header],
        ["baseline", "promote", header, "--to", tmp_path / "b.jsonl"],
    ]
    for args in cases:
        msg = error_of(invoke(*args))
        assert f"{header}: the run artifact has no rows" in msg, (args, msg)


def test_error_messages_of_file_system_errors(tmp_path: Path) -> None:
    from evalkit.cli.errors import message_of

    assert message_of(IsADirectoryError(21, "Is a directory", "adir")).startswith(
        "adir: is a directory")
    assert message_of(PermissionError(13, "Permission denied", "x.jsonl")).startswith(
        "x.jsonl: permission denied")
    assert message_of(FileNotFoundError(2, "No such file", "nope")) == "nope: no such file"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(GARBAGE)
    good = tmp_path / "good.txt"
    good.write_text("fine\n")
    try:
        GARBAGE.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = message_of(exc, [good, bad])
    assert text.startswith(f"{bad}: is not UTF-8 text (byte 0xd7")


# ------------------------------------------------------------------------ 6. minor
def test_compare_the_same_file_twice_keeps_the_first_name(runs: Runs) -> None:
    res = invoke("compare", runs.tfidf, runs.tfidf, "-m", "ap", "-B", "200")
    assert res.exit_code == 0, res.output
    assert f"baseline tfidf ({runs.tfidf})" in res.stdout
    assert f"candidate tfidf#2 ({runs.tfidf})" in res.stdout


def test_compare_refuses_too_few_resamples_and_a_foreign_interval(runs: Runs) -> None:
    msg = error_of(invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "-B", "1"))
    assert "--resamples/-B 1: expected an integer from 100 to 1,000,000" in msg
    assert invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "-B", "100").exit_code == 0
    msg = error_of(invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "--test", "t-test",
                          "--ci", "inversion"))
    assert "--ci inversion inverts the randomization test" in msg


def test_promote_refuses_to_overwrite_without_force(runs: Runs, tmp_path: Path) -> None:
    to = tmp_path / "baseline.jsonl"
    assert invoke("baseline", "promote", runs.tfidf, "--to", to).exit_code == 0
    first = to.read_bytes()
    msg = error_of(invoke("baseline", "promote", runs.bm25, "--to", to))
    assert f"--to {to} already exists (the baseline of run 'tfidf'" in msg and "--force" in msg
    assert to.read_bytes() == first
    assert invoke("baseline", "promote", runs.bm25, "--to", to, "--force").exit_code == 0
    assert json.loads(to.read_text().splitlines()[0])["name"] == "bm25"


def test_singular_and_plural(runs: Runs) -> None:
    from evalkit.gate.checks import CheckError, CheckSpec

    res = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "-B", "200")
    assert "p adjusted by Holm over 1 test;" in res.stdout
    res = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap,rr", "-B", "200")
    assert "p adjusted by Holm over 2 tests;" in res.stdout
    spec = CheckSpec(id="c", metric="ap", op=">=", threshold=0.1, scope=("1", "nope"))
    from evalkit.data.results import RunResult

    with pytest.raises(CheckError, match=r"but 1 has no result"):
        spec.select(RunResult.load(runs.tfidf).per_query)


def test_number_formatting() -> None:
    from evalkit.report.formatting import p_cell, p_phrase, signed

    # a value that rounds to zero keeps its direction; floating-point residue does not
    assert signed(-0.00004) == "-0.0000" and signed(-0.00005001) == "-0.0001"
    assert signed(0.1 - 0.3 + 0.2) == "+0.0000" and signed(-0.0) == "+0.0000"
    assert signed(0.059) == "+0.0590" and signed(-math.inf) == "-inf"
    # the floor 1/(B+1): 1/10001 = 0.0000999..., 1/1001 = 0.000999...
    assert p_cell(1 / 10_001, 10_000) == "< 0.0001"
    assert p_cell(1 / 1_001, 1_000) == "< 0.001"
    assert p_phrase(1 / 1_001, 1_000) == "p < 0.001"
    assert p_cell(0.0123, 10_000) == "0.0123" and p_phrase(0.0123) == "p = 0.0123"
    assert p_cell(None) == ""


def test_compare_prints_a_bound_just_below_zero_as_minus_zero() -> None:
    from evalkit.comparison import MetricComparison as Comparison
    from evalkit.report.formatting import interval

    def _ci(c: Comparison) -> str:
        return interval(c.ci_low, c.ci_high)

    row = Comparison(
        metric="ap", baseline="a", candidate="b", n_queries=3, baseline_mean=0.1,
        candidate_mean=0.1, diff=0.0, ci_low=-0.00001, ci_high=0.02, p_value=0.9,
        p_adjusted=None, significant=False, significant_unadjusted=False, wins=1, ties=1,
        losses=1, higher_is_better=True,
    )
    assert _ci(row) == "[-0.0000, +0.0200]"  # the interval reaches below 0


def test_power_from_sd_does_not_mention_a_simulation() -> None:
    res = invoke("power", "--sd", "0.15", "-n", "30", "-e", "0.05")
    assert res.exit_code == 0, res.output
    assert "simulation" not in res.stdout and "±" not in res.stdout


def test_top_table_title_is_one_line(runs: Runs) -> None:
    res = invoke("compare", runs.tfidf, runs.bm25, runs.trec_bm25, "--qrels", QRELS,
                 "-m", "ap", "--top", "1", "-B", "200")
    assert res.exit_code == 0, res.output
    assert "queries that moved most (ap, bm25 vs tfidf)" in res.stdout.splitlines()


def test_gate_p_at_the_floor_says_less_than(runs: Runs, tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: reg\n    metric: ndcg@10\n"
                      "    vs_baseline: no_significant_regression\n")
    res = invoke("gate", "-c", checks, "-r", runs.tfidf, "-b", runs.bm25, "-B", "1000")
    # runs.bm25's nDCG@10 is ~8 standard errors above TF-IDF's: a regression at the
    # sign-flip test's floor, 1/(B+1) (its differences' skewness is 0.52, so the default
    # runs the sign-flip test alone)
    assert res.exit_code == 1, res.output
    assert "p < 0.001" in res.stdout and "p = 0.0010" not in res.stdout
    assert "1 failed, 0 warned, 0 errors" in res.stdout


def test_an_unknown_metric_is_told_before_the_qrels_are_read(tmp_path: Path) -> None:
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 a 1 1 t\n")
    qrels.write_text("q1 0 a 1 extra\n")  # malformed too: the metric is named first
    message = error_of(invoke("eval", run, "--qrels", qrels, "-m", "nosuch"))
    assert message.startswith("error: unknown metric 'nosuch'"), message
