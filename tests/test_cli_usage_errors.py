"""Usage errors (an option value not accepted, a missing or unknown option, an unknown
command) print one ``error:`` line, naming the option, the value given and what is
accepted, and exit 2, like every other user error; help is printed exactly as typer
prints it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from evalkit.cli.app import app

REPO = Path(__file__).resolve().parents[1]
ART = REPO / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt"

runner = CliRunner()


@pytest.mark.parametrize(("args", "line"), [
    (["compare", "a", "b", "--test", "foo"],
     "error: --test foo: expected one of auto, randomization, t-test, bootstrap-t, bootstrap, "
     "randomization+bootstrap-t"),
    (["compare", "a", "b", "--correction", "bonferroni"],
     "error: --correction bonferroni: expected one of holm, bh, westfall-young, none"),
    (["compare", "a", "b", "--missing=x"],
     "error: --missing x: expected one of zero, skip, refuse"),
    (["compare", "a", "b", "-B", "abc"],
     "error: --resamples/-B abc: expected an integer from 100 to 1,000,000"),
    (["compare", "a", "b", "--alpha", "x"], "error: --alpha x: expected a number"),
    (["power", "-n", "1"], "error: --queries/-n 1: expected an integer >= 2"),
    # a repeated option: the value at fault is named, not the last one
    (["power", "-n", "1", "-n", "50"], "error: --queries/-n 1: expected an integer >= 2"),
    (["power", "-n1"], "error: --queries/-n 1: expected an integer >= 2"),
    (["run", "-j", "0"], "error: --max-concurrency/-j 0: expected an integer >= 1"),
    (["power", "--sd", "0.1", "-n", "10", "--trials", "1"],
     "error: --trials 1: expected an integer from 100 to 1,000,000"),
    (["eval", "x", "--format", "nope"],
     "error: --format/-f nope: expected one of table, json, trec"),
    (["gate"], "error: evalkit gate: missing option --checks/-c (see `evalkit gate --help`)"),
    (["baseline", "promote"], "error: evalkit baseline promote: missing argument RUN (see "
     "`evalkit baseline promote --help`)"),
    (["power", "--sd"],
     "error: evalkit power: option --sd needs a value (see `evalkit power --help`)"),
    (["eval", "x", "--qrel", "q"], "error: evalkit eval: no such option --qrel; did you mean "
     "--qrels? (see `evalkit eval --help`)"),
    (["eval", "x", "--bogus"],
     "error: evalkit eval: no such option --bogus (see `evalkit eval --help`)"),
    (["compar"], "error: no such command 'compar'; did you mean 'compare'? (see `evalkit "
     "--help`)"),
    (["plugins", "lst"], "error: no such command 'lst'; did you mean 'list'? (see `evalkit "
     "plugins --help`)"),
    (["eval", "x", "y", "--save", "z.jsonl"],
     "error: --save: for one run; with several runs, save them with --save-dir and score "
     "one run at a time for its own outputs"),
])
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], line: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.stderr == line + "\n"
    assert res.stdout == ""


@pytest.mark.parametrize("args", [["compare", str(ART), str(ART), "--alpha", "2"],
                                  ["power", "--sd", "0.1", "--alpha", "0"]])
def test_alpha_out_of_range_reads_alike_in_every_command(args: list[str]) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    value = args[-1]
    assert res.stderr == f"error: --alpha {value}: expected a number between 0 and 1 (exclusive)\n"


def test_an_empty_metric_list_in_rescore_is_one_line(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    art.write_text('{"type": "header", "schema_version": 1, "name": "x", "kind": "target"}\n'
                   '{"type": "row", "id": "q1", "metrics": {}, "response": null, '
                   '"error": null}\n')
    res = runner.invoke(app, ["rescore", str(art), "-m", ","])
    assert res.exit_code == 2, res.output
    assert res.stderr == ("error: -m ',' names no metric; give one or more names "
                          "(-m ap -m ndcg@10 or -m ap,ndcg@10)\n")


def typer_own(args: list[str]) -> tuple[int, str, str]:
    """``args`` run through typer's own ``TyperGroup.main`` on the same commands."""
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)
    with runner.isolation() as (out, err, _):
        code: int | str | None = 0
        try:
            TyperGroup.main(command, args=args, prog_name="evalkit")
        except SystemExit as exc:
            code = exc.code
        return int(code or 0), out.getvalue().decode(), err.getvalue().decode()


@pytest.mark.parametrize("args", [
    [], ["--help"], ["-h"], ["compare", "--help"], ["power", "-h"], ["baseline"],
    ["plugins"], ["baseline", "promote", "--help"], ["plugins", "list", "--help"],
    ["--version"],
])
def test_help_is_printed_as_typer_prints_it(args: list[str]) -> None:
    res = runner.invoke(app, args)
    assert (res.exit_code, res.stdout, res.stderr) == typer_own(args)
    assert "Usage: evalkit" in res.output or res.stdout.startswith("evalkit ")


def test_typer_alone_would_print_several_lines() -> None:
    """What the one-line messages replace: click's usage, hint and error over four lines."""
    code, _, err = typer_own(["power", "-n", "1"])
    assert code == 2 and "Error: Invalid value" in err and len(err.splitlines()) > 3


def test_through_the_installed_script() -> None:
    exe = Path(sys.executable).with_name("evalkit")
    if not exe.exists():
        pytest.skip("the evalkit script is not installed next to this interpreter")
    proc = subprocess.run([str(exe), "compare", str(ART), str(ART), "--test", "foo"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == ("error: --test foo: expected one of auto, randomization, t-test, "
                           "bootstrap-t, bootstrap, randomization+bootstrap-t\n")
    assert proc.stdout == ""


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_empty_metric_list_is_refused(value: str) -> None:
    res = runner.invoke(app, ["eval", str(ART), "--qrels", str(ART), "-m", value])
    assert res.exit_code == 2
    assert "names no metric" in res.output


def test_baseline_show_on_a_qrels_file_says_what_it_is() -> None:
    qrels = REPO / "examples" / "vaswani" / "data" / "qrels"
    res = runner.invoke(app, ["baseline", "show", str(qrels)])
    assert res.exit_code == 2
    assert "looks like a TREC qrels file" in res.output


def test_the_root_help_lists_every_command_with_its_own_summary() -> None:
    """`evalkit --help` lists the command table without importing the commands; each
    summary is also the loaded command's short help, and each command's help works."""
    from evalkit.cli.app import COMMANDS

    kernel = runner.invoke(app, ["--help"]).stdout.split("Commands:\n", 1)[1]
    listing = kernel.split("\n\n", 1)[0].splitlines()  # not the plugins' commands after
    assert [line.split()[0] for line in listing] == [c.name for c in COMMANDS]
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    for entry, line in zip(COMMANDS, listing, strict=True):
        assert line.split(None, 1)[1] == entry.summary
        command = group.get_command(None, entry.name)  # type: ignore[arg-type]
        assert command is not None and command.get_short_help_str(200) == entry.summary
        res = runner.invoke(app, [entry.name, "--help"])
        assert res.exit_code == 0 and f"Usage: evalkit {entry.name}" in res.stdout


@pytest.mark.parametrize("args", [
    ["--help"], ["plugins", "list"], ["power", "-n", "50", "--sd", "0.1"],
    ["eval", str(ART), "--qrels", str(REPO / "examples" / "vaswani" / "data" / "qrels")],
    ["baseline", "show", str(REPO / "examples" / "gate" / "baseline.jsonl")],
])
def test_a_reader_that_goes_away_ends_every_command_alike(args: list[str]) -> None:
    """`evalkit ... | head`: when nobody reads the output any more, every command (help,
    rich tables, plain text) stops silently with 141, as `yes | head` does in a shell,
    never with a gate's 1 or an error's 2, and never with a traceback."""
    exe = Path(sys.executable).with_name("evalkit")
    if not exe.exists():
        pytest.skip("the evalkit script is not installed next to this interpreter")
    proc = subprocess.Popen([str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the command has written anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""
