"""A click usage error as one line: the option, the value given, what it accepts, and where
to read more (``--resamples 5: expected an integer >= 100``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any


def given_options(ctx: Any) -> list[str]:
    """The options of the running command (``ctx``, a click or typer context) given on
    the command line, by their first spelling (``--simulate`` for
    ``--simulate/--no-simulate``)."""
    def given(name: str) -> bool:  # by name: typer may carry its own click
        source = ctx.get_parameter_source(name)
        return getattr(source, "name", None) == "COMMANDLINE"

    return [p.opts[0] for p in ctx.command.params
            if p.name is not None and p.param_type_name == "option" and given(p.name)]


def refuse_ignored(ctx: Any, options: Sequence[str], why: str) -> None:
    """Refuse those of ``options`` (first spellings, ``--trials``) given on the command
    line, which the command would ignore: a usage error (exit 2), ``--trials and --seed
    do not apply: WHY``. An option left at its default is not given, so not refused.

    Raises:
        evalkit.cli.errors.CliError: one of ``options`` was given.
    """
    given = [o for o in given_options(ctx) if o in options]
    if given:
        from evalkit.cli.errors import CliError

        verb = "does" if len(given) == 1 else "do"
        raise CliError(f"{' and '.join(given)} {verb} not apply: {why}")


# ------------------------------------------------------------- usage errors (click)
def _option_names(param: Any) -> str:
    """``--queries/-n`` for an option, ``RUN`` for an argument."""
    if getattr(param, "param_type_name", "") == "argument":
        return str(getattr(param, "metavar", None) or str(param.name).upper())
    return "/".join([*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())])


def _choices(param: Any) -> list[str] | None:
    desc = getattr(param, "type_descriptor", None)  # typer >= 0.20
    found = getattr(desc, "choices", None) or getattr(getattr(param, "type", None),
                                                      "choices", None)
    if not found:
        return None
    return [str(getattr(c, "value", c)) for c in found]


#: click's parameter types by name (typer < 0.29 converts values with click's types)
_CLICK_TYPES = {"int": int, "integer": int, "int range": int, "integer range": int,
                "float": float, "float range": float}


def _annotation(param: Any) -> Any:
    desc = getattr(param, "type_descriptor", None)
    if desc is None:  # typer < 0.29: the click type says it
        return _CLICK_TYPES.get(getattr(getattr(param, "type", None), "name", ""))
    ann = getattr(desc, "annotation", None)
    args = getattr(ann, "__args__", None)
    if args and getattr(ann, "__origin__", None) is list:
        return args[0]  # a repeatable option: its items' type
    return ann


def _bounds(param: Any) -> tuple[Any, Any]:
    desc = getattr(param, "type_descriptor", None)
    info = getattr(desc, "parameter_info", None) if desc is not None else getattr(
        param, "type", None)
    return getattr(info, "min", None), getattr(info, "max", None)


def _expected(param: Any) -> str | None:
    """What the parameter accepts, in words (``one of a, b``; ``an integer >= 2``)."""
    choices = _choices(param)
    if choices:
        return "one of " + ", ".join(choices)
    ann = _annotation(param)
    kind = {int: "an integer", float: "a number"}.get(ann)
    if kind is None:
        return None
    low, high = _bounds(param)
    if low is not None and high is not None:
        return f"{kind} from {_number(low)} to {_number(high)}"
    if low is not None:
        return f"{kind} >= {_number(low)}"
    if high is not None:
        return f"{kind} <= {_number(high)}"
    return kind


def _number(x: Any) -> str:
    """A bound as the messages write numbers: ``1,000,000``, ``0.5``."""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    return f"{x:g}"


def _accepts(param: Any, text: str) -> bool:
    """Whether ``text`` looks acceptable for ``param`` (to find the culprit among the
    values of a repeated option)."""
    choices = _choices(param)
    if choices:
        return text in choices
    ann = _annotation(param)
    if ann not in (int, float):
        return True
    try:
        value = int(text) if ann is int else float(text)
    except ValueError:
        return False
    low, high = _bounds(param)
    return (low is None or value >= low) and (high is None or value <= high)


def _given(param: Any, argv: Sequence[str]) -> str | None:
    """The value the user gave ``param`` on the command line (the first unacceptable one
    when the option is repeated), or None when it cannot be found."""
    opts = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
    if getattr(param, "param_type_name", "") != "option" or not opts:
        return None
    values: list[str] = []
    tokens = list(argv)
    for i, tok in enumerate(tokens):
        if tok == "--":
            break
        if tok in opts and i + 1 < len(tokens):
            values.append(tokens[i + 1])
            continue
        for opt in opts:
            if opt.startswith("--") and tok.startswith(opt + "="):
                values.append(tok[len(opt) + 1:])
            elif not opt.startswith("--") and tok.startswith(opt) and len(tok) > len(opt):
                values.append(tok[len(opt):])
    if not values:
        return None
    return next((v for v in values if not _accepts(param, v)), values[-1])


def _sentence(text: str) -> str:
    """A click message as a clause of ours: lower-case start, no final full stop, "Did
    you mean" joined with a semicolon."""
    text = " ".join(text.split()).replace(". Did you mean", "; did you mean")
    text = text.removeprefix("Value error, ")
    text = text[:1].lower() + text[1:]
    return text[:-1] if text.endswith(".") else text


def usage_message(exc: BaseException, argv: Sequence[str] = (), command: str = "evalkit"
                  ) -> str:
    """One line for a click usage error (bad or missing option, unknown command...), naming
    the option, the value given and what is accepted, and where to read more. ``command``
    is the command the user ran (``evalkit power``), for errors click raises without it."""
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or command
    see = f"see `{path} --help`"
    cls = type(exc).__name__
    param = getattr(exc, "param", None)
    hint = getattr(exc, "param_hint", None)
    message = str(getattr(exc, "message", "") or "")
    if cls == "MissingParameter" and param is not None:
        what = "argument" if param.param_type_name == "argument" else "option"
        expected = _expected(param)
        takes = f" ({expected})" if expected and _choices(param) else ""
        return f"{path}: missing {what} {_option_names(param)}{takes} ({see})"
    if cls == "NoSuchOption":
        name = getattr(exc, "option_name", "") or message
        maybe = [m for m in getattr(exc, "possibilities", None) or () if m != "--help"]
        did = f"; did you mean {' or '.join(maybe)}?" if maybe else ""
        return f"{path}: no such option {name}{did} ({see})"
    if cls == "BadOptionUsage" and getattr(exc, "option_name", None):
        return f"{path}: option {exc.option_name} needs a value ({see})"  # type: ignore[attr-defined]
    if param is not None or hint is not None:
        name = _option_names(param) if param is not None else (
            "/".join(hint) if isinstance(hint, list | tuple) else str(hint))
        given = _given(param, argv) if param is not None else None
        expected = _expected(param) if param is not None else None
        shown = f"{name} {given}" if given is not None else name
        if expected:
            return f"{shown}: expected {expected}"
        return f"{shown}: {_sentence(message)} ({see})"
    text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    if re.search(r"\(see `[^`]+`[^()]*\)\.?$", text):  # it says where to look already
        return _sentence(text)
    return f"{_sentence(text)} ({see})"
