"""MkDocs hook: the repository files the docs link to become part of the site.

The pages under ``docs/`` link to files beside that folder (``../README.md``,
``../examples/gate/``, ``../CONTRIBUTING.md``), so that they also work where the
repository is read as files. MkDocs sees only ``docs/`` and would report those links as
broken; this hook makes them work in the site too, offline, and keeps every broken link an
error:

* every file outside ``docs/`` that a page links to, directly or through another such file,
  is added to the site under ``repo/`` at its repository path (``repo/README.md``,
  ``repo/examples/gate/README.md``): Markdown as a page, anything else (an image, a script)
  copied as is; a link to a folder means its ``README.md``;
* links in every page are rewritten to those site paths; a link from a repository file
  into ``docs/`` goes to that chapter;
* a link outside ``docs/`` to something that does not exist is logged as a warning, which
  ``mkdocs build --strict`` turns into a failure (links inside ``docs/`` MkDocs checks
  itself, anchors included);
* ``docs/example.md`` embeds the main job's interactive report when
  ``examples/vaswani/out/report.html`` exists at build time (it is written by
  ``examples/vaswani/main.py`` and not kept in the repository), else it says how to get it.

Links inside fenced code blocks and web addresses are left alone.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.links")

#: ``[text](target)`` and ``![alt](target)``: the target up to whitespace or ``)``
_LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
_EXTERNAL = ("http://", "https://", "mailto:", "#", "/", "data:")
REPORT = "examples/vaswani/out/report.html"
REPORT_MARK = "<!-- the live report -->"

_state: dict[str, Any] = {}


def _repo(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def _docs(config: Any) -> Path:
    return Path(config.docs_dir).resolve()


def _site_path(repo_path: str, docs_rel: str) -> str:
    """Where a repository path lives in the site's source tree."""
    if repo_path == docs_rel or repo_path.startswith(docs_rel + "/"):
        return repo_path[len(docs_rel) + 1:]
    return "repo/" + repo_path


def _outside_code(markdown: str) -> list[tuple[bool, str]]:
    """``(is prose, text)`` pieces: fenced code blocks are not prose."""
    pieces: list[tuple[bool, str]] = []
    inside = False
    last = 0
    for m in _FENCE.finditer(markdown):
        pieces.append((not inside, markdown[last:m.start()]))
        inside = not inside
        last = m.start()
    pieces.append((not inside, markdown[last:]))
    return pieces


def _resolve(target: str, source: str, repo: Path) -> tuple[str, str] | None:
    """``(repository path, anchor)`` of a relative link in the file ``source``, or None
    when it leaves the repository."""
    path, _, anchor = target.partition("#")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    if joined.startswith(".."):
        return None
    if path.endswith("/") or (repo / joined).is_dir():
        joined = posixpath.join(joined, "README.md")
    return joined, anchor


def _links(text: str) -> list[str]:
    found: list[str] = []
    for prose, piece in _outside_code(text):
        if prose:
            found += [m.group(2) for m in _LINK.finditer(piece)
                      if not m.group(2).startswith(_EXTERNAL)]
    return found


def on_files(files: Any, config: Any) -> Any:
    """Add the repository files the pages link to (see the module docstring)."""
    from mkdocs.structure.files import File, InclusionLevel

    repo, docs = _repo(config), _docs(config)
    docs_rel = docs.relative_to(repo).as_posix()
    origin: dict[str, str] = {}  # site source path -> repository path
    queue: list[str] = []
    for f in files:
        if f.src_uri.endswith(".md"):
            repo_path = f"{docs_rel}/{f.src_uri}"
            origin[f.src_uri] = repo_path
            queue.append(repo_path)
    seen = set(queue)
    while queue:
        source = queue.pop()
        for target in _links((repo / source).read_text(encoding="utf-8")):
            resolved = _resolve(target, source, repo)
            if resolved is None:
                continue
            path = resolved[0]
            if path in seen or path.startswith(docs_rel + "/") or not (repo / path).is_file():
                continue  # MkDocs checks docs/ itself; a missing file is reported later
            seen.add(path)
            site = _site_path(path, docs_rel)
            files.append(File.generated(config, site, abs_src_path=str(repo / path),
                                        inclusion=InclusionLevel.NOT_IN_NAV))
            origin[site] = path
            if path.endswith(".md"):
                queue.append(path)
    if (repo / REPORT).is_file():  # the main job's report, embedded by docs/example.md
        files.append(File.generated(config, "repo/" + REPORT, abs_src_path=str(repo / REPORT),
                                    inclusion=InclusionLevel.NOT_IN_NAV))
    _state.update(origin=origin, repo=repo, docs_rel=docs_rel)
    return files


def _rewrite(piece: str, source: str, page_site: str) -> str:
    repo: Path = _state["repo"]
    docs_rel: str = _state["docs_rel"]

    def one(m: re.Match[str]) -> str:
        target = m.group(2)
        if target.startswith(_EXTERNAL):
            return m.group(0)
        resolved = _resolve(target, source, repo)
        if resolved is not None and resolved[0].startswith(docs_rel + "/"):
            inside = resolved[0]
            if not (repo / inside).exists():
                return m.group(0)  # MkDocs reports it (and checks the anchor)
        if resolved is None or not (repo / resolved[0]).exists():
            log.warning("%s: the link %r points to %s, which does not exist", source, target,
                        resolved[0] if resolved else "a path outside the repository")
            return m.group(0)
        path, anchor = resolved
        site = _site_path(path, docs_rel)
        new = posixpath.relpath(site, posixpath.dirname(page_site) or ".")
        return f"{m.group(1)}{new}{'#' + anchor if anchor else ''}{m.group(3)}"

    return _LINK.sub(one, piece)


def _live_report(markdown: str, page: Any) -> str:
    if REPORT_MARK not in markdown:
        return markdown
    if (_state["repo"] / REPORT).is_file():
        # raw HTML is not rewritten by MkDocs: relative to the page's URL, not its file
        url: str = page.url
        folder = url if url.endswith("/") else posixpath.dirname(url)
        src = posixpath.relpath("repo/" + REPORT, folder or ".")
        rel = posixpath.relpath("repo/" + REPORT, posixpath.dirname(page.file.src_uri) or ".")
        block = (f'<iframe src="{src}" title="The Vaswani report" loading="lazy" '
                 'style="width:100%;height:900px;border:1px solid #ccc"></iframe>\n\n'
                 f"[Open the report on its own page]({rel}).")
    else:
        block = ("*This build was made without the main job's report: run "
                 "`.venv/bin/python examples/vaswani/main.py` before `mkdocs build` to "
                 "embed the interactive page here.*")
    return markdown.replace(REPORT_MARK, block)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Point the page's links at the site's copies (see the module docstring)."""
    site = page.file.src_uri
    source = _state["origin"].get(site)
    if source is None:
        return markdown
    out = [(_rewrite(piece, source, site) if prose else piece)
           for prose, piece in _outside_code(markdown)]
    return _live_report("".join(out), page)
