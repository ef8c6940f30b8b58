"""What to pass instead: the messages refusing an input file that is another kind of input.

A command given one kind of file where it takes another (``evalkit eval qrels.txt``, a
run artifact as ``--checks``) says what :func:`evalkit.io.input_files.sniff` found it to
be and where that file is passed: :func:`not_a_run_message`, :func:`not_qrels_message`,
:func:`not_artifact_message` and, for the YAML and JSON Lines files of the other options,
:func:`swapped_input_message`. The messages name the command line's options
(``--qrels``), which the Python functions take under the same names. Only the standard
library and :mod:`evalkit.io` are imported.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.io.input_files import QRELS_LINE, RUN_LINE, YAML_ROLES, Sniffed, sniff, utf8_fix

#: each file a reader refuses others in the place of (:func:`swapped_input_message`):
#: ``role: (what it is, an example)``; the YAML ones are :data:`YAML_ROLES`' too
TAKES: dict[str, tuple[str, str]] = {
    "checks": (YAML_ROLES["checks"][0], "checks: [{metric: ndcg@10, op: '>=', threshold: 0.5}]"),
    "config": (YAML_ROLES["config"][0],
               "an evalkit.yaml with the keys goldens, target and output"),
    "collections": (YAML_ROLES["collections"][0],
                    "collections: [{name: dl19, baseline: a.run, candidate: b.run}]"),
    "goldens": ("a golden set (JSON Lines, YAML or CSV cases with id and query)",
                '{"id": "c1", "query": "..."} per line, or cases: [{id: c1, query: ...}]'),
    "labels": ("a labels file (JSON Lines) or a golden file with labels",
               '{"id": "q1", "labels": {"correctness": 4}}'),
}

#: the kinds of :func:`sniff` (``yaml:ROLE`` for an evalkit YAML file) a role's reader
#: takes besides its own YAML: a golden set in any of its formats is left to the golden
#: reader (the suffix picks the format), and labels come from a labels file or a golden set
_ALSO_TAKES: dict[str, frozenset[str]] = {
    "goldens": frozenset({"goldens"}),
    "labels": frozenset({"labels", "goldens", "yaml:goldens"}),
}

#: where each kind of input :func:`sniff` tells apart is passed, for a message refusing it
#: as another (``"artifact"``, ``"run"``, ``"qrels"``, ``"goldens"``)
PASSED_AS: dict[str, str] = {
    "artifact": "pass it as --run (or --baseline) to `evalkit gate`, or as a run to "
                "`evalkit compare` or `evalkit eval`",
    "run": "score it with `evalkit eval RUN --qrels QRELS`",
    "qrels": "pass it as --qrels",
    "goldens": YAML_ROLES["goldens"][1],
    "labels": "pass it as --labels (`evalkit agreement`, `evalkit gate`, `evalkit compare`, "
              "`evalkit run --ppi`)",
}


def _damaged(where: str, found: Sniffed) -> str:
    """The message for a damaged gzip file: what is wrong and where, and the fix."""
    return f"{where}: {found.looks_like}; copy or download the file again"


def _cut(path: Path, found: Sniffed) -> str:
    """The message for a file whose only JSON line ends mid-value."""
    return (f"{_at(path, found)}: {found.looks_like}; write or copy the file again "
            "(a run artifact's first line is its whole header object)")


def _at(path: Path, found: Sniffed) -> str:
    """``path:line`` of the first data line :func:`sniff` read (``path`` without one):
    where a message about that line (a run artifact's header) points."""
    return str(path) if found.line is None else f"{path}:{found.line}"


def _refused(path: Path, found: Sniffed) -> str:
    """The message for a first line a limit refuses, as the artifact reader names it."""
    return f"{_at(path, found)}: {found.looks_like}"


def _late_header(path: Path, found: Sniffed) -> str:
    """The message for a run header that comment lines precede (:func:`sniff` skips
    them; the artifact reader does not)."""
    return (f"{_at(path, found)}: a run artifact's header after comment lines; an artifact "
            "begins with its header line: remove the lines before it")


def _not_utf8(what: str, path: Path, found: Sniffed) -> str:
    return f"{what}{path}:{found.line}: {found.looks_like}. {utf8_fix(path)}"


def not_a_run_message(path: Path, found: Sniffed, *, qrels_given: bool) -> str:
    """Why ``path`` cannot be scored as a run, and what to pass instead."""
    if found.kind == "not_utf8":
        return _not_utf8("", path, found)
    if found.kind == "damaged":
        return _damaged(str(path), found)
    if found.kind == "cut":
        return _cut(path, found)
    if found.kind == "refused":
        return _refused(path, found)
    if found.kind == "artifact":
        return _late_header(path, found)
    takes = (f"a TREC run file ({RUN_LINE}) with --qrels QRELS, or a run artifact (written "
             "by `evalkit eval --save` or `evalkit run`)")
    if found.kind == "run":
        return (f"{path} is a TREC run file; pass --qrels QRELS to score it (run artifacts "
                "saved with --save need no qrels)")
    if found.kind == "qrels":
        if qrels_given:
            return (f"{path} looks like {found.looks_like}, not a run; were RUN and --qrels "
                    "swapped? RUN is the ranked list (qid Q0 docno rank score tag)")
        return (f"{path} looks like {found.looks_like}, not a run. Pass it as --qrels "
                f"{path} and give the run file ({RUN_LINE}) as RUN")
    if found.kind == "goldens":
        return (f"{path} looks like {found.looks_like}, not a run. A golden set is run "
                "against a target with `evalkit run` (see evalkit.yaml); this command takes "
                + takes)
    if found.kind == "text":
        return (f"{path} is {found.looks_like}; a TREC run line has 6 ({RUN_LINE}). This "
                f"command takes {takes}")
    if found.kind == "json":
        return f"{_at(path, found)}: {found.looks_like}, not a run. This command takes {takes}"
    if found.kind in ("yaml", "labels"):
        return (f"{path} is {found.looks_like}, not a run{_yaml_use(found)}. This command "
                f"takes {takes}")
    return f"{path} is {found.looks_like}. This command takes {takes}"


def _yaml_use(found: Sniffed) -> str:
    """``"; pass it as ..."`` for an evalkit YAML file or a labels file :func:`sniff`
    named, else ``""``."""
    if found.kind == "labels":
        return f"; {PASSED_AS['labels']}"
    return f"; {YAML_ROLES[found.role][1]}" if found.kind == "yaml" and found.role else ""


def swapped_input_message(path: str | Path, role: str, label: str) -> str | None:
    """Why ``path``, given as ``label`` (``"--checks"``, ``"--labels"``), is not the file
    of ``role`` (a key of :data:`TAKES`: a checks file, an eval config, a collections
    file, a YAML golden set, a labels file) but another kind of input :func:`sniff`
    recognises (a run artifact, a TREC run or qrels file, a golden set in JSON Lines, the
    rows of an artifact, an evalkit YAML file of another role), with where that file is
    passed and what ``label`` takes; None when it may be the file (its reader has the
    precise message) or is not a regular file (standard input is not read twice)."""
    p = Path(path)
    if str(path) in ("-", "/dev/stdin") or not p.is_file():
        return None
    found = sniff(p)
    also = _ALSO_TAKES.get(role, frozenset())
    if found.kind in also:
        return None
    what, example = TAKES[role]
    takes = f"{label} takes {what}, e.g. {example}"
    if found.kind == "yaml":
        if not found.role or found.role == role or f"yaml:{found.role}" in also:
            return None
        return f"{p} is {found.looks_like}, not {what}{_yaml_use(found)}. {takes}"
    if found.kind == "json" and found.looks_like.startswith("the rows of a run artifact"):
        return (f"{_at(p, found)}: {found.looks_like}, not {what}; a run artifact begins "
                f"with its header line. {takes}")
    if found.kind not in PASSED_AS:
        return None
    return f"{_at(p, found)}: {found.looks_like}, not {what}: {PASSED_AS[found.kind]}. {takes}"


def not_qrels_message(path: Path, found: Sniffed) -> str | None:
    """Why ``path`` cannot be read as qrels, or None when it may be qrels."""
    if found.kind == "not_utf8":
        return _not_utf8("--qrels ", path, found)
    if found.kind in ("qrels", "text", "missing", "directory", "unreadable"):
        return None  # the loader (or require_file) has the precise message
    if found.kind == "damaged":
        return _damaged(f"--qrels {path}", found)
    if found.kind == "cut":
        return f"--qrels {_cut(path, found)}"
    if found.kind == "refused":
        return f"--qrels {_refused(path, found)}"
    if found.kind == "run":
        return (f"--qrels {path} looks like {found.looks_like}, not qrels; were RUN and "
                f"--qrels swapped? Qrels lines are `{QRELS_LINE}`")
    where = f"{_at(path, found)}:" if found.kind == "json" else f"{path} is"
    return (f"--qrels {where} {found.looks_like}, not TREC qrels{_yaml_use(found)}. Pass a "
            f"qrels file with lines `{QRELS_LINE}`")


def not_artifact_message(path: Path, what: str, fix: str | None = None) -> str:
    """Why ``path`` (the ``what``: "run", "baseline") is not a run artifact, and ``fix``
    (default: how to make one from a TREC run)."""
    found = sniff(path)
    if fix is None:
        fix = (f"Score a TREC run first: evalkit eval RUN --qrels QRELS --save "
               f"{path.stem}.jsonl (or write one with evalkit run)")
    if found.kind in ("directory", "missing"):
        return f"{what} {path}: {found.looks_like}; pass a run artifact file"
    if found.kind == "damaged":
        return _damaged(f"{what} {path}", found)
    if found.kind == "cut":
        return f"{what} {_cut(path, found)}"
    if found.kind == "refused":
        return f"{what} {_refused(path, found)}"
    if found.kind == "artifact":
        return f"{what} {_late_header(path, found)}"
    if found.kind == "run":
        return f"{what} {path} is a TREC run file, not an evalkit run artifact. {fix}"
    if found.kind == "qrels":
        return (f"{what} {path} looks like {found.looks_like}: the judgments, not a run. "
                f"Score the run against them and save an artifact: evalkit eval RUN --qrels "
                f"{path} --save run.jsonl")
    if found.kind in ("json", "goldens"):
        where = f"{_at(path, found)}:" if found.kind == "json" else f"{path} is"
        return (f"{what} {where} {found.looks_like}, not an evalkit run artifact (whose "
                f"first line is a header object with \"type\": \"header\"). {fix}")
    return (f"{what} {path} is {found.looks_like}, not an evalkit run artifact"
            f"{_yaml_use(found)}. {fix}")
