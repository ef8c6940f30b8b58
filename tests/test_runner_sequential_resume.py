"""A resumed ``--until-decided`` run: what its resume record and line say it called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import evalkit
from evalkit.plugins.default import use_registry


def test_a_resumed_until_decided_run_counts_the_cases_it_called(tmp_path: Path) -> None:
    import json

    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.sequential_run import UntilDecided
    from evalkit.execute.target_runner import evaluate
    from evalkit.report.target_run import resume_line

    cases = [GoldenCase(id=f"c{i:03d}", query=f"q{i}") for i in range(300)]
    calls: list[str] = []

    def cand(case: Any) -> str:
        calls.append(case.id)
        return "5" if int(case.id[1:]) % 4 else "1"

    with use_registry(plugins=False):
        evalkit.register_metric("stars", higher_is_better=True, bounds=(1, 5))(
            lambda response, case: float(response.text))
        base = evaluate(CallableTarget(lambda case: "1", name="base"), cases, ["stars"],
                        artifact=tmp_path / "base.jsonl", progress=False)
        path = tmp_path / "cand.jsonl"
        whole = evaluate(CallableTarget(cand, name="cand"), cases, ["stars"], artifact=path,
                         progress=False, until_decided=UntilDecided(base))
        assert len(whole.per_query) < len(cases)
        # as a run killed after 10 of its rows: the header and those rows, no trailer
        lines = path.read_text().splitlines()
        head = json.loads(lines[0])
        head["status"] = "running"
        path.write_text("\n".join([json.dumps(head), *lines[1:11]]) + "\n")
        calls.clear()
        again = evaluate(CallableTarget(cand, name="cand"), cases, ["stars"], artifact=path,
                         progress=False, until_decided=UntilDecided(base), resume=True)
    # (the rows kept are not the first of the random order: more cases may be needed)
    called = len(again.per_query) - 10
    assert again.header["resume"]["called"] == len(calls) == called < len(cases) - 10
    assert resume_line(again) == (f"resume: 10 row(s) kept from the earlier run, "
                                  f"{called} case(s) called now")
