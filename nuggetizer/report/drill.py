"""The report's drill-down pages: one per run (its score on every topic, and under each topic
what its judgments show: the answer with each nugget's verdict, its battles ...) and one per
topic (its query and every run's scores on it, each a link to that run's judgment). Static
pages beside index.html (runs/, topics/), self-contained and offline like it; every text
escaped."""

from __future__ import annotations

import html
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from nuggetizer.formats.writing import write_bytes_atomic
from nuggetizer.report.html import NOT_RECORDED, Cell, page_html, rows_html
from nuggetizer.scoring.engine import ScoreTable

RUNS, TOPICS = "runs", "topics"
COUNTS = ("battles",)  # measures that are counts: printed whole
E = html.escape


def file_names(ids: Iterable[str]) -> dict[str, str]:
    """A file name (`.html`) for each id: its safe characters, a number added where two ids
    would share one (case aside)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for ident in ids:
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", ident)[:100].lstrip(".") or "_"
        name, k = stem, 1
        while name.lower() in taken:
            k += 1
            name = f"{stem}-{k}"
        taken.add(name.lower())
        names[ident] = f"{name}.html"
    return names


def links(table: ScoreTable) -> tuple[dict[str, str], dict[str, str]]:
    """The pages' paths from index.html: {run: runs/NAME.html}, {topic: topics/NAME.html}."""
    runs = {r: f"{RUNS}/{n}" for r, n in file_names(table.ranking()).items()}
    topics = {q: f"{TOPICS}/{n}" for q, n in file_names(table.topics).items()}
    return runs, topics


def number(measure: str, value: float | None) -> str:
    """A value as the pages print it: 4 decimals (as the TSV tables), a count (battles)
    whole."""
    if value is None:
        return "-"
    if measure in COUNTS and float(value).is_integer():
        return str(int(value))
    return f"{value:.4f}"


def _value(row: Mapping[str, float] | None, measure: str) -> Cell:
    value = None if row is None else row.get(measure)
    return Cell(number(measure, value), sort=value)


def _details(kept: Sequence[str | bytes]) -> str:
    return "".join(p if isinstance(p, str) else zlib.decompress(p).decode("utf-8")
                   for p in kept)


def write_drill(out_dir: Path, table: ScoreTable, ranks: Mapping[str, int],
                queries: Mapping[str, str],
                details: Mapping[str, Mapping[str, list[str | bytes]]],
                title: str, on_topic_pages: bool = False) -> None:
    """Write every run's and every topic's page under `out_dir` (runs/, topics/);
    `on_topic_pages`: each run's judgment shown on the topic's page too (battles)."""
    run_links, topic_links = links(table)
    anchors = {q: f"t{k}" for k, q in enumerate(table.topics)}
    measures = [m for m in table.measures]
    ranked = table.ranking()
    home = "<p><a href='../index.html'>&larr; " + E(title) + "</a></p>"
    said = ("" if details else "<p class='none'>The judgments themselves are not shown: a "
            "per-topic table holds only scores (report a method's judgment files for "
            "them).</p>")
    for run in ranked:
        rows = table.per_topic.get(run, {})
        mine = details.get(run, {})
        body = [home, f"<h1>{ranks[run]}. {E(run)}</h1>",
                rows_html(["measure", "value"], [[m, _value(table.means[run], m)]
                                                 for m in measures], ["text run"]),
                "<h2>Topics</h2>",
                rows_html(["topic", "query", *measures, "judgment"], [
                    [Cell(q, "../" + topic_links[q]), queries.get(q, NOT_RECORDED),
                     *(_value(rows.get(q), m) for m in measures),
                     Cell("below", f"#{anchors[q]}") if q in mine else "-"]
                    for q in table.topics], ["text run", "text"]), said]
        for q in table.topics:
            if q in mine:
                body.append(f"<h3 id='{anchors[q]}'><a href='../{E(topic_links[q])}'>"
                            f"{E(q)}</a>: {E(queries.get(q, ''))}</h3>{_details(mine[q])}")
        _write(out_dir / run_links[run], page_html(f"{run}: {title}", body))
    for q in table.topics:
        scored = [r for r in ranked if q in table.per_topic.get(r, {})]
        first = table.primary
        scored.sort(key=lambda r: -(table.per_topic[r][q].get(first, float("-inf"))))
        body = [home, f"<h1>Topic {E(q)}</h1>",
                f"<p class='answer'>{E(queries.get(q, NOT_RECORDED))}</p>",
                f"<p>{len(scored)} of {len(ranked)} runs scored; a run's name leads to its "
                "judgment on this topic.</p>",
                rows_html(["rank", "run", *measures], [
                    [Cell(str(ranks[r]), sort=ranks[r]),
                     Cell(r, f"../{run_links[r]}" + (f"#{anchors[q]}" if q in
                                                     details.get(r, {}) else "")),
                     *(_value(table.per_topic[r][q], m) for m in measures)]
                    for r in scored], ["", "text run"])]
        if on_topic_pages:
            body += [f"<h3><a href='../{E(run_links[r])}'>{E(r)}</a></h3>"
                     + _details(details[r][q]) for r in ranked if q in details.get(r, {})]
        _write(out_dir / topic_links[q], page_html(f"{q}: {title}", body))


def _write(path: Path, text: str) -> None:
    """A page, atomically (not fsynced one by one: hundreds of pages a rerun rewrites)."""
    write_bytes_atomic(path, text.encode("utf-8"), sync=False)
