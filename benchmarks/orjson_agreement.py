"""Do orjson and ``json`` give the same values on what the artifact reader hands orjson?

The artifact reader (``evalkit.data.artifact``) decodes each line with orjson and falls
back to ``json``'s scanner on anything orjson refuses; this checks that wherever orjson
accepts, it gives what ``json.loads`` gives (the same type, and the same ``repr``, so
floats agree bit for bit):

* artifact row lines from ``compare_inputs.write_runs`` with 1-3 random edits each
  (inserted, deleted or replaced characters: brackets, quotes, digits, escapes, NaN,
  control characters), ``--lines`` of them;
* every finite double drawn as 64 random bits, spelled by ``repr``, ``%.25e``, ``%.17g``
  and ``%.12g``, and random decimal strings of up to 40 digits with exponents
  (``--numbers`` of each).

Integers beyond 64 bits, which orjson reads as floats, are not drawn: the reader sends
any file with 19 digits in a row outside a number's fraction to ``json``.

    .venv/bin/python benchmarks/orjson_agreement.py [--lines 300000] [--numbers 300000]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import compare_inputs  # noqa: E402

_EDITS = [*'{}[]",:.-+eE0123456789 \t\r\x0c\\untrfals/\x00\x01',
          "\\u12", "\\ud800", "é", "NaN", "Infinity", "1e999"]


def _same(text: str) -> bool:
    """True unless orjson accepts ``text`` and gives something other than json."""
    try:
        got = orjson.loads(text)
    except orjson.JSONDecodeError:
        return True
    try:
        want: Any = json.loads(text)
    except ValueError:
        return False
    return type(got) is type(want) and repr(got) == repr(want)


def edited_lines(count: int, rng: random.Random) -> int:
    """How many of ``count`` edited row lines disagree."""
    with tempfile.TemporaryDirectory() as tmp:
        path = compare_inputs.write_runs(Path(tmp), n=200, candidates=1)[1]
        rows = path.read_text().split("\n")[1:-2]
    bad = 0
    for _ in range(count):
        chars = list(rng.choice(rows))
        for _ in range(rng.randint(1, 3)):
            op, at = rng.random(), rng.randrange(len(chars) + 1)
            if op < 0.4:
                chars.insert(at, rng.choice(_EDITS))
            elif chars:
                at = min(at, len(chars) - 1)
                if op < 0.8:
                    chars.pop(at)
                else:
                    chars[at] = rng.choice(_EDITS)
        bad += not _same("".join(chars))
    return bad


def numbers(count: int, rng: random.Random) -> int:
    """How many of the number spellings disagree."""
    bad = 0
    for _ in range(count):
        x = struct.unpack("d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x):
            bad += sum(not _same(s) for s in (repr(x), f"{x:.25e}", f"{x:.17g}", f"{x:.12g}"))
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40)))
        exponent = rng.choice(["", f"e-{rng.randint(0, 330)}", f"e{rng.randint(0, 300)}"])
        bad += not _same(f"0.{digits}{exponent}")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--numbers", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    lines = edited_lines(args.lines, rng)
    nums = numbers(args.numbers, rng)
    print(f"edited row lines that disagree: {lines} of {args.lines}")
    print(f"number spellings that disagree: {nums} (of {args.numbers} draws)")
    sys.exit(1 if lines or nums else 0)


if __name__ == "__main__":
    main()
