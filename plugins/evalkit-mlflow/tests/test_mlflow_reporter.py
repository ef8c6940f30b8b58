"""The mlflow reporter against a real MLflow tracking store (a SQLite file in a temporary
folder; MLflow 3 refuses ``file:`` stores): what ``evalkit gate``, ``evalkit compare`` and
``evalkit run`` log is read back through MLflow's own client and equals the run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from evalkit_mlflow.tracking import Logged, log_to_mlflow, metric_key, what_to_log
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from evalkit.data.results import RunResult

mlflow = pytest.importorskip("mlflow", reason="the tracking client (evalkit-mlflow's dependency)")
pytest.importorskip("sqlalchemy", reason="MLflow's SQLite tracking store needs SQLAlchemy")
pytest.importorskip("alembic", reason="MLflow's SQLite tracking store needs Alembic")

QIDS = [f"q{i}" for i in range(1, 9)]
QRELS = {q: {"rel": 1} for q in QIDS}
RANKS_A = [1, 2, 4, 1, 3, 2, 5, 1]
RANKS_B = [1, 1, 2, 1, 1, 2, 1, 1]
runner = CliRunner()


def scored(ranks: list[int], name: str) -> RunResult:
    ranking = {q: {**{f"n{j}": 100.0 - j for j in range(1, r)}, "rel": 100.0 - r}
               for q, r in zip(QIDS, ranks, strict=True)}
    return evalkit.evaluate_run(ranking, QRELS, ["rr", "precision@1"], name=name)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A tracking URI of a SQLite store, and a client of it; experiments keep their
    artifacts in the temporary folder."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    for name in ("gates", "comparisons", "runs", "alike"):
        client.create_experiment(name, artifact_location=(folder / name).as_uri())
    yield uri, client


def logged_run(client: Any, experiment: str) -> Any:
    (run,) = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    return run


def file_mean(path: Path, metric: str) -> float:
    """A metric's mean read straight off the artifact's row lines."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    values = [float(r["metrics"][metric]) for r in rows
              if r.get("type") not in ("header", "trailer")]
    return sum(values) / len(values)


def digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def test_metric_names_become_mlflow_keys() -> None:
    assert metric_key("ndcg@10") == "ndcg_at_10"
    name = "krippendorff_alpha(metric=correctness)"
    assert metric_key(name) == f"krippendorff_alpha_metric_correctness__{digest(name)}"
    assert metric_key("check.no ndcg/regression-1.value") == "check.no ndcg/regression-1.value"
    assert metric_key("f1?floor") != metric_key("f1!floor")  # both f1_floor, sanitised
    logged = Logged("run", "r")  # the key a name of the run already holds is not reused
    assert [logged.key(n) for n in ("ndcg@10", "ndcg_at_10", "ndcg@10")] == [
        "ndcg_at_10", f"ndcg_at_10_{digest('ndcg_at_10')}", "ndcg_at_10"]


def gate_of_sys_a(tmp_path: Path, uri: str, floors: dict[str, float], experiment: str
                  ) -> tuple[Path, Any]:
    """``evalkit gate --report mlflow:EXPERIMENT`` of run sys-a (rr 0.6458) with one check
    ``rr >= floor`` per ``{id: floor}``: the artifact and the command's result."""
    artifact = scored(RANKS_A, "sys-a").save(tmp_path / "a.jsonl")
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n" + "".join(
        f"  - id: '{cid}'\n    metric: rr\n    op: '>='\n    threshold: {floor}\n"
        for cid, floor in floors.items()))
    out = runner.invoke(app, ["gate", "--checks", str(checks), "--run", str(artifact),
                              "--report", f"mlflow:{experiment}"],
                        env={"MLFLOW_TRACKING_URI": uri})
    return artifact, out


def test_a_gate_is_logged_with_its_run_checks_settings_and_files(
        tmp_path: Path, store: tuple[str, Any]) -> None:
    uri, client = store
    artifact, out = gate_of_sys_a(tmp_path, uri, {"rr_floor": 0.9}, "gates")
    assert out.exit_code == 1, out.output  # rr 0.6458 < 0.9: the gate fails, and is logged
    assert "mlflow: logged gate 'sys-a' to experiment 'gates' as run " in out.output
    run = logged_run(client, "gates")
    assert run.info.status == "FINISHED" and run.info.run_name == "sys-a"
    rr = sum(1 / r for r in RANKS_A) / len(RANKS_A)
    assert rr == pytest.approx(file_mean(artifact, "rr"))
    assert run.data.metrics == pytest.approx({
        "rr": rr, "precision_at_1": sum(r == 1 for r in RANKS_A) / len(RANKS_A),
        "check.rr_floor.value": rr, "evalkit.exit_code": 1.0})
    assert run.data.params["n_cases"] == "8" and run.data.params["missing"] == "zero"
    assert run.data.params["metric.rr"] == "evalkit-retrieval v1"
    assert run.data.params["qrels_sha256"] == RunResult.load(artifact).header["qrels"]["sha256"]
    tags = run.data.tags
    assert (tags["evalkit.kind"], tags["evalkit.gate.status"], tags["evalkit.check.rr_floor"]
            ) == ("gate", "failed", "fail")
    names = {a.path for a in client.list_artifacts(run.info.run_id, "evalkit")}
    assert {"evalkit/run.jsonl", "evalkit/per_query.csv", "evalkit/gate.json"} <= names
    local = Path(client.download_artifacts(run.info.run_id, "evalkit", str(tmp_path / "dl")))
    assert RunResult.load(local / "run.jsonl") == RunResult.load(artifact)
    table = (local / "per_query.csv").read_text().splitlines()
    assert len(table) == 1 + len(QIDS) and table[0].startswith("qid,")
    assert json.loads((local / "gate.json").read_text())["exit_code"] == 1


def test_checks_whose_ids_sanitise_alike_keep_their_own_verdicts(
        tmp_path: Path, store: tuple[str, Any]) -> None:
    uri, client = store
    artifact, out = gate_of_sys_a(tmp_path, uri, {"rr?floor": 0.9, "rr!floor": 0.1}, "alike")
    assert out.exit_code == 1, out.output  # rr 0.6458: below 0.9, above 0.1
    run = logged_run(client, "alike")
    fail, ok = (f"rr_floor_{digest('rr?floor')}", f"rr_floor_{digest('rr!floor')}")
    checks_logged = {k: v for k, v in run.data.tags.items() if k.startswith("evalkit.check.")}
    assert checks_logged == {f"evalkit.check.{fail}": "fail", f"evalkit.check.{ok}": "pass"}
    rr = file_mean(artifact, "rr")
    assert {k: v for k, v in run.data.metrics.items() if k.startswith("check.")} == (
        pytest.approx({f"check.{fail}.value": rr, f"check.{ok}.value": rr}))
    assert run.data.tags["evalkit.gate.status"] == "failed"


def test_a_comparison_is_logged_metric_by_metric(tmp_path: Path,
                                                 store: tuple[str, Any]) -> None:
    uri, client = store
    a = scored(RANKS_A, "sys-a").save(tmp_path / "a.jsonl")
    b = scored(RANKS_B, "sys-b").save(tmp_path / "b.jsonl")
    out = runner.invoke(app, ["compare", str(a), str(b), "--report", "mlflow:comparisons"],
                        env={"MLFLOW_TRACKING_URI": uri})
    assert out.exit_code == 0, out.output
    metrics = logged_run(client, "comparisons").data.metrics
    rr_diff = sum(1 / rb - 1 / ra for ra, rb in zip(RANKS_A, RANKS_B, strict=True)) / 8
    assert metrics["rr.diff"] == pytest.approx(rr_diff)
    assert metrics["rr.baseline"] == pytest.approx(sum(1 / r for r in RANKS_A) / 8)
    assert metrics["rr.candidate"] == pytest.approx(sum(1 / r for r in RANKS_B) / 8)
    assert 0 < metrics["rr.p_value"] <= metrics["rr.p_adjusted"] <= 1
    assert metrics["rr.significant"] in (0.0, 1.0)


def test_a_run_is_logged_and_an_unknown_object_refused(tmp_path: Path,
                                                        store: tuple[str, Any]) -> None:
    uri, client = store
    run = scored(RANKS_B, "sys-b")
    line = log_to_mlflow(run, "runs", tracking_uri=uri)
    assert line.startswith("mlflow: logged run 'sys-b' to experiment 'runs' as run ")
    logged = logged_run(client, "runs")
    assert logged.data.metrics["rr"] == pytest.approx(sum(1 / r for r in RANKS_B) / 8)
    assert logged.data.tags["evalkit.kind"] == "run"
    with pytest.raises(ValueError, match="mlflow: logs a run, a gate or a comparison, not a"):
        what_to_log(object())


def refused_port() -> int:
    """A port of 127.0.0.1 on which nothing listens (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_unreachable_server_is_one_line_after_the_comparison(tmp_path: Path) -> None:
    a = scored(RANKS_A, "sys-a").save(tmp_path / "a.jsonl")
    b = scored(RANKS_B, "sys-b").save(tmp_path / "b.jsonl")
    port = refused_port()
    out = runner.invoke(app, ["compare", str(a), str(b), "--report", "mlflow:comparisons"],
                        env={"MLFLOW_TRACKING_URI":
                             f"http://user:sk-ML-SECRET-77@127.0.0.1:{port}/"})
    assert out.exit_code == 2, out.output
    assert "rr" in out.stdout and "baseline" in out.stdout  # the comparison is printed
    lines = out.stderr.strip().splitlines()
    assert lines[-1].startswith(f"error: mlflow: the MLflow tracking store "
                                f"http://127.0.0.1:{port}/ cannot be used"), out.stderr
    assert "MLFLOW_TRACKING_URI" in lines[-1]
    assert "Traceback" not in out.output and "sk-ML-SECRET-77" not in out.output


def test_the_default_store_without_sqlalchemy_is_one_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    a = scored(RANKS_A, "sys-a").save(tmp_path / "a.jsonl")
    b = scored(RANKS_B, "sys-b").save(tmp_path / "b.jsonl")
    code = ("import sys; sys.modules['sqlalchemy'] = None\n"  # as mlflow-skinny alone
            "from evalkit.cli import main; main()")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    done = subprocess.run([sys.executable, "-c", code, "compare", str(a), str(b),
                           "--report", "mlflow:comparisons"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert "rr" in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: mlflow: the MLflow tracking store sqlite:///"), last
    assert "MLFLOW_TRACKING_URI is not set" in last and "Traceback" not in done.stderr


def test_a_server_that_is_not_mlflow_is_named_as_the_uri_set(tmp_path: Path) -> None:
    import http.server
    import threading

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_error(404)

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    a = scored(RANKS_A, "sys-a").save(tmp_path / "a.jsonl")
    b = scored(RANKS_B, "sys-b").save(tmp_path / "b.jsonl")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        uri = f"http://127.0.0.1:{server.server_address[1]}"
        out = runner.invoke(app, ["compare", str(a), str(b), "--report", "mlflow:x"],
                            env={"MLFLOW_TRACKING_URI": uri})
    finally:
        server.shutdown()
        server.server_close()
    assert out.exit_code == 2, out.output
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: mlflow: the MLflow tracking store {uri} cannot be used")
    assert "is not set" not in last and "Traceback" not in out.output
