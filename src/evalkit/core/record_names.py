"""What a record's name (and each alias) may hold, so that every name a plugin registers
can be asked for where names are written.

A name is one word: no whitespace, no control character (it would break the one-line
listings and messages) and no comma outside brackets (``-m a,b`` and ``metrics:`` lists
split at those commas; ``contains(text=a,ignore_case=True)`` is one name).
``@`` separates a family's name from its cut-off: a metric or aggregate may be named
``name@CUTOFF`` with a numeric cut-off (``max_item_share@10``, a member written out), a
family's name and aliases hold none (its members are ``name@k``), and no other kind of
record has one.
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.core.metric_names import split_outside_brackets

#: ``name@CUTOFF``: the one form with ``@`` a metric's or aggregate's name may have
_CUT = re.compile(r"^[^@]+@\d+(?:\.\d+)?$")


def name_problem(name: str, what: str, *, cutoff_allowed: bool) -> str | None:
    """Why ``name`` (a record's name or alias; ``what`` names it in the message, such as
    ``"MetricSpec 'a,b': name"``) cannot be registered, or ``None`` when it can.
    ``cutoff_allowed``: the record is a metric or an aggregate, whose name may end in
    ``@CUTOFF``."""
    if any(c.isspace() for c in name):
        return (f"{what} {name!r} holds whitespace; a name is one word (write "
                f"{'_'.join(name.split())!r})")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        return f"{what} {name!r} holds a control character; remove it"
    if len(split_outside_brackets(name)) > 1:
        return (f"{what} {name!r} holds a comma outside brackets, at which lists of names "
                "(-m a,b) are split, so it could never be asked for; write "
                f"{name.replace(',', '_')!r}")
    if "@" in name and not (cutoff_allowed and _CUT.match(name)):
        where = ("a metric's name may end in @CUTOFF, a number (as max_item_share@10); "
                 "a family (name@k) is registered as a MetricFamily" if cutoff_allowed
                 else "'@' separates a metric family's name from its cut-off, and this "
                 "name is not a metric's")
        return f"{what} {name!r} holds '@' where the syntax allows none: {where}"
    return None


def names_problem(rec: Any, cls: str, cutoff_allowed: bool) -> str | None:
    """Why the name or an alias of the record ``rec`` (of class ``cls``) cannot be
    registered (:func:`name_problem`), or ``None``."""
    aliases = getattr(rec, "aliases", ())
    names = [("name", rec.name)] + ([("alias", a) for a in aliases if isinstance(a, str)]
                                    if isinstance(aliases, tuple | list) else [])
    for field, name in names:
        problem = name_problem(name, f"{cls} {rec.name!r}: {field}",
                               cutoff_allowed=cutoff_allowed)
        if problem is not None:
            return problem
    return None


__all__ = ["name_problem", "names_problem"]
