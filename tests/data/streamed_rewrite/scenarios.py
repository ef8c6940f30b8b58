"""The scenarios of tests/test_rescore_resume_streamed.py, shared with make_expected.py
(which stored their expected artifacts with the code that held a whole run in memory).

Each scenario makes an input artifact in a folder holding ``cases.jsonl`` with
``evaluate`` (a deterministic target: responses and latencies fixed by case), then
rescores it (``rescore_*``) or resumes it (``resume_*``) with fixed settings.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.rescore import rescore
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

SCENARIOS = ("rescore_plain", "rescore_errored", "rescore_samples", "rescore_unfinished",
             "rescore_output", "resume_finished", "resume_cut", "resume_samples")
CASES = 8
#: (the flaky metric fails on these cases while the input is made)
FLAKY_CASES = {"q3"}


@contextlib.contextmanager
def fixed_clock() -> Iterator[None]:
    """Every header time is 2026-01-01T00:00:00+00:00."""
    stamp = "2026-01-01T00:00:00+00:00"
    with mock.patch("evalkit.execute.run_header.now", lambda: stamp), \
            mock.patch("evalkit.execute.rescore.now", lambda: stamp):
        yield


def write_goldens(folder: Path) -> None:
    folder.joinpath("cases.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "query": f"query {i}", "expected": sorted({"d1", f"d{i + 3}"})})
        + "\n" for i in range(CASES)))


def _target(fail: set[str]) -> CallableTarget:
    def answer(case: GoldenCase) -> TargetResponse:
        if case.id in fail:
            raise RuntimeError(f"service down for {case.id}")
        n = int(case.id[1:])
        ids = [f"d{(n * 7 + i) % 40}" for i in range(30 + n)]
        return TargetResponse(ranked_ids=ids, text=f"answer é {case.id} " * (n + 1),
                              raw={"ids": ids, "n": n}, latency_ms=1.5 + n,
                              meta={"model": "m", "n": n})
    return CallableTarget(answer, name="svc")


_FLAKY_ON = [False]


@contextlib.contextmanager
def _registry() -> Iterator[None]:
    with use_registry() as reg:
        @reg.register_metric("flaky", higher_is_better=True)
        def flaky(response: Any, case: Any) -> float:
            if _FLAKY_ON[0] and case.id in FLAKY_CASES:
                raise ValueError("judge said no")
            return float(len(response.ranked_ids) % 3)
        yield


def _evaluate(out: Path, fail: set[str], *, epochs: int = 1,
              resume: bool = False, keep: bool = True) -> Any:
    return evaluate(_target(fail), "cases.jsonl", ["recall@10", "flaky"],
                    ["latency_p95", "max_item_share@10", "entropy"], max_concurrency=1,
                    artifact=out, epochs=epochs, resume=resume, overwrite=not resume,
                    keep_responses=keep, progress=False, name="svc")


def make_input(name: str, folder: Path) -> Path:
    """The input artifact of scenario ``name`` in ``folder`` (which is the working
    directory meanwhile, so the header records ``cases.jsonl``, a relative path)."""
    with contextlib.chdir(folder):
        _make_input(name, Path("run.jsonl"))
    return folder / "run.jsonl"


def _make_input(name: str, out: Path) -> None:
    errored = name in ("rescore_errored", "resume_finished", "resume_cut")
    _FLAKY_ON[0] = name.startswith("resume")
    try:
        with _registry():
            _evaluate(out, {"q2", "q5"} if errored else set(),
                      epochs=2 if name.endswith("samples") else 1)
    finally:
        _FLAKY_ON[0] = False
    if name in ("rescore_unfinished", "resume_cut"):
        lines = out.read_bytes().splitlines(keepends=True)
        # the trailer and the last two rows gone, a row cut mid-line
        out.write_bytes(b"".join(lines[:-3]) + lines[-3][:40])


def apply(name: str, folder: Path, source: Path, *, keep: bool = True) -> Path:
    """Rescore or resume ``source`` as scenario ``name`` says (``keep``: the rows returned
    keep their responses); the path written."""
    light: dict[str, Any] = {} if keep else {"keep_responses": False}  # rescore's own option
    with contextlib.chdir(folder), _registry():
        if name.startswith("resume"):
            _evaluate(Path(source.name), set(),
                      epochs=2 if name.endswith("samples") else 1, resume=True, keep=keep)
            return source
        if name == "rescore_output":
            out = folder / "elsewhere.jsonl"
            rescore(source.name, ["flaky", "recall@1"], ["entropy"], output=out.name, **light)
            return out
        rescore(source.name, ["recall@10", "recall@1"], None, **light)
        return source


def relocate(data: bytes, folder: Path, version: str, plugins: Any) -> bytes:
    """``data`` (an artifact stored by make_expected.py) as if made in ``folder`` by this
    evalkit: the header's golden path is ``folder/cases.jsonl`` and its
    ``evalkit_version`` and ``plugins`` are ``version`` and ``plugins``; a trailer's
    sha256 is computed again over the bytes before it (``hashlib``). Nothing else
    changes."""
    import hashlib

    lines = data.splitlines(keepends=True)
    head = json.loads(lines[0])
    head["goldens"]["path"] = str(folder / "cases.jsonl")
    head["evalkit_version"], head["plugins"] = version, plugins
    lines[0] = (json.dumps(head) + "\n").encode()
    last = json.loads(lines[-1]) if lines[-1].endswith(b"\n") else {}
    if last.get("type") == "trailer":
        last["sha256"] = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
        lines[-1] = (json.dumps(last) + "\n").encode()
    return b"".join(lines)
