"""``evalkit rescore`` on a disk that fills up (or past the file-size limit): the error
names the file being written and what to do, the artifact replaced stays as it was, and
no temporary file is left beside it."""

from __future__ import annotations

import errno
import hashlib
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import CallableTarget, evaluate
from evalkit.execute.rescore import rescore
from evalkit.io.outputs import UnwritableError

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(f'{{"id": "c{i}", "query": "q{i}", "expected": ["a"]}}\n'
                             for i in range(200)))
    evaluate(CallableTarget(lambda q: ["a", "b", "c"], name="t"), cases,
             metrics=["recall@1"], artifact=tmp_path / "run.jsonl")
    return tmp_path / "run.jsonl"


def small_file_limit() -> None:
    """In the child: files may not grow past 2,000 bytes, and a write past it raises
    EFBIG rather than killing the process."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("in_place", [False, True])
def test_a_file_limit_names_the_file_and_leaves_no_scratch_file(artifact: Path,
                                                                 in_place: bool) -> None:
    before = digest(artifact)
    target = artifact if in_place else artifact.parent / "out" / "rs.jsonl"
    args = [*EVALKIT, "rescore", str(artifact), "-m", "recall@1,rr"]
    if not in_place:
        args += ["-o", str(target)]
    # no bytecode written: the limit would cut a .pyc short
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=small_file_limit,
                          cwd=artifact.parent, env=env)
    assert done.returncode == 2
    assert f"{target}: cannot be written: the file would exceed" in done.stderr
    assert "Traceback" not in done.stderr
    assert digest(artifact) == before
    assert leftovers(target.parent) == []
    assert not (artifact.parent / "out" / "rs.jsonl").exists()


def test_a_full_disk_while_the_output_is_written_leaves_no_temporary_file(
        artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("evalkit.io.outputs.os.fsync", full)
    before = digest(artifact)
    with pytest.raises(UnwritableError) as raised:
        rescore(artifact, ["recall@1", "rr"])
    assert str(raised.value).startswith(f"{artifact}: cannot be written: no space left")
    assert digest(artifact) == before
    assert leftovers(artifact.parent) == []


def test_a_full_disk_while_rows_are_written_leaves_no_scratch_file(
        artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen

    class Full:  # a scratch file whose writes find the disk full
        def __init__(self, fh: object) -> None:
            self.fh = fh

        def __getattr__(self, name: str) -> object:
            return getattr(self.fh, name)

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fdopen(fd: int, mode: str = "r", *args: object, **kwargs: object) -> object:
        fh = real_fdopen(fd, mode, *args, **kwargs)  # type: ignore[call-overload]
        return Full(fh) if mode == "w+b" else fh  # only the scratch file is opened so

    monkeypatch.setattr("evalkit.execute.rescore.os.fdopen", fdopen)
    out = artifact.parent / "rs.jsonl"
    with pytest.raises(UnwritableError) as raised:
        rescore(artifact, ["recall@1"], output=out)
    assert str(raised.value).startswith(f"{out}: cannot be written: no space left")
    assert leftovers(artifact.parent) == []
    assert not out.exists()
