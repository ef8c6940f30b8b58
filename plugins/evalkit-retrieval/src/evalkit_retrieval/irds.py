"""Qrels and topics of an ``ir_datasets`` dataset, named ``irds:DATASET_ID``.

``--qrels irds:vaswani``, ``--topics irds:vaswani``, ``load_qrels("irds:vaswani")`` and
``evalkit.compare(qrels="irds:...", topics="irds:...")`` and the eval config's
``goldens: irds:...`` (a case per judged query) read the dataset through
`ir_datasets <https://ir-datasets.com>`_ (the optional extra ``evalkit-retrieval[irds]``;
imported only when such an id is used).

Nothing is downloaded. ir_datasets fetches a dataset's files on first access; here every
download it would start is refused before it begins, and the message says, in one line,
which file to place where: ir_datasets then finds it in its cache (``IR_DATASETS_HOME``,
``~/.ir_datasets`` by default) and reads it from there. A dataset made of local files
(``ir_datasets.create_dataset(queries_tsv=..., qrels_trec=...)``, registered with
``ir_datasets.registry.register(ID, dataset)``) is read as any other id, from the process
that registered it (a Python session, or a module the eval config's ``local_plugins``
imports).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.data.goldens import GoldenSet

#: The prefix of an ir_datasets id where a qrels or topic file is expected.
SCHEME = "irds"
_PREFIX = f"{SCHEME}:"

#: ir_datasets query fields tried for each topic field of :func:`load_topics`, in order
_QUERY_FIELDS = {
    "title": ("title", "text", "query"),
    "desc": ("description", "desc", "text", "query"),
    "narr": ("narrative", "narr", "text", "query"),
}


class IrdsError(ValueError):
    """An ``irds:`` id that cannot be read: ir_datasets missing, an unknown id, a dataset
    without qrels or queries, or data not on this machine (the message says which file
    to place where)."""


class _NoDownload(Exception):
    """Raised inside ir_datasets instead of a download."""

    def __init__(self, target: str | None, urls: list[str]) -> None:
        super().__init__(target)
        self.target = target
        self.urls = urls


def is_irds(source: object) -> bool:
    """Whether ``source`` (a path or text) names an ir_datasets dataset (``irds:ID``)."""
    return isinstance(source, str | Path) and str(source).startswith(_PREFIX)


def dataset_id(source: str | Path) -> str:
    """The dataset id of ``irds:ID``.

    Raises:
        IrdsError: nothing after ``irds:``.
    """
    text = str(source)
    ident = text[len(_PREFIX):].strip() if text.startswith(_PREFIX) else ""
    if not ident:
        raise IrdsError(f"{text}: expected irds:DATASET_ID (an ir_datasets id, such as "
                        "irds:vaswani)")
    return ident


def _import() -> Any:
    try:
        import ir_datasets
    except ImportError as exc:
        raise IrdsError("irds: ids are read through ir_datasets, which is not installed; "
                        "pip install 'evalkit-retrieval[irds]'") from exc
    return ir_datasets


def _urls(download: Any) -> list[str]:
    return [str(getattr(m, "url", getattr(m, "uri", ""))) for m in getattr(download, "mirrors", [])
            if getattr(m, "url", None) or getattr(m, "uri", None)]


@contextlib.contextmanager
def _offline(ir_datasets: Any) -> Iterator[None]:
    """While inside: any download ir_datasets would start raises :class:`_NoDownload`
    naming the file it would have written (its cache path) and the source URLs; files
    already in the cache, and local files, are read as usual."""
    download_cls = ir_datasets.util.download.Download
    local_cls = ir_datasets.util.download.LocalDownload
    original_path = download_cls.path
    original_stream = download_cls.stream

    def from_afar(self: Any) -> bool:
        return not all(isinstance(m, local_cls) for m in getattr(self, "mirrors", ()))

    def path(self: Any, force: bool = True) -> Any:
        cached = getattr(self, "_cache_path", None)
        if getattr(self, "_path", None) is None and force and not (
                cached is not None and Path(cached).exists()) and from_afar(self):
            raise _NoDownload(None if cached is None else str(cached), _urls(self))
        return original_path(self, force)

    def stream(self: Any) -> Any:
        if getattr(self, "_stream", False) and from_afar(self):
            raise _NoDownload(None, _urls(self))
        return original_stream(self)

    def refuse(self: Any, *_: object) -> Any:  # any remote stream, however reached
        raise _NoDownload(None, [str(getattr(self, "url", getattr(self, "uri", "")))])

    module = ir_datasets.util.download
    remote = [(getattr(module, name), attr) for name, attrs in (
        ("RequestsDownload", ("stream", "__iter__")), ("GoogleDriveDownload", ("stream",)),
        ("GoogleCloudBucketStream", ("stream",))) if hasattr(module, name) for attr in attrs]
    saved = [(cls, attr, cls.__dict__[attr]) for cls, attr in remote if attr in cls.__dict__]
    download_cls.path = path
    download_cls.stream = stream
    for cls, attr, _ in saved:
        setattr(cls, attr, refuse)
    try:
        yield
    finally:
        download_cls.path = original_path
        download_cls.stream = original_stream
        for cls, attr, original in saved:
            setattr(cls, attr, original)


def _missing(source: str, what: str, exc: _NoDownload, home: Path) -> IrdsError:
    if exc.target is not None:
        where = (f"save {exc.urls[0]} as {exc.target}" if exc.urls
                 else f"place {Path(exc.target).name} at {exc.target}")
    else:
        where = f"save {exc.urls[0] if exc.urls else 'the file'} under {home}"
    return IrdsError(f"{source}: the {what} are not on this machine and evalkit does not "
                     f"download; {where} (IR_DATASETS_HOME={home}), or register local files "
                     "with ir_datasets.create_dataset")


def _dataset(source: str | Path, what: str) -> tuple[Any, Any]:
    """``(ir_datasets module, dataset)`` of ``irds:ID``, checked to provide ``what``."""
    ident = dataset_id(source)
    irds = _import()
    try:
        dataset = irds.load(ident)
    except KeyError:
        raise IrdsError(f"{source}: ir_datasets {irds.__version__} knows no dataset "
                        f"{ident!r}; check the id (ir-datasets.com), or register local "
                        "files under it with ir_datasets.registry.register") from None
    has = {"qrels": "has_qrels", "queries": "has_queries"}[what]
    if not getattr(dataset, has)():
        raise IrdsError(f"{source}: the dataset has no {what} in ir_datasets")
    return irds, dataset


def _read(source: str | Path, what: str, read: Any) -> Any:
    irds, dataset = _dataset(source, what)
    try:
        with _offline(irds):
            return read(dataset)
    except _NoDownload as exc:
        raise _missing(str(source), what, exc, irds.util.home_path()) from None
    except FileNotFoundError as exc:  # a registered local file that is gone
        raise IrdsError(f"{source}: {what} file {exc.filename or exc} not found; place it "
                        "there or register the dataset again") from None


def load_qrels(source: str | Path, *, subtopics: bool = False) -> dict[str, dict[str, int]]:
    """``{qid: {doc id: label}}``: the qrels of ``irds:ID`` as ir_datasets reads them, in
    its order; ``iteration`` is ignored, as trec_eval does.

    With ``subtopics`` (evalkit asks for them when a diversity measure is computed, as
    for a qrels file: :func:`evalkit_retrieval.trec.load_qrels`), a dataset whose
    subtopic column (``subtopic_id`` of ir_datasets' diversity qrels, else ``iteration``)
    holds two or more distinct values (``Q0`` counted as ``0``) is read as subtopic
    qrels: each query a :class:`~evalkit_retrieval.subtopics.SubtopicJudgments`, a
    document judged once per (query, subtopic).

    Raises:
        IrdsError: see the class; a document judged twice for one query (for one
            subtopic of it, with ``subtopics``), as file-based readers refuse it.
    """
    def read(dataset: Any) -> list[tuple[str, str, str, int]]:
        return [(str(row.query_id), _subtopic(row), str(row.doc_id), int(row.relevance))
                for row in dataset.qrels_iter()]

    rows: list[tuple[str, str, str, int]] = _read(source, "qrels", read)
    if not rows:
        raise IrdsError(f"{source}: the dataset's qrels are empty")
    if subtopics and len({sub for _, sub, _, _ in rows}) >= 2:
        from evalkit_retrieval.subtopics import SubtopicJudgments

        by_query: dict[str, dict[str, dict[str, int]]] = {}
        for qid, sub, doc, label in rows:
            judged = by_query.setdefault(qid, {}).setdefault(sub, {})
            if doc in judged:
                raise IrdsError(f"{source}: document {doc!r} is judged twice for query "
                                f"{qid!r}, subtopic {sub!r}; subtopic qrels judge a "
                                "document once per (query, subtopic)")
            judged[doc] = label
        return {qid: SubtopicJudgments(subs) for qid, subs in by_query.items()}
    out: dict[str, dict[str, int]] = {}
    for qid, _, doc, label in rows:
        judged = out.setdefault(qid, {})
        if doc in judged:
            raise IrdsError(f"{source}: document {doc!r} is judged twice for query "
                            f"{qid!r}; qrels judge a document once per query")
        judged[doc] = label
    return out


def _subtopic(row: Any) -> str:
    """The subtopic of an ir_datasets qrel: its ``subtopic_id`` (diversity qrels), else its
    ``iteration`` (TREC qrels' second column), ``Q0`` and a missing one read as ``0``."""
    value = getattr(row, "subtopic_id", None)
    if value is None:
        value = getattr(row, "iteration", None)
    text = "0" if value is None else str(value)
    return "0" if text == "Q0" else text


def load_topics(source: str | Path, field: str = "title") -> dict[str, str]:
    """``{query id: text}`` of ``irds:ID``'s queries: for ``field`` ``"title"`` the query's
    ``title`` (TREC topics) or else its ``text``; ``"desc"`` its ``description``,
    ``"narr"`` its ``narrative``, each falling back to ``text``.

    Raises:
        IrdsError: see the class; queries with none of those fields.
    """
    names = _QUERY_FIELDS[field]

    def read(dataset: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        for query in dataset.queries_iter():
            text = next((getattr(query, n) for n in names
                         if isinstance(getattr(query, n, None), str)), None)
            if text is None:
                raise IrdsError(f"{source}: its queries have none of the fields "
                                f"{', '.join(names)} (they have {', '.join(query._fields)})")
            out[str(query.query_id)] = " ".join(text.split())
        return out

    topics: dict[str, str] = _read(source, "queries", read)
    return topics



def load_goldens(source: str | Path, *, relevance_level: int = 1,
                 field: str = "title") -> GoldenSet:
    """A golden set of ``irds:ID``, for the eval config's ``goldens: irds:ID``: one case
    per judged query (its id, its text as :func:`load_topics` gives it, its graded
    judgments), in the qrels' order.

    Raises:
        IrdsError: see the class; a judged query without a text.
    """
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import GoldenSet

    qrels = load_qrels(source)
    texts = load_topics(source, field)
    missing = [q for q in qrels if q not in texts]
    if missing:
        raise IrdsError(f"{source}: judged queries without a text in its queries: "
                        f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    return GoldenSet([GoldenCase.from_judgments(q, judged, relevance_level=relevance_level,
                                                query=texts[q])
                      for q, judged in qrels.items()], path=str(source))


__all__ = ["SCHEME", "IrdsError", "dataset_id", "is_irds", "load_goldens", "load_qrels",
           "load_topics"]
