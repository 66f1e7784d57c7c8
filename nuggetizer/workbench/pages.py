"""The workbench's pages: plain HTML, every text escaped, the page's data for the script in a
JSON block with `<` escaped, the script and stylesheet served by the app (no CDN)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from nuggetizer.workbench.tasks import TITLES


def e(value: Any) -> str:
    """Text as HTML (quotes too)."""
    return escape(str(value), quote=True)


def page(title: str, body: str, *, base: str, csrf: str = "", who: str = "",
         data: Mapping[str, Any] | None = None) -> str:
    """A whole page; `data` is handed to the script."""
    logout = (f'<form method="post" action="{e(base)}/logout"><input type="hidden" '
              f'name="csrf" value="{e(csrf)}"><span>{e(who)}</span> '
              '<button>Log out</button></form>') if who else ""
    script = ""
    if data is not None:
        blob = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
        script = (f'<script id="wb-data" type="application/json">{blob}</script>'
                  f'<script src="{e(base)}/static/workbench.js" defer></script>')
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f'<meta name="csrf" content="{e(csrf)}"><title>{e(title)}</title>'
            f'<link rel="stylesheet" href="{e(base)}/static/workbench.css"></head><body>'
            f'<header><a href="{e(base)}/">Workbench</a><span id="status"></span>{logout}'
            f"</header><main>{body}</main>{script}</body></html>")


def login_form(base: str, csrf: str, error: str = "", invite: str | None = None) -> str:
    """The login form, or an invitation's set-a-password form."""
    action = f"{base}/invite/{invite}" if invite else f"{base}/login"
    name = "" if invite else ('<p><label>Name <input name="name" autocomplete="username" '
                              'autofocus required></label></p>')
    what = "Choose a password" if invite else "Log in"
    return (f"<h1>{e(what)}</h1>" + (f'<p class="suggest">{e(error)}</p>' if error else "") +
            f'<form method="post" action="{e(action)}" class="box">'
            f'<input type="hidden" name="csrf" value="{e(csrf)}">{name}'
            '<p><label>Password <input type="password" name="password" '
            'autocomplete="current-password" required></label></p>'
            f"<button>{e(what)}</button></form>")


SHOWN_AS = {"A": "Answer 1", "B": "Answer 2"}  # a battle's verdicts, as the page names them


def _labels(q: Mapping[str, Any], chosen: Any, suggestion: Any) -> str:
    out = []
    for k, label in enumerate(q["labels"], 1):
        checked = " checked" if chosen == label else ""
        out.append(f'<label><input type="radio" name="{e(q["key"])}" value="{e(label)}"'
                   f"{checked}>{k} {e(SHOWN_AS.get(label, label))}</label>")
    hint = (f'<span class="suggest">LLM suggests: {e(suggestion)}</span>'
            if suggestion is not None else "")
    return f'<div class="labels">{"".join(out)}{hint}</div>'


def question_block(q: Mapping[str, Any], value: Mapping[str, Any],
                   suggestions: Mapping[str, Any] | None) -> str:
    """One question: its text, the texts it is about, its labels (and span)."""
    key = q["key"]
    done = " done" if key in value else ""
    panes = "".join(f'<div class="pane"><h2>{e(h)}</h2><div class="text">{e(t)}</div></div>'
                    for h, t in q["panes"])
    context = f'<div class="ctx">{e(q["context"])}</div>' if q["context"] and not q["panes"] \
        else ""
    span = (f'<input class="span" name="span:{e(key)}" placeholder="supporting span (select '
            f'text in the answer, then s)" value="{e(value.get("span:" + key, ""))}">'
            if q["span"] else "")
    return (f'<div class="box q{done}" data-key="{e(key)}"><div class="text">{e(q["text"])}'
            f'</div>{context}' + (f'<div class="panes">{panes}</div>' if panes else "") +
            _labels(q, value.get(key), (suggestions or {}).get(key)) + span + "</div>")


HELP = {
    "postedit": "j/k move · e edit (Enter done, Ctrl+Enter split at the cursor) · v vital · o "
                "okay · a add · d delete · m merge with the next · n next item",
    "assign": "j/k move · 1 support, 2 partial, 3 not · s the span (select text first) · n "
              "next item",
}
DEFAULT_HELP = "j/k move · 1/2/3 choose · n next item · every choice is saved at once"


def item_page(task: str, shown: Mapping[str, Any], value: Mapping[str, Any],
              suggestions: Mapping[str, Any] | None, action: str, csrf: str) -> str:
    """The body of an item's page: the topic, the answer, the questions (a form that also
    posts without the script)."""
    parts = [f"<h1>{e(TITLES[task])}</h1>",
             f'<p class="hint">{e(HELP.get(task, DEFAULT_HELP))}</p>',
             f'<div class="box"><h2>Topic</h2><div class="text">{e(shown.get("query", ""))}'
             "</div></div>"]
    if shown.get("answer") is not None:
        parts.append(f'<div class="box"><h2>Answer</h2><div class="text" id="answer">'
                     f'{e(shown["answer"])}</div></div>')
    for note in shown.get("notes", []):
        parts.append(f'<div class="box ctx">not judged: {e(note)}</div>')
    if task == "postedit":
        parts.append('<div id="nuggets" tabindex="-1"></div>')
        return "".join(parts)
    questions = "".join(question_block(q, value, suggestions) for q in shown["questions"])
    parts.append(f'<form method="post" action="{e(action)}"><input type="hidden" '
                 f'name="csrf" value="{e(csrf)}">{questions}'
                 '<button>Save all</button></form>')
    return "".join(parts)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An HTML table, every cell escaped."""
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
