"""Three collections from one: the Vaswani runs of ``main.py`` split by query id, for
``evalkit compare --collections`` (docs/comparison.md#several-collections).

Vaswani's 93 queries are cut into three parts by id (1-31, 32-62, 63-93); each part gets
its own qrels and its own TREC run files of the two systems, as the collections of a
suite (BEIR's datasets, the years of a TREC track) each have theirs, and
``out/collections.yaml`` lists them. Three parts of one collection stand in for three
collections here: the pooled difference is then close to the difference over all 93
queries, and the heterogeneity small. Run ``main.py`` first, then, from the repository
root::

    .venv/bin/python examples/vaswani/split_collections.py
    evalkit compare --collections examples/vaswani/out/collections.yaml -m ap,ndcg@10
"""

from __future__ import annotations

import argparse
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the parts: name -> (first query id, last query id)
PARTS = {"q1-31": (1, 31), "q32-62": (32, 62), "q63-93": (63, 93)}


def _lines_of(path: Path, lo: int, hi: int) -> str:
    """The lines of a TREC run or qrels file whose query id (first column) is in
    [lo, hi]."""
    keep = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
            if line.split() and lo <= int(line.split()[0]) <= hi]
    return "".join(keep)


def split(out: Path, qrels: Path) -> Path:
    """Write each part's qrels and runs under ``out/collections/`` and the collections
    file ``out/collections.yaml``; returns the file's path."""
    entries = []
    for name, (lo, hi) in PARTS.items():
        folder = out / "collections" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "qrels").write_text(_lines_of(qrels, lo, hi), encoding="utf-8")
        for system in ("tfidf", "bm25"):
            (folder / f"run.{system}.txt").write_text(
                _lines_of(out / f"run.{system}.txt", lo, hi), encoding="utf-8")
        entries.append(f"  - name: {name}\n"
                       f"    baseline: collections/{name}/run.tfidf.txt\n"
                       f"    candidate: collections/{name}/run.bm25.txt\n"
                       f"    qrels: collections/{name}/qrels\n")
    path = out / "collections.yaml"
    path.write_text("collections:\n" + "".join(entries), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=HERE / "out",
                        help="the folder main.py wrote (default: out/ next to this file)")
    args = parser.parse_args(argv)
    print(split(args.out, HERE / "data" / "qrels"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
