"""A third-party plugin adds a run format to ``evalkit eval --format`` and a measure syntax
to ``-m``, the way evalkit-retrieval adds trec_eval's (``RunFormatSpec``,
``MeasureSyntaxSpec``): the format is one of ``--format``'s choices, gets the scored run
and the request its syntax read, and its default measures apply to a run file; two
syntaxes that claim one value are refused, naming both; ``table`` and ``json`` cannot be
taken. Average precision by hand: q1 ranks its one relevant document second (AP 0.5),
q2 first (AP 1.0)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.core.hookspecs import hookimpl
from evalkit.core.metric_names import MeasureRequest
from evalkit.core.specs import MeasureSyntaxSpec, RunFormatSpec
from evalkit.report.run_formats import ScoredRun
from evalkit.testing import check_conformance, registered_plugin

SEEN: list[ScoredRun] = []


def stars(pieces: Sequence[str]) -> MeasureRequest | None:
    """``*K`` is precision@K; ``*`` alone asks for the format's header line only."""
    if not any(p.startswith("*") for p in pieces):
        return None
    names = [f"precision@{p[1:]}" if p.startswith("*") else p for p in pieces if p != "*"]
    return MeasureRequest(names, True, {"header": "*" in pieces}, format="tsv",
                          scored=("num_ret",))


def tsv(scored: ScoredRun) -> str:
    SEEN.append(scored)
    lines = ["qid\tmeasure\tvalue"] if scored.request.layout.get("header") else []
    for row in scored.result.per_query if scored.per_query else ():
        lines += [f"{row.query_id}\t{m}\t{row.metrics[m]:.4f}" for m in scored.metrics]
    lines += [f"all\t{m}\t{scored.result.mean(m):.4f}" for m in scored.metrics]
    return "\n".join(lines)


class TsvPlugin:
    @staticmethod
    @hookimpl
    def evalkit_register_measure_syntaxes() -> list[MeasureSyntaxSpec]:
        return [MeasureSyntaxSpec("stars", stars, "*K: precision@K")]

    @staticmethod
    @hookimpl
    def evalkit_register_run_formats() -> list[RunFormatSpec]:
        return [RunFormatSpec("tsv", tsv, "one measure a line", default_measures=("ap",))]


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str, str]:
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\n"
                   "q2 Q0 d4 1 2.0 r\nq2 Q0 d5 2 1.0 r\n")
    qrels.write_text("q1 0 d2 1\nq2 0 d4 1\n")
    return str(run), "--qrels", str(qrels)


def evalkit(*args: str) -> tuple[int, str, str]:
    with registered_plugin(TsvPlugin(), installed=True):
        result = CliRunner().invoke(app, ["eval", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_plugins_format_prints_with_its_default_measures(files: tuple[str, str, str]) -> None:
    SEEN.clear()
    code, out, err = evalkit(*files, "--format", "tsv", "-q")
    assert code == 0, err
    assert out.splitlines() == ["q1\tap\t0.5000", "q2\tap\t1.0000", "all\tap\t0.7500"]
    (scored,) = SEEN
    assert (scored.per_query, scored.judgments, scored.zero_missing) == (
        True, {"q1": {"d2": 1}, "q2": {"d4": 1}}, False)
    assert scored.source == Path(files[0]) and scored.request == MeasureRequest(["ap"], True)


def test_its_syntax_reads_the_values_written_in_it(files: tuple[str, str, str]) -> None:
    SEEN.clear()
    code, out, err = evalkit(*files, "-f", "tsv", "-m", "*,*1,ap", "-c")
    assert code == 0, err
    # precision@1: q1 ranks d1 (not relevant) first, q2 d4 (relevant): mean 0.5
    assert out.splitlines() == ["qid\tmeasure\tvalue", "all\tprecision@1\t0.5000",
                                "all\tap\t0.7500"]
    assert SEEN[0].request.format == "tsv" and SEEN[0].zero_missing is True
    # the table reads the same names; the header alone needs the format that prints it
    code, out, _ = evalkit(*files, "-m", "*1")
    assert code == 0 and "precision@1" in out
    code, out, err = evalkit(*files, "-m", "*")
    assert code == 2 and out == ""
    assert err == ("error: the -m values name no measure, only lines of the tsv format's "
                   "layout: add --format tsv, or name a measure (-m ap)\n")
    code, out, _ = evalkit(*files, "-f", "tsv", "-m", "*")
    assert code == 0 and out == "qid\tmeasure\tvalue\n"


def test_the_formats_are_table_json_and_every_registered_one(files: tuple[str, str, str]) -> None:
    code, _, err = evalkit(*files, "--format", "csv")
    assert code == 2
    assert err == "error: --format/-f csv: expected one of table, json, trec, tsv\n"


def test_two_syntaxes_that_claim_one_value_are_refused_naming_both(
        files: tuple[str, str, str]) -> None:
    class Greedy:
        @staticmethod
        @hookimpl
        def evalkit_register_measure_syntaxes() -> list[MeasureSyntaxSpec]:
            return [MeasureSyntaxSpec("greedy", lambda pieces: MeasureRequest(list(pieces)))]

    with registered_plugin(Greedy(), installed=True) as registry:
        registry.add(MeasureSyntaxSpec("stars", stars), registry.provider_of("ap"))
        result = CliRunner().invoke(app, ["eval", *files, "-m", "*1"])
    assert result.exit_code == 2
    assert "the measure syntaxes 'greedy' (" in result.stderr
    assert "and 'stars' (evalkit-retrieval" in result.stderr


def test_table_and_json_cannot_be_taken() -> None:
    class Shadow:
        @staticmethod
        @hookimpl
        def evalkit_register_run_formats() -> list[RunFormatSpec]:
            return [RunFormatSpec("json", tsv)]

    (failure,) = check_conformance(Shadow())
    assert "table and json are evalkit eval's own formats" in failure


def test_the_listing_shows_the_retrieval_plugins_syntax_and_format() -> None:
    from evalkit.plugins.listing import plugin_report

    names = {(n.name, n.kind): n for n in plugin_report().names}
    assert names[("trec", "run_format")].distribution == "evalkit-retrieval"
    assert names[("trec_eval", "measure_syntax")].distribution == "evalkit-retrieval"
