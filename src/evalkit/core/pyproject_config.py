"""The ``[tool.evalkit]`` table of a project's ``pyproject.toml``, and plugin selection.

The table is found in the nearest ``pyproject.toml`` at or above the working directory
(the search stops at the first ``pyproject.toml``, whether or not it has the table), or
in the file given with ``--config``. :func:`read_tool_config` returns the table and the
path it came from; the plugin keys are interpreted here, other keys (the eval config) by
their own modules.

Plugin keys::

    [tool.evalkit]
    plugins = ["evalkit-retrieval", "evalkit-judge>=0.3"]   # distributions to load
    local_plugins = ["myproject.eval_plugins"]              # the project's own modules

``EVALKIT_PLUGINS`` (comma-separated, same syntax; empty means none) overrides both lists.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from evalkit.io.error_messages import not_utf8_at

PYPROJECT = "pyproject.toml"
#: The eval config's file names, looked for in the working directory in this order.
YAML_NAMES = ("evalkit.yaml", "evalkit.yml")
ENV_PLUGINS = "EVALKIT_PLUGINS"

#: The keys of the table: the run settings of ``evalkit run`` (:mod:`evalkit.execute.evalconfig`),
#: and the keys other features read: the plugin selection (here) and ``evalkit gate``'s
#: defaults. Any other key is an error, so that a typo (``plugin = [...]``) never passes
#: silently. The same keys as the model :class:`evalkit.execute.evalconfig_models.ToolSettings`
#: (a test holds them equal), spelt out so that start-up imports no validator.
RUN_KEYS = frozenset({
    "name", "goldens", "goldens_loader", "target", "metrics", "aggregates", "output",
    "max_concurrency", "epochs", "reduce", "requests_per_minute", "tokens_per_minute",
    "executor",
})
OTHER_KEYS = frozenset({"plugins", "local_plugins", "checks", "baseline", "reporters"})

# patterns, compiled (and cached by re) on first use: most commands never need them
_NAME = r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(.*?)\s*$"
_MODULE = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
_OPERATOR_START = ("<", ">", "=", "!", "~")


class ConfigError(ValueError):
    """The ``[tool.evalkit]`` table (or ``EVALKIT_PLUGINS``) cannot be used.

    The message names the file (or the variable) and the key.
    """


def canonical_name(name: str) -> str:
    """A distribution name normalised as in PEP 503 (``Evalkit_Judge`` -> ``evalkit-judge``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


class ToolConfig(NamedTuple):
    """The ``[tool.evalkit]`` table and where it came from.

    Attributes:
        path: the ``pyproject.toml`` that was read, or ``None`` when none was found.
        table: the table's contents; ``None`` when the file has no ``[tool.evalkit]``.
    """

    path: Path | None
    table: Mapping[str, Any] | None

    def describe(self) -> str:
        """One line for listings: which file and whether it has the table."""
        if self.path is None:
            return "no pyproject.toml found"
        if self.table is None:
            return f"{self.path} (no [tool.evalkit] table)"
        return f"{self.path} [tool.evalkit]"


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (default: the working directory);
    one that is a symbolic link loop is found too (reading it is refused, naming it,
    rather than its settings being ignored without a word)."""
    from evalkit.io.symlink_loops import is_symlink_loop

    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file() or is_symlink_loop(candidate):
            return candidate
    return None


def read_tool_config(
    config: str | os.PathLike[str] | None = None,
    *,
    start: str | os.PathLike[str] | None = None,
) -> ToolConfig:
    """Read ``[tool.evalkit]`` from ``config``, or from the nearest ``pyproject.toml``.

    Args:
        config: an explicit file (or a folder holding ``pyproject.toml``); it must exist.
        start: where the upward search begins when ``config`` is not given.

    Raises:
        ConfigError: ``config`` does not exist, the file is not valid TOML, or
            ``tool.evalkit`` is not a table.
    """
    if config is not None:
        path = Path(config)
        if path.is_dir():
            path = path / PYPROJECT
        if not path.exists():
            from evalkit.io.symlink_loops import refuse_symlink_loop

            refuse_symlink_loop(path, "config", label="--config", error=ConfigError)
            raise ConfigError(f"config file {path.absolute()} does not exist")
    else:
        found = find_pyproject(start)
        if found is None:
            return ToolConfig(None, None)
        path = found
    import tomllib  # here: `evalkit --help` looks for the file without reading it

    try:
        from evalkit.io.user_files import read_input

        data = tomllib.loads(read_input(path, "config", error=ConfigError
                                        ).decode("utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ConfigError(f"{path}: arrays or tables nested too deeply; evalkit refuses "
                          "such TOML") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{not_utf8_at(path, exc)}; --config takes a pyproject.toml. Is this the "
            "right file?"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("evalkit") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.evalkit must be a table, not {type(table).__name__}")
    return ToolConfig(path.resolve(), table)


# ------------------------------------------------------------------ plugin selection
class PluginRequirement(NamedTuple):
    """One entry of ``plugins``: a distribution name with optional version specifiers.

    Attributes:
        text: the entry as written (``"evalkit-judge>=0.3"``).
        name: the canonical distribution name (``"evalkit-judge"``).
        specifier: the specifiers (``">=0.3"``), empty for any version.
    """

    text: str
    name: str
    specifier: str = ""

    def accepts(self, version: str | None) -> bool:
        """Whether an installed ``version`` satisfies the specifiers (pre-releases count)."""
        if not self.specifier:
            return True
        if version is None:
            return False
        from packaging.specifiers import SpecifierSet
        from packaging.version import InvalidVersion

        try:
            return SpecifierSet(self.specifier).contains(version, prereleases=True)
        except InvalidVersion:
            return False


def parse_requirement(text: str, where: str) -> PluginRequirement:
    """Parse ``"name"`` or ``"name<specifiers>"``.

    Raises:
        ConfigError: not a distribution name, or extras, markers or URLs (``where`` names
            the file and key, or the variable, in the message).
    """
    if not isinstance(text, str):
        raise ConfigError(f"{where}: entries must be strings, got {text!r}")
    m = re.match(_NAME, text)
    if m is None or not text.strip():
        raise ConfigError(f"{where}: {text!r} is not a distribution name")
    name, rest = m.group(1), m.group(2)
    if rest and (rest[0] in "[;@" or ";" in rest):
        raise ConfigError(
            f"{where}: {text!r}: only a distribution name and version specifiers are "
            "accepted (no extras, markers or URLs)"
        )
    if rest:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            rest = str(SpecifierSet(rest))
        except InvalidSpecifier as exc:
            raise ConfigError(f"{where}: {text!r}: invalid version specifier ({exc})") from None
    return PluginRequirement(text=text.strip(), name=canonical_name(name), specifier=rest)


def split_env_list(value: str) -> list[str]:
    """Split ``EVALKIT_PLUGINS`` on commas, keeping ``"a>=1,<2"`` as one entry."""
    items: list[str] = []
    for piece in value.split(","):
        part = piece.strip()
        if not part:
            continue
        if items and part.startswith(_OPERATOR_START):
            items[-1] = f"{items[-1]},{part}"
        else:
            items.append(part)
    return items


class PluginSelection(NamedTuple):
    """Which plugins to load.

    Attributes:
        requirements: the distributions to load; ``None`` loads every installed plugin.
        local_plugins: the project's own plugin modules, imported by name.
        source: where the choice came from, for listings and error messages.
        config: the ``[tool.evalkit]`` table that was read (its path may be ``None``).
    """

    requirements: tuple[PluginRequirement, ...] | None
    local_plugins: tuple[str, ...] = ()
    source: str = "every installed plugin (no [tool.evalkit] plugins list)"
    config: ToolConfig = ToolConfig(None, None)

    @classmethod
    def everything(cls) -> PluginSelection:
        """Every installed plugin and no local one."""
        return cls(requirements=None)

    def requirement_for(self, distribution: str | None) -> PluginRequirement | None:
        """The requirement naming ``distribution`` (``None`` if it is not listed)."""
        if self.requirements is None or distribution is None:
            return None
        key = canonical_name(distribution)
        for req in self.requirements:
            if req.name == key:
                return req
        return None

    def allows(self, distribution: str | None) -> bool:
        """Whether a plugin of ``distribution`` is enabled (version not checked here)."""
        if self.requirements is None:
            return True
        return self.requirement_for(distribution) is not None


def _check_unique(reqs: tuple[PluginRequirement, ...], where: str) -> None:
    seen: dict[str, str] = {}
    for req in reqs:
        if req.name in seen:
            raise ConfigError(f"{where}: {req.name!r} is listed twice ({seen[req.name]!r}, "
                              f"{req.text!r}); merge the specifiers into one entry")
        seen[req.name] = req.text


def _string_list(table: Mapping[str, Any], key: str, where: str) -> list[str] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings, got {value!r}")
    return list(value)


def refuse_unknown_keys(table: Mapping[str, Any], where: str,
                        sections: Collection[str] | None = None, *,
                        path: Path | None = None, not_loaded: str = "") -> None:
    """Refuse a key of ``[tool.evalkit]`` that is neither evalkit's nor, in ``sections``,
    a loaded plugin's config section. With ``sections=None`` (the plugins are not loaded
    yet) a key whose value is a table may be a plugin's section, and is left for the
    check after discovery (:func:`evalkit.plugins.loading.load_plugins`), which passes
    ``not_loaded`` (the plugins installed but not loaded, one of which may declare it)
    and the ``path`` of the file, whose line holding the key is then named.

    Raises:
        ConfigError: naming the file (and line), the key, a close match, and the keys
            there are.
    """
    known = RUN_KEYS | OTHER_KEYS | set(sections or ())
    unknown = sorted(str(k) for k, v in table.items() if k not in known
                     and (sections is not None or not isinstance(v, Mapping)))
    if not unknown:
        return
    from evalkit.io.error_messages import close_matches

    key = unknown[0]
    line = key_line(path, key) if path is not None else None
    if line is not None:
        where = f"{path}:{line}: {where.removeprefix(f'{path} ')}"
    maybe = close_matches(key, sorted(known))
    hint = f"; did you mean {maybe[0]!r}?" if maybe else ""
    plugins = (f", and the sections of the loaded plugins: {', '.join(sorted(sections))}"
               if sections else "")
    message = (f"{where}: unknown key {key!r}{hint} (the keys are "
               f"{', '.join(sorted(RUN_KEYS | OTHER_KEYS))}{plugins})")
    if isinstance(table[key], Mapping):
        message += undeclared_section(key, not_loaded)
    raise ConfigError(message)


def undeclared_section(key: str, not_loaded: str) -> str:
    """The end of the message for a table ``key`` of the eval config that no loaded
    plugin declares as its section: the plugin that declares it may be uninstalled or
    disabled; ``not_loaded`` (:meth:`evalkit.core.registry.Registry.not_loaded`) names
    the plugins installed but not loaded, ``""`` when there are none."""
    return ("; a plugin's section is a key only while the plugin is loaded, and no loaded "
            f"plugin declares {key!r}: install the plugin that declares it (`pip install "
            "...`) or enable it, or remove the table"
            + (f". {not_loaded}" if not_loaded else
               "; no plugin is installed but not loaded (see `evalkit plugins list`)"))


def key_line(path: Path, key: str) -> int | None:
    """The line (from 1) of ``path`` (a ``pyproject.toml``) that opens the key ``key`` of
    ``[tool.evalkit]``: its table header ``[tool.evalkit.key]`` (or a subtable's), or
    ``key = ...`` inside ``[tool.evalkit]``; ``None`` when no line reads so (TOML allows
    spellings this search does not follow, such as quoted keys)."""
    from evalkit.io.user_files import read_input

    try:  # a regular file of at most 16 MiB, as the config itself was read
        text = read_input(path, "pyproject.toml", error=ValueError).decode("utf-8-sig")
    except ValueError:  # UnicodeDecodeError too
        return None
    header = re.compile(r"^\s*\[\s*tool\s*\.\s*evalkit\s*\.\s*" + re.escape(key)
                        + r"\s*[\].]")
    assignment = re.compile(r"^\s*" + re.escape(key) + r"\s*[=.]")
    in_table = False
    for number, line in enumerate(text.splitlines(), 1):
        if header.match(line):
            return number
        if line.lstrip().startswith("["):
            in_table = re.match(r"^\s*\[\s*tool\s*\.\s*evalkit\s*\]", line) is not None
        elif in_table and assignment.match(line):
            return number
    return None


def plugin_selection(
    config: str | os.PathLike[str] | ToolConfig | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    start: str | os.PathLike[str] | None = None,
) -> PluginSelection:
    """The plugin selection from ``[tool.evalkit]`` and ``EVALKIT_PLUGINS``.

    ``EVALKIT_PLUGINS``, when set, replaces both lists: each entry is a distribution
    requirement, or the name of a module from ``local_plugins``; an empty value loads no
    plugin. Without the variable, ``plugins`` (if present) names the distributions, and
    ``local_plugins`` the project's modules; with neither, every installed plugin loads.

    Raises:
        ConfigError: a malformed table, key or entry (the message names the file and key).
    """
    env = os.environ if environ is None else environ
    tool = config if isinstance(config, ToolConfig) else read_tool_config(config, start=start)
    table: Mapping[str, Any] = tool.table or {}
    where = f"{tool.path} [tool.evalkit]"
    refuse_unknown_keys(table, where)
    plugins = _string_list(table, "plugins", where)
    local = _string_list(table, "local_plugins", where) or []
    seen: set[str] = set()
    for module in local:
        if not re.match(_MODULE, module):
            raise ConfigError(f"{where}: local_plugins entry {module!r} is not a module name")
        if module in seen:
            raise ConfigError(f"{where} local_plugins: {module!r} is listed twice; list each "
                              "module once")
        seen.add(module)
    if ENV_PLUGINS in env:
        raw = split_env_list(env[ENV_PLUGINS])
        chosen_local = tuple(m for m in local if m in raw)
        reqs = tuple(
            parse_requirement(item, ENV_PLUGINS) for item in raw if item not in chosen_local
        )
        _check_unique(reqs, ENV_PLUGINS)
        return PluginSelection(
            requirements=reqs, local_plugins=chosen_local,
            source=f"{ENV_PLUGINS}={env[ENV_PLUGINS]!r}", config=tool,
        )
    if plugins is None:
        return PluginSelection(
            requirements=None, local_plugins=tuple(local),
            source="every installed plugin (no [tool.evalkit] plugins list)", config=tool,
        )
    reqs = tuple(parse_requirement(item, f"{where} plugins") for item in plugins)
    _check_unique(reqs, f"{where} plugins")
    return PluginSelection(
        requirements=reqs, local_plugins=tuple(local), source=f"{where} plugins", config=tool
    )
