"""Outputs that are not regular files, and writes that fail for real.

A character device and a FIFO made under the test's temporary folder stand for
``/dev/null`` and ``/dev/stdout`` (no test touches the real ones); ``eval --save``,
``run -o``, ``baseline promote --to`` and ``rescore -o`` must write into them and leave
them what they were. A socket is refused. Links are followed. A full disk is a real
64 KiB tmpfs (skipped where mounting is refused); a permission error is a real one, in a
subprocess that, when the tests run as root, has lost root's power to override
permission bits (``setpriv --bounding-set=-dac_override,-dac_read_search``).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from evalkit.cli.app import app
from evalkit.data.results import RunResult
from evalkit.io.outputs import UnwritableError, destination, write_output

REPO = Path(__file__).resolve().parents[1]
QRELS = REPO / "examples" / "vaswani" / "data" / "qrels"
RUN = REPO / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt"
runner = CliRunner()


def ok(res: Result) -> Result:
    assert res.exit_code == 0, (res.exit_code, res.output)
    return res


@pytest.fixture
def null_node(tmp_path: Path) -> Path:
    """A character device with the null device's numbers, under tmp_path."""
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod refused here ({exc})")
    return path


class FifoReader:
    """Reads everything written to a named pipe, in a thread."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path, self.data = path, b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as fh:  # blocks until a writer opens it
            self.data = fh.read()

    def text(self) -> str:
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()
        return self.data.decode()


def saved_artifact(tmp_path: Path) -> Path:
    path = tmp_path / "saved.jsonl"
    ok(runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                           "--save", str(path)]))
    return path


def target_project(tmp_path: Path, n: int = 5, text_bytes: int = 10) -> Path:
    """An eval config whose target (a module next to it) ranks ``a`` first with a text of
    ``text_bytes`` characters for every case and logs each call to calls.log; a case
    named by ``EVALKIT_TEST_HOOK=<case>=<folder>`` makes that folder read-only."""
    (tmp_path / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"q{i:02d}", "query": "x", "expected": ["a"]}) + "\n"
        for i in range(n)))
    module = f"echo_target_{next(_modules)}"  # a fresh module: each project its own
    (tmp_path / f"{module}.py").write_text(
        "import os\n"
        "from evalkit.data.targets import TargetResponse\n"
        f"LOG = {str(tmp_path / 'calls.log')!r}\n"
        "def make():\n"
        "    def answer(case):\n"
        "        with open(LOG, 'a') as fh:\n"
        "            fh.write(case.id + '\\n')\n"
        "        hook = os.environ.get('EVALKIT_TEST_HOOK')\n"
        "        if hook and case.id == hook.split('=')[0]:\n"
        "            os.chmod(hook.split('=')[1], 0o555)\n"
        f"        return TargetResponse(ranked_ids=['a'], text='a' * {text_bytes})\n"
        "    return answer\n")
    config = tmp_path / "evalkit.yaml"
    config.write_text("goldens: cases.jsonl\noutput: out/run.jsonl\nmetrics: [recall@1]\n"
                      f"target: {{factory: '{module}:make'}}\n")
    return config


_modules = itertools.count()


def artifact_lines(data: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in data.splitlines()]


# ------------------------------------------------------------------ kinds
def test_destination_kinds(tmp_path: Path, null_node: Path) -> None:
    assert destination(tmp_path / "missing.jsonl") == "file"
    (tmp_path / "f").write_text("x")
    assert destination(tmp_path / "f") == "file"
    assert destination(null_node) == "stream"
    os.mkfifo(tmp_path / "fifo")
    assert destination(tmp_path / "fifo") == "stream"
    with pytest.raises(UnwritableError, match="it is a directory"):
        destination(tmp_path)


def test_every_command_writes_into_a_device_and_leaves_it_a_device(
        tmp_path: Path, null_node: Path) -> None:
    saved = saved_artifact(tmp_path)
    ok(runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                           "--save", str(null_node)]))
    ok(runner.invoke(app, ["baseline", "promote", str(saved), "--to", str(null_node)]))
    config = target_project(tmp_path)
    res = ok(runner.invoke(app, ["run", str(config), "-o", str(null_node)]))
    assert "complete: 5 cases" in res.output
    ok(runner.invoke(app, ["run", str(config), "-o", str(null_node)]))  # no --overwrite
    run_file = tmp_path / "out" / "run.jsonl"
    ok(runner.invoke(app, ["run", str(config)]))
    ok(runner.invoke(app, ["rescore", str(run_file), "-m", "recall@1", "-o",
                           str(null_node)]))
    assert stat.S_ISCHR(os.stat(null_node).st_mode)  # not replaced by a regular file
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_fifo_receives_the_whole_artifact(tmp_path: Path) -> None:
    fifo = FifoReader(tmp_path / "pipe")
    ok(runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                           "--save", str(fifo.path)]))
    lines = artifact_lines(fifo.text())
    assert lines[0]["type"] == "header" and len(lines) == 1 + 93 + 1  # vaswani: 93 queries
    assert lines[-1]["type"] == "trailer" and lines[-1]["rows"] == 93
    assert stat.S_ISFIFO(os.stat(fifo.path).st_mode)
    config = target_project(tmp_path)
    fifo2 = FifoReader(tmp_path / "pipe2")
    ok(runner.invoke(app, ["run", str(config), "-o", str(fifo2.path)]))
    run_lines = artifact_lines(fifo2.text())
    assert run_lines[0]["status"] == "complete"  # the final artifact, written once
    assert [r["id"] for r in run_lines[1:-1]] == [f"q{i:02d}" for i in range(5)]
    assert run_lines[-1]["type"] == "trailer"


def test_resume_into_a_device_is_refused(tmp_path: Path, null_node: Path) -> None:
    config = target_project(tmp_path)
    res = runner.invoke(app, ["run", str(config), "-o", str(null_node), "--resume"])
    assert res.exit_code == 2 and "not a regular file" in res.stderr
    assert not (tmp_path / "calls.log").exists()


def test_a_socket_is_refused_before_any_work(tmp_path: Path) -> None:
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    try:
        res = runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                                  "--save", str(path)])
        assert res.exit_code == 2
        assert "it is a socket" in res.stderr and "ap" not in res.stdout
        with pytest.raises(UnwritableError, match="it is a socket"):
            write_output(path, "x")
    finally:
        server.close()
    assert stat.S_ISSOCK(os.stat(path).st_mode)


def test_a_link_is_followed_and_stays_a_link(tmp_path: Path, null_node: Path) -> None:
    real = tmp_path / "data" / "real.jsonl"
    real.parent.mkdir()
    real.write_text("old\n")
    os.chmod(real, 0o600)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    saved = RunResult.load(saved_artifact(tmp_path))
    saved.save(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert RunResult.load(real).ids() == saved.ids()
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600  # permissions kept
    to_device = tmp_path / "to-null"
    to_device.symlink_to(null_node)
    saved.save(to_device)
    assert to_device.is_symlink() and stat.S_ISCHR(os.stat(null_node).st_mode)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "data" / "new.jsonl")
    saved.save(dangling)
    assert dangling.is_symlink() and (tmp_path / "data" / "new.jsonl").is_file()


# ------------------------------------------------------------------ real failures
@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted under tmp_path."""
    mount = tmp_path / "small"
    mount.mkdir()
    if shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs is refused here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_names_the_file_and_keeps_the_rows_for_resume(
        tmp_path: Path, small_disk: Path) -> None:
    config = target_project(tmp_path, n=40, text_bytes=3000)  # 40 rows of ~3 KB: 120 KB
    out = small_disk / "run.jsonl"
    res = runner.invoke(app, ["run", str(config), "-o", str(out), "-j", "1"])
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines() == [
        f"error: {out}: cannot be written: no space left on the device that holds "
        f"{small_disk}"]
    data = out.read_bytes()
    complete = [json.loads(line) for line in data.split(b"\n")[:-1]]  # whole lines only
    kept = [r["id"] for r in complete[1:]]
    assert complete[0]["status"] == "running" and 0 < len(kept) < 40
    first_calls = (tmp_path / "calls.log").read_text().split()
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_disk)], check=True)
    res = ok(runner.invoke(app, ["run", str(config), "-o", str(out), "--resume", "-j", "1"]))
    assert f"resume: {len(kept)} row(s) kept from the earlier run, {40 - len(kept)} case(s)" \
        in res.output
    calls = (tmp_path / "calls.log").read_text().split()[len(first_calls):]
    assert sorted(calls) == sorted(set(f"q{i:02d}" for i in range(40)) - set(kept))
    final = artifact_lines(out.read_text())
    assert final[0]["status"] == "complete"
    assert [r["id"] for r in final[1:-1]] == [f"q{i:02d}" for i in range(40)]
    assert final[-1] == {"type": "trailer", "rows": 40, "sha256": final[-1]["sha256"]}


def without_root_powers() -> list[str]:
    """A command prefix that runs a process whose permission checks apply even to root
    (no CAP_DAC_OVERRIDE nor CAP_DAC_READ_SEARCH); [] when not root (they apply anyway)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("needs setpriv to drop root's permission override")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_a_permission_error_names_the_file_and_keeps_the_rows(tmp_path: Path) -> None:
    config = target_project(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    try:
        env = {**os.environ, "EVALKIT_TEST_HOOK": f"q04={out}"}
        cmd = [*without_root_powers(), sys.executable, "-c",
               "from evalkit.cli import main; main()", "run", str(config), "-j", "1"]
        first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        artifact = out / "run.jsonl"
        # the last call made the folder read-only: the final rewrite cannot be made
        assert first.returncode == 2, first.stderr
        assert first.stderr.splitlines() == [
            f"error: {artifact}: cannot be written: permission denied: the folder {out} "
            "is not writable"]
        lines = artifact_lines(artifact.read_text())
        assert lines[0]["status"] == "running" and len(lines) == 6  # every row kept
        os.chmod(out, 0o755)
        again = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True,
                               timeout=60)
        assert again.returncode == 0, again.stderr
        assert "resume: 5 row(s) kept from the earlier run, 0 case(s) called now" \
            in again.stdout
        assert artifact_lines(artifact.read_text())[0]["status"] == "complete"
    finally:
        os.chmod(out, 0o755)
