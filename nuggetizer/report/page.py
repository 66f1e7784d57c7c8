"""A static HTML report of one evaluation an organizer can publish: how it was made (assessor,
model, prompt template hashes, versions, dates, token usage), the leaderboard with full run
names, each topic's query text, distributions, heat map, length, gaps.

Made from nugget assessments, or from a per-topic TSV: the combined one of a several-method
`evaluate` shows every measure side by side (leaderboard), with figures for each measure asked.
A subset of the runs (`runs=`) can be shown; their ranks stay those among all runs.

Writes `index.html` and its PNGs into one folder; the page needs no server or script (open
the file in any browser); the drill-down pages beside it (report/drill.py) are drawn by their
script, offline. The figures are drawn by report/figures.py, the HTML parts by
report/html.py and board.py, and what the inputs record is gathered by report/sources.py.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from pkgutil import resolve_name
from typing import Any

from nuggetizer import __version__
from nuggetizer.errors import InputError
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.registry import make_method, method_names
from nuggetizer.interface.report_part import Plot, ReportPart, ReportSection
from nuggetizer.measures.base import Measure
from nuggetizer.report.board import board_html, board_latex, board_markdown, make_board
from nuggetizer.report.drill import links, write_drill
from nuggetizer.report.figures import (
    Spot,
    distributions_png,
    draw_all,
    heatmap_png,
    length_png,
)
from nuggetizer.report.html import page_html, provenance_html, public_path, topics_html
from nuggetizer.report.sources import Sources
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.tables import iter_per_topic
from nuggetizer.scoring.uncertainty import TRIALS
from nuggetizer.types import Assessment


class UnknownRuns(ValueError):
    """Run ids asked for that the scores do not hold."""


def table_from_per_topic(path: Path) -> ScoreTable:
    """A per-topic TSV (`run_id topic_id measure value`, `all` rows the means) read back as a
    score table: its measures in file order (the first ranks the runs), its topics."""
    measures: dict[str, None] = {}
    topics: dict[str, None] = {}
    per_topic: dict[str, dict[str, dict[str, float]]] = {}
    means: dict[str, dict[str, float]] = {}
    for run, topic, measure, value in iter_per_topic(path):
        measures.setdefault(measure)
        if topic == "all":
            means.setdefault(run, {})[measure] = value
        else:
            topics.setdefault(topic)
            per_topic.setdefault(run, {}).setdefault(topic, {})[measure] = value
    if not measures:
        raise InputError(path, None, "no scores")
    table = ScoreTable(tuple(measures), next(iter(measures)), list(topics))
    for run in {**per_topic, **means}:
        rows = per_topic.get(run, {})
        table.per_topic[run] = {q: rows[q] for q in topics if q in rows}
        mine = means.setdefault(run, {})
        for m in measures:
            values = [row[m] for row in rows.values() if m in row]
            if m not in mine and values:
                mine[m] = sum(values) / len(values)
        table.means[run] = mine
        table.missing[run] = 0
        table.unjudged[run] = 0
    return table


def select_runs(table: ScoreTable, wanted: Sequence[str]) -> ScoreTable:
    """The table cut down to the runs `wanted` (their topics and means unchanged); an unknown
    run id is an UnknownRuns naming each, the closest known ids, and the fix."""
    known = table.ranking()
    unknown = [r for r in wanted if r not in table.means]
    if unknown:
        hints = []
        for run in unknown:
            close = difflib.get_close_matches(run, known, n=2, cutoff=0.6)
            hints.append(f"{run!r}" + (f" (did you mean {' or '.join(map(repr, close))}?)"
                                       if close else ""))
        listed = ", ".join(known[:10]) + (f", ... ({len(known)} in all)" if len(known) > 10
                                          else "")
        raise UnknownRuns(f"unknown run id{'s' if len(unknown) > 1 else ''}: "
                          f"{', '.join(hints)}. The scores hold: {listed}. Give run ids as "
                          "the leaderboard's run_id column spells them, comma-separated.")
    keep = list(dict.fromkeys(wanted))
    return replace(table, per_topic={r: table.per_topic[r] for r in keep},
                   means={r: table.means[r] for r in keep},
                   unjudged={r: table.unjudged.get(r, 0) for r in keep},
                   missing={r: table.missing.get(r, 0) for r in keep})


def _file_part(measure: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", measure)


def glossary_html(table: ScoreTable, declared: Sequence[Measure]) -> str:
    """The table's measures with their declared descriptions and rules (a measure not
    declared is left out; nothing when none is)."""
    known = {m.name: m for m in declared}
    listed = [known[m] for m in table.measures if m in known]
    if not listed:
        return ""
    E = html.escape
    items = "".join(f"<dt>{E(m.name)}</dt><dd>{E(' '.join(m.description.split()))} "
                    f"<small>({E(m.rule())})</small></dd>" for m in listed)
    return f"<h2 id='measures'>Measures</h2><dl>{items}</dl>"


def _others_plots(table: ScoreTable, part: ReportPart) -> list[Plot]:
    """The figures of other methods' primary measures that a combined table holds (the
    battles' scores with their intervals, in a several-method evaluate's table)."""
    found = []
    for name in method_names():
        method = make_method(name)
        other = method.report_part(None)
        if other is None or type(other) is type(part):
            continue
        found += [plot for plot in other.plots if plot.measure == method.primary
                  and plot.measure in table.measures]
    return found


def _figure_html(name: str, caption: str, drawn: Any, k: int) -> str:
    """A figure at its own size; where its function says where each run's point falls
    (Spots), an image map gives each point its run's rank and full name on hover."""
    E = html.escape
    spots = [s for s in drawn if isinstance(s, Spot)] if isinstance(drawn, list) else []
    if not spots:
        return f"<img src='{E(name)}' alt='{E(caption)}'>"
    areas = "".join(f"<area shape='circle' coords='{s.x},{s.y},5' title='{E(s.title)}' "
                    f"alt='{E(s.title)}'>" for s in spots)
    return (f"<img src='{E(name)}' alt='{E(caption)}' usemap='#spots-{k}'>"
            f"<map name='spots-{k}'>{areas}</map>")


def _section_html(section: ReportSection, anchor: str) -> list[str]:
    E = html.escape
    parts = [f"<h2 id='{anchor}'>{E(section.title)}</h2>"
             + (f"\n{section.html}" if section.html else "")]
    for figure in section.figures:
        parts.append(f"<img src='{E(figure.name)}' alt='{E(figure.caption)}'>"
                     f"<p><small>{E(figure.caption)}</small></p>")
    return parts


def write_report(table: ScoreTable, assessments: Sequence[Assessment] | ReportPart | None,
                 out_dir: Path, *, measure: str | Sequence[str] = "V_strict",
                 title: str = "nuggetizer evaluation", inputs: Sequence[Path] = (),
                 summary: str | None = None, sources: Sources | None = None,
                 runs: Sequence[str] | None = None, declared: Sequence[Measure] = (),
                 trials: int = TRIALS, test: str = "auto", pages: bool = True) -> Path:
    """Write `index.html` and its PNGs into `out_dir`; returns the HTML path. The leaderboard
    holds every measure of the table, the glossary those of `declared` (the methods'
    Measure declarations); the figures are drawn for each measure in `measure` (one:
    `distributions.png`, `heatmap.png`; several: one pair per measure); the length figure
    when the table has the answer length L. `assessments`: a method's ReportPart (its
    `report_part`, gathered while scoring, of the runs shown): its `plots` are drawn beside
    these, its `summary` is the page's first line (unless `summary` is given), and its
    sections (and their figures) follow; a list of nugget assessments stands for the nuggets
    method's part. `sources`: what the inputs record (provenance, usage, query texts);
    `runs`: show only these (UnknownRuns, before anything is written, for an id the table
    lacks); `test`, `trials`: the test that groups the runs (scoring/uncertainty.py) and its
    trials; `pages`: a page per run and per
    topic (report/drill.py)."""
    ranks = {run: k for k, run in enumerate(table.ranking(), 1)}
    shown = select_runs(table, runs) if runs else table
    if isinstance(assessments, ReportPart):
        part = assessments
    else:
        gaps = make_method("nuggets").report_part(shown.means if runs else None)
        assert gaps is not None  # the nuggets method always has its part
        for a in assessments or ():
            gaps.add(a)
        part = gaps
    sources = sources or Sources()
    sources.add_queries(part.queries.items())
    out_dir.mkdir(parents=True, exist_ok=True)
    chosen = [measure] if isinstance(measure, str) else list(measure)
    figures: dict[str, tuple[Any, str, str]] = {}
    for m in chosen:
        if not any(m in row for rows in shown.per_topic.values() for row in rows.values()):
            continue  # no per-topic values (bt_score: one fit): its own figure, below
        tag = "" if len(chosen) == 1 else f"_{_file_part(m)}"
        figures[f"distributions{tag}.png"] = (distributions_png, m, f"Per-topic {m} of each run")
        figures[f"heatmap{tag}.png"] = (heatmap_png, m, f"{m}: run x topic (runs by rank, "
                                        "topics easiest first: by their mean over the runs)")
    if "L" in shown.measures:
        figures["length.png"] = (length_png, chosen[0], f"Each run's mean {chosen[0]} against "
                                 "its mean answer length")
    figures.update({plot.name: (resolve_name(plot.draw), plot.measure, plot.caption)
                    for plot in [*part.plots, *_others_plots(shown, part)]})
    made: dict[str, Any] = {}

    def meanwhile() -> None:
        """The groups' test and the drill-down pages, while the figure worker draws."""
        made["board"] = make_board(shown, ranks, [shown.primary, *chosen], trials=trials,
                                   test=test)
        if pages:
            write_drill(out_dir, shown, ranks, sources.queries, part, title)

    drawn = draw_all([(draw, m, out_dir / name) for name, (draw, m, _) in figures.items()],
                     shown, ranks, meanwhile)
    board = made["board"]
    sections = part.sections(shown, sources.queries, bool(runs))
    for section in sections:
        for figure in section.figures:
            figure.draw(out_dir / figure.name)
    summary = summary or part.summary(table)
    if summary is None:
        unanswered = sum(table.missing.values())
        summary = (f"{len(table.means)} runs, {len(table.topics)} topics, "
                   f"{sum(table.unjudged.values())} unjudged {part.items} "
                   "(left out of the scores), "
                   f"{unanswered} unanswered topic{'' if unanswered == 1 else 's'} (scored 0).")
    if runs:
        summary += (f" Shown: {len(shown.means)} of the {len(table.means)} runs; ranks are "
                    f"among all {len(table.means)}.")
    E = html.escape
    run_links, topic_links = links(shown) if pages else ({}, {})
    write_text_atomic(out_dir / "leaderboard.md", board_markdown(board))
    write_text_atomic(out_dir / "leaderboard.tex", board_latex(board))
    contents = [("leaderboard", "Leaderboard"), ("measures", "Measures"),
                *((f"figure-{k}", caption) for k, (_, _, caption)
                  in enumerate(figures.values())),
                *((f"section-{k}", section.title) for k, section in enumerate(sections)),
                ("topics", f"Topics ({len(shown.topics)})"),
                ("provenance", "How these results were made")]
    glossary = glossary_html(shown, declared)
    if not glossary:
        contents.remove(("measures", "Measures"))
    parts = [f"<h1>{E(title)}</h1>", f"<p>{E(summary)}</p>",
             "<nav><b>Contents</b><ul>" + "".join(
                 f"<li><a href='#{anchor}'>{E(text)}</a></li>" for anchor, text in contents)
             + "</ul></nav>",
             "<h2 id='leaderboard'>Leaderboard</h2>", board_html(board, run_links),
             "<p><small>The figures name runs by this rank and a short label (what tells "
             "their ids apart); hover over a group's letters for the runs a run cannot be "
             "told apart from" + (
                 "; a run's name leads to its page (every topic's judgment), a topic's id to "
                 "its page (every run on it)" if pages else "") + ". Click a "
             "column's head to sort. The table as Markdown: <a href='leaderboard.md'>"
             "leaderboard.md</a>, as LaTeX (booktabs): <a href='leaderboard.tex'>"
             "leaderboard.tex</a>.</small></p>", glossary]
    for k, (name, (_, _, caption)) in enumerate(figures.items()):
        parts.append(f"<h2 id='figure-{k}'>{E(caption)}</h2>"
                     + _figure_html(name, caption, drawn.get(out_dir / name), k))
    for k, section in enumerate(sections):
        parts += _section_html(section, f"section-{k}")
    parts += [f"<h2 id='topics'>Topics ({len(shown.topics)})</h2>",
              topics_html(shown, chosen[0], sources.queries, ranks, topic_links),
              provenance_html(sources, datetime.now(UTC), __version__)]
    made_from = "".join(f"<li>{E(public_path(str(p)))}</li>" for p in inputs)
    parts.append(f"<hr><p><small>nuggetizer {__version__}; inputs:</small></p>"
                 f"<ul><small>{made_from}</small></ul>")
    path = out_dir / "index.html"
    write_text_atomic(path, page_html(title, parts))
    return path
