"""``rescore`` and ``evaluate(resume=True)`` read the input artifact row by row and write
the new one through a temporary file: the artifacts they write are byte for byte those
the code that held the whole run in memory wrote (tests/data/streamed_rewrite: inputs and
expected outputs stored by make_expected.py with that code, commit adcd6ac)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "streamed_rewrite"
sys.path.insert(0, str(DATA))

import scenarios  # noqa: E402


def _current_stamp(tmp_path: Path) -> tuple[str, object]:
    """This evalkit's ``evalkit_version`` and ``plugins`` header fields."""
    with scenarios.fixed_clock():
        folder = tmp_path / "stamp"
        folder.mkdir()
        scenarios.write_goldens(folder)
        head = json.loads(scenarios.make_input("rescore_plain", folder).read_text()
                          .splitlines()[0])
    return head["evalkit_version"], head["plugins"]


@pytest.fixture(scope="module")
def stamp(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    return _current_stamp(tmp_path_factory.mktemp("stamp"))


@pytest.mark.parametrize("keep", [True, False], ids=["keep", "light"])
@pytest.mark.parametrize("name", scenarios.SCENARIOS)
def test_same_bytes_as_in_memory(name: str, keep: bool, tmp_path: Path,
                                 stamp: tuple[str, object]) -> None:
    scenarios.write_goldens(tmp_path)
    source = tmp_path / "run.jsonl"
    source.write_bytes(scenarios.relocate((DATA / f"{name}.in.jsonl").read_bytes(),
                                          tmp_path, *stamp))
    expected = scenarios.relocate((DATA / f"{name}.out.jsonl").read_bytes(), tmp_path,
                                  *stamp)
    with scenarios.fixed_clock():
        out = scenarios.apply(name, tmp_path, source, keep=keep)
    assert out.read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {"cases.jsonl", "run.jsonl", out.name})  # no temporary file left
