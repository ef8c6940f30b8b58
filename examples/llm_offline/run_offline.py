"""The offline LLM example, end to end: golden set -> two systems answered K times each
-> text metrics, an LLM judge and cost -> comparison, pairwise verdicts -> gate verdict.

A fake model (``fake_model.py``) answers over HTTP on 127.0.0.1 with a controlled amount
of noise per sample; the judge, declared in the configs (``judges:``), grades on an
OpenAI-compatible server on 127.0.0.1 (``fake_judge.py``). Nothing leaves the machine.
From the repository root:

    .venv/bin/python examples/llm_offline/run_offline.py

It starts the fake model, then runs, in this folder, the commands a CI job would:

    evalkit run v1.yaml --overwrite --no-progress      # out/v1.jsonl, 3 samples per case
    evalkit run v2.yaml --overwrite --no-progress      # out/v2.jsonl
    evalkit compare out/v1.jsonl out/v2.jsonl -m exact_match,f1,rouge_l,correctness
    evalkit pairwise out/v1.jsonl out/v2.jsonl --judge correctness \\
        -o out/pairwise.jsonl --report html:out/pairwise.html
    evalkit agreement out/v2.jsonl --labels labels.jsonl
    evalkit gate --checks checks.yaml --run out/v2.jsonl --baseline out/v1.jsonl \\
        --labels labels.jsonl --report markdown:out/gate.md

and exits with the gate's status (0 pass, 1 a blocking check failed, 2 cannot judge).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from fake_judge import URL_VARIABLE as JUDGE_URL_VARIABLE  # noqa: E402
from fake_judge import FakeJudge  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from targets import URL_VARIABLE  # noqa: E402

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
COMMANDS = [
    ["run", "v1.yaml", "--overwrite", "--no-progress"],
    ["run", "v2.yaml", "--overwrite", "--no-progress"],
    ["compare", "out/v1.jsonl", "out/v2.jsonl", "-m", "exact_match,f1,rouge_l,correctness"],
    ["pairwise", "out/v1.jsonl", "out/v2.jsonl", "--judge", "correctness",
     "-o", "out/pairwise.jsonl", "--report", "html:out/pairwise.html"],
    ["agreement", "out/v2.jsonl", "--labels", "labels.jsonl"],
    ["gate", "--checks", "checks.yaml", "--run", "out/v2.jsonl", "--baseline", "out/v1.jsonl",
     "--labels", "labels.jsonl", "--report", "markdown:out/gate.md"],
]


def evalkit(args: list[str], env: dict[str, str]) -> int:
    """Run ``evalkit ARGS`` in this folder."""
    print(f"\n$ evalkit {' '.join(args)}", flush=True)
    return subprocess.run([*EVALKIT, *args], cwd=HERE, env=env, check=False).returncode


def main() -> int:
    out = HERE / "out"
    if out.exists():  # a fresh start: the judge's grade cache too
        shutil.rmtree(out)
    with FakeModel() as model, FakeJudge() as judge:
        env = {**os.environ, URL_VARIABLE: model.url, JUDGE_URL_VARIABLE: judge.api_base}
        for command in COMMANDS[:4]:  # the runs and the pairwise verdicts ask the judge
            code = evalkit(command, env)
            if code != 0:
                return code
    code = evalkit(COMMANDS[4], env)
    if code != 0:
        return code
    return evalkit(COMMANDS[5], env)


if __name__ == "__main__":
    sys.exit(main())
