"""The report page's HTML parts: tables, the provenance header (who assessed, with which
prompts, when, at what token cost) and the topic index with each topic's query text."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from nuggetizer.report.sources import Made, Sources
from nuggetizer.run.progress import TOKEN_FIELDS
from nuggetizer.scoring.engine import ScoreTable

NOT_RECORDED = "not recorded"

STYLE = """body{font-family:sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px}
td{text-align:right}td.text,td:first-child{text-align:left}th{background:#eef}
td.run{white-space:nowrap}code{font-size:90%;word-break:break-all}
img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}.vital{font-weight:bold}
td.name{min-width:9em;overflow-wrap:anywhere}.none{color:#a00}
th{cursor:pointer;position:sticky;top:0}th.asc::after{content:" \\25B2"}
th.desc::after{content:" \\25BC"}nav ul{columns:2}.groups{background:#f6f6ff;padding:0.5em}
.support,.full_support{color:#060}.partial_support{color:#850}
.not_support,.no_support,.unjudged{color:#a00}
.answer{white-space:pre-wrap;background:#fafafa;border:1px solid #ddd;padding:0.5em}
td.ci{white-space:nowrap;color:#444}.wide{overflow-x:auto;max-width:100%}
@media (max-width:600px){body{margin:0.5em}td,th{padding:2px 4px}td.name{min-width:7em}
table{display:block;overflow-x:auto;max-width:100%}}"""

# Every table sorts by a click on its column heads (numbers as numbers, a cell's data-v
# first); inline, so that the page stays one file that needs no network. `sortable(table)`
# binds one table (once); the drill-down renderer calls it for the tables it draws later.
SCRIPT = """window.sortable=t=>{if(t.dataset.sortable)return;t.dataset.sortable="1";
t.querySelectorAll("th").forEach((h,i)=>h.addEventListener("click",()=>{const b=t.tBodies[0];
if(!b)return;const up=!h.classList.contains("asc");t.querySelectorAll("th").forEach(x=>
x.classList.remove("asc","desc"));h.classList.add(up?"asc":"desc");const key=r=>{
const c=r.cells[i];const v=c?(c.dataset.v??c.textContent.trim()):"";const n=v===""?NaN:Number(v);
return isNaN(n)?[1,v]:[0,n]};Array.from(b.rows).map(r=>[key(r),r]).sort((x,y)=>{const a=x[0],
c=y[0];if(a[0]!==c[0])return a[0]-c[0];const d=a[1]<c[1]?-1:a[1]>c[1]?1:0;
return up?d:-d}).forEach(p=>b.appendChild(p[1]))}))};
document.querySelectorAll("table").forEach(sortable);"""

E = html.escape
# where this package is installed, and the home folder: a published page names neither
_INSTALLED = str(Path(__file__).resolve().parents[1])
_HOME = str(Path.home())


def public_path(text: str) -> str:
    """A path (or a note holding one) as a published page shows it: the package's install
    folder as <nuggetizer>, the home folder as ~ (this machine's layout is no reader's
    business)."""
    text = text.replace(_INSTALLED, "<nuggetizer>")
    return text.replace(_HOME + "/", "~/") if _HOME not in ("", "/") else text


@dataclass(frozen=True)
class Cell:
    """A table cell: its text (escaped when written), a link, the value it sorts by, its
    class and its title (shown on hover)."""

    text: str
    href: str | None = None
    sort: float | None = None
    cls: str = ""
    title: str = ""


def _cell(cell: str | Cell, cls: str) -> str:
    if isinstance(cell, str):
        return f"<td class='{cls}'>{E(cell)}</td>" if cls else f"<td>{E(cell)}</td>"
    classes = " ".join(c for c in (cls, cell.cls) if c)
    attrs = (f" class='{E(classes)}'" if classes else "") + (
        f" data-v='{cell.sort!r}'" if cell.sort is not None else "") + (
        f" title='{E(cell.title)}'" if cell.title else "")
    text = E(cell.text)
    if cell.href is not None:
        text = f"<a href='{E(cell.href)}'>{text}</a>"
    return f"<td{attrs}>{text}</td>"


def rows_html(head: Sequence[str], rows: Sequence[Sequence[str | Cell]],
              classes: Sequence[str] = ()) -> str:
    """A table of escaped text (sortable by its column heads); `classes[i]` (if given) is the
    class of column i's cells."""
    top = "".join(f"<th>{E(c)}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(_cell(c, classes[i] if i < len(classes) else "")
                         for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>"


def page_html(title: str, body: Sequence[str], style: str | None = None) -> str:
    """A whole page: its title, the style, `body` (HTML, as given) and the sorting script;
    `style`: the path of a style sheet holding STYLE instead, and no script (a drill-down
    page, whose renderer holds it)."""
    head = (f"<style>{STYLE}</style>" if style is None
            else f"<link rel='stylesheet' href='{E(style)}'>")
    return "\n".join([f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                      "<meta name='viewport' content='width=device-width, initial-scale=1'>"
                      f"<title>{E(title)}</title>{head}</head><body>", *body,
                      *([f"<script>{SCRIPT}</script>"] if style is None else []),
                      "</body></html>"]) + "\n"


def _span(dates: Sequence[str]) -> str:
    dates = sorted(d for d in dates if d)
    if not dates:
        return NOT_RECORDED
    return dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"


def _made_rows(made: Sequence[Made]) -> list[list[str]]:
    """One row per (role, assessor, model, temperature): files and when they were made."""
    groups: dict[tuple[str, ...], list[Made]] = {}
    for m in made:
        p = m.provenance or {}
        assessor = str(p.get("assessor") or NOT_RECORDED)
        backend = assessor.split(":", 1)[0] if p.get("assessor") else NOT_RECORDED
        ident = (m.role, str(p.get("model") or NOT_RECORDED), backend, assessor,
                 NOT_RECORDED if p.get("temperature") is None else str(p["temperature"]))
        groups.setdefault(ident, []).append(m)
    return [[*ident, str(len(ms)), _span([str((m.provenance or {}).get("created") or "")
                                          for m in ms])]
            for ident, ms in groups.items()]


def _template_rows(made: Sequence[Made]) -> list[list[str]]:
    used: dict[tuple[str, str], set[str]] = {}
    for m in made:
        for name, digest in ((m.provenance or {}).get("templates") or {}).items():
            used.setdefault((str(name), str(digest)), set()).add(m.role)
    return [[name, digest, ", ".join(sorted(roles))]
            for (name, digest), roles in sorted(used.items())]


def _version_rows(made: Sequence[Made]) -> list[list[str]]:
    seen: dict[str, set[str]] = {}
    for m in made:
        for name, version in ((m.provenance or {}).get("versions") or {}).items():
            if version is not None and str(version) not in ("", "None"):  # not installed
                seen.setdefault(str(name), set()).add(str(version))
    return [[name, ", ".join(sorted(v))] for name, v in sorted(seen.items())]


def usage_fields(usage: Mapping[str, Mapping]) -> list[str]:
    """The counters the usage table shows: the usual ones (reasoning tokens only when a step
    spent some), then any other count of calls or tokens a step recorded (batch answers, ...),
    in the order first seen."""
    fields = [f for f in TOKEN_FIELDS if "reasoning" not in f
              or any(counters.get(f) for counters in usage.values())]
    for counters in usage.values():
        for name, value in counters.items():
            if name not in fields and isinstance(value, int) and value and \
                    (name.endswith("_tokens") or name.endswith("calls")):
                fields.append(name)
    return fields


def _usage_rows(usage: Mapping[str, Mapping], fields: Sequence[str]) -> list[list[str]]:
    rows = []
    totals = dict.fromkeys(fields, 0)
    costs: list[float | None] = []
    for step, counters in usage.items():
        cells = [str(int(counters.get(f, 0))) for f in fields]
        for f in fields:
            totals[f] += int(counters.get(f, 0))
        cost = counters.get("cost")
        costs.append(None if cost is None else float(cost))
        rows.append([step, *cells, NOT_RECORDED if costs[-1] is None else f"{costs[-1]:.4f}"])
    known = [c for c in costs if c is not None]
    total_cost = NOT_RECORDED if len(known) < len(costs) else f"{sum(known):.4f}"
    rows.append(["total", *(str(totals[f]) for f in fields), total_cost])
    return rows


def provenance_html(sources: Sources, written: datetime, version: str) -> str:
    """The header section: assessor and model per role, prompt templates with their sha256,
    versions, the dates the inputs were made and the report written, token usage per step."""
    parts = ["<h2 id='provenance'>How these results were made</h2>",
             f"<p>Report written {E(written.isoformat(timespec='seconds'))} by nuggetizer "
             f"{E(version)}.</p>"]
    made = sources.made
    if any(m.provenance for m in made):
        parts.append(rows_html(["made", "model", "backend", "assessor", "temperature",
                                "files", "made on (UTC)"], _made_rows(made),
                               ["text", "text", "text", "text"]))
    else:
        parts.append(f"<p class='none'>Assessor and model: {NOT_RECORDED} (the inputs carry "
                     "no provenance block).</p>")
    templates = _template_rows(made)
    parts.append("<h3>Prompt templates (sha256)</h3>" + (
        rows_html(["template", "sha256", "used for"], templates, ["text", "text", "text"])
        if templates else f"<p class='none'>{NOT_RECORDED}</p>"))
    versions = _version_rows(made)
    if versions:
        parts.append("<h3>Software versions</h3>" + rows_html(["package", "version"], versions,
                                                             ["text", "text"]))
    parts.append("<h3>Token usage</h3>")
    if sources.usage:
        fields = usage_fields(sources.usage)
        parts.append(rows_html(["step", *(f.replace("_", " ") for f in fields), "cost"],
                               _usage_rows(sources.usage, fields)))
        parts.append("<p><small>Summed over every invocation of each step (a resumed or "
                     "repeated one adds to the earlier). calls: made to the LLM; cache hits "
                     "and the replayed tokens cost nothing; batch calls: answers of the Batch "
                     "API, at the batch price. Reasoning tokens are part of the completion "
                     "tokens (and of their cost), not added to them. Cost: only where the "
                     "usage records a price.</small></p>")
    else:
        parts.append(f"<p class='none'>{NOT_RECORDED} (no usage.json or *.usage.json beside "
                     "the inputs, nor usage in their .provenance.json)</p>")
    if sources.notes:
        parts.append("<ul>" + "".join(f"<li><small>{E(public_path(n))}</small></li>"
                                       for n in sources.notes)
                     + "</ul>")
    return "\n".join(parts)


def topics_html(table: ScoreTable, measure: str, queries: Mapping[str, str],
                ranks: Mapping[str, int], links: Mapping[str, str] | None = None) -> str:
    """Every topic (linked to its page in `links`) with its query text, the mean of `measure`
    over the runs shown, the best of them (full name) and how many answered it."""
    rows: list[list[str | Cell]] = []
    for qid in table.topics:
        values = {r: v for r in table.ranking()
                  if (v := table.per_topic[r].get(qid, {}).get(measure)) is not None}
        best = max(values, key=lambda r: (values[r], -ranks.get(r, 0)), default=None)
        rows.append([Cell(qid, (links or {}).get(qid)), queries.get(qid, NOT_RECORDED),
                     f"{sum(values.values()) / len(values):.4f}" if values else "-",
                     f"{ranks.get(best, '')}. {best} ({values[best]:.4f})" if best else "-",
                     str(len(values))])
    return rows_html(["topic", "query", f"mean {measure}", "best run", "runs scored"], rows,
                     ["text run", "text", "", "text run"])
