"""A small fake LLM behind a local HTTP service (127.0.0.1, a free port), for the offline
example: deterministic answers with a controlled amount of noise per sample.

``POST /v1/answer`` with ``{"system": "v1" | "v2", "question": "...", "sample": k}``
answers
``{"text": ..., "tokens_in": n, "tokens_out": m, "cost_usd": c}``, the body an LLM
gateway returns. The model knows the facts of :data:`FACTS`; each call draws how it
answers from the system's :data:`PROFILES`: the answer as written, the same answer in
another form (case, an article, punctuation: equal after SQuAD's normalisation), a
partly right answer, a long hedged sentence around the right answer, or a wrong one.

The draw is seeded by ``(system, question, k)``, ``k`` the request's ``sample`` (the
sample number the runner is answering, 0 when the request has none), as an LLM API's
``seed`` parameter would fix it. So a run that answers each case K times gets K
different samples of each case, and sample ``k`` of a case is the same on every run,
whatever order concurrent calls arrive in.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fact:
    """What the model knows of one question: its answer, a partly right and a wrong one."""

    answer: str
    partial: str
    wrong: str


FACTS: dict[str, Fact] = {
    "Who wrote Pride and Prejudice?": Fact("Jane Austen", "Austen", "Charlotte Bronte"),
    "What is the capital of Australia?": Fact("Canberra", "Canberra, ACT", "Sydney"),
    "Which planet is known as the Red Planet?": Fact("Mars", "planet Mars", "Jupiter"),
    "What is the chemical symbol for gold?": Fact("Au", "Au (aurum)", "Ag"),
    "How many sides does a hexagon have?": Fact("six", "six sides", "eight"),
    "Who painted the Mona Lisa?": Fact("Leonardo da Vinci", "da Vinci", "Michelangelo"),
    "What is the largest ocean on Earth?": Fact("the Pacific Ocean", "Pacific", "Atlantic"),
    "In which year did the Berlin Wall fall?": Fact("1989", "late 1989", "1991"),
    "What gas do plants absorb from the air?": Fact("carbon dioxide", "carbon", "oxygen"),
    "Who developed the theory of general relativity?": Fact(
        "Albert Einstein", "Einstein", "Isaac Newton"),
    "What is the boiling point of water at sea level in Celsius?": Fact(
        "100 degrees", "about 100", "90 degrees"),
    "Which language has the most native speakers?": Fact(
        "Mandarin Chinese", "Chinese", "English"),
    "What is the longest river in South America?": Fact("the Amazon", "Amazon River", "Orinoco"),
    "Who was the first person to walk on the Moon?": Fact(
        "Neil Armstrong", "Armstrong", "Buzz Aldrin"),
    "What is the smallest prime number?": Fact("2", "two", "1"),
    "Which organ pumps blood through the body?": Fact("the heart", "heart muscle", "the liver"),
    "What is the currency of Japan?": Fact("the yen", "Japanese yen", "the won"),
    "How many continents are there?": Fact("seven", "7 continents", "six"),
    "What is the hardest natural substance?": Fact("diamond", "a diamond crystal", "quartz"),
    "Who composed the Fifth Symphony in C minor?": Fact(
        "Ludwig van Beethoven", "Beethoven", "Mozart"),
    "What is the freezing point of water in Fahrenheit?": Fact(
        "32 degrees", "32 F", "0 degrees"),
    "Which country gifted the Statue of Liberty to the United States?": Fact(
        "France", "the French", "England"),
    "What is the main ingredient of guacamole?": Fact("avocado", "avocados", "tomato"),
    "How many minutes are in a day?": Fact("1440", "1,440 minutes", "1200"),
}

#: How often each kind of answer is drawn, per system (the v2 model is better and dearer).
PROFILES: dict[str, dict[str, float]] = {
    "v1": {"exact": 0.45, "reworded": 0.15, "partial": 0.15, "hedged": 0.10, "wrong": 0.15},
    "v2": {"exact": 0.60, "reworded": 0.20, "partial": 0.08, "hedged": 0.07, "wrong": 0.05},
}
#: US dollars per million (input, output) tokens, per system.
PRICES: dict[str, tuple[float, float]] = {"v1": (0.50, 1.50), "v2": (3.00, 15.00)}
#: tokens of the prompt template around the question
PROMPT_TOKENS = 40


def draw(system: str, question: str, k: int) -> str:
    """The ``k``-th answer of ``system`` to ``question`` (deterministic).

    Raises:
        KeyError: an unknown system or question.
    """
    fact, profile = FACTS[question], PROFILES[system]
    seed = hashlib.sha256(f"{system}\0{question}\0{k}".encode()).digest()
    rng = random.Random(int.from_bytes(seed[:8], "big"))
    kind = rng.choices(list(profile), weights=list(profile.values()))[0]
    if kind == "exact":
        return fact.answer
    if kind == "reworded":
        form = rng.choice(["{a}.", "The {a}", "{A}!", "{a} ."])
        return form.format(a=fact.answer, A=fact.answer.upper())
    if kind == "partial":
        return fact.partial
    if kind == "hedged":
        return (f"I believe the answer is {fact.answer}, although I would double-check it "
                "against a reliable source before relying on it.")
    return fact.wrong


def usage(system: str, question: str, text: str) -> dict[str, Any]:
    """The token counts (words, as a toy tokenizer) and the cost of one answer."""
    tokens_in = PROMPT_TOKENS + len(question.split())
    tokens_out = len(text.split()) + 1
    price_in, price_out = PRICES[system]
    return {"tokens_in": tokens_in, "tokens_out": tokens_out,
            "cost_usd": (tokens_in * price_in + tokens_out * price_out) / 1e6}


class FakeModel:
    """The service: ``with FakeModel() as model: model.url`` (stopped on exit)."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The answering endpoint."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1/answer"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The body answering ``request``: its ``sample``-th draw (``calls`` counts the
        requests per system and question).

        Raises:
            KeyError: an unknown system or question; ValueError: a ``sample`` that is not
            an integer >= 0.
        """
        system, question = str(request["system"]), str(request["question"])
        k = request.get("sample", 0)
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"sample must be an integer >= 0, got {k!r}")
        with self._lock:
            self.calls[(system, question)] += 1
        text = draw(system, question, k)
        return {"text": text, **usage(system, question, text)}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = model.answer(json.loads(self.rfile.read(length)))
                    status = 200
                except (KeyError, ValueError, TypeError) as exc:
                    body, status = {"error": f"bad request: {exc}"}, 400
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        return Handler
