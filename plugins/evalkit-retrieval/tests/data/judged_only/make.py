"""Make the judged-only (trec_eval -J) parity inputs and expected outputs in this folder.

Usage (from this folder): python3 make.py SHARED_DATA TREC_EVAL
  SHARED_DATA: the folder holding trec_dl/, scifact/ and trec_eval_test/
  TREC_EVAL: a build of trec_eval 10.0 (make in its source folder)

Runs are random but seeded: each ranks some of a query's judged documents (labels -1 to 3)
among unjudged ones, with tied scores (trec_eval breaks them by docno, descending).
Writes dl.qrels (the DL19 passage judgments of 8 queries), dl.run, sf.qrels (SciFact test
judgments of 40 queries), sf.run, and te.*.txt: trec_eval -J -m all_trec -q output.
"""

import random
import subprocess
import sys
from pathlib import Path


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        p = line.split()
        if len(p) >= 4:
            out.setdefault(p[0], {})[p[2]] = int(p[3])
    return out


def subset(qrels: dict[str, dict[str, int]], n: int, seed: int, path: Path
           ) -> dict[str, dict[str, int]]:
    r = random.Random(seed)
    qids = sorted(r.sample(sorted(qrels), n))
    path.write_text("".join(f"{q} 0 {d} {lab}\n" for q in qids for d, lab in qrels[q].items()))
    return {q: qrels[q] for q in qids}


def run(qrels: dict[str, dict[str, int]], seed: int, path: Path, tag: str) -> None:
    r = random.Random(seed)
    lines = []
    for q, judged in qrels.items():
        docs = list(judged)
        r.shuffle(docs)
        docs = docs[: r.randint(1, min(len(docs), 25))]
        docs += [f"unj{q}_{i}" for i in range(r.choice([0, 3, 20, 40]))]
        r.shuffle(docs)
        tied = r.random() < 0.5
        for i, d in enumerate(docs):
            score = float(r.choice([1, 2, 3])) if tied else round(r.random() * 10, 4)
            lines.append(f"{q} Q0 {d} {i + 1} {score} {tag}\n")
    path.write_text("".join(lines))


def main() -> None:
    shared, trec_eval = Path(sys.argv[1]), sys.argv[2]
    here = Path(__file__).parent
    dl = subset(read_qrels(shared / "trec_dl" / "qrels.dl19-passage.txt"), 8, 1, here / "dl.qrels")
    run(dl, 2, here / "dl.run", "dlrun")
    sf = subset(read_qrels(shared / "scifact" / "qrels.beir-v1.0.0-scifact.test.txt"), 40, 3,
                here / "sf.qrels")
    run(sf, 4, here / "sf.run", "sfrun")
    te = shared / "trec_eval_test"
    cases: dict[str, list[str | Path]] = {
        "te.dl.txt": [here / "dl.qrels", here / "dl.run"],
        "te.dl.l2.M20.txt": ["-l2", "-M20", here / "dl.qrels", here / "dl.run"],
        "te.sf.txt": [here / "sf.qrels", here / "sf.run"],
        "te.test.txt": [te / "qrels.test", te / "results.test"],
        "te.rel_level.l2.txt": ["-l2", te / "qrels.rel_level", te / "results.test"],
        "te.trunc.c.M100.txt": ["-c", "-M100", te / "qrels.test", te / "results.trunc"],
    }
    for out, args in cases.items():
        done = subprocess.run([trec_eval, "-J", "-m", "all_trec", "-q", *[str(a) for a in args]],
                              check=True, capture_output=True)
        (here / out).write_bytes(done.stdout)


if __name__ == "__main__":
    main()
