"""``--overwrite`` and ``--resume`` touch the artifact only once the executor is open: an
executor whose ``open`` fails (a scheduler that does not answer, workers that cannot
build the target) leaves the earlier artifact byte for byte as it was, in Python and
from the CLI (a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ExecutorSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor_api import Work
from evalkit.execute.target_runner import evaluate
from evalkit.testing import registered_plugin


class _Unreachable:
    """An executor whose cluster never answers: ``open`` raises, as the dask executor's
    does for a scheduler that refuses."""

    opened = 0

    def open(self, work: Work) -> Any:
        _Unreachable.opened += 1
        raise OSError("no scheduler answers at tcp://nowhere:8786")


class _Plugin:
    @staticmethod
    @hookimpl
    def evalkit_register_executors() -> list[ExecutorSpec]:
        return [ExecutorSpec("unreachable", _Unreachable, "fails to open, for tests")]


def gset(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i}", "q", expected=[f"c{i}"]) for i in range(n))


CALLS: list[str] = []


def rank(case: GoldenCase) -> list[str]:
    CALLS.append(case.id)
    return [case.id]


def _finished(path: Path, n: int) -> bytes:
    CALLS.clear()
    evaluate(CallableTarget(rank, name="echo"), gset(n), ["recall@1"], artifact=path,
             progress=False)
    assert sorted(CALLS) == [f"c{i}" for i in range(n)]
    return path.read_bytes()


@pytest.mark.parametrize("how", ["overwrite", "resume"])
def test_an_executor_that_fails_to_open_leaves_the_artifact_as_it_was(
        tmp_path: Path, how: str) -> None:
    path = tmp_path / "v2.jsonl"
    before = _finished(path, 4)
    if how == "resume":  # an unfinished run: its last row cut off, to be resumed
        lines = before.split(b"\n")
        before = b"\n".join(lines[:3]) + b"\n"
        path.write_bytes(before)
    with registered_plugin(_Plugin(), installed=True), \
            pytest.raises(OSError, match="no scheduler answers"):
        evaluate(CallableTarget(rank, name="echo"), gset(4), ["recall@1"],
                 artifact=path, progress=False, executor="unreachable",
                 **{how: True})  # type: ignore[arg-type]
    assert _Unreachable.opened >= 1 and len(CALLS) == 4  # no call after the first run
    assert path.read_bytes() == before
    assert not path.with_name(path.name + ".lock").exists()
    if how == "overwrite":
        assert RunResult.load(path).header["status"] == "complete"


def test_the_cli_keeps_the_artifact_when_the_scheduler_refuses(tmp_path: Path) -> None:
    # a real `evalkit run -o v2.jsonl --overwrite` against a port nothing listens on,
    # given as the eval config's executor options (options: {address: ...} is the
    # address too)
    import socket

    pytest.importorskip("evalkit_dask")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: connecting is refused
    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": "q", "expected": [f"c{i}"]}) + "\n"
        for i in range(3)))
    (tmp_path / "rank.py").write_text(
        "from evalkit import CallableTarget\n\n\ndef make():\n"
        "    return CallableTarget(lambda case: [case.id], name='echo')\n")
    base = ("goldens: goldens.jsonl\ntarget: {factory: 'rank:make'}\n"
            "metrics: [recall@1]\noutput: v2.jsonl\n")
    (tmp_path / "local.yaml").write_text(base)
    (tmp_path / "dask.yaml").write_text(
        base + f"executor: {{name: dask, options: {{address: 'tcp://127.0.0.1:{port}'}}}}\n")
    evalkit = [sys.executable, "-c", "from evalkit.cli import main; main()"]
    first = subprocess.run([*evalkit, "run", "local.yaml", "--no-progress"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    before = (tmp_path / "v2.jsonl").read_bytes()
    assert before.count(b"\n") == 5  # header, 3 rows, trailer
    again = subprocess.run([*evalkit, "run", "dask.yaml", "-o", "v2.jsonl", "--overwrite",
                            "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode != 0
    assert "Traceback" not in again.stderr
    assert f"tcp://127.0.0.1:{port} refused the connection" in again.stderr, again.stderr
    assert (tmp_path / "v2.jsonl").read_bytes() == before
