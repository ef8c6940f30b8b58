"""The run's own LocalCluster from a script: the one without an
``if __name__ == "__main__":`` guard fails with an error naming the cause (its workers
re-import the script), the guarded one runs (with an ``HttpTarget``, which pickles as
its arguments, against a real server on 127.0.0.1); and the cluster raises no
``Port 8787 is already in use`` warning while another server holds that port. Real
subprocesses and real LocalClusters of one worker."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

from evalkit_dask.executor import DaskExecutor
from evalkit_dask.spawn import GUARD_FIX
from evalkit_http.testing import RecordedRequest, Reply, ScriptedServer

from evalkit.data.results import RunResult

SCRIPT = """\
import sys
from evalkit import evaluate
from evalkit.data.cases import GoldenCase
from evalkit.execute.executor_api import ExecutorChoice
from evalkit_http import HttpTarget


def main():
    goldens = [GoldenCase(f"c{i}", "q", expected=[f"c{i}"]) for i in range(4)]
    target = HttpTarget(sys.argv[1], name="svc", headers={"x-api-key": "k-1"})
    run = evaluate(target, goldens, ["recall@1"], artifact="run.jsonl", progress=False,
                   executor=ExecutorChoice("dask", {"n_workers": 1}))
    print(run.header["status"], run.header["executor"]["name"])
"""


def _run_script(folder: Path, body: str, url: str) -> subprocess.CompletedProcess[str]:
    (folder / "run.py").write_text(SCRIPT + body)
    return subprocess.run([sys.executable, "run.py", url], cwd=folder, capture_output=True,
                          text=True, timeout=180)


def _echo(request: RecordedRequest, index: int) -> Reply:
    return Reply(200, {"ranked_ids": [json.loads(request.body)["id"]]})


def test_an_unguarded_script_is_told_to_add_the_guard(tmp_path: Path) -> None:
    server = ScriptedServer(handler=_echo).start()
    try:
        done = _run_script(tmp_path, "\n\nmain()\n", server.url)
    finally:
        server.stop()
    assert done.returncode != 0
    assert "ClusterStartError: dask executor: the LocalCluster did not start (" \
        in done.stderr, done.stderr
    assert f"run.py runs the evaluation at its top level; {GUARD_FIX}" in done.stderr
    assert not (tmp_path / "run.jsonl").exists()  # nothing was written


def test_a_guarded_script_runs_an_http_target_on_the_workers(tmp_path: Path) -> None:
    server = ScriptedServer(handler=_echo).start()
    try:
        done = _run_script(tmp_path, '\n\nif __name__ == "__main__":\n    main()\n',
                           server.url)
        seen = list(server.requests)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["complete", "dask"]
    assert "already in use" not in done.stderr and "UserWarning" not in done.stderr
    assert sorted(json.loads(r.body)["id"] for r in seen) == ["c0", "c1", "c2", "c3"]
    assert {r.headers["x-api-key"] for r in seen} == {"k-1"}  # rebuilt with its options
    run = RunResult.load(tmp_path / "run.jsonl")
    assert set(run.scores("recall@1").values()) == {1.0}
    assert "k-1" not in (tmp_path / "run.jsonl").read_text()


def test_the_guard_check_tells_top_level_from_guarded_calls(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""\
        from evalkit_dask.spawn import unguarded_script


        def inside():
            return unguarded_script()


        print("top", unguarded_script() is not None)
        if __name__ == "__main__":
            print("guarded", unguarded_script() is not None)
            print("function", inside() is not None)
        """))
    done = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split("\n")[:3] == ["top True", "guarded False", "function False"]
    piped = subprocess.run([sys.executable, "-"], input=probe.read_text(),
                           capture_output=True, text=True, timeout=60)
    assert piped.stdout.split("\n")[:2] == ["top True", "guarded True"]


def test_no_dashboard_port_warning_while_another_server_holds_8787() -> None:
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen()
    except OSError:
        pass  # something else holds it already: the same situation
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            client, cluster, n = DaskExecutor(n_workers=1)._connect(4)
        try:
            http: Any = cluster.scheduler.http_server
            assert n == 1 and http.port != 8787 and http.address == "127.0.0.1"
        finally:
            client.close()
            cluster.close()
    finally:
        holder.close()
    assert [str(w.message) for w in caught if "in use" in str(w.message)] == []


def test_workers_too_slow_to_start_name_the_timeout_not_the_guard(tmp_path: Path) -> None:
    # `evalkit run` has no script to guard; workers given 0.01 s to start (a Python
    # process cannot even import Dask in that time) stand for a slow or busy machine
    (tmp_path / "goldens.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "query": "q", "expected": [f"c{i}"]}) + "\n"
                for i in range(2)))
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget: {factory: http, kwargs: {url: 'http://127.0.0.1:9/'}}\n"
        "metrics: [recall@1]\noutput: run.jsonl\n"
        "executor: {name: dask, options: {n_workers: 1, death_timeout_s: 0.01}}\n")
    done = subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()",
                           "run", "--no-progress"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith("error: dask executor: the LocalCluster did not start (")
    assert line.endswith(
        "its worker processes did not start within death_timeout_s (0.01 s), so this "
        "machine is slow or busy: raise the dask executor's death_timeout_s (in the eval "
        "config, executor: {name: dask, options: {death_timeout_s: 60}}), or start fewer "
        "workers (n_workers)")
    assert "__main__" not in done.stderr
    assert not (tmp_path / "run.jsonl").exists()
