"""Repeated samples with an async target: every (case, sample) is
called once on the event loop, the target and the metrics see the sample number, and
resume calls only the missing samples."""

from __future__ import annotations

import asyncio
from pathlib import Path

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget
from evalkit.execute.samples import current_sample
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry


def test_async_target_answers_every_sample_once_and_resume_calls_only_the_rest(
        tmp_path: Path) -> None:
    gset = GoldenSet(GoldenCase(f"c{i}", "q", expected=["hit"]) for i in range(6))
    seen: list[tuple[str, int | None]] = []
    scored: list[int | None] = []

    async def ranker(case: GoldenCase) -> list[str]:
        await asyncio.sleep(0.001)
        sample = current_sample()
        seen.append((case.id, sample))
        # sample 0 and 2 hit, sample 1 misses: per-case mean recall@1 is 2/3
        return ["hit"] if sample != 1 else ["miss"]

    artifact = tmp_path / "run.jsonl"
    with use_registry(plugins=True) as reg:
        @reg.register_metric("sample_seen", higher_is_better=True)
        def sample_seen(case: GoldenCase, response: object) -> float:
            scored.append(current_sample())
            return 1.0

        run = evaluate(CallableTarget(ranker, name="a"), gset, ["recall@1", "sample_seen"],
                       epochs=3, max_concurrency=4, progress=False, artifact=artifact)
        assert sorted(seen) == sorted((f"c{i}", s) for i in range(6) for s in range(3))
        assert sorted(s for s in scored if s is not None) == sorted(list(range(3)) * 6)
        assert all(abs(v - 2 / 3) < 1e-12 for v in run.scores("recall@1").values())
        assert len(run.samples) == 18

        # drop the last four sample rows (and the trailer) and resume: only those are called
        lines = artifact.read_text().splitlines()
        body = [ln for ln in lines if '"type": "trailer"' not in ln]
        artifact.write_text("\n".join(body[:-4]) + "\n")
        seen.clear()
        again = evaluate(CallableTarget(ranker, name="a"), gset, ["recall@1", "sample_seen"],
                         epochs=3, max_concurrency=4, progress=False, artifact=artifact,
                         resume=True)
        assert len(seen) == 4 and len(set(seen)) == 4
        assert again.scores("recall@1") == run.scores("recall@1")
