"""The workbench's pages: plain HTML, every text escaped, answers' Markdown rendered with raw
HTML, links and images off (markdown-it), the page's data for the script in a JSON block with
`<` escaped, the script and stylesheet served by the app (no CDN). Every task's page shows the
topic (narrative and numbered sub-narratives) and a key map beside the work."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from markdown_it import MarkdownIt

from nuggetizer.workbench.tasks import TITLES

# CommonMark without raw HTML, links, autolinks or images: an answer's markup shows as text,
# and nothing in an answer can point the assessor's browser anywhere
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "breaks": True}).disable(
    ["link", "image", "autolink", "html_inline", "html_block"])


def e(value: Any) -> str:
    """Text as HTML (quotes too)."""
    return escape(str(value), quote=True)


def markdown(text: str) -> str:
    """An answer's Markdown as safe HTML (headings, lists, emphasis; no HTML, no links)."""
    return _MARKDOWN.render(text)


def page(title: str, body: str, *, base: str, csrf: str = "", who: str = "",
         role: str = "", data: Mapping[str, Any] | None = None) -> str:
    """A whole page; `data` is handed to the script (every page with a form loads it)."""
    logout = (f'<form method="post" action="{e(base)}/logout"><input type="hidden" '
              f'name="csrf" value="{e(csrf)}"><span>{e(who)}</span> '
              '<button>Log out</button></form>') if who else ""
    links = (f'<a href="{e(base)}/">Projects</a><a href="{e(base)}/accounts">Accounts</a>'
             if role == "organizer" else f'<a href="{e(base)}/">My items</a>' if who else "")
    blob = json.dumps(dict(data or {}), ensure_ascii=False).replace("<", "\\u003c")
    script = (f'<script id="wb-data" type="application/json">{blob}</script>'
              f'<script src="{e(base)}/static/workbench.js" defer></script>')
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="csrf" content="{e(csrf)}"><title>{e(title)} · Workbench</title>'
            f'<link rel="stylesheet" href="{e(base)}/static/workbench.css"></head><body>'
            f'<header><strong>Workbench</strong>{links}<span id="status" role="status">'
            f"</span>{logout}</header><main>{body}</main>{script}</body></html>")


def login_form(base: str, csrf: str, error: str = "", invite: str | None = None,
               after: str = "") -> str:
    """The login form (with where to go back to), or an invitation's set-a-password form
    (the password twice)."""
    action = f"{base}/invite/{invite}" if invite else f"{base}/login"
    if invite:
        fields = ('<p><label>Password <input type="password" name="password" '
                  'autocomplete="new-password" minlength="8" autofocus required></label></p>'
                  '<p><label>The same password again <input type="password" name="again" '
                  'autocomplete="new-password" minlength="8" required></label></p>')
    else:
        fields = ('<p><label>Name <input name="name" autocomplete="username" autofocus '
                  'required></label></p><p><label>Password <input type="password" '
                  'name="password" autocomplete="current-password" required></label></p>'
                  f'<input type="hidden" name="next" value="{e(after)}">')
    what = "Choose a password" if invite else "Log in"
    return (f"<h1>{e(what)}</h1>" + (f'<p class="error" role="alert">{e(error)}</p>'
                                     if error else "") +
            f'<form method="post" action="{e(action)}" class="box narrow">'
            f'<input type="hidden" name="csrf" value="{e(csrf)}">{fields}'
            f"<button>{e(what)}</button></form>")


SHOWN_AS = {"A": "Answer 1", "B": "Answer 2", "tie": "Tie"}  # a battle's verdicts, as shown
KEY_NAMES = {"A": "Answer 1 is better", "B": "Answer 2 is better", "tie": "a tie"}


def label_name(label: str) -> str:
    """A label as a page shows it ("partial support", a battle's "Answer 1")."""
    return SHOWN_AS.get(label, label.replace("_", " "))


def topic_block(topic: Mapping[str, Any]) -> str:
    """The topic: its id, narrative and numbered sub-narratives."""
    subs = "".join(f"<li>{e(s)}</li>" for s in topic.get("sub_narratives", []))
    return (f'<section class="box topic" id="topic"><h2>Topic {e(topic.get("qid", ""))}</h2>'
            f'<div class="narrative">{e(topic.get("narrative", ""))}</div>' +
            (f'<h3>Sub-narratives</h3><ol class="subs">{subs}</ol>' if subs else "") +
            "</section>")


def keymap(task: str, labels: Sequence[str] = ()) -> str:
    """The keys of a task's page, always in view beside the work (? hides or shows it)."""
    keys: list[tuple[str, str]] = [("j / ↓", "next row"), ("k / ↑", "previous row")]
    if task == "postedit":
        keys += [("v", "vital"), ("o", "okay"), ("1–9", "sub-narrative of the row"),
                 ("0", "no sub-narrative"), ("e", "edit the text (Enter keeps, Esc undoes)"),
                 ("Ctrl+Enter", "split at the cursor (while editing)"), ("a", "add a nugget"),
                 ("d", "delete the row"), ("m", "merge with the next row")]
    else:
        keys += [(str(k), KEY_NAMES.get(label, label.replace("_", " ")))
                 for k, label in enumerate(labels, 1)]
        if task == "assign":
            keys.append(("s", "supporting span: the selected text (or type it)"))
    keys += [("n", "next item to do"), ("p", "previous item"), ("?", "hide or show the keys")]
    rows = "".join(f"<dt><kbd>{e(k)}</kbd></dt><dd>{e(v)}</dd>" for k, v in keys)
    return f'<aside id="keys" class="box" aria-label="keys"><h2>Keys</h2><dl>{rows}</dl></aside>'


def _labels(q: Mapping[str, Any], chosen: Any, suggestion: Any) -> str:
    out = []
    for k, label in enumerate(q["labels"], 1):
        checked = " checked" if chosen == label else ""
        out.append(f'<label><input type="radio" name="{e(q["key"])}" value="{e(label)}"'
                   f'{checked}><kbd>{k}</kbd> {e(label_name(label))}</label>')
    hint = (f'<span class="suggest">LLM suggests: {e(label_name(suggestion))}</span>'
            if suggestion is not None else "")
    return f'<div class="labels">{"".join(out)}{hint}</div>'


def question_block(q: Mapping[str, Any], value: Mapping[str, Any],
                   suggestions: Mapping[str, Any] | None, number: int = 0) -> str:
    """One question: its text, the texts it is about, its labels (and span)."""
    key = q["key"]
    done = " done" if key in value else ""
    panes = "".join(f'<div class="pane"><h3>{e(h)}</h3><div class="md">{markdown(t)}</div>'
                    "</div>" if h.startswith("Answer") else
                    f'<div class="pane"><h3>{e(h)}</h3><div class="text">{e(t)}</div></div>'
                    for h, t in q["panes"])
    context = f'<div class="ctx">{e(q["context"])}</div>' if q["context"] else ""
    span = (f'<input class="span" name="span:{e(key)}" aria-label="supporting span" '
            'placeholder="supporting span: select it in the answer, then press s" '
            f'value="{e(value.get("span:" + key, ""))}">' if q["span"] else "")
    head = f'<span class="num">{number}</span>' if number else ""
    return (f'<div class="box q{done}" data-key="{e(key)}">{head}<div class="text">'
            f'{e(q["text"])}</div>{context}' +
            (f'<div class="panes">{panes}</div>' if panes else "") +
            _labels(q, value.get(key), (suggestions or {}).get(key)) + span + "</div>")


def item_page(task: str, shown: Mapping[str, Any], value: Mapping[str, Any],
              suggestions: Mapping[str, Any] | None, action: str, csrf: str,
              place: str = "") -> str:
    """The body of an item's page: the topic, the answer, the questions (a form that also
    posts without the script), the key map."""
    questions = shown.get("questions", [])
    labels = questions[0]["labels"] if questions else []
    head = f'<h1>{e(TITLES[task])} <small class="ctx">{e(place)}</small></h1>'
    context = [topic_block(shown.get("topic", {}))]
    if shown.get("answer") is not None:  # first: the text the questions are about
        context.insert(0, f'<section class="box"><h2>Answer</h2><div class="md" id="answer">'
                          f'{markdown(shown["answer"])}</div></section>')
    for note in shown.get("notes", []):
        context.append(f'<div class="box ctx">not judged: {e(note)}</div>')
    if task == "postedit":
        work = ('<section><h2>Nuggets</h2><div id="nuggets" tabindex="-1"></div>'
                "</section>")
    else:
        many = len(questions) > 1
        blocks = "".join(question_block(q, value, suggestions, k if many else 0)
                         for k, q in enumerate(questions, 1))
        work = (f'<form method="post" action="{e(action)}"><input type="hidden" '
                f'name="csrf" value="{e(csrf)}">{blocks}<button>Save all</button></form>')
    if shown.get("answer") is not None:  # the answer stays in view beside its questions
        body = f'<div class="split"><div class="side">{"".join(context)}</div>' \
               f"<div>{work}</div></div>"
    else:
        body = "".join(context) + work
    return f'<div class="work"><div class="main">{head}{body}</div>' \
           f"{keymap(task, labels)}</div>"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    """An HTML table, every cell escaped."""
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    klass = f' class="{e(cls)}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def queue_summary(base: str, rows: Sequence[tuple[str, str, str, bool, str]]) -> str:
    """An assessor's queue: per project and task, the items done of those assigned and the
    first to do; then every item, folded."""
    groups: dict[tuple[str, str], list[tuple[str, bool, str]]] = {}
    for project, task, qid, done, ref in rows:
        groups.setdefault((project, task), []).append((qid, done, ref))
    summary = []
    for (project, task), found in groups.items():
        first = next((ref for _, done, ref in found if not done), None)
        link = (f'<a href="{e(base)}/item/{e(first)}">next to do</a>' if first else "all done")
        summary.append(f"<tr><td>{e(project)}</td><td>{e(TITLES[task])}</td><td>"
                       f"{sum(d for _, d, _ in found)} of {len(found)}</td><td>{link}</td></tr>")
    every = "".join(
        f"<tr><td>{e(p)}</td><td>{e(TITLES[t])}</td><td>{e(q)}</td><td>"
        f'{"done" if d else "to do"}</td><td><a href="{e(base)}/item/{e(r)}">open</a></td></tr>'
        for p, t, q, d, r in rows)
    return ("<table><thead><tr><th>project</th><th>task</th><th>done</th><th></th></tr>"
            f"</thead><tbody>{''.join(summary)}</tbody></table>"
            f"<details><summary>every item ({len(rows)})</summary><table><thead><tr>"
            "<th>project</th><th>task</th><th>topic</th><th>state</th><th></th></tr></thead>"
            f"<tbody>{every}</tbody></table></details>")
