"""A symbolic link loop given as any user path (``ln -s a b; ln -s b a``) is refused in one
line that names the path and what it was given as ("is a symbolic link loop"), never a
traceback (``Path.resolve`` raises ``RuntimeError``), "no such file", or the wrong noun.
Real links in a temporary folder; the CLI runs in subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
LOOP = "is a symbolic link loop"

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")


def loop(folder: Path, name: str = "l1") -> Path:
    (folder / f"{name}x").symlink_to(name)
    (folder / name).symlink_to(f"{name}x")
    return folder / name


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def refused(proc: subprocess.CompletedProcess[str], *says: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and LOOP in proc.stderr, proc.stderr
    for text in says:
        assert text in proc.stderr, proc.stderr


def test_helpers_name_the_path_and_what_it_was_given_as(tmp_path: Path) -> None:
    from evalkit.io.input_files import InputError, require_file
    from evalkit.io.symlink_loops import is_symlink_loop, resolve_input
    from evalkit.io.user_files import read_input, regular_file_problem

    bad = loop(tmp_path)
    assert is_symlink_loop(bad) and not is_symlink_loop(tmp_path / "missing")
    with pytest.raises(InputError, match=f"labels .*l1: {LOOP}.*the labels file"):
        resolve_input(bad, "labels", error=InputError)
    with pytest.raises(InputError, match=f"run .*l1: {LOOP}"):
        require_file(bad, "run")
    with pytest.raises(InputError, match=f"l1: {LOOP}.*the checks file"):
        read_input(bad, "checks")
    assert LOOP in (regular_file_problem(bad, "clusters") or "")


def test_message_of_an_eloop_oserror() -> None:
    import errno

    from evalkit.io.error_messages import message_of

    exc = OSError(errno.ELOOP, "Too many levels of symbolic links", "x.run")
    assert message_of(exc).startswith(f"x.run: {LOOP}")


def test_eval_config_keys_name_their_line(tmp_path: Path) -> None:
    from evalkit.execute.evalconfig import ConfigError, load_eval_config

    loop(tmp_path)
    cfg = tmp_path / "evalkit.yaml"
    cfg.write_text("target: {factory: http, kwargs: {url: 'http://127.0.0.1:1/'}}\n"
                   "goldens: l1\nmetrics: [recall@10]\noutput: out.jsonl\n")
    with pytest.raises(ConfigError, match=f"evalkit.yaml:2: key 'goldens': .*l1: {LOOP}"):
        load_eval_config(cfg)
    cfg.write_text("target: {factory: http, kwargs: {url: 'http://127.0.0.1:1/'}}\n"
                   "goldens: g.jsonl\nmetrics: [recall@10]\noutput: l1\n")
    with pytest.raises(ConfigError, match=f"evalkit.yaml:4: key 'output': .*l1: {LOOP}"):
        load_eval_config(cfg)
    with pytest.raises(ConfigError, match=LOOP):
        load_eval_config(tmp_path / "l1")


def test_pyproject_loop_is_not_ignored(tmp_path: Path) -> None:
    from evalkit.core.pyproject_config import ConfigError, read_tool_config

    loop(tmp_path, "pyproject.toml")
    with pytest.raises(ConfigError, match=f"pyproject.toml: {LOOP}"):
        read_tool_config(start=tmp_path)


def test_cli_commands_refuse_a_loop(tmp_path: Path) -> None:
    loop(tmp_path, "a")
    (tmp_path / "cfg.yaml").write_text(
        "goldens: a\ntarget: {factory: http, kwargs: {url: 'http://127.0.0.1:1/'}}\n"
        "metrics: [recall@10]\noutput: out.jsonl\n")
    refused(cli(["run", "cfg.yaml", "--no-progress"], tmp_path), "cfg.yaml:1: key 'goldens'")
    refused(cli(["eval", "a", "--qrels", "a"], tmp_path), "run a:")
    refused(cli(["gate", "--checks", "a", "--run", "a"], tmp_path), "checks a:")
    refused(cli(["compare", "--collections", "a"], tmp_path), "collections a:")
    (tmp_path / "g.jsonl").write_text('{"id": "q1", "query": "x"}\n')
    (tmp_path / "ok.yaml").write_text(
        "goldens: g.jsonl\ntarget: {factory: http, kwargs: {url: 'http://127.0.0.1:1/'}}\n"
        "metrics: [recall@10]\noutput: out.jsonl\n")
    refused(cli(["run", "ok.yaml", "--output", "a", "--no-progress"], tmp_path),
            "--output a:")


def test_judge_paths_name_the_judge_and_key(tmp_path: Path) -> None:
    from evalkit_judge.declared import _absolute

    loop(tmp_path)
    with pytest.raises(ValueError, match=f"judge 'j': cache .*l1: {LOOP}"):
        _absolute(tmp_path / "l1", "j", "cache")


def test_trec_and_topic_readers(tmp_path: Path) -> None:
    from evalkit_retrieval import topics, trec

    bad = loop(tmp_path)
    with pytest.raises(trec.TrecFormatError, match=f"run .*l1: {LOOP}"):
        trec.load_run(bad)
    with pytest.raises(trec.TrecFormatError, match=f"qrels .*l1: {LOOP}"):
        trec.load_qrels(bad)
    with pytest.raises(topics.TopicsError, match=f"topics .*l1: {LOOP}"):
        topics.load_topics(bad)
