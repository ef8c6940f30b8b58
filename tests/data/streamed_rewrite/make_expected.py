"""Write the inputs and expected artifacts of tests/test_rescore_resume_streamed.py.

Run with the code that held a whole run in memory (``evalkit rescore`` and ``evalkit run
--resume`` before they streamed, commit adcd6ac on main) from the repository root:

    .venv/bin/python tests/data/streamed_rewrite/make_expected.py

Each scenario (:data:`SCENARIOS` in the test module's twin, :mod:`scenarios`) builds its
input artifact with ``evaluate`` and stores it as ``<name>.in.jsonl``, then rescores or
resumes a copy and stores the result as ``<name>.out.jsonl``: the bytes the streamed
code must reproduce. The clock is fixed (``scenarios.fixed_clock``), so the files do not
depend on when they were made.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scenarios  # noqa: E402


def main() -> int:
    with scenarios.fixed_clock():
        for name in scenarios.SCENARIOS:
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                scenarios.write_goldens(folder)
                source = scenarios.make_input(name, folder)
                shutil.copyfile(source, HERE / f"{name}.in.jsonl")
                out = scenarios.apply(name, folder, source)
                shutil.copyfile(out, HERE / f"{name}.out.jsonl")
            print(f"{name}: {HERE / (name + '.out.jsonl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
