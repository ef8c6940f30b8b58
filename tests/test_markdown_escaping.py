"""Markdown text renders as written on GitHub: ``$...$`` is not math, ``@name`` mentions
nobody, ``~`` is not strikethrough. Checked with markdown-it-py and its dollarmath plugin
(the ``$`` syntax GitHub renders) and GitHub's mention rule: ``@`` directly before a name
in the rendered text."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from evalkit.report.escaping import markdown_text

HOSTILE = ["$x$^_%#{}~", "cost $5 and $6", "@octocat please", "team @org/team", "~~gone~~"]


def _render(text: str) -> str:
    md = MarkdownIt("commonmark").use(dollarmath_plugin).enable(["table", "strikethrough"])
    return str(md.render(text))


def test_dollar_is_not_math() -> None:
    assert "math" in _render("$x$")  # the renderer does read math
    for s in HOSTILE[:2]:
        html = _render(markdown_text(s))
        assert "math" not in html and s.split()[0].replace("~", "") in html.replace("~", "")
    assert markdown_text("$x$") == "\\$x\\$"


def test_at_name_mentions_nobody() -> None:
    for s in HOSTILE[2:4]:
        html = _render(markdown_text(s))
        text = re.sub("<[^>]+>", "", html)
        assert not re.search(r"(?<![\w`])@[A-Za-z0-9]", text), text  # GitHub's mention form
        assert text.replace("\u200b", "").strip() == s
    assert markdown_text("a@b") == "a@b" and markdown_text("ndcg@10") == "ndcg@10"
    assert markdown_text("@ alone") == "@ alone"


def test_tilde_is_not_strikethrough() -> None:
    html = _render(markdown_text(HOSTILE[4]))
    assert "<s>" not in html and "<del>" not in html and "~~gone~~" in html
