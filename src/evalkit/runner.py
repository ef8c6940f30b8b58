"""``run()`` and its metric table ``METRICS``, under the import path ``evalkit.runner``.

``run(name, retriever, queries, qrels, metrics)`` calls a retriever on every query and
scores each ranking with the metrics named (``"recall@10"``, ``"ndcg@10"``);
``METRICS`` maps a family name (``"recall"``) to its ``(retrieved, relevant, k) -> float``
function, and ``METRICS["precision"] = precision_at_k`` adds ``precision@k``. Both are the
objects ``evalkit.run`` and ``evalkit.METRICS`` name (:mod:`evalkit.execute.run_retriever`).
"""

from __future__ import annotations

from evalkit.execute.run_retriever import METRICS as METRICS
from evalkit.execute.run_retriever import run as run

__all__ = ["METRICS", "run"]
