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


#: What a metric's definition in the header records beyond what adcd6ac recorded (its
#: declared value type and bounds, checked in tests/test_recorded_value_type.py): left out
#: of the byte comparison, which is about the rows and the way they are written.
DECLARED = ("value_type", "bounds")


def _assert_trailer_sound(data: bytes) -> None:
    """A trailer, when there is one, holds the sha256 of the bytes before it."""
    import hashlib

    lines = data.splitlines(keepends=True)
    last = json.loads(lines[-1]) if lines[-1].endswith(b"\n") else {}
    if last.get("type") == "trailer":
        assert last["sha256"] == hashlib.sha256(b"".join(lines[:-1])).hexdigest()


def _without_declarations(data: bytes) -> bytes:
    """``data`` with :data:`DECLARED` taken out of the header's metric definitions and
    the trailer's sha256 computed again over what is left (``hashlib``)."""
    import hashlib

    lines = data.splitlines(keepends=True)
    head = json.loads(lines[0])
    for definition in (head.get("metrics") or {}).values():
        for key in DECLARED:
            definition.pop(key, None)
    lines[0] = (json.dumps(head) + "\n").encode()
    last = json.loads(lines[-1]) if lines[-1].endswith(b"\n") else {}
    if last.get("type") == "trailer":
        last["sha256"] = hashlib.sha256(b"".join(lines[:-1])).hexdigest()
        lines[-1] = (json.dumps(last) + "\n").encode()
    return b"".join(lines)


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
    written = out.read_bytes()
    _assert_trailer_sound(written)
    assert _without_declarations(written) == _without_declarations(expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {"cases.jsonl", "run.jsonl", out.name})  # no temporary file left
