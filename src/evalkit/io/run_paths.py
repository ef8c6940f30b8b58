"""Run inputs named by folder or pattern: ``evalkit eval runs/`` and ``evalkit compare
--baseline RUN 'runs/*.txt'`` take every run file a folder holds or a glob matches.

Nothing here reads a run: it turns arguments into paths, and run names into distinct ones.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

__all__ = ["expand_run_paths", "is_many", "unique_names"]

_MAGIC = frozenset("*?[")


def is_many(arg: str | Path) -> bool:
    """Whether an argument names several runs: a folder, or a glob pattern (``*``, ``?``,
    ``[``) that is not itself an existing file's name."""
    p = Path(arg)
    return p.is_dir() or (not p.exists() and bool(_MAGIC & set(str(arg))))


def expand_run_paths(args: Sequence[str | Path]) -> list[Path]:
    """The run files the arguments name, in order, each once.

    A folder gives the regular files directly in it (not those of its subfolders, nor
    hidden ones), sorted by name; a glob pattern (:func:`glob.glob`, ``**`` recursive) the
    regular files it matches, sorted; any other argument is taken as it is (a missing file
    is for its reader to report).

    Raises:
        ValueError: a folder without files, or a pattern that matches none (naming it).
    """
    out: dict[Path, None] = {}
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not found:
                raise ValueError(f"{p}: the folder holds no run file; pass a folder of run "
                                 "files, a glob pattern or the files themselves")
        elif is_many(arg):
            found = sorted(Path(f) for f in glob.glob(str(arg), recursive=True)
                           if Path(f).is_file())
            if not found:
                raise ValueError(f"{arg}: the pattern matches no file; check it, or quote it "
                                 "so that the shell does not expand it first")
        else:
            found = [p]
        out.update(dict.fromkeys(found))
    return list(out)


def unique_names(names: Sequence[str], paths: Sequence[Path | None]) -> list[str]:
    """Distinct run names: the first run keeps its name; a later one whose name is taken
    gets its file's stem, or else its name with its position (``tfidf#2``)."""
    seen: set[str] = set()
    out: list[str] = []
    for i, (name, path) in enumerate(zip(names, paths, strict=True)):
        if name in seen:
            stem = path.stem if path is not None else None
            name = stem if stem is not None and stem not in seen else f"{name}#{i + 1}"
        seen.add(name)
        out.append(name)
    return out
