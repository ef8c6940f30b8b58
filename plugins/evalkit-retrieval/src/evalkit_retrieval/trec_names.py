"""trec_eval's names for the plugin's measures, its nicknames and its ``-m`` syntax.

* :func:`trec_label`: the line name trec_eval prints for a canonical measure
  (``precision@10`` -> ``P_10``, ``iprec@0.5`` -> ``iprec_at_recall_0.50``).
* :func:`expand`: ``-m`` pieces as trec_eval reads them (:func:`measure_request`, the
  plugin's measure syntax, when any piece is one of trec_eval's): the nicknames ``all_trec``,
  ``official`` and ``set``; a measure's parameter list after a ``.`` (``P.5,10``,
  ``ndcg_cut.10,20``, ``iprec_at_recall..10,.20``, ``ndcg.1=3,2=9``,
  ``utility.2,-1,0,0``, ``11pt_avg..25,.5``, ``set_F.0.5``, ``rbp.p=0.8``,
  ``relstring.20``), the first list given for a measure winning as in trec_eval; a
  cut-off measure named bare (``P``) takes trec_eval's default cut-offs. Any other piece
  is left to the registry (ir_measures' and evalkit's names).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalkit.core.metric_names import MeasureRequest, MetricNameError, canonical, parse_name

#: trec_eval's measures in the order it prints them (measures.c), with their defaults
DEFAULT_CUTOFFS: dict[str, tuple[float, ...]] = {
    "iprec_at_recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "Rprec_mult": (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "relative_P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
    "unj": (5, 10, 20),
}
ORDER: tuple[str, ...] = (
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
    "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ORDER,
    "set": ("num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}
#: trec_eval name -> canonical base of the measure (or family)
_BASE: dict[str, str] = {
    "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret", "map": "ap",
    "gm_map": "gm_map", "Rprec": "r_precision", "bpref": "bpref", "recip_rank": "rr",
    "iprec_at_recall": "iprec", "P": "precision", "recall": "recall", "infAP": "infap",
    "gm_bpref": "gm_bpref", "Rprec_mult": "rprec_mult", "utility": "utility",
    "11pt_avg": "11pt_avg", "binG": "bin_g", "G": "g", "ndcg": "ndcg", "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg", "ndcg_cut": "ndcg", "map_cut": "ap", "relative_P": "relative_precision",
    "success": "success", "set_P": "set_p", "set_relative_P": "set_relative_p",
    "set_recall": "set_recall", "set_map": "set_ap", "set_F": "set_f",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret", "rbp": "rbp", "rbp_resid": "rbp_resid",
    "unj": "unj",
}
_CUT_OF = {base: trec for trec, base in _BASE.items() if trec in DEFAULT_CUTOFFS}
_PLAIN_OF = {base: trec for trec, base in _BASE.items() if trec not in DEFAULT_CUTOFFS}
_GAIN_MEASURES = frozenset({"ndcg", "ndcg_rel", "Rndcg", "G", "rbp", "rbp_resid"})
_ATOL = re.compile(r"^\s*([+-]?\d+)")
_INT = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")


def trec_label(name: str) -> str | None:
    """The name trec_eval prints for canonical measure ``name`` with its default
    parameters, or ``None`` when trec_eval has no such measure (``rr@10``,
    ``precision(rel=2)@5``, ``ndcg(dcg=exp-log2)``)."""
    try:
        parsed = parse_name(name)
    except MetricNameError:
        return None
    if parsed is None or parsed.params:
        return None
    if parsed.cutoff is None:
        return _PLAIN_OF.get(parsed.base)
    trec = _CUT_OF.get(parsed.base)
    if trec is None:
        return None
    if isinstance(DEFAULT_CUTOFFS[trec][0], float):
        return f"{trec}_{float(parsed.cutoff):3.2f}"
    return f"{trec}_{parsed.cutoff}" if parsed.cutoff.isdigit() else None


def order_key(label: str) -> tuple[int, float]:
    """Where trec_eval prints a line named ``label`` (its measure, then the cut-off)."""
    matches = [t for t in ORDER if label == t or label.startswith(t + "_")]
    if not matches:
        return len(ORDER), 0.0
    trec = max(matches, key=len)
    rest = label[len(trec) + 1:]
    if trec in DEFAULT_CUTOFFS and rest:
        try:
            return ORDER.index(trec), float(rest)
        except ValueError:
            pass
    return ORDER.index(trec), 0.0


#: the ``all`` lines trec_eval prints before the measures, in its order
HEADER_LINES: tuple[str, ...] = ("runid", "num_q")


@dataclass
class TrecRequest:
    """The measures a list of ``-m`` pieces asks for.

    Attributes:
        names: measure names in the order asked (canonical for trec_eval's syntax).
        labels: canonical name -> the line name trec_eval prints, where it is not
            :func:`trec_label`'s (a parameter list as typed: ``utility_2,-1,0,0``;
            ``relstring_10`` under the key ``relstring`` for ``relstring.10``).
        relstring: how many relevance characters ``relstring`` prints (``None``: not
            asked for).
        header: the ``all`` lines before the measures that are printed (``runid``,
            ``num_q``, in that order): trec_eval prints both for a nickname (``all_trec``,
            ``official``, ``set``), and ``-m runid`` or ``-m num_q`` alone prints that one
            line; evalkit prints both whenever no ``-m`` is given or a piece is not one of
            trec_eval's measures.
        counts: print trec_eval's counts (num_ret, num_rel, num_rel_ret) beside the
            measures, as trec_eval's default does: evalkit's convention for its own names
            (no ``-m``, or a piece that is not one of trec_eval's measures).
        asked: some ``-m`` piece was given (``names`` may still be empty: ``-m runid``).
    """

    names: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    relstring: int | None = None
    header: tuple[str, ...] = HEADER_LINES
    counts: bool = True
    asked: bool = False


def expand(pieces: Sequence[str]) -> TrecRequest:
    """Read ``-m`` pieces (already split by :func:`evalkit.core.metric_names.split_measure_args`)
    as trec_eval does; see the module docstring.

    Raises:
        ValueError: a parameter list trec_eval would refuse (a cut-off <= 0, a cut-off
            given twice, utility without 4 coefficients, parameters on a measure that
            takes none).
    """
    marked: dict[str, str | None] = {}
    slots: list[str] = []  # piece order: a trec measure name, or "=" + a registry name
    header: set[str] = set() if pieces else set(HEADER_LINES)
    counts = not pieces
    for piece in pieces:
        base, dot, params = piece.partition(".")
        if piece in HEADER_LINES:
            header.add(piece)
        elif piece in NICKNAMES:
            header.update(HEADER_LINES)
            for trec in NICKNAMES[piece]:
                _mark(marked, slots, trec, None)
        elif _is_measure(piece):
            if dot and not params:
                raise ValueError(f"-m {piece!r}: the parameter list after '.' is empty")
            _mark(marked, slots, base, params if dot else None)
        else:
            header.update(HEADER_LINES)
            counts = True
            slots.append("=" + piece)
    from evalkit.plugins.default import default_registry

    out = TrecRequest(header=tuple(h for h in HEADER_LINES if h in header), counts=counts,
                      asked=bool(pieces))
    for slot in slots:
        if slot.startswith("="):
            if slot[1:] not in out.names:
                out.names.append(slot[1:])
            continue
        for spelled, label in _expand_one(slot, marked[slot]):
            if spelled == "relstring":
                out.relstring = int(label)
                if marked[slot] is not None:  # trec_eval prints the list as typed
                    out.labels["relstring"] = f"relstring_{marked[slot]}"
                continue
            name = default_registry().resolve(spelled).name
            if name not in out.names:
                out.names.append(name)
            if label != trec_label(name):
                out.labels[name] = label
    return out


def _is_measure(piece: str) -> bool:
    """``piece`` names one of trec_eval's measures, bare or with a parameter list."""
    base, dot, _ = piece.partition(".")
    return piece in _BASE or piece == "relstring" or (bool(dot) and (
        base in _BASE or base == "relstring"))


def is_trec_piece(piece: str) -> bool:
    """``piece`` is written in trec_eval's syntax: one of its measures (with or without
    a parameter list), nicknames, or the ``runid`` / ``num_q`` lines."""
    return piece in HEADER_LINES or piece in NICKNAMES or _is_measure(piece)


#: What the ``runid``, ``num_q`` and ``relstring`` lines need scored: the rankings.
LINES_NEED: tuple[str, ...] = ("num_ret",)


def measure_request(pieces: Sequence[str]) -> MeasureRequest | None:
    """The plugin's measure syntax (``evalkit_register_measure_syntaxes``): the request
    of ``pieces`` read by :func:`expand` when any of them is trec_eval's
    (:func:`is_trec_piece`), for the ``trec`` run format; ``None`` otherwise (the
    registry then resolves the names as typed). ``layout`` holds :class:`TrecRequest`'s
    ``labels``, ``relstring``, ``header`` and ``counts``, and ``lines``: the pieces that
    name a line of the layout (``runid``, ``num_q``, ``relstring``), which only the
    ``trec`` format prints.

    Raises:
        ValueError: as :func:`expand`.
    """
    if not any(is_trec_piece(p) for p in pieces):
        return None
    req = expand(pieces)
    named_lines = [p for p in pieces
                   if p in HEADER_LINES or p.partition(".")[0] == "relstring"]
    layout = {"labels": dict(req.labels), "relstring": req.relstring, "header": req.header,
              "counts": req.counts, "lines": list(dict.fromkeys(named_lines))}
    return MeasureRequest(req.names, req.asked, layout, format="trec", scored=LINES_NEED)


def _mark(marked: dict[str, str | None], slots: list[str], trec: str, params: str | None
          ) -> None:
    if trec not in marked:
        marked[trec] = params
        slots.append(trec)
    elif marked[trec] is None and params is not None:
        marked[trec] = params  # trec_eval: a measure's first parameter list is used


def _atol(text: str) -> int:
    m = _ATOL.match(text)
    return int(m[1]) if m else 0


def _number(trec: str, params: str, text: str) -> float:
    """A parameter that must be a finite number in full (trec_eval's ``atof`` would read
    ``abc`` as 0 and ``5x`` as 5: a typo then scores something else without a word)."""
    if _NUMBER.match(text) is None or not math.isfinite(float(text)):
        raise ValueError(f"-m {trec}.{params}: {text!r} is not a finite number; "
                         "trec_eval's parameters are numbers separated by commas")
    return float(text)


#: measures whose parameters are proportions (recall levels), and those that must be > 0
_UNIT_PARAMS = frozenset({"iprec_at_recall", "11pt_avg"})


def _check_range(trec: str, params: str, values: Sequence[float]) -> None:
    if trec in _UNIT_PARAMS and any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"-m {trec}.{params}: recall levels are between 0 and 1")
    if trec in ("Rprec_mult", "set_F") and any(v < 0 for v in values):
        raise ValueError(f"-m {trec}.{params}: the parameter must be >= 0")


def _expand_one(trec: str, params: str | None) -> list[tuple[str, str]]:
    if trec == "relstring":
        if params is None:
            return [("relstring", "10")]
        length = _number(trec, params, params.split(",")[0])
        if length < 1:
            raise ValueError(f"-m relstring.{params}: the length must be a positive "
                             "number of documents")
        return [("relstring", str(int(length)))]
    base = _BASE[trec]
    if trec in DEFAULT_CUTOFFS:
        floats = isinstance(DEFAULT_CUTOFFS[trec][0], float)
        if params is None:
            cuts: list[float] = list(DEFAULT_CUTOFFS[trec])
        else:
            parts = params.split(",")
            numbers = [_number(trec, params, p) for p in parts]
            _check_range(trec, params, numbers)
            # integer cut-offs are truncated as trec_eval's atol does (ndcg_cut.23.4 is 23)
            cuts = sorted(numbers) if floats else sorted(_atol(p) for p in parts)
            if len(set(cuts)) != len(cuts):
                raise ValueError(f"-m {trec}.{params}: a cut-off is given twice "
                                 "(trec_eval: duplicate cutoffs detected)")
            if not floats and cuts[0] <= 0:
                raise ValueError(f"-m {trec}.{params}: cut-offs must be positive")
        out = []
        for c in cuts:
            name = canonical(base, None, float(c) if floats else int(c))
            out.append((name, f"{trec}_{c:3.2f}" if floats else f"{trec}_{int(c)}"))
        return out
    if params is None:
        return [(canonical(base), trec)]
    label = f"{trec}_{params}"
    values = [p for p in params.split(",")]
    if trec in _GAIN_MEASURES:
        given: dict[str, object] = {}
        if any("=" not in p for p in values):
            raise ValueError(f"-m {trec}.{params}: parameters are label=gain pairs "
                             "(trec_eval: malformed pair parameters)")
        gains = {int(k): _number(trec, params, v)
                 for k, _, v in (p.partition("=") for p in values)
                 if _INT.match(k) and int(k) >= 0}
        if gains and trec != "rbp_resid":
            given["gains"] = gains
        for k, _, v in (p.partition("=") for p in values):
            if k == "p" and trec in ("rbp", "rbp_resid"):
                given["p"] = _number(trec, params, v)
        return [(canonical(base, given), label)]
    numbers = [_number(trec, params, p) for p in values]
    _check_range(trec, params, numbers)
    if trec == "utility":
        if len(numbers) != 4:
            raise ValueError(f"-m utility.{params}: utility takes 4 coefficients")
        coefficients = tuple(numbers)
        shown = None if coefficients == (1.0, -1.0, 0.0, 0.0) else coefficients
        return [(canonical(base, {"coefficients": shown}), label)]
    if trec == "11pt_avg":
        return [(canonical(base, {"recalls": tuple(numbers)}), label)]  # resolved later
    if trec == "set_F":
        return [(canonical(base, {"beta": None if numbers[0] == 1.0 else numbers[0]}), label)]
    raise ValueError(f"-m {trec}.{params}: trec_eval's {trec} takes no parameters")
