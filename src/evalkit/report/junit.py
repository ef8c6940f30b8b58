"""JUnit XML reporter: one ``<testcase>`` per check (or metric), so CI systems list gate
results natively.

Blocking checks that fail get ``<failure>``, blocking checks that could not be judged get
``<error>``; warn-level checks never fail the suite (their verdict and reason go to
``<system-out>``, prefixed ``warning:``). The counts always agree with the gate's exit
code: a gate that exits 2 (or 1) although no check's testcase carries an ``<error>``
(``<failure>``), as when incomplete evidence stops a gate of warn-level checks only, gets
one more testcase, named ``gate``, that carries it with the reason (the ``incomplete:``
paragraphs, else the summary). Comparisons produce passing test cases whose
``<system-out>`` holds the numbers.

Text from the report goes through :func:`evalkit.report.escaping.xml_text` (the characters
XML 1.0 cannot hold, and bidirectional overrides, written as their escapes) and the XML
library's escaping, so the document always parses and shows each name as written.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from evalkit.report.escaping import xml_text
from evalkit.report.formatting import decimal, signed
from evalkit.report.model import Report, ReportRow, as_report


def _text(s: str) -> str:
    """An attribute value: one line."""
    return xml_text(s)


def _body(s: str) -> str:
    """Element text: its lines kept."""
    return xml_text(s, breaks=None)


def _case(suite: ET.Element, report: Report, row: ReportRow) -> None:
    classname = f"evalkit.{report.kind}.{report.subject}"
    tc = ET.SubElement(suite, "testcase", name=_text(row.name), classname=_text(classname),
                       time="0")
    props = ET.SubElement(tc, "properties")
    for key, value in (("metric", row.metric), ("status", row.status), ("level", row.level),
                       ("coverage", row.coverage), ("rule", row.rule),
                       ("wins/ties/losses", row.wins_ties_losses)):
        if value:
            ET.SubElement(props, "property", name=key, value=_text(value))
    first = row.detail.split("; ")[0] if row.detail else row.status
    if row.failed:
        el = ET.SubElement(tc, "failure", message=_text(first), type=_text(row.status))
        el.text = _body(row.detail)
    elif row.errored:
        el = ET.SubElement(tc, "error", message=_text(first), type=_text(row.status))
        el.text = _body(row.detail)
    out = f"{row.name}: {row.status}" + (f" ({row.coverage})" if row.coverage else "")
    if row.detail:
        out += f"\n{row.detail}"
    if row.wins_ties_losses:
        out += f"\nwins/ties/losses (candidate better/equal/worse): {row.wins_ties_losses}"
    for label, moved in (("up", row.top_gains), ("down", row.top_losses)):
        for m in moved:
            out += (f"\nmoved {label}: query {m.id} {decimal(m.baseline)} -> "
                    f"{decimal(m.candidate)} ({signed(m.diff)})" + (f" {m.text}" if m.text else ""))
    if row.level == "warn" and row.status != "pass":
        out = "warning: " + out
    ET.SubElement(tc, "system-out").text = _body(out)


def _gate_case(report: Report, failures: int, errors: int) -> ReportRow | None:
    """The gate-level testcase of a gate whose exit code no check's testcase carries
    (exit 2 without an ``<error>``, exit 1 without a ``<failure>``), else None."""
    code = report.exit_code
    if report.kind != "gate" or code is None or (code == 2 and errors) or (
            code == 1 and failures) or code not in (1, 2):
        return None
    incomplete = [n.removeprefix("incomplete: ") for n in report.notes
                  if n.startswith("incomplete: ")]
    return ReportRow(name="gate", status="error" if code == 2 else "fail", metric="", level="",
                     detail="; ".join([report.summary, *incomplete]),
                     failed=code == 1, errored=code == 2)


def render_junit(obj: Any) -> str:
    """The report as JUnit XML (``<testsuites>`` with one ``<testsuite>``); a gate's
    ``failures`` and ``errors`` counts agree with its exit code (see the module)."""
    report = as_report(obj)
    failures = sum(1 for r in report.rows if r.failed)
    errors = sum(1 for r in report.rows if r.errored)
    extra = _gate_case(report, failures, errors)
    rows = (*report.rows, *([extra] if extra is not None else []))
    failures += int(extra is not None and extra.failed)
    errors += int(extra is not None and extra.errored)
    name = f"{report.title}: {report.subject}" + (
        f" vs {report.reference}" if report.reference else "")
    attrs = {"name": _text(name), "tests": str(len(rows)), "failures": str(failures),
             "errors": str(errors), "skipped": "0", "time": "0"}
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", attrs)
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="status", value=_text(report.status))
    if report.exit_code is not None:
        ET.SubElement(props, "property", name="exit_code", value=str(report.exit_code))
    ET.SubElement(props, "property", name="summary", value=_text(report.summary))
    if report.description:  # how a comparison was tested
        ET.SubElement(props, "property", name="test", value=_text(report.description))
    for row in rows:
        _case(suite, report, row)
    if report.notes:
        ET.SubElement(suite, "system-out").text = _body("\n".join(report.notes))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(
        root, encoding="unicode") + "\n"
