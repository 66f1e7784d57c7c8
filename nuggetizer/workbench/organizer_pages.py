"""The organizer's pages as HTML: each a view of what a campaign operation returns
(campaign.py) and a form that calls one; every text escaped, every form with its CSRF token."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from nuggetizer.compare.judges import JudgesAgreement
from nuggetizer.workbench.adjudicate import Disagreement
from nuggetizer.workbench.board import Board
from nuggetizer.workbench.campaign import AccountRow, Logins
from nuggetizer.workbench.pages import e, label_name, markdown, table, topic_block
from nuggetizer.workbench.progress import Progress
from nuggetizer.workbench.store import Project
from nuggetizer.workbench.tasks import TASKS, TITLES

FILE_FIELDS = (("topics", "Topics (TSV qid, narrative; or a narratives JSONL)", True),
               ("narratives", "Sub-narratives (narratives JSONL; else from the nuggets)",
                False),
               ("nuggets", "Nuggets (post-editing, assignment)", False),
               ("corpus", "Passages (JSONL: the texts answers cite, for support)", False),
               ("rubrics", "Rubrics (rubric grading)", False))


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else ""


def _num(x: float | None, digits: int = 1) -> str:
    return "" if x is None or x != x else f"{x:.{digits}f}"


def form(action: str, csrf: str, inner: str, button: str, *, cls: str = "",
         multipart: bool = False, confirm: str = "") -> str:
    """A POST form with its CSRF token (`confirm`: a question the script asks first)."""
    enc = ' enctype="multipart/form-data"' if multipart else ""
    klass = f' class="{e(cls)}"' if cls else ""
    ask = f' data-confirm="{e(confirm)}"' if confirm else ""
    return (f'<form method="post" action="{e(action)}"{enc}{klass}{ask}><input type="hidden" '
            f'name="csrf" value="{e(csrf)}">{inner}<button>{e(button)}</button></form>')


def said(message: str, error: bool = False) -> str:
    """A message above a page's content."""
    if not message:
        return ""
    return f'<p class="{"error" if error else "said"}" role="status">{e(message)}</p>'


def logins_box(base: str, csrf: str, found: Logins, full: bool = False) -> str:
    """What the organizer is told of the last day's logins: failures, lockouts, what is
    locked now (with a button to unlock each), and (on the accounts page) the latest."""
    if not (found.failures or found.locked or found.lockouts):
        return "" if not full else '<p class="ctx">No failed logins in the last day.</p>'
    parts = [f'<section class="box alert" id="logins"><h2>Logins</h2><p>{found.failures} '
             f"failed logins and {found.lockouts} lockouts in the last day"
             + (f"; {found.refused} attempts refused while locked (this server)"
                if found.refused else "") + "</p>"]
    for lock in found.locked:
        parts.append(form(f"{base}/accounts/unlock", csrf,
                          f'<input type="hidden" name="key" value="{e(lock.key)}">'
                          f"<span>{e(lock.key)} locked until {e(_when(lock.until))} "
                          f"(lockout {lock.strikes} in a row)</span> ", "Unlock",
                          cls="inline"))
    if full and found.latest:
        parts.append(table(("when", "name", "client"),
                           [(_when(w), n, c) for w, n, c in found.latest]))
    elif not full:
        parts.append(f'<p><a href="{e(base)}/accounts#logins">see the accounts</a></p>')
    return "".join(parts) + "</section>"


def home(base: str, csrf: str, projects: Sequence[tuple[Project, Progress]],
         found: Logins, message: str = "") -> str:
    """The organizer's home: the projects with their progress, the logins' news."""
    rows = []
    for project, done in projects:
        assigned = sum(r[2] for r in done.by_assessor)
        finished = sum(r[3] for r in done.by_assessor)
        p = f"{base}/project/{project.id}"
        links = " · ".join(f'<a href="{e(p + path)}">{e(what)}</a>' for path, what in (
            ("", "progress"), ("/assign", "assignment"), ("/board", "board"),
            ("/adjudicate", "adjudication"), ("/import", "import"),
            ("/export.zip", "export")))
        rows.append(f'<tr><td><a href="{e(p)}">{e(project.name)}</a></td><td>'
                    f'{e(", ".join(project.settings.get("tasks", [])))}</td>'
                    f"<td>{finished} of {assigned}</td><td>{links}</td></tr>")
    listing = ("<table><thead><tr><th>project</th><th>tasks</th><th>assignments done</th>"
               f"<th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>" if rows else
               "<p>No project yet.</p>")
    return (f"<h1>Projects</h1>{said(message)}{logins_box(base, csrf, found)}"
            f'<p><a class="button" href="{e(base)}/projects/new">New project</a> '
            f'<a class="button" href="{e(base)}/accounts">Accounts</a></p>{listing}')


def _file_field(name: str, label: str, required: bool, value: str, uploads: bool) -> str:
    upload = (f' <label class="ctx">or upload <input type="file" name="upload:{e(name)}">'
              "</label>" if uploads else "")
    star = " *" if required else ""
    return (f'<p><label>{e(label)}{star}<br><input name="{e(name)}" list="allowed" '
            f'value="{e(value)}" size="70" placeholder="a path the server may read"></label>'
            f"{upload}</p>")


def new_project(base: str, csrf: str, allowed: Sequence[str], assessors: Sequence[str],
                values: Mapping[str, Any], uploads: bool, error: str = "") -> str:
    """The form that makes a project from a track's files: paths from the folders the
    server may read (listed), or uploads."""
    def checked(name: str, value: str) -> str:
        given = values.get(name, [])
        given = given if isinstance(given, list) else [given]
        return " checked" if value in given else ""
    datalist = "".join(f'<option value="{e(p)}">' for p in allowed)
    runs = values.get("runs", [])
    runs = runs if isinstance(runs, list) else [runs]
    run_options = "".join(f'<option value="{e(p)}"{" selected" if p in runs else ""}>{e(p)}'
                          "</option>" for p in allowed if ".jsonl" in p)
    tasks = "".join(f'<label><input type="checkbox" name="tasks" value="{t}"'
                    f'{checked("tasks", t)}> {e(TITLES[t])}</label> ' for t in TASKS)
    people = "".join(f'<label><input type="checkbox" name="assessors" value="{e(a)}"'
                     f'{checked("assessors", a)}> {e(a)}</label> ' for a in assessors)
    inner = (f'<datalist id="allowed">{datalist}</datalist>'
             f'<p><label>Name *<br><input name="name" value="{e(values.get("name", ""))}" '
             'required maxlength="120"></label></p>'
             f"<fieldset><legend>Tasks *</legend>{tasks}</fieldset>"
             + "".join(_file_field(n, label, req, str(values.get(n, "")), uploads)
                       for n, label, req in FILE_FIELDS)
             + f'<p><label>Runs (answers; several)<br><select name="runs" multiple size="6">'
               f"{run_options}</select></label>"
             + (' <label class="ctx">or upload <input type="file" name="upload:runs" '
                "multiple></label>" if uploads else "") + "</p>"
             '<p><label>Rubric grading <select name="grading"><option>binary</option>'
             f'<option{" selected" if values.get("grading") == "ternary" else ""}>ternary'
             '</option></select></label> <label>Seed (which run a battle shows first) '
             f'<input name="seed" type="number" value="{e(values.get("seed", "0"))}" '
             'min="0"></label> <label><input type="checkbox" name="show_llm" value="1"'
             f'{checked("show_llm", "1")}> show the LLM\'s labels to assessors</label></p>'
             '<p><label>LLM judgments (suggestions and agreement), one <code>TASK PATH</code> '
             f'a line<br><textarea name="llm" rows="3" cols="70">{e(values.get("llm", ""))}'
             "</textarea></label></p>"
             f"<fieldset><legend>Assessors (optional: assign later)</legend>{people or 'none yet'}"
             '<br><label>Overlap: the share of topics judged twice <input name="overlap" '
             f'type="number" step="0.05" min="0" max="1" value="{e(values.get("overlap", "0"))}"'
             "></label></fieldset>")
    note = ("<p class=\"ctx\">Files the server may read: " +
            (f"{len(allowed)} listed as you type a path" if allowed else
             "none (start it with --allow-dir)") +
            ("; or upload them." if uploads else "; uploads are off.") + "</p>")
    return (f"<h1>New project</h1>{said(error, True)}{note}"
            + form(f"{base}/projects/new", csrf, inner, "Make the project", multipart=True))


def accounts_page(base: str, csrf: str, rows: Sequence[AccountRow], found: Logins,
                  message: str = "", invitation: str = "", me: str = "") -> str:
    """Every account, its state and the actions on it; the invitation form; the logins."""
    out = ["<h1>Accounts</h1>", said(message)]
    if invitation:
        out.append('<section class="box said"><h2>Invitation</h2><p>Send this link to the '
                   "person (it is shown once and works once, for 14 days):</p>"
                   f'<p><input id="invitation" readonly size="90" value="{e(invitation)}">'
                   "</p></section>")
    body = []
    for r in rows:
        actions = [] if r.name == me else [
            form(f"{base}/accounts/reinvite", csrf, _named(r.name), "New invitation",
                 cls="inline", confirm=f"End {r.name}'s password and sessions, and make a new "
                 "invitation?"),
            form(f"{base}/accounts/{'enable' if r.state == 'disabled' else 'disable'}",
                 csrf, _named(r.name), "Enable" if r.state == "disabled" else "Disable",
                 cls="inline", confirm="" if r.state == "disabled" else
                 f"Disable {r.name}? Their sessions end; their work stays.")]
        if r.sessions and r.name != me:
            actions.append(form(f"{base}/accounts/revoke", csrf, _named(r.name),
                                "End sessions", cls="inline",
                                confirm=f"Log {r.name} out everywhere?"))
        if r.locked_until:
            actions.append(form(f"{base}/accounts/unlock", csrf,
                                f'<input type="hidden" name="key" value="account:{e(r.name)}">',
                                "Unlock", cls="inline"))
        body.append(f"<tr><td>{e(r.name)}</td><td>{e(r.role)}</td><td>{e(r.state)}</td>"
                    f"<td>{r.sessions}</td><td>{e(_when(r.last_login))}</td><td>{r.failures}"
                    f"</td><td>{e(_when(r.locked_until))}</td><td>{''.join(actions)}</td></tr>")
    out.append("<table><thead><tr><th>name</th><th>role</th><th>state</th><th>sessions</th>"
               "<th>last login</th><th>failed logins (day)</th><th>locked until</th><th></th>"
               f"</tr></thead><tbody>{''.join(body)}</tbody></table>")
    out.append("<h2>Invite</h2>" + form(
        f"{base}/accounts/invite", csrf,
        '<label>Name <input name="name" required maxlength="80" '
        'pattern="[A-Za-z0-9][A-Za-z0-9._@-]*"></label> <label>Role <select name="role">'
        "<option>assessor</option><option>organizer</option></select></label> ", "Invite",
        cls="inline"))
    out.append(logins_box(base, csrf, found, full=True))
    return "".join(out)


def _named(name: str) -> str:
    return f'<input type="hidden" name="name" value="{e(name)}">'


def _links(base: str, project: Project, here: str) -> str:
    p = f"{base}/project/{project.id}"
    return '<nav class="tabs">' + "".join(
        f'<a href="{e(p + path)}"{" aria-current=page" if path == here else ""}>{e(what)}</a>'
        for path, what in (("", "Progress"), ("/assign", "Assignment"), ("/board", "Board"),
                           ("/adjudicate", "Adjudication"), ("/import", "Import"),
                           ("/export.zip", "Export (zip)"))) + "</nav>"


def _pivot(rows: Sequence[tuple[str, str, int, int, int, float | None, float]],
           tasks: Sequence[str], who: str) -> str:
    """Progress rows as one line per assessor (or topic): each task's done of assigned, the
    median seconds per item of each task, and the hours spent on all."""
    lines: dict[str, dict[str, tuple[str, str, int, int, int, float | None, float]]] = {}
    for row in rows:
        lines.setdefault(row[0], {})[row[1]] = row
    head = [who] + [TITLES[t] for t in tasks] + ["hours spent"]
    body = []
    for name, by_task in lines.items():
        cells = []
        for t in tasks:
            found = by_task.get(t)
            cells.append("" if found is None else f"{found[3]} of {found[2]}" +
                         (f" · {_num(found[5])} s/item" if found[5] is not None else ""))
        body.append((name, *cells, _num(sum(r[6] for r in by_task.values()), 2)))
    return table(head, body)


def project_page(base: str, project: Project, done: Progress,
                 agreed: Mapping[str, JudgesAgreement]) -> str:
    """A project's progress per assessor and per topic (done of assigned, median seconds
    per item, hours), and agreement on the items judged twice."""
    tasks = project.settings.get("tasks", [])
    body = [f"<h1>{e(project.name)}</h1>", _links(base, project, ""),
            "<h2>Progress per assessor</h2>", _pivot(done.by_assessor, tasks, "assessor"),
            "<h2>Progress per topic</h2>", _pivot(done.by_topic, tasks, "topic"),
            "<h2>Agreement on the items judged twice</h2>"]
    if not agreed:
        body.append("<p>no question labelled by two judges yet</p>")
    for task, found in agreed.items():
        rows: list[tuple[Any, ...]] = [
            (p.a, p.b, p.items, *(_num(p.measures.get(m), 3) for m in
                                  ("kappa", "alpha_ordinal"))) for p in found.pairs]
        rows.append(("all", "", found.items, "", _num(found.overall.get("alpha_ordinal"), 3)))
        body += [f"<h3>{e(TITLES[task])}</h3>",
                 table(("judge", "judge", "questions", "Cohen's kappa",
                        "Krippendorff's alpha (ordinal)"), rows)]
    return "".join(body)


def assign_page(base: str, csrf: str, project: Project, assessors: Sequence[str],
                current: Sequence[tuple[str, str, str]], message: str = "",
                error: str = "") -> str:
    """Who has which topics of which task, the form that assigns them (with an overlap) and
    the one that moves an assessor's unfinished items to another."""
    tasks = project.settings.get("tasks", [])
    checks = "".join(f'<label><input type="checkbox" name="tasks" value="{e(t)}"> '
                     f"{e(TITLES[t])}</label> " for t in tasks)
    people = "".join(f'<label><input type="checkbox" name="assessors" value="{e(a)}"> '
                     f"{e(a)}</label> " for a in assessors)
    options = "".join(f"<option>{e(a)}</option>" for a in assessors)
    topics = ('<label>Topics (blank: all; else ids, one a line or comma separated)<br>'
              '<textarea name="topics" rows="2" cols="60"></textarea></label>')
    assign = form(f"{base}/project/{project.id}/assign", csrf,
                  f"<p>Assessors: {people or 'none: invite some first'}</p>"
                  f"<p>Tasks (none ticked: all): {checks}</p><p>{topics}</p>"
                  '<p><label>Overlap: the share of topics judged by two assessors '
                  '<input name="overlap" type="number" step="0.05" min="0" max="1" value="0">'
                  "</label></p>", "Assign")
    reassign = form(f"{base}/project/{project.id}/reassign", csrf,
                    f'<p><label>From <select name="source">{options}</select></label> '
                    f'<label>to <select name="target">{options}</select></label></p>'
                    f"<p>Tasks (none ticked: all): {checks}</p><p>{topics}</p>",
                    "Move the unfinished items")
    return (f"<h1>{e(project.name)}: assignment</h1>{_links(base, project, '/assign')}"
            f"{said(message)}{said(error, True)}<h2>Assign topics</h2>{assign}"
            f"<h2>Reassign</h2>{reassign}<h2>Who has what</h2>"
            + table(("topic", "task", "assessors"), current))


def board_page(base: str, project: Project, found: Sequence[Board]) -> str:
    """Each task's leaderboard from what is judged so far (the page reloads itself)."""
    body = [f"<h1>{e(project.name)}: the board so far</h1>", _links(base, project, "/board"),
            '<p class="ctx" id="live">Scored as <code>score</code> scores the export; '
            "answers not judged yet are left out and counted, never a 0. This page reloads "
            "every 30 seconds.</p>"]
    for b in found:
        unit = "battles" if b.task == "battle" else "answers"
        body.append(f"<h2>{e(TITLES[b.task])}</h2><p>{b.items - b.not_judged} of {b.items} "
                    f"{unit} judged" + (f"; left out: {e(b.left_out)}" if b.left_out else "")
                    + "</p>")
        if b.rows:
            body.append(table(b.rows[0], b.rows[1:], cls="board"))
        else:
            body.append(f'<p class="ctx">{e(b.note)}</p>')
    return "".join(body)


def adjudicate_page(base: str, csrf: str, project: Project,
                    found: Sequence[Disagreement], message: str = "") -> str:
    """Every disagreement, grouped by item: the answer, the question, each assessor's label
    and the LLM's side by side, and the organizer's decision (keys: j/k move, digits
    decide)."""
    settled = sum(d.settled is not None for d in found)
    body = [f"<h1>{e(project.name)}: adjudication</h1>", _links(base, project, "/adjudicate"),
            said(message), f"<p>{len(found)} questions where assessors differ; {settled} "
            f"settled, {len(found) - settled} to settle.</p>",
            '<p class="hint">Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>1</kbd>–<kbd>9</kbd> '
            "settle with that label.</p>"]
    by_item: dict[int, list[Disagreement]] = {}
    for d in found:
        by_item.setdefault(d.item.id, []).append(d)
    for group in by_item.values():
        item = group[0].item
        answer = item.shown.get("answer")
        rows = "".join(_disagreement(base, csrf, project, d) for d in group)
        side = (f'<div class="adj-answer"><h3>The answer</h3><div class="md">'
                f"{markdown(answer)}</div></div>" if answer else "")
        body.append(f'<section class="box"><h2>{e(TITLES[item.task])} · topic {e(item.qid)}'
                    f'</h2><details><summary>the topic</summary>'
                    f"{topic_block(item.shown.get('topic', {}))}</details>"
                    f'<div class="{"adj" if side else ""}">{side}<div>{rows}</div></div>'
                    "</section>")
    return "".join(body)


def _disagreement(base: str, csrf: str, project: Project, d: Disagreement) -> str:
    q = d.question
    panes = "".join(f'<div class="pane"><h3>{e(h)}</h3><div class="md">{markdown(t)}</div>'
                    "</div>" for h, t in q["panes"])
    said_by = "".join(f"<span>{e(who)}: <b>{e(label_name(label))}</b></span>"
                      for who, label in d.labels.items())
    llm = f"<span>LLM: <b>{e(label_name(d.llm))}</b></span>" if d.llm else ""
    decided = (f'<span class="said">settled: {e(label_name(d.settled[0]))} by '
               f"{e(d.settled[1])}, {e(d.settled[2])}</span>" if d.settled else "")
    choices = "".join(
        f'<label><input type="radio" name="label" value="{e(label)}"'
        f'{" checked" if d.settled and d.settled[0] == label else ""}><kbd>{k}</kbd> '
        f"{e(label_name(label))}</label>" for k, label in enumerate(q["labels"], 1))
    inner = (f'<input type="hidden" name="ref" value="{e(d.item.ref)}">'
             f'<input type="hidden" name="key" value="{e(q["key"])}">'
             f'<span class="labels">{choices}</span> ')
    return (f'<div class="q dis{" done" if d.settled else ""}" data-key="{e(q["key"])}">'
            f'<div class="text">{e(q["text"])}</div>'
            + (f'<div class="ctx">{e(q["context"])}</div>' if q.get("context") else "")
            + (f'<div class="panes">{panes}</div>' if panes else "")
            + f'<div class="judges">{said_by}{llm}{decided}</div>'
            + form(f"{base}/project/{project.id}/adjudicate", csrf, inner, "Settle",
                   cls="settle") + "</div>")


def import_page(base: str, csrf: str, project: Project, assessors: Sequence[str],
                allowed: Sequence[str], uploads: bool, message: str = "", error: str = ""
                ) -> str:
    """The form that brings existing judgments in as one assessor's."""
    tasks = "".join(f"<option value=\"{e(t)}\">{e(TITLES[t])}</option>"
                    for t in project.settings.get("tasks", []))
    people = "".join(f"<option>{e(a)}</option>" for a in assessors)
    datalist = "".join(f'<option value="{e(p)}">' for p in allowed)
    inner = (f'<datalist id="allowed">{datalist}</datalist>'
             f'<p><label>Task <select name="task">{tasks}</select></label> '
             f'<label>As the judgments of <select name="assessor">{people}</select></label></p>'
             '<p><label>Files (a path a line: judgment files, folders of them, sheets)<br>'
             '<textarea name="paths" rows="3" cols="70"></textarea></label>'
             + ('<br><label class="ctx">or upload <input type="file" name="upload:paths" '
                "multiple></label>" if uploads else "") + "</p>"
             '<p><label>Mapping (blind battle sheets) <input name="mapping" list="allowed" '
             'size="60"></label></p>')
    return (f"<h1>{e(project.name)}: import</h1>{_links(base, project, '/import')}"
            f"{said(message)}{said(error, True)}<p class=\"ctx\">Every record is checked "
            "against the project first; one that names a run, topic or battle the project "
            "does not have, or whose nuggets or criteria differ, stops the import and "
            "nothing is saved.</p>"
            + form(f"{base}/project/{project.id}/import", csrf, inner, "Import",
                   multipart=True))
