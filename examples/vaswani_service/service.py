"""A small search service over the bundled Vaswani collection, served over HTTP.

``POST /search`` with ``{"query": "...", "k": 10}`` answers ``{"results": [{"id": docno,
"score": s}, ...], "took_ms": t}``: BM25 from ``examples/vaswani/retrieval.py`` (reused, not
rewritten), best first, ties broken by docno descending as trec_eval does. ``GET /health``
answers ``{"status": "ok", "documents": n}``. A malformed request gets a 400 with a JSON
``{"error": ...}`` body; an unknown path a 404.

The server binds 127.0.0.1 only. Run it on its own with::

    .venv/bin/python examples/vaswani_service/service.py --port 8080
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

VASWANI = Path(__file__).resolve().parents[1] / "vaswani"
if str(VASWANI) not in sys.path:
    sys.path.insert(0, str(VASWANI))

import retrieval  # noqa: E402  (examples/vaswani/retrieval.py)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class SearchService:
    """BM25 over Vaswani behind ``POST /search`` on ``127.0.0.1``.

    Args:
        port: the port to bind (0 picks a free one).
        depth: the most results one query may ask for.
    """

    def __init__(self, port: int = 0, depth: int = 1000) -> None:
        self.bm25, _ = retrieval.build()
        self.depth = depth
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = port
        self.requests = 0
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError("the service is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        """The top ``k`` documents for ``query`` as ``[{"id", "score"}]``, best first."""
        scored = self.bm25.score_all([retrieval.Query("q", query)])["q"]
        ranked = sorted(scored.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        return [{"id": d, "score": s} for d, s in ranked[:k]]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/health":
                    self._send(200, {"status": "ok",
                                     "documents": service.bm25.index.n_docs})
                else:
                    self._send(404, {"error": f"no route {self.path}"})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self.path != "/search":
                    self._send(404, {"error": f"no route {self.path}"})
                    return
                with service._lock:
                    service.requests += 1
                start = time.perf_counter()
                try:
                    body = json.loads(raw)
                    query = body["query"]
                    k = int(body.get("k", 10))
                    if not isinstance(query, str) or not 1 <= k <= service.depth:
                        raise ValueError(f"need a text query and 1 <= k <= {service.depth}")
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    self._send(400, {"error": f"bad request: {exc}"})
                    return
                results = service.search(query, k)
                took = (time.perf_counter() - start) * 1000.0
                self._send(200, {"results": results, "took_ms": round(took, 3)})

        return Handler

    def start(self) -> SearchService:
        self._server = _Server(("127.0.0.1", self._port), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> SearchService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve BM25 over Vaswani on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    with SearchService(port=args.port) as service:
        print(f"serving {service.bm25.index.n_docs} documents at {service.url}/search "
              "(Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


__all__ = ["SearchService", "main", "retrieval"]  # retrieval: reused by evaluate_service.py


if __name__ == "__main__":
    main()
