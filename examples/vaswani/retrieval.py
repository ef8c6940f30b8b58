"""Two small retrieval systems over the Vaswani collection: BM25 and TF-IDF (cosine).

Example code, not part of evalkit: a bag-of-words index in a ``scipy.sparse`` matrix and two
weightings of it. Nothing here is tuned; the point is to have two honest systems to compare.

* BM25 (Robertson and Zaragoza's formulation, k1 = 1.2, b = 0.75) with the non-negative idf
  ``ln(1 + (N - df + 0.5) / (df + 0.5))``.
* TF-IDF with cosine similarity: ``(1 + ln tf) * ln(N / df)`` on both sides, each vector
  L2-normalised.

Both tokenise the same way: lower case, runs of letters and digits, a short stoplist, no
stemming. A document is retrieved for a query only if it shares a term with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

DATA_DIR = Path(__file__).resolve().parent / "data"

STOPWORDS = frozenset(
    """a about above after again against all also an and any are as at be been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just may me
    more most my no nor not now of off on once only or other our out over own same she should so
    some such than that the their them then there these they this those through to too under
    until up upon very was we were what when where which while who whom why will with would you
    your""".split()  # noqa: SIM905 - a word list reads better as prose
)

_TOKEN = re.compile(r"[a-z0-9]+")
_DOC = re.compile(r"<DOC>\s*<DOCNO>\s*(.*?)\s*</DOCNO>(.*?)</DOC>", re.S)
_QUERY = re.compile(r"<top>\s*<num>\s*(.*?)\s*</num>\s*<title>(.*?)</title>\s*</top>", re.S)


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stopwords."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


@dataclass(frozen=True)
class Query:
    """A query: its id (text, as in the qrels) and its text."""

    id: str
    text: str


def load_documents(path: Path = DATA_DIR / "doc-text.trec") -> list[tuple[str, str]]:
    """``[(docno, text), ...]`` in file order."""
    return [(m.group(1), m.group(2)) for m in _DOC.finditer(path.read_text(encoding="utf-8"))]


def load_queries(path: Path = DATA_DIR / "query-text.trec") -> list[Query]:
    """The queries in file order."""
    text = path.read_text(encoding="utf-8")
    return [Query(m.group(1), " ".join(m.group(2).split())) for m in _QUERY.finditer(text)]


def load_qrels(path: Path = DATA_DIR / "qrels") -> dict[str, set[str]]:
    """``{query id: set of relevant docnos}`` (labels > 0) from a TREC qrels file."""
    qrels: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 4 and int(parts[3]) > 0:
            qrels.setdefault(parts[0], set()).add(parts[2])
    return qrels


class Index:
    """A term-count matrix (documents x terms) over a list of ``(docno, text)``."""

    def __init__(self, documents: Sequence[tuple[str, str]]) -> None:
        self.docnos: list[str] = [d for d, _ in documents]
        vocab: dict[str, int] = {}
        indptr = [0]
        indices: list[int] = []
        for _, text in documents:
            for tok in tokenize(text):
                indices.append(vocab.setdefault(tok, len(vocab)))
            indptr.append(len(indices))
        data = np.ones(len(indices), dtype=np.float64)
        counts = sp.csr_matrix(
            (data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(documents), len(vocab)),
        )
        counts.sum_duplicates()  # repeated tokens of one document become a count
        self.vocab = vocab
        self.counts: sp.csr_matrix = counts
        self.n_docs = len(documents)
        self.doc_len: npt.NDArray[np.float64] = np.asarray(counts.sum(axis=1)).ravel()
        self.df: npt.NDArray[np.float64] = np.bincount(
            counts.indices, minlength=len(vocab)
        ).astype(np.float64)

    def query_matrix(self, queries: Sequence[Query]) -> sp.csr_matrix:
        """Query term counts, terms x queries (terms unknown to the index are dropped)."""
        rows: list[int] = []
        cols: list[int] = []
        for j, q in enumerate(queries):
            for tok in tokenize(q.text):
                t = self.vocab.get(tok)
                if t is not None:
                    rows.append(t)
                    cols.append(j)
        data = np.ones(len(rows), dtype=np.float64)
        m = sp.csr_matrix((data, (rows, cols)), shape=(len(self.vocab), len(queries)))
        m.sum_duplicates()
        return m

    def row_ids(self) -> npt.NDArray[np.int64]:
        """The document (row) index of every stored entry of :attr:`counts`."""
        return np.repeat(np.arange(self.n_docs), np.diff(self.counts.indptr))


class Retriever:
    """Scores documents as ``weights @ query_weights``; subclasses pick the weighting."""

    name = "retriever"

    def __init__(self, index: Index, depth: int = 1000) -> None:
        self.index = index
        self.depth = depth
        self.weights: sp.csr_matrix = self._doc_weights()

    def _doc_weights(self) -> sp.csr_matrix:
        raise NotImplementedError

    def _query_weights(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        raise NotImplementedError

    def score_all(self, queries: Sequence[Query]) -> dict[str, dict[str, float]]:
        """``{query id: {docno: score}}``: the top ``depth`` documents of every query."""
        scores = np.asarray((self.weights @ self._query_weights(
            self.index.query_matrix(queries))).todense())
        out: dict[str, dict[str, float]] = {}
        docnos = self.index.docnos
        for j, q in enumerate(queries):
            col = scores[:, j]
            hit = np.flatnonzero(col > 0)
            if len(hit) > self.depth:
                hit = hit[np.argpartition(-col[hit], self.depth - 1)[: self.depth]]
            out[q.id] = {docnos[i]: float(col[i]) for i in hit.tolist()}
        return out

    def __call__(self, query: Query) -> list[str]:
        """Doc ids best first (ties by docno, descending, as trec_eval ranks them)."""
        ranked = self.score_all([query])[query.id]
        return [d for d, _ in sorted(ranked.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]

    def search_all(self, queries: Sequence[Query]) -> dict[str, list[str]]:
        """``{query id: doc ids best first}`` for many queries in one matrix product."""
        return {
            qid: [d for d, _ in sorted(r.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
            for qid, r in self.score_all(queries).items()
        }


class BM25(Retriever):
    """Okapi BM25 with k1 = 1.2 and b = 0.75 by default."""

    name = "bm25"

    def __init__(self, index: Index, k1: float = 1.2, b: float = 0.75, depth: int = 1000) -> None:
        self.k1 = k1
        self.b = b
        super().__init__(index, depth)

    def _doc_weights(self) -> sp.csr_matrix:
        ix = self.index
        idf = np.log1p((ix.n_docs - ix.df + 0.5) / (ix.df + 0.5))
        norm = self.k1 * (1.0 - self.b + self.b * ix.doc_len / ix.doc_len.mean())
        w = ix.counts.copy()
        tf = w.data
        w.data = idf[w.indices] * tf * (self.k1 + 1.0) / (tf + norm[ix.row_ids()])
        return w

    def _query_weights(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        return counts  # a repeated query term counts once per occurrence


class TfIdf(Retriever):
    """Cosine similarity of log-tf x idf vectors."""

    name = "tfidf"

    def _idf(self) -> npt.NDArray[np.float64]:
        return np.log(self.index.n_docs / np.maximum(self.index.df, 1.0))

    def _doc_weights(self) -> sp.csr_matrix:
        w = self.index.counts.copy()
        w.data = (1.0 + np.log(w.data)) * self._idf()[w.indices]
        return _l2_rows(w)

    def _query_weights(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        q = counts.tocsc(copy=True)
        q.data = (1.0 + np.log(q.data)) * self._idf()[q.indices]
        norms = np.sqrt(np.asarray(q.multiply(q).sum(axis=0)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(q @ sp.diags(1.0 / norms))


def _l2_rows(m: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ m)


def write_trec_run(path: Path, scored: dict[str, dict[str, float]], tag: str) -> Path:
    """Write ``{qid: {docno: score}}`` as a TREC run file (``qid Q0 docno rank score tag``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for qid in sorted(scored, key=_numeric_first):
        ranked = sorted(scored[qid].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        lines.extend(
            f"{qid} Q0 {doc} {rank} {score:.6f} {tag}"
            for rank, (doc, score) in enumerate(ranked, start=1)
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _numeric_first(qid: str) -> tuple[int, str]:
    return (int(qid), qid) if qid.isdigit() else (1 << 62, qid)


def build(documents: Iterable[tuple[str, str]] | None = None) -> tuple[BM25, TfIdf]:
    """Both systems over one index of ``documents`` (the bundled collection by default)."""
    index = Index(list(documents) if documents is not None else load_documents())
    return BM25(index), TfIdf(index)
