"""Open a report in the system's headless Chromium, wait until every chart is drawn, and
read what the page shows: the browser test, the render benchmark and the README's
screenshot all use this module.

The browser is Debian's ``chromium`` (``/usr/bin/chromium``, or ``$EVALKIT_CHROMIUM``),
driven by Playwright for Python with ``executable_path`` set, so no browser is downloaded
(``PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1``). Each session gets a fresh profile folder
(Playwright's, removed when it ends), and Chromium's own background traffic (updates,
sync, first-run pages) is switched off; as root, Chromium needs ``--no-sandbox``. One
session opens pages with JavaScript and, in a second browser context, without.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--disable-extensions",
)

INSTALL_HINT = ("install Debian's chromium (`apt-get install -y chromium`, which .ci/run does "
                "when it is missing) and Playwright for Python (`pip install playwright`; "
                "requirements-dev.txt installs it), or set EVALKIT_CHROMIUM to a chromium "
                "executable")


def chromium_path() -> str | None:
    """The Chromium executable to drive, or None when there is none."""
    explicit = os.environ.get("EVALKIT_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable() -> str | None:
    """Why no browser can be driven here (a message that says how to fix it), or None."""
    if chromium_path() is None:
        return f"no chromium on this machine: {INSTALL_HINT}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return f"Playwright for Python is not installed: {INSTALL_HINT}"
    return None


@dataclass
class PageResult:
    """What a loaded report showed.

    Attributes:
        seconds: from the start of navigation to ``evalkit:rendered`` (without
            JavaScript: to the load event).
        console_errors: ``console.error`` messages and uncaught exceptions.
        marks: ``{chart id: data marks drawn in its SVG}`` (bars, points, cells).
        expected: ``{chart id: data-marks}``, the marks the page says it drew.
        kinds: ``{chart id: kind}``.
        requests: every URL the page asked for (the file itself included).
    """

    seconds: float
    console_errors: list[str] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    @property
    def network(self) -> list[str]:
        """The requests that left the file: anything but ``file:``, ``data:``, ``blob:``
        and ``about:`` URLs."""
        return [u for u in self.requests if not u.startswith(("file:", "data:", "blob:",
                                                               "about:"))]


#: Counts the data marks of each chart: the SVG paths of Vega's mark groups named for
#: data (``marks``), leaving out rules, axes, legends and titles.
_COUNT_MARKS = """() => {
  const out = {};
  document.querySelectorAll("figure.chart").forEach(fig => {
    const groups = fig.querySelectorAll(
      "g.mark-rect.role-mark, g.mark-symbol.role-mark");
    let n = 0;
    groups.forEach(g => {
      if (g.closest(".role-legend") || g.closest(".role-axis")) return;
      n += g.querySelectorAll(":scope > path").length;
    });
    out[fig.id] = n;
  });
  return out;
}"""


class Browser:
    """A headless Chromium session (see :func:`browser`)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self._contexts: dict[bool, Any] = {}

    def _context(self, javascript: bool) -> Any:
        if javascript not in self._contexts:
            self._contexts[javascript] = self._browser.new_context(
                viewport={"width": 1280, "height": 900}, java_script_enabled=javascript)
        return self._contexts[javascript]

    def open(self, path: Path, *, timeout_s: float = 60.0, keep: bool = False,
             javascript: bool = True, width: int = 1280, height: int = 900
             ) -> tuple[PageResult, Any]:
        """Load ``path`` in a ``width`` x ``height`` viewport and wait for
        ``evalkit:rendered`` (without ``javascript``: for the page's load event);
        ``(result, page)`` (the page is closed unless ``keep``)."""
        page = self._context(javascript).new_page()
        page.set_viewport_size({"width": width, "height": height})
        errors: list[str] = []
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
        start = time.perf_counter()
        page.goto(Path(path).resolve().as_uri(), wait_until="load")
        if javascript:
            page.wait_for_function("window.evalkitRendered === true", timeout=timeout_s * 1000)
        seconds = time.perf_counter() - start
        info = page.evaluate("""() => Array.from(document.querySelectorAll("figure.chart"))
            .map(f => [f.id, f.dataset.kind, f.dataset.marks === undefined ? -1
                                                : parseInt(f.dataset.marks, 10)])""")
        result = PageResult(seconds=seconds, console_errors=errors,
                            marks=dict(page.evaluate(_COUNT_MARKS)),
                            expected={i: n for i, _, n in info if n >= 0},
                            kinds={i: k for i, k, _ in info}, requests=requests)
        if not keep:
            page.close()
        return result, page

    def screenshot(self, path: Path, png: Path, *, width: int = 1200, height: int = 1400
                   ) -> PageResult:
        """Load ``path`` in a ``width`` x ``height`` viewport and save its top as ``png``."""
        result, page = self.open(path, keep=True, width=width, height=height)
        try:
            png.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(png), full_page=False)
        finally:
            page.close()
        return result


@contextmanager
def browser() -> Iterator[Browser]:
    """A headless Chromium session with a fresh profile, removed afterwards.

    Raises:
        RuntimeError: no browser can be driven (:func:`unavailable` says why).
    """
    why = unavailable()
    if why is not None:
        raise RuntimeError(why)
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium_path(), headless=True,
                                      args=list(CHROMIUM_ARGS))
        try:
            yield Browser(launched)
        finally:
            launched.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m evalkit_report_html.browser REPORT.html SHOT.png [WIDTH HEIGHT]``: the
    top of a report as a PNG (the README's screenshot)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 4):
        print(main.__doc__, file=sys.stderr)
        return 2
    width, height = (int(args[2]), int(args[3])) if len(args) == 4 else (1100, 1300)
    with browser() as b:
        b.screenshot(Path(args[0]), Path(args[1]), width=width, height=height)
    print(f"wrote {args[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["CHROMIUM_ARGS", "INSTALL_HINT", "Browser", "PageResult", "browser",
           "chromium_path", "main", "unavailable"]
