"""``evalkit.core.metric_lookup``'s one did-you-mean for a metric name
(:func:`~evalkit.core.metric_lookup.suggestion`) in every command that takes one (eval and
compare, on TREC runs and on artifacts), and the registry's list of the known names kept
to one readable line (:func:`~evalkit.core.metric_lookup.known_list`)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.core.metric_lookup import SHOWN_NAMES, known_list, suggestion
from evalkit.plugins.default import default_registry

runner = CliRunner()


def trec(tmp_path: Path) -> tuple[str, str]:
    run = tmp_path / "x.run"
    run.write_text("q1 Q0 d1 1 2.0 sysA\nq1 Q0 d2 2 1.0 sysA\nq2 Q0 d3 1 1.0 sysA\n")
    qrels = tmp_path / "x.qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d3 1\n")
    return str(run), str(qrels)


def test_suggestion() -> None:
    assert suggestion("ndgc@10", ["ndcg@k", "ap"]) == "; did you mean 'ndcg@10'?"
    assert suggestion("NDCG@10", ["ndcg@10"]) == "; did you mean 'ndcg@10'?"
    assert suggestion("ndcg_cut_10", ["ndcg@k"]) == "; did you mean 'ndcg@10'?"
    assert suggestion("foo", ["ndcg@k", "ap"]) == ""
    assert suggestion("ap", ["ap"]) == ""  # never the name refused


def test_known_list() -> None:
    names = [f"m{i}" for i in range(SHOWN_NAMES + 5)]
    assert known_list(names) == (", ".join(names[:SHOWN_NAMES])
                                 + " and 5 more (`evalkit plugins list` shows all)")
    assert known_list(names[:3]) == "m0, m1, m2"
    assert known_list([]) == "none"


def test_eval_with_no_near_match_lists_a_few_names(tmp_path: Path) -> None:
    run, qrels = trec(tmp_path)
    res = runner.invoke(app, ["eval", run, "--qrels", qrels, "-m", "foo"])
    assert res.exit_code == 2
    known = default_registry().registered()
    assert len(known) > SHOWN_NAMES
    assert res.stderr.startswith(
        f"error: unknown metric 'foo'. Known: {', '.join(known[:SHOWN_NAMES])} and "
        f"{len(known) - SHOWN_NAMES} more (`evalkit plugins list` shows all). "), res.stderr
    assert known[-1] not in res.stderr


def test_every_command_suggests_the_metric(tmp_path: Path) -> None:
    run, qrels = trec(tmp_path)
    art = tmp_path / "a.jsonl"
    res = runner.invoke(app, ["eval", run, "--qrels", qrels, "-m", "ndcg@10", "--save",
                              str(art)])
    assert res.exit_code == 0, res.output
    other = tmp_path / "b.jsonl"
    other.write_bytes(art.read_bytes())
    lines = {
        "compare TREC": ["compare", run, run, "--qrels", qrels, "-m", "ndgc@10"],
        "compare artifacts": ["compare", str(art), str(other), "-m", "ndgc@10"],
        "eval artifact": ["eval", str(art), "-m", "ndgc@10"],
        "eval TREC": ["eval", run, "--qrels", qrels, "-m", "ndgc@10"],
    }
    for what, args in lines.items():
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (what, res.output)
        assert "'ndgc@10'" in res.stderr or "ndgc@10;" in res.stderr, (what, res.stderr)
        assert "; did you mean 'ndcg@10'" in res.stderr, (what, res.stderr)
