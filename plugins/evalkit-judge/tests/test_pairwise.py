"""Pairwise verdicts: known answers with scripted judges, pairing of samples, strict
replies, the cache and the budget, the artifact and its reports.

The runs are real target runs (``evaluate`` with artifacts); the judge is the real
``LLMJudge`` on the plugin's fake Anthropic client, whose scripted replies are the known
answers. Intervals and p-values are checked against scipy's binomial functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import (
    Budget,
    BudgetExhausted,
    GradeCache,
    JudgeError,
    JudgeProvider,
    LLMJudge,
    load_pairwise,
    pairwise,
)
from evalkit_judge.pairwise import PairwiseError
from evalkit_judge.pairwise_artifact import rescored
from evalkit_judge.pairwise_prompt import parse_verdict
from evalkit_judge.pairwise_report import render_html, render_json, render_markdown, render_table
from evalkit_judge.pairwise_stats import resolve
from evalkit_judge.testing import FakeAnthropic, text_reply, tool_reply, verdict_reply
from scipy.stats import binomtest

from evalkit.data.artifact import ArtifactError
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.samples import current_sample
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

ANSWER = re.compile(r"<answer_(a|b)>\n(.*?)\n</answer_\1>", re.DOTALL)


def cases(n: int, **extra: Any) -> list[GoldenCase]:
    return [GoldenCase(id=f"c{i:02d}", query=f"question {i}", **extra) for i in range(n)]


class Named:
    """A target answering ``"<name>|<case id>|<sample>"``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse(text=f"{self.name}|{case.id}|{current_sample()}")


def make_runs(tmp_path: Path, names: list[str], golden: list[GoldenCase], epochs: int = 1
              ) -> list[Path]:
    paths = []
    with use_registry(plugins=False):
        for name in names:
            path = tmp_path / f"{name}.jsonl"
            evaluate(Named(name), golden, [], progress=False, artifact=path, name=name,
                     epochs=epochs)
            paths.append(path)
    return paths


def shown(request: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The (system, case, sample) parts of answers A and B of a verdict request."""
    found = dict(ANSWER.findall(request["messages"][0]["content"]))
    return found["a"].split("|"), found["b"].split("|")


def judge_with(tmp_path: Path, answer: Callable[[dict[str, Any]], Any], **kw: Any
               ) -> tuple[LLMJudge, FakeAnthropic]:
    fake = FakeAnthropic(answer)
    judge = LLMJudge("The better answer is the more correct one.", model="judge-m",
                     client=fake, cache_path=tmp_path / "judge.sqlite",
                     prices={"judge-m": (1.0, 5.0)}, **kw)
    return judge, fake


# ---------------------------------------------------------------- known answers
def test_a_judge_that_always_prefers_the_first_position_flips_every_verdict(
        tmp_path: Path) -> None:
    golden = cases(12)
    runs = make_runs(tmp_path, ["x", "y"], golden)
    judge, fake = judge_with(tmp_path, lambda req: verdict_reply("A"))
    result = pairwise(runs, judge, goldens=golden)
    (pair,) = result.pairs
    assert fake.call_count == 24  # 12 cases x 2 orders
    assert pair["flip_rate"] == 1.0 and pair["flipped"] == 12
    assert pair["win_rate"] == 0.5  # exactly: every flip is a tie
    assert (pair["wins"], pair["ties"], pair["losses"]) == (0, 12, 0)
    assert pair["significant"] is False
    # the rows say who was shown first and who won in that order
    firsts = {(r["id"], r["first"]): r["winner"] for r in result.rows}
    assert firsts[("c00", "x")] == "x" and firsts[("c00", "y")] == "y"


def test_a_judge_preferring_b_on_70_percent_of_cases_gives_0_70_and_the_binomial_interval(
        tmp_path: Path) -> None:
    n, preferred = 50, 35
    golden = cases(n)
    runs = make_runs(tmp_path, ["a", "b"], golden)

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        first, _second = shown(req)
        case = int(first[1][1:])
        better = "b" if case < preferred else "a"  # whatever the order
        return verdict_reply("A" if first[0] == better else "B")

    judge, _ = judge_with(tmp_path, answer)
    result = pairwise(runs, judge, goldens=golden, method="randomization", seed=3)
    (pair,) = result.pairs
    assert (pair["a"], pair["b"]) == ("a", "b")
    assert result.win_rate("b", "a") == pytest.approx(0.70, abs=1e-12)
    assert pair["flip_rate"] == 0.0
    assert (pair["wins"], pair["ties"], pair["losses"]) == (15, 0, 35)
    # the interval is the sign-flip test's inversion (tests/test_pairwise_stats.py
    # checks it by enumeration): it excludes 1/2, as the test rejects it
    assert pair["ci_method"] == "inversion"
    assert pair["ci_low"] < pair["win_rate"] < pair["ci_high"] < 0.5
    # the sign-flip test of +-1 differences is the two-sided sign (binomial) test;
    # here a Monte Carlo one with 10,000 resamples (standard error about 0.001)
    assert pair["p_value"] == pytest.approx(binomtest(preferred, n, 0.5).pvalue, abs=0.004)
    assert pair["p_adjusted"] == pair["p_value"]  # one pair: Holm changes nothing
    assert pair["significant"] is True


def test_holm_across_three_pairs_and_bradley_terry_against_choix(tmp_path: Path) -> None:
    """The scenario of data/make_choix_values.py: over 20 cases, c beats b on the first
    15, b beats a on the first 12, c beats a on the first 18; choix's strengths on those
    comparisons are stored in data/choix_values.json."""
    golden = cases(20)
    runs = make_runs(tmp_path, ["a", "b", "c"], golden)
    rules = {("c", "b"): 15, ("b", "a"): 12, ("c", "a"): 18}

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        first, second = shown(req)
        x, y, case = first[0], second[0], int(first[1][1:])
        if (x, y) in rules:
            better = x if case < rules[(x, y)] else y
        else:
            better = y if case < rules[(y, x)] else x
        return verdict_reply("A" if better == x else "B")

    judge, _ = judge_with(tmp_path, answer)
    result = pairwise(runs, judge, goldens=golden, method="randomization",
                      bt_resamples=200)
    rates = {(p["a"], p["b"]): p["win_rate"] for p in result.pairs}
    assert rates == pytest.approx({("a", "b"): 8 / 20, ("a", "c"): 2 / 20,
                                   ("b", "c"): 5 / 20})
    raw = sorted(p["p_value"] for p in result.pairs)
    adjusted = sorted(p["p_adjusted"] for p in result.pairs)
    holm = [min(1, 3 * raw[0]), min(1, max(3 * raw[0], 2 * raw[1])),
            min(1, max(3 * raw[0], 2 * raw[1], raw[2]))]
    assert adjusted == pytest.approx(holm)
    # each interval is its pair's test's, at 95% before Holm: the report says so
    for p in result.pairs:
        assert (p["p_value"] < 0.05) == (not p["ci_low"] <= 0.5 <= p["ci_high"])
    text = " ".join(render_table(result).split())
    assert ("interval: the 95% interval of the same test (inversion), so it excludes 0.5 "
            "exactly when p < 0.05; not adjusted for the other pairs: 'significant' reads "
            "the Holm-adjusted p") in text
    # an artifact written before the interval was the test's: said to be another method
    for p in result.header["pairs"]:
        del p["ci_method"]
    assert "Wilson's score interval, a different method from the test: the two can " \
        "disagree" in " ".join(render_table(result).split())
    data = json.loads((Path(__file__).parent / "data" / "choix_values.json").read_text())
    expected = next(d for d in data["datasets"] if d["name"] == "pairwise_scenario")
    bt = result.header["bradley_terry"]
    assert bt["penalty"] == data["alpha"]
    assert [s["strength"] for s in bt["systems"]] == pytest.approx(
        expected["opt_pairwise"], abs=1e-8)
    for s in bt["systems"]:
        assert s["ci_low"] <= s["strength"] <= s["ci_high"]


def test_sample_i_is_paired_with_sample_i_and_the_case_is_the_unit(tmp_path: Path) -> None:
    golden = cases(6)
    runs = make_runs(tmp_path, ["a", "b"], golden, epochs=2)

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        first, second = shown(req)
        if first[1:] != second[1:]:  # another case or another sample: refuse
            return text_reply("these answers are not comparable")
        better = "b" if first[2] == "0" else "a"  # b wins sample 0, a wins sample 1
        return verdict_reply("A" if first[0] == better else "B")

    judge, fake = judge_with(tmp_path, answer)
    result = pairwise(runs, judge, goldens=golden)
    (pair,) = result.pairs
    assert fake.call_count == 6 * 2 * 2 and result.header["totals"]["errors"] == 0
    assert (pair["comparisons"], pair["wins"], pair["losses"]) == (12, 6, 6)
    assert pair["n_cases"] == 6 and set(pair["case_scores"].values()) == {0.5}
    assert pair["win_rate"] == 0.5
    # every case score is 1/2: no difference at all, p = 1 and the interval {1/2}
    assert pair["p_value"] == 1.0 and not pair["significant"]
    assert (pair["ci_low"], pair["ci_high"]) == (0.5, 0.5)


def test_different_sample_counts_are_refused(tmp_path: Path) -> None:
    golden = cases(3)
    one = make_runs(tmp_path, ["a"], golden)
    two = make_runs(tmp_path, ["b"], golden, epochs=2)
    judge, _ = judge_with(tmp_path, lambda req: verdict_reply("tie"))
    with pytest.raises(PairwiseError, match=r"samples per case .*same epochs"):
        pairwise([*one, *two], judge, goldens=golden)


# ---------------------------------------------------------------- the rules
@pytest.mark.parametrize(("first", "second", "flips", "ties", "score", "flipped"), [
    ("A", "B", "tie", "half", 1.0, False),     # x first and preferred, y first and not
    ("B", "A", "tie", "half", 0.0, False),
    ("tie", "tie", "tie", "half", 0.5, False),
    ("A", "A", "tie", "half", 0.5, True),      # position bias
    ("A", "A", "average", "half", 0.5, True),
    ("A", "tie", "tie", "half", 0.5, True),
    ("A", "tie", "average", "half", 0.75, True),
    ("A", "A", "drop", "half", None, True),
    ("tie", "tie", "tie", "drop", None, False),
    ("A", "A", "tie", "drop", None, True),
])
def test_flip_and_tie_rules(first: str, second: str, flips: str, ties: str,
                            score: float | None, flipped: bool) -> None:
    outcome = resolve(first, second, flips=flips, ties=ties)
    assert (outcome.score, outcome.flipped) == (score, flipped)


def test_rules_can_be_changed_without_asking_again(tmp_path: Path) -> None:
    golden = cases(4)
    runs = make_runs(tmp_path, ["a", "b"], golden)
    verdicts = iter(["A", "A", "A", "B", "B", "A", "tie", "tie"])  # flip, x, y, tie
    judge, fake = judge_with(tmp_path, lambda req: verdict_reply(next(verdicts)))
    result = pairwise(runs, judge, goldens=golden, max_concurrency=1)
    assert result.pairs[0]["win_rate"] == pytest.approx((0.5 + 1 + 0 + 0.5) / 4)
    dropped = rescored(result, flips="drop", ties="drop")
    assert dropped.pairs[0]["win_rate"] == pytest.approx(0.5)  # one win, one loss
    assert dropped.pairs[0]["n_cases"] == 2
    assert fake.call_count == 8


# ---------------------------------------------------------------- strict replies
def messages_api() -> JudgeProvider:
    """The Anthropic provider of a judge (it reads replies; it sends nothing here)."""
    return LLMJudge("r", model="judge-m", client=FakeAnthropic(lambda req: None)).provider


@pytest.mark.parametrize(("reply", "message"), [
    (text_reply("A is better."), "no record_verdict tool call"),
    (verdict_reply("C"), "not one of 'A', 'B', 'tie'"),
    (verdict_reply("a"), "not one of"),
    (verdict_reply("A", reason=None), "reason None is not text"),
    (tool_reply(3), "called 'record_grade', not record_verdict"),
    ({**verdict_reply("A"), "stop_reason": "max_tokens"}, "raise max_tokens"),
])
def test_a_reply_without_a_valid_verdict_is_refused(reply: dict[str, Any], message: str
                                                     ) -> None:
    with pytest.raises(JudgeError, match=re.escape(message)):
        parse_verdict(messages_api(), reply)


def test_extra_properties_are_refused() -> None:
    reply = verdict_reply("A")
    reply["content"][0]["input"]["score"] = 5
    with pytest.raises(JudgeError, match="'score' the schema does not allow"):
        parse_verdict(messages_api(), reply)


def test_refused_replies_are_kept_as_rejected_and_never_served(tmp_path: Path) -> None:
    golden = cases(2)
    runs = make_runs(tmp_path, ["a", "b"], golden)
    judge, _ = judge_with(tmp_path, lambda req: text_reply("A, clearly."))
    result = pairwise(runs, judge, goldens=golden)
    assert result.header["totals"]["errors"] == 4 and result.pairs[0]["n_cases"] == 0
    assert all("no record_verdict tool call" in r["error"] for r in result.rows)
    assert "4 verdict(s) could not be had" in result.header["notes"][0]
    cache = GradeCache(tmp_path / "judge.sqlite")
    assert cache.counts()["rejected"] == 4 and len(cache) == 0
    again, fake2 = judge_with(tmp_path, lambda req: verdict_reply("tie"))
    second = pairwise(runs, again, goldens=golden)
    assert fake2.call_count == 4 and second.header["totals"]["errors"] == 0


# ---------------------------------------------------------------- requests and the cache
def test_the_request_is_forced_and_shows_the_reference_answer(tmp_path: Path) -> None:
    golden = cases(1, answers=("Paris",))
    runs = make_runs(tmp_path, ["a", "b"], golden)
    judge, fake = judge_with(tmp_path, lambda req: verdict_reply("tie"))
    pairwise(runs, judge, goldens=golden)
    request = fake.calls[0]
    assert request["tool_choice"] == {"type": "tool", "name": "record_verdict",
                                      "disable_parallel_tool_use": True}
    (tool,) = request["tools"]
    assert tool["strict"] is True
    assert tool["input_schema"]["properties"]["verdict"]["enum"] == ["A", "B", "tie"]
    assert tool["input_schema"]["additionalProperties"] is False
    content = request["messages"][0]["content"]
    assert '<reference>\n["Paris"]\n</reference>' in content
    assert "<rubric>\nThe better answer is the more correct one.\n</rubric>" in content
    assert "a|c00|None" in content and "b|c00|None" in content
    assert "'a'" not in content  # the systems' names are not shown


def test_verdicts_are_cached_and_the_prompt_is_in_the_key(tmp_path: Path) -> None:
    golden = cases(3, answers=("x",))
    runs = make_runs(tmp_path, ["a", "b"], golden)
    judge, fake = judge_with(tmp_path, lambda req: verdict_reply("B"))
    first = pairwise(runs, judge, goldens=golden)
    assert fake.call_count == 6 and first.header["totals"]["requested"] == 6
    same, fake2 = judge_with(tmp_path, lambda req: verdict_reply("A"))
    second = pairwise(runs, same, goldens=golden)
    assert fake2.call_count == 0 and second.header["totals"]["cached"] == 6
    assert second.pairs == first.pairs  # the cached verdicts, not the new judge's
    # another rubric, another reference answer: new requests
    other = LLMJudge("Prefer the shorter answer.", model="judge-m", client=fake2,
                     cache_path=tmp_path / "judge.sqlite")
    pairwise(runs, other, goldens=golden)
    assert fake2.call_count == 6
    pairwise(runs, other, goldens=cases(3, answers=("y",)))
    assert fake2.call_count == 12


def test_a_spending_limit_stops_and_a_rerun_pays_nothing_twice(tmp_path: Path) -> None:
    golden = cases(5)
    runs = make_runs(tmp_path, ["a", "b"], golden)
    judge, fake = judge_with(tmp_path, lambda req: verdict_reply("B"))
    with pytest.raises(BudgetExhausted, match="max-calls 3"):
        pairwise(runs, judge, goldens=golden, budget=Budget(max_calls=3), max_concurrency=1)
    assert fake.call_count == 3
    dry = Budget(dry_run=True)
    planned = pairwise(runs, judge, goldens=golden, budget=dry)
    assert (dry.report()["cached"], dry.report()["would_request"]) == (3, 7)
    assert planned.header["totals"]["unasked"] == 7 and fake.call_count == 3
    sent_before = [json.dumps(c, sort_keys=True) for c in fake.calls]
    done = pairwise(runs, judge, goldens=golden)
    assert fake.call_count == 10
    assert not set(sent_before) & {json.dumps(c, sort_keys=True) for c in fake.calls[3:]}
    assert done.header["totals"]["cached"] == 3 and done.header["totals"]["requested"] == 7


# ---------------------------------------------------------------- artifact and reports
def test_the_artifact_round_trips_and_detects_edits(tmp_path: Path) -> None:
    golden = cases(3)
    runs = make_runs(tmp_path, ["a", "b", "c"], golden)
    judge, _ = judge_with(tmp_path, lambda req: verdict_reply("A" if "|c" not in
                                                              shown(req)[1][0] else "B"))
    out = tmp_path / "pairwise.jsonl"
    result = pairwise(runs, judge, goldens=golden, output=out, bt_resamples=50)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    header, rows, trailer = lines[0], lines[1:-1], lines[-1]
    assert (header["type"], header["kind"], header["schema_version"]) == (
        "header", "pairwise", 2)
    assert trailer == {"type": "trailer", "rows": 18, "sha256": trailer["sha256"]}
    assert len(rows) == 3 * 3 * 2 and all(r["type"] == "row" for r in rows)
    back = load_pairwise(out)
    assert back.pairs == result.pairs and back.rows == result.rows
    assert render_markdown(back) == render_markdown(result)
    out.write_text(out.read_text().replace('"tie"', '"A"', 1).replace('"B"', '"A"', 1))
    with pytest.raises(ArtifactError, match="sha256"):
        load_pairwise(out)


def test_reports_escape_names_for_every_reader(tmp_path: Path) -> None:
    golden = cases(2)
    evil = ["<script>x</script>", "\x1b[31mred|pipe"]
    runs = make_runs(tmp_path, ["p", "q"], golden)
    judge, _ = judge_with(tmp_path, lambda req: verdict_reply("tie"))
    result = pairwise(runs, judge, goldens=golden)
    result.header["systems"] = [{**s, "name": n}
                                for s, n in zip(result.header["systems"], evil, strict=True)]
    result.header["pairs"][0].update(a=evil[0], b=evil[1])
    page = render_html(result)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "\x1b" not in page and "\\x1b[31mred|pipe" in page
    assert 'class="matrix"' in page and ">0.500</td>" in page
    table = render_table(result)
    assert "\x1b" not in table and "\\x1b[31mred" in table
    markdown = render_markdown(result)
    assert "\\|pipe" in markdown and "&lt;script" in markdown
    assert json.loads(render_json(result))["pairs"][0]["a"] == evil[0]


def test_runs_whose_names_and_file_stems_clash_are_refused_naming_the_names(
        tmp_path: Path) -> None:
    golden = cases(2)
    paths = []
    with use_registry(plugins=False):
        for folder in ("v1", "v2"):
            path = tmp_path / folder / "run.jsonl"
            evaluate(Named(folder), golden, [], progress=False, artifact=path,
                     name="127.0.0.1/api")
            paths.append(path)
    judge, fake = judge_with(tmp_path, lambda req: verdict_reply("tie"))
    with pytest.raises(PairwiseError) as caught:
        pairwise(paths, judge, goldens=golden)
    message = str(caught.value)
    assert f"runs {paths[0]}, {paths[1]} have the same name in their headers " \
        "('127.0.0.1/api')" in message
    assert "clash too ('run')" in message and fake.call_count == 0
