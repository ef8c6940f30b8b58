"""Compile the main job's LaTeX table and render it as a PNG (the README's picture).

Needs pdflatex with booktabs (Debian: texlive-latex-base, texlive-latex-recommended) and
pdftoppm (poppler-utils). Run it after ``main.py``, from the repository root::

    .venv/bin/python examples/vaswani/table_png.py   # writes docs/images/table.png

The page is rendered once in grey to find the table's bounding box, then again as PNG
cropped to it, with a small margin.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DOCUMENT = r"""\documentclass{article}
\usepackage{booktabs}
\pagestyle{empty}
\begin{document}
\input{table.tex}
\end{document}
"""


PACKAGES = {"pdflatex": "texlive-latex-base texlive-latex-recommended",
            "pdftoppm": "poppler-utils"}


def _tool(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        raise SystemExit(f"{name} is not installed (Debian: apt-get install {PACKAGES[name]})")
    return exe


def _bbox(pgm: bytes, margin: int) -> tuple[int, int, int, int]:
    """``(x, y, width, height)`` of the non-white pixels of a binary PGM, plus ``margin``."""
    parts = pgm.split(maxsplit=4)  # P5, width, height, maxval, pixels
    width, height = int(parts[1]), int(parts[2])
    pixels = np.frombuffer(parts[4][:width * height], dtype=np.uint8).reshape(height, width)
    ys, xs = np.nonzero(pixels < 250)
    x0, x1 = max(int(xs.min()) - margin, 0), min(int(xs.max()) + margin, width - 1)
    y0, y1 = max(int(ys.min()) - margin, 0), min(int(ys.max()) + margin, height - 1)
    return x0, y0, x1 - x0 + 1, y1 - y0 + 1


def render(table: Path, png: Path, dpi: int = 160) -> Path:
    """Compile ``table`` and write it, cropped, to ``png``."""
    pdflatex, pdftoppm = _tool("pdflatex"), _tool("pdftoppm")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copyfile(table, folder / "table.tex")
        (folder / "doc.tex").write_text(DOCUMENT, encoding="utf-8")
        subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error",
                        "-no-shell-escape", "doc.tex"], cwd=folder, check=True,
                       capture_output=True, timeout=60)
        grey = subprocess.run([pdftoppm, "-gray", "-r", str(dpi), "-f", "1", "-l", "1",
                               "doc.pdf"], cwd=folder, check=True, capture_output=True,
                              timeout=60).stdout
        x, y, w, h = _bbox(grey, margin=dpi // 10)
        subprocess.run([pdftoppm, "-png", "-r", str(dpi), "-f", "1", "-l", "1",
                        "-x", str(x), "-y", str(y), "-W", str(w), "-H", str(h),
                        "-singlefile", "doc.pdf", "table"], cwd=folder, check=True,
                       timeout=60)
        png.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "table.png", png)
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--table", type=Path, default=HERE / "out" / "table.tex")
    parser.add_argument("--png", type=Path,
                        default=HERE.parents[1] / "docs" / "images" / "table.png")
    args = parser.parse_args(argv)
    if not args.table.is_file():
        print(f"{args.table}: not found; run examples/vaswani/main.py first", file=sys.stderr)
        return 2
    print(f"wrote {render(args.table, args.png)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
