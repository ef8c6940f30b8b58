"""The JavaScript every report inlines: Vega, Vega-Lite and vega-embed as one bundle.

The bundle comes from ``vl-convert-python`` (the Vega project's own converter, which
carries the three libraries and their dependencies) through
``vl_convert.javascript_bundle()``. Making it starts vl-convert's JavaScript runtime,
about 1.5 s, so the text is kept once per vl-convert version in the user's cache folder
(``$EVALKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/evalkit``, else ``~/.cache/evalkit``),
written atomically; a cache that cannot be written only costs the time again.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """Where the bundle is kept between processes."""
    explicit = os.environ.get("EVALKIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "evalkit"


def _vl_convert_version() -> str:
    from importlib.metadata import version

    return version("vl-convert-python")


def versions() -> dict[str, str]:
    """The versions of the inlined libraries: ``vega``, ``vega-lite``, ``vega-embed``
    and ``vl-convert``."""
    import vl_convert as vlc

    return {"vega": str(vlc.get_vega_version()),
            "vega-lite": str(vlc.get_vegalite_versions()[-1]),
            "vega-embed": str(vlc.get_vega_embed_version()),
            "vl-convert": _vl_convert_version()}


@functools.lru_cache(maxsize=1)
def javascript() -> str:
    """The bundle's text: a script that defines ``vegaEmbed``, ``vegaLite`` and ``vega``
    on ``window``.

    Raises:
        ImportError: vl-convert-python is not installed (a dependency of this plugin).
    """
    import vl_convert as vlc

    path = cache_dir() / f"vega-bundle-{_vl_convert_version()}.js"
    try:
        text = path.read_text(encoding="utf-8")
        if text.rstrip().endswith(_END):
            return text
    except OSError:
        pass
    # the default snippet puts vegaEmbed, vegaLite and vega on window (the type stub
    # leaves out that the argument has a default)
    text = vlc.javascript_bundle() + "\n" + _END + "\n"  # type: ignore[call-arg]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".vega-bundle-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the bundle is made again next time
    return text


#: The bundle's last line, by which a complete cached copy is recognised.
_END = "/* end of the vega bundle (vl-convert) */"


__all__ = ["cache_dir", "javascript", "versions"]
