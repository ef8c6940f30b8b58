"""A file that is not UTF-8 is named with the line and column of the first byte at fault,
and the fix (:func:`evalkit.io.error_messages.not_utf8_at`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.data.id_value_files import id_value_lines
from evalkit.io.error_messages import not_utf8_at


def test_the_line_and_column_of_the_first_bad_byte() -> None:
    raw = b"q1\tok\nq2\tcaf\xe9\n"
    with pytest.raises(UnicodeDecodeError) as raised:
        raw.decode("utf-8")
    # line 2 is "q2<TAB>caf" (6 bytes) then 0xe9: column 7
    assert not_utf8_at("t.tsv", raised.value) == (
        "t.tsv:2: not UTF-8 text (byte 0xe9 in column 7: invalid continuation byte)")


def test_a_latin1_tags_file_names_file_line_and_fix(tmp_path: Path) -> None:
    tags = tmp_path / "latin1.tsv"
    tags.write_bytes(b"# tags\nq1\tnews\nq2\tcaf\xe9\n")
    with pytest.raises(ValueError) as raised:
        list(id_value_lines(tags, "tags", "tag", ValueError))
    assert str(raised.value) == (
        f"{tags}:3: not UTF-8 text (byte 0xe9 in column 7: invalid continuation byte); save it "
        "as UTF-8 (from Latin-1: iconv -f latin1 -t utf-8)")
