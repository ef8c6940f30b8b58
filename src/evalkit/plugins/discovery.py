"""Finding the installed plugins from distribution metadata alone, nothing imported.

Every entry point of the ``evalkit.plugins`` group is listed with its distribution,
version and location (:func:`discover`); a distribution found twice on the path is listed
once. :func:`selection_problems` names each plugin the ``[tool.evalkit]`` selection or
``EVALKIT_PLUGINS`` lists that is missing or at a version its specifiers refuse.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata
from typing import Any, NamedTuple

from evalkit._version import __version__
from evalkit.core.pyproject_config import (
    PluginRequirement,
    PluginSelection,
    canonical_name,
)
from evalkit.core.registry import RegistryError
from evalkit.plugins.info import KERNEL_DISTRIBUTION, KERNEL_NAMES, PluginInfo, origin_of

ENTRY_POINT_GROUP = "evalkit.plugins"


class PluginSelectionError(RegistryError):
    """A plugin named by ``[tool.evalkit]`` or ``EVALKIT_PLUGINS`` is missing or at a
    version the specifiers refuse; the message names it and what is installed."""




# ---------------------------------------------------------------- discovery (metadata)
class Candidate(NamedTuple):
    """An entry point of the ``evalkit.plugins`` group, known from metadata only."""

    entry_point: metadata.EntryPoint
    distribution: str | None
    version: str | None
    location: str | None
    editable: bool

    @property
    def name(self) -> str:
        return self.entry_point.name

    @property
    def value(self) -> str:
        return self.entry_point.value

    def info(self, **changes: Any) -> PluginInfo:
        info = PluginInfo(
            name=self.name, distribution=self.distribution, version=self.version,
            module=self.value, origin=origin_of(self.distribution), location=self.location,
            editable=self.editable,
        )
        for key, value in changes.items():
            setattr(info, key, value)
        return info




def location_of(dist: metadata.Distribution | None) -> tuple[str | None, bool]:
    """``(editable project folder, True)`` or ``(site folder, False)``."""
    if dist is None:
        return None, False
    try:
        direct = dist.read_text("direct_url.json")
    except OSError:
        direct = None
    if direct:
        try:
            import json  # only for a distribution installed from a path or URL

            data = json.loads(direct)
        except ValueError:
            data = {}
        url = str(data.get("url", ""))
        if data.get("dir_info", {}).get("editable") and url.startswith("file://"):
            from urllib.parse import unquote, urlparse

            return unquote(urlparse(url).path), True
    try:
        return str(dist.locate_file("")), False
    except Exception:
        return None, False


def _name_version(dist: metadata.Distribution | None) -> tuple[str | None, str | None]:
    if dist is None:
        return None, None
    md = dist.metadata
    name, version = md["Name"], md["Version"]
    return (str(name) if name else None), (str(version) if version else None)


def discover(entry_points: Iterable[metadata.EntryPoint] | None = None) -> list[Candidate]:
    """The plugins installed, from distribution metadata only (nothing is imported).

    A distribution found twice on the path (the same name, once per path entry) is
    listed once, the first found, as Python's import system would use it. The result is
    sorted by distribution and entry-point name.
    """
    eps = (
        list(entry_points) if entry_points is not None
        else list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    )
    out: list[Candidate] = []
    seen: set[tuple[str | None, str]] = set()
    for ep in eps:
        dist = getattr(ep, "dist", None)
        dist_name, version = _name_version(dist)
        key = (canonical_name(dist_name) if dist_name else None, ep.name)
        if key in seen:
            continue
        seen.add(key)
        location, editable = location_of(dist)
        out.append(Candidate(ep, dist_name, version, location, editable))
    # Load in a fixed order (a folder lists its distributions in no particular order), so
    # that conflict messages and listings are the same on every machine.
    return sorted(out, key=lambda c: (canonical_name(c.distribution or ""), c.name))


def _installed_summary(candidates: list[Candidate]) -> str:
    if not candidates:
        return "no evalkit plugin is installed"
    items = sorted({f"{c.distribution} {c.version}" for c in candidates if c.distribution})
    return "installed plugins: " + ", ".join(items)


def _selection_problem(
    req: PluginRequirement, selection: PluginSelection, candidates: list[Candidate]
) -> tuple[PluginInfo, str] | None:
    """A missing or wrong-version requirement, as a failed info and a message."""
    if req.name in KERNEL_NAMES:
        if req.accepts(__version__):
            return None
        msg = (f"{selection.source} lists {req.text!r}, but {KERNEL_DISTRIBUTION} "
               f"{__version__} is running; change that requirement, or install a "
               f"paired-evalkit it accepts")
        return PluginInfo(req.name, req.name, __version__, "", status="failed", error=msg,
                          origin="kernel"), msg
    matches = [c for c in candidates if c.distribution and canonical_name(c.distribution)
               == req.name]
    if not matches:
        try:
            version: str | None = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            version = None
        if version is not None:
            detail = (f"{req.name} {version} is installed but declares no "
                      f"{ENTRY_POINT_GROUP!r} entry point, so it is no evalkit plugin; "
                      "take it out of that list")
        else:
            detail = (f"{req.name} is not installed ({_installed_summary(candidates)}); "
                      f"install it (`pip install '{req.text}'`) or take it out of that list")
        msg = f"{selection.source} lists {req.text!r}, but {detail}"
        return PluginInfo(req.name, req.name, version, "", status="failed", error=msg,
                          origin=origin_of(req.name)), msg
    cand = matches[0]
    if req.accepts(cand.version):
        return None
    msg = (f"{selection.source} lists {req.text!r}, but {cand.distribution} {cand.version} "
           f"is installed (at {cand.location}); install a version it accepts "
           f"(`pip install '{req.text}'`) or change that requirement")
    return cand.info(status="failed", error=msg), msg


def selection_problems(
    selection: PluginSelection, candidates: list[Candidate]
) -> list[tuple[PluginInfo, str]]:
    """Every listed plugin that is missing or at a version its specifiers refuse."""
    out: list[tuple[PluginInfo, str]] = []
    for req in selection.requirements or ():
        problem = _selection_problem(req, selection, candidates)
        if problem is not None:
            out.append(problem)
    return out
