"""Every user-named input file read whole goes through evalkit.io.user_files.read_input:
a named pipe nobody writes to, /dev/zero, a directory or an oversized file is refused at
once with one line ("is a pipe or device") instead of blocking for ever or filling memory.
Real FIFOs (os.mkfifo) and real subprocesses of the CLI; a test that hung would be killed by
the subprocess timeout and fail."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"
PIPE = "is a pipe or device, not a regular file"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")


def fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def refused(proc: subprocess.CompletedProcess[str], says: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_gate_checks_fifo_and_dev_zero(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    proc = cli(["eval", str(DATA / "results.test"), "--qrels", str(DATA / "qrels.test"),
                "-m", "ap", "--save", str(art)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    checks = fifo(tmp_path, "checks.yaml")
    refused(cli(["gate", "--checks", str(checks), "--run", str(art)], tmp_path),
            f"{checks}: {PIPE}")
    refused(cli(["gate", "--checks", "/dev/zero", "--run", str(art)], tmp_path),
            f"/dev/zero: {PIPE}")


def test_plugins_list_config_fifo_is_not_called_missing(tmp_path: Path) -> None:
    path = fifo(tmp_path, "pyproject.toml")
    proc = cli(["plugins", "list", "--config", str(path)], tmp_path)
    refused(proc, f"{path}: {PIPE}")
    assert "does not exist" not in proc.stderr


@pytest.mark.parametrize("name", ["g.jsonl", "g.yaml", "g.csv"])
def test_load_goldens_fifo_every_format(tmp_path: Path, name: str) -> None:
    from evalkit import load_goldens
    from evalkit.data.goldens import GoldenError

    path = fifo(tmp_path, name)
    with pytest.raises(GoldenError, match=PIPE):
        load_goldens(path)


def test_golden_directory_and_oversized_file(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit import load_goldens
    from evalkit.data.goldens import GoldenError
    from evalkit.io import user_files

    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(GoldenError, match="is a directory; pass the golden file itself"):
        load_goldens(tmp_path / "d.jsonl")
    big = tmp_path / "big.jsonl"
    big.write_text('{"id": "a", "query": "q"}\n' * 10)
    monkeypatch.setattr(user_files, "MAX_GOLDEN_BYTES", 100)
    with pytest.raises(GoldenError, match=r"larger than .* MiB"):
        load_goldens(big)


def test_beir_queries_fifo(tmp_path: Path) -> None:
    from evalkit_retrieval.beir import BeirError, load_queries

    with pytest.raises(BeirError, match=PIPE):
        load_queries(fifo(tmp_path, "queries.jsonl"))


def test_goldens_fifo_in_evalkit_run_and_rescore(tmp_path: Path) -> None:
    (tmp_path / "tgt.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n    return CallableTarget(lambda case: ['d1'], name='t')\n")
    (tmp_path / "g.jsonl").write_text('{"id": "q1", "query": "x", "expected": ["d1"]}\n')
    config = ("target:\n  factory: tgt:make\ngoldens: {}\nmetrics: [recall@1]\n"
              "output: out.jsonl\n")
    (tmp_path / "evalkit.yaml").write_text(config.format("g.jsonl"))
    proc = cli(["run", "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    pipe = fifo(tmp_path, "p.jsonl")
    refused(cli(["rescore", "out.jsonl", "--metrics", "recall@1", "--goldens", str(pipe)],
                tmp_path), f"{pipe}: {PIPE}")
    (tmp_path / "evalkit.yaml").write_text(config.format("p.jsonl"))
    proc = cli(["run", "--no-progress", "--overwrite"], tmp_path)
    assert proc.returncode == 2 and PIPE in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_eval_config_itself_fifo(tmp_path: Path) -> None:
    from evalkit.execute.evalconfig import ConfigError, load_eval_config

    with pytest.raises(ConfigError, match=PIPE):
        load_eval_config(fifo(tmp_path, "evalkit.yaml"))


def _schema(path: Path) -> Any:
    from evalkit_text.json_checks import json_schema_scorer

    return json_schema_scorer(schema=str(path))


def _prices(path: Path) -> Any:
    from evalkit_judge.pricing import price_table

    return price_table(path)


@pytest.mark.parametrize("read", [_schema, _prices])
def test_metric_files_fifo_and_dev_zero(tmp_path: Path, read: Callable[[Path], Any]) -> None:
    with pytest.raises(ValueError, match="a pipe or device"):
        read(fifo(tmp_path, "file.json"))
    with pytest.raises(ValueError, match="a pipe or device"):
        read(Path("/dev/zero"))


def test_judge_cache_fifo_and_dev_null_are_refused_not_renamed(tmp_path: Path) -> None:
    from evalkit_judge.cache import CacheError, GradeCache

    path = fifo(tmp_path, "cache.sqlite")
    with pytest.raises(CacheError, match="is a pipe or device"):
        GradeCache(path)
    assert path.exists() and not path.is_file()  # not set aside
    with pytest.raises(CacheError, match="is a pipe or device"):
        GradeCache("/dev/null")
    assert Path("/dev/null").exists() and not Path("/dev/null").is_file()


def test_python_readers_of_runs_qrels_and_artifacts(tmp_path: Path) -> None:
    from evalkit_retrieval.trec import TrecFormatError, load_qrels, load_run

    from evalkit import RunResult
    from evalkit.data.artifact import ArtifactError
    from evalkit.execute.run_files import is_artifact

    path = fifo(tmp_path, "run.txt")
    with pytest.raises(TrecFormatError, match=PIPE):
        load_run(path)
    with pytest.raises(TrecFormatError, match=PIPE):
        load_qrels(path)
    with pytest.raises(ArtifactError, match=PIPE):
        RunResult.load(path)
    assert is_artifact(path) is False
    with pytest.raises(TrecFormatError, match="is a directory"):
        load_run(tmp_path)


def test_clusters_fifo_named_like_a_golden_set_says_clusters(tmp_path: Path) -> None:
    from evalkit.data.case_clusters import ClustersError, load_case_clusters

    path = fifo(tmp_path, "clusters.jsonl")
    with pytest.raises(ClustersError, match=f"clusters .*clusters.jsonl: {PIPE}; save the "
                                            "clusters data"):
        load_case_clusters(path)
