"""A folder given where evalkit reads one file (an option, an argument or a key of the
eval config) is refused by every command with one line of the same shape, naming the
option or key: ``error: LABEL PATH: is a directory; pass the WHAT file itself`` (and an
example when the folder holds the file looked for). Real subprocesses."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "plugins" / "evalkit-retrieval" / "tests" / "data"
EXAMPLE = REPO / "examples" / "custom_client"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The custom_client example (an eval config, goldens, checks), one artifact
    ``a.jsonl`` scored from TREC files, one target run, and an empty folder ``d``."""
    here = tmp_path_factory.mktemp("folders")
    for name in ("evalkit.yaml", "bookshop.py", "goldens.yaml", "checks.yaml"):
        shutil.copy(EXAMPLE / name, here / name)
    (here / "d").mkdir()
    proc = cli("eval", str(DATA / "results.test"), "--qrels", str(DATA / "qrels.test"),
               "-m", "ap", "--save", "a.jsonl", cwd=here)
    assert proc.returncode == 0, proc.stderr
    proc = cli("run", "--no-progress", cwd=here)
    assert proc.returncode == 0, proc.stderr
    text = (here / "evalkit.yaml").read_text()
    assert "goldens: goldens.yaml" in text
    (here / "goldens_folder.yaml").write_text(text.replace("goldens: goldens.yaml",
                                                           "goldens: d"))
    return here


def refused(proc: subprocess.CompletedProcess[str], line: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr == f"error: {line}\n"


# (the command line, with {d} for the folder; the expected line after "error: ")
CASES = [
    (["run", "goldens_folder.yaml"], "goldens {d}: is a directory; pass the golden file "
     "itself; the goldens are set in {here}/goldens_folder.yaml"),
    (["run", "{d}"], "evalkit run {d}: is a directory; pass the config file itself"),
    (["run", "{here}"], "evalkit run {here}: is a directory; pass the config file itself, "
     "e.g. evalkit run {here}/evalkit.yaml"),
    (["gate", "--config", "{d}", "-r", "a.jsonl"],
     "--config {d}: is a directory; pass the config file itself"),
    (["gate", "-c", "checks.yaml", "-r", "{d}"],
     "run {d}: is a directory; pass the run file itself"),
    (["gate", "-c", "checks.yaml", "-r", "a.jsonl", "--tags", "{d}"],
     "tags {d}: is a directory; pass the tags file itself"),
    (["compare", "a.jsonl", "a.jsonl", "--qrels", "{d}"],
     "qrels {d}: is a directory; pass the qrels file itself"),
    (["compare", "a.jsonl", "a.jsonl", "--clusters", "{d}"],
     "clusters {d}: is a directory; pass the clusters file itself"),
    (["compare", "--collections", "{d}"],
     "collections {d}: is a directory; pass the collections file itself"),
    (["rescore", "out/bookshop-v2.jsonl", "-m", "recall@1", "--goldens", "{d}", "-o",
      "x.jsonl"], "goldens {d}: is a directory; pass the golden file itself"),
    (["agreement", "a.jsonl", "--labels", "{d}"],
     "labels {d}: is a directory; pass the labels file itself"),
    (["fuse", "{d}", "{d}", "--method", "rrf", "-o", "fused.txt"],
     "run {d}: is a directory; pass the run file itself"),
    (["plugins", "list", "--eval-config", "{d}"],
     "--eval-config {d}: is a directory; pass the eval config file itself"),
]


@pytest.mark.parametrize(("argv", "line"), CASES,
                         ids=[f"{c[0][0]} {c[1].split()[0]}" for c in CASES])
def test_a_folder_is_refused_naming_the_option(project: Path, argv: list[str],
                                               line: str) -> None:
    where = {"d": str(project / "d"), "here": str(project)}
    refused(cli(*(a.format(**where) for a in argv), cwd=project), line.format(**where))
