"""Errors of the target's keyword arguments in an eval config name the file, the line of
the key under target.kwargs and the problem in one line: an unknown option of the http
factory with its did-you-mean, a header referring to an environment variable that is
unset or empty (the variable named, never its value). Real subprocesses of the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]


def run(folder: Path, kwargs: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (folder / "g.jsonl").write_text('{"id": "q1", "query": "x", "expected": ["d1"]}\n')
    (folder / "evalkit.yaml").write_text(
        "goldens: g.jsonl\nmetrics: [recall@1]\noutput: out.jsonl\ntarget:\n"
        "  factory: http\n  kwargs:\n    url: http://127.0.0.1:9/x\n" + kwargs)
    full = {k: v for k, v in os.environ.items() if k != "MY_TOK"} | env
    return subprocess.run([*EVALKIT, "run", "--no-progress"], cwd=folder, env=full,
                          capture_output=True, text=True, timeout=120)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr
    return proc.stderr


HEADER = '    headers:\n      Authorization: "Bearer ${MY_TOK}"\n'


def test_unset_variable_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "evalkit.yaml"
    assert one_line(run(tmp_path, HEADER, {})) == (
        f"error: {cfg}:9: target.kwargs.headers.Authorization: header 'Authorization' "
        "refers to ${MY_TOK}, which is not set; export MY_TOK before the run\n")


def test_empty_variable_is_called_empty(tmp_path: Path) -> None:
    cfg = tmp_path / "evalkit.yaml"
    assert one_line(run(tmp_path, HEADER, {"MY_TOK": ""})) == (
        f"error: {cfg}:9: target.kwargs.headers.Authorization: header 'Authorization' "
        "refers to ${MY_TOK}, which is empty; set MY_TOK to the value to send\n")
    assert "only white space" in one_line(run(tmp_path, HEADER, {"MY_TOK": "   "}))


def test_the_value_stays_masked(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    err = one_line(run(tmp_path, HEADER, {"MY_TOK": secret + " "}))
    assert secret not in err and "space at its end" in err


def test_unknown_option_has_line_and_suggestion(tmp_path: Path) -> None:
    cfg = tmp_path / "evalkit.yaml"
    err = one_line(run(tmp_path, "    timeot_s: 3\n", {}))
    assert err.startswith(f"error: {cfg}:8: target.kwargs.timeot_s: the http target has no "
                          "option 'timeot_s' (did you mean 'timeout_s'?); its options are ")


def test_a_bad_value_is_located_at_its_key(tmp_path: Path) -> None:
    cfg = tmp_path / "evalkit.yaml"
    assert one_line(run(tmp_path, "    timeout_s: -3\n", {})) == (
        f"error: {cfg}:8: target.kwargs.timeout_s: HttpTarget timeout_s must be a finite "
        "number > 0 (seconds), got -3\n")
    err = one_line(run(tmp_path, HEADER, {"MY_TOK": "abcdefghijkl "}))
    assert err == (f"error: {cfg}:9: target.kwargs.headers.Authorization: HttpTarget header "
                   "'Authorization': its value holds a space at its end, which HTTP forbids; "
                   "remove it\n")


def test_an_unknown_metric_names_its_line(tmp_path: Path) -> None:
    import pytest

    from evalkit.execute.evalconfig import ConfigError, check_names, load_eval_config

    cfg = tmp_path / "evalkit.yaml"
    cfg.write_text("goldens: g.jsonl\nmetrics:\n  - recall@10\n  - latency_ms\n"
                   "target: {factory: http, kwargs: {url: 'http://127.0.0.1:1/'}}\n"
                   "output: out.jsonl\n")
    with pytest.raises(ConfigError, match=r"evalkit.yaml:4: key 'metrics': unknown metric "
                                          "'latency_ms'"):
        check_names(load_eval_config(cfg))
