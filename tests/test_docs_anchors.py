"""Every link to a heading of the documentation resolves, on GitHub and on the MkDocs site.

References looked for: ``docs/NAME.md#anchor`` anywhere in ``src/``, ``plugins/``,
``examples/`` and ``README.md`` (help texts, docstrings, messages, links), and every
Markdown link ``](NAME.md#anchor)`` or ``](#anchor)`` in those Markdown files and in
``docs/``. An anchor must be the slug of a heading of the file under both slug rules:

* GitHub's (github-slugger): the heading's text lowercased, every character but letters,
  digits, ``-``, ``_`` and spaces dropped, each space made ``-`` (so ``a -- b`` is
  ``a----b``: nothing is collapsed), ``-1``, ``-2``... after repeats;
* Python-Markdown's ``toc`` (``mkdocs.yml`` sets no ``slugify``, so its default): the text
  lowercased, every character but word characters, ``-`` and spaces dropped, then each
  run of ``-`` and spaces made one ``-``; ``_1``, ``_2``... after repeats.

A heading whose two slugs differ can only be linked on one of them, so the test asks for
headings whose slugs agree wherever they are linked.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def heading_texts(path: Path) -> list[str]:
    """The text of each heading of a Markdown file, outside code fences, as rendered
    (code spans, links and emphasis markers taken away)."""
    texts, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))
            text = re.sub(r"`([^`]*)`", r"\1", text)
            texts.append(re.sub(r"\*+", "", text))
    return texts


def github_slug(text: str) -> str:
    return "".join(c for c in text.lower()
                   if c.isalnum() or c in "-_ " or unicodedata.category(c)[0] == "M"
                   ).replace(" ", "-")


def mkdocs_slug(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def slugs(path: Path, rule: str) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for text in heading_texts(path):
        slug = github_slug(text) if rule == "github" else mkdocs_slug(text)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}{'-' if rule == 'github' else '_'}{n}")
    return out


_DOCS_REF = re.compile(r"docs/([\w./-]+?\.md)#([\w.~%-]+)")
_MD_LINK = re.compile(r"\]\(([^)#\s]*?\.md)?#([^)\s]+)\)")


def references() -> list[tuple[str, Path, str]]:
    """``(where, target file, anchor)`` of every link to a heading."""
    found: list[tuple[str, Path, str]] = []
    sources = [REPO / "README.md", *(REPO / "src").rglob("*.py"),
               *(REPO / "plugins").rglob("*.py"), *(REPO / "plugins").rglob("*.md"),
               *(REPO / "examples").rglob("*.md"), *(REPO / "examples").rglob("*.py")]
    for path in sources:
        if ".venv" in path.parts or "node_modules" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in _DOCS_REF.finditer(text):
            found.append((f"{path.relative_to(REPO)}", DOCS / m.group(1), m.group(2)))
    for path in [REPO / "README.md", *DOCS.rglob("*.md"), *(REPO / "plugins").rglob("*.md"),
                 *(REPO / "examples").rglob("*.md")]:
        if ".venv" in path.parts:
            continue
        for m in _MD_LINK.finditer(path.read_text(encoding="utf-8")):
            target = path if not m.group(1) else (path.parent / m.group(1)).resolve()
            if "://" in (m.group(1) or "") or not target.is_relative_to(REPO):
                continue
            found.append((f"{path.relative_to(REPO)}", target, m.group(2)))
    return found


def test_references_are_found() -> None:
    refs = references()
    assert len(refs) > 50
    assert any(where.startswith("src/") for where, _, _ in refs)


def test_every_anchor_resolves_on_github_and_on_mkdocs() -> None:
    bad = []
    for where, target, anchor in references():
        if not target.exists():
            bad.append(f"{where}: {target.relative_to(REPO)} does not exist")
            continue
        for rule in ("github", "mkdocs"):
            if anchor not in slugs(target, rule):
                bad.append(f"{where}: {target.relative_to(REPO)}#{anchor} ({rule})")
    assert not bad, "\n".join(sorted(set(bad)))


@pytest.mark.parametrize(("text", "github", "mkdocs"), [
    ("Several collections: `evalkit.meta_compare`, `evalkit compare --collections`",
     "several-collections-evalkitmeta_compare-evalkit-compare---collections",
     "several-collections-evalkitmeta_compare-evalkit-compare-collections"),
    ("Start-up (evalkit --help)", "start-up-evalkit---help", "start-up-evalkit-help"),
    ("LaTeX", "latex", "latex"),
])
def test_the_two_slug_rules(text: str, github: str, mkdocs: str) -> None:
    assert github_slug(text) == github and mkdocs_slug(text) == mkdocs
