"""The HTML report shows control characters and bidirectional overrides in run tags and
query ids as the visible escapes every other reporter prints (``\\x1b``, ``\\u202e``):
none reaches the page raw (a right-to-left override would reverse which system is
which in the title), and none reaches vl-convert, whose SVG text renderer aborted the
whole process (SIGABRT, exit 134) on an ``ESC`` in a run tag.

Run in a child process: before the fix the chart step killed the interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

QIDS = ["<script>alert(1)</script>", "q\u202eevil", "\x1b[31mRED", "q\ufffeodd", "q\u2066iso",
        "plain"]
BAD = ["\x1b", "\u202e", "\u2066", "\ufffe", "\x07"]


def _write(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "h.qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {(i + d) % 2}\n"
                             for i, q in enumerate(QIDS) for d in range(3)), "utf-8")
    runs = []
    for name, tag, order in (("a", "A\x1bX", (0, 1, 2)), ("b", "B\u202e\x07", (2, 1, 0))):
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{q} Q0 d{d} {r + 1} {10 - r} {tag}\n"
                             for q in QIDS for r, d in enumerate(order)), "utf-8")
        runs.append(p)
    return runs[0], runs[1], qrels


def test_hostile_names_render_escaped(tmp_path: Path) -> None:
    a, b, qrels = _write(tmp_path)
    out = tmp_path / "o" / "r.html"
    evalkit = Path(sys.executable).with_name("evalkit")
    proc = subprocess.run(
        [str(evalkit), "compare", str(a), str(b), "--qrels", str(qrels), "-m", "ap,ndcg@10",
         "--report", f"html:{out}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = out.read_text("utf-8")
    assert [c for c in BAD if c in page] == []
    assert "A\\x1bX" in page and "B\\u202e\\x07" in page  # as the console prints them
    assert "q\\u202eevil" in page and "\\x1b[31mRED" in page
    assert "<script>alert(1)</script>" not in page  # autoescaped as before
