"""A pretend bookshop search API, answered in-process: an HTTP-style client with no network.

``transport(search)`` returns an ``httpx.MockTransport`` that answers
``POST /api/search`` with ``{"q": "...", "limit": n}`` by calling ``search`` and replying
``{"hits": [{"sku": ..., "title": ...}], "cost_usd": ...}``, as a real search service
would. ``HttpTarget(..., transport=transport(search))`` then exercises the whole HTTP
path (payload, status, JSON decoding, ``extract``, meta fields) without a socket.

Two search functions play baseline and candidate:

* :func:`search_v1` ranks by the number of query words found in the title;
* :func:`search_v2` also reads the tags and folds plurals and "-ing" forms, weighting a
  title match twice a tag match.

Both break ties by SKU, so every ranking is deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx

# sku -> (title, tags)
CATALOGUE: dict[str, tuple[str, tuple[str, ...]]] = {
    "bk-001": ("The Sailing Handbook", ("boats", "sea", "navigation")),
    "bk-002": ("Knots for Sailors", ("rope", "boats", "sea")),
    "bk-003": ("Weekend Bread", ("baking", "yeast", "kitchen")),
    "bk-004": ("Sourdough from Scratch", ("baking", "bread", "fermentation")),
    "bk-005": ("Pasta by Hand", ("cooking", "italian", "kitchen")),
    "bk-006": ("Quick Italian Suppers", ("cooking", "pasta", "weeknight")),
    "bk-007": ("Birds of the Coast", ("birdwatching", "sea", "nature")),
    "bk-008": ("Garden Birds", ("birdwatching", "garden", "nature")),
    "bk-009": ("Growing Tomatoes", ("garden", "vegetables")),
    "bk-010": ("The Vegetable Patch", ("garden", "growing", "allotment")),
    "bk-011": ("Star Charts for Beginners", ("astronomy", "night", "navigation")),
    "bk-012": ("Telescopes Explained", ("astronomy", "optics")),
    "bk-013": ("Running Your First Marathon", ("running", "training")),
    "bk-014": ("Trail Runner", ("running", "hills", "outdoors")),
    "bk-015": ("Mountain Walks", ("hiking", "hills", "outdoors")),
    "bk-016": ("Map Reading", ("navigation", "hiking", "outdoors")),
}

_WORD = re.compile(r"[a-z]+")
_STOP = frozenset({"a", "an", "the", "for", "of", "by", "from", "your", "to", "on", "about",
                   "books", "book", "how", "and"})

Search = Callable[[str, int], list[str]]


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _fold(word: str) -> str:
    for suffix in ("ing", "ers", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word.rstrip("n") if word.endswith("nn") else word


def _ranked(scores: dict[str, float], limit: int) -> list[str]:
    hits = [(s, sku) for sku, s in scores.items() if s > 0]
    hits.sort(key=lambda t: (-t[0], t[1]))
    return [sku for _, sku in hits[:limit]]


def search_v1(query: str, limit: int) -> list[str]:
    """Baseline: query words found verbatim in the title."""
    q = set(_words(query))
    return _ranked({sku: float(len(q & set(_words(title))))
                    for sku, (title, _) in CATALOGUE.items()}, limit)


def search_v2(query: str, limit: int) -> list[str]:
    """Candidate: folded query words in the title (weight 2) and the tags (weight 1)."""
    q = {_fold(w) for w in _words(query)}
    scores: dict[str, float] = {}
    for sku, (title, tags) in CATALOGUE.items():
        in_title = q & {_fold(w) for w in _words(title)}
        in_tags = q & {_fold(w) for t in tags for w in _words(t)}
        scores[sku] = 2.0 * len(in_title) + 1.0 * len(in_tags)
    return _ranked(scores, limit)


def transport(search: Search, cost_usd: float = 0.0004) -> httpx.MockTransport:
    """An in-process stand-in for the bookshop's HTTP API, backed by ``search``."""

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or request.url.path != "/api/search":
            return httpx.Response(404, json={"error": "not found"})
        body = json.loads(request.content)
        skus = search(str(body["q"]), int(body.get("limit", 10)))
        hits = [{"sku": s, "title": CATALOGUE[s][0]} for s in skus]
        return httpx.Response(200, json={"hits": hits, "cost_usd": cost_usd})

    return httpx.MockTransport(handle)


def make_target(version: str = "v2") -> Any:
    """The bookshop client as ``evalkit run`` builds it from this folder's ``evalkit.yaml``
    (``target: {factory: "bookshop:make_target", kwargs: {version: v2}}``): an
    ``HttpTarget`` answered by :func:`transport` over ``search_v1`` or ``search_v2``."""
    from evalkit import HttpTarget

    search = {"v1": search_v1, "v2": search_v2}[version]
    return HttpTarget(
        url="http://bookshop.invalid/api/search",
        name=f"bookshop-{version}",
        build_payload=lambda case: {"q": case.query, "limit": 10},
        extract=lambda body: [hit["sku"] for hit in body["hits"]],
        meta_keys=("cost_usd",),
        transport=transport(search),
    )
