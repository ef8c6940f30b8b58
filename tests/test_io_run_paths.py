"""Folders and glob patterns as run inputs (:mod:`evalkit.io.run_paths`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.io.run_paths import expand_run_paths, is_many, unique_names


def test_folders_and_patterns_expand_to_sorted_files_once(tmp_path: Path) -> None:
    for name in ("b.txt", "a.txt.gz", ".hidden", "c.run"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.txt").write_text("x")
    assert expand_run_paths([tmp_path]) == [tmp_path / n for n in ("a.txt.gz", "b.txt", "c.run")]
    pattern = str(tmp_path / "*.txt")
    assert expand_run_paths([pattern, tmp_path / "b.txt", tmp_path / "missing"]) == [
        tmp_path / "b.txt", tmp_path / "missing"]
    assert expand_run_paths([str(tmp_path / "**" / "d.txt")]) == [tmp_path / "sub" / "d.txt"]
    assert is_many(tmp_path) and is_many(pattern) and not is_many(tmp_path / "b.txt")


def test_an_empty_folder_or_pattern_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty: the folder holds no run file"):
        expand_run_paths([tmp_path / "empty"])
    with pytest.raises(ValueError, match=r"\*\.nothing: the pattern matches no file"):
        expand_run_paths([str(tmp_path / "*.nothing")])


def test_names_are_made_unique_from_file_names() -> None:
    paths = [Path("x/a.txt"), Path("x/b.txt"), Path("y/b.txt"), None]
    assert unique_names(["bm25", "bm25", "bm25", "bm25"], paths) == [
        "bm25", "b", "bm25#3", "bm25#4"]
