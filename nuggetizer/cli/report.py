"""`nuggetizer report`: the static HTML report of an evaluation, for an organizer to publish."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nuggetizer.cli.common import ANY, FILE, LENIENT, listed_lines
from nuggetizer.errors import InputError
from nuggetizer.flow.scoring import judgment_files, read_judged, score_files, score_judged
from nuggetizer.formats.autojudge import is_autojudge_leaderboard
from nuggetizer.formats.nuggets import read_nuggets
from nuggetizer.formats.tables import is_per_topic
from nuggetizer.formats.topics import read_topics
from nuggetizer.measures.nuggets import MEASURES
from nuggetizer.measures.subnarratives import SUB_NARRATIVE_MEASURES
from nuggetizer.methods.battles import is_battles
from nuggetizer.methods.registry import make_method, method_names
from nuggetizer.organizer.report_sources import Sources, add_jsonl, add_table, beside_key

if TYPE_CHECKING:
    from nuggetizer.methods.base import Judged
    from nuggetizer.organizer.report import Gaps


def _runs_wanted(runs: str | None, runs_file: Path | None) -> list[str]:
    """Run ids of --runs (comma-separated) and --runs-file (one a line, # comments)."""
    wanted = [r.strip() for r in (runs or "").split(",") if r.strip()]
    return wanted + (listed_lines(runs_file) if runs_file is not None else [])


def gathered(judged: Iterable[Judged], gaps: Gaps) -> Iterator[Judged]:
    """The judgments, each added to `gaps` once the score engine is done with it (checked
    against the key), so that none is kept."""
    last = None
    for item in judged:
        if last is not None:
            gaps.add(last.record)
        yield item
        last = item
    if last is not None:
        gaps.add(last.record)


@click.command("report")
@click.argument("assessments", nargs=-1, required=True, type=ANY)
@click.option("--nuggets", type=ANY, default=None, help="answer key: topics scored (else seen)")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder for index.html and its PNGs")
@click.option("--measure", "measures", multiple=True,
              help="measure drawn (repeatable) [default: V_strict; for a per-topic TSV, the "
                   "primary measure of each method it holds]")
@click.option("--title", default="nuggetizer evaluation", show_default=True)
@click.option("--topics", type=ANY, default=None,
              help="topics (TSV or JSONL) for the query texts [default: those the "
                   "assessments and the answer key record]")
@click.option("--runs", default=None,
              help="show only these runs (comma-separated run ids); ranks stay among all")
@click.option("--runs-file", type=FILE, default=None,
              help="show only the runs listed in this file (one run id a line)")
@LENIENT
def report_command(assessments: tuple[Path, ...], nuggets: Path | None, output: Path,
                   measures: tuple[str, ...], title: str, topics: Path | None,
                   runs: str | None, runs_file: Path | None, lenient: bool) -> None:
    """Write a static HTML report (how it was made: assessor, model, prompt hashes, dates,
    tokens; leaderboard; topics with their query texts; distributions, heat map, length,
    gaps) of nugget assessments, or of a per-topic TSV (every measure side by side: the
    combined per_topic.tsv of a several-method evaluate)."""
    from nuggetizer.organizer.report import (
        Gaps,
        UnknownRuns,
        select_runs,
        table_from_per_topic,
        write_report,
    )

    started = time.monotonic()
    wanted = _runs_wanted(runs, runs_file)
    sources = Sources()
    if topics is not None:
        sources.add_queries((q, t.text) for q, t in read_topics(topics).items())
    first = assessments[0]
    if len(assessments) == 1 and first.is_file() and is_autojudge_leaderboard(first):
        raise InputError(first, 1, "an AutoJudge leaderboard (run_id measure topic value): "
                         "the report reads assessment files or folders, or a per-topic TSV "
                         "(run_id topic_id measure value)")
    extra: dict | None = None
    if len(assessments) == 1 and first.is_file() and first.suffix.lower() == ".tsv":
        if not is_per_topic(first):
            raise InputError(first, 1, "not a per-topic TSV: expected the header run_id "
                             "topic_id measure value (or give assessment files or folders)")
        table = table_from_per_topic(first)
        primaries = [make_method(n).primary for n in method_names()]
        chosen = list(measures) or [m for m in table.measures if m in primaries] or \
            [table.primary]
        unknown = [m for m in chosen if m not in table.measures]
        if unknown:
            raise click.BadParameter(f"{', '.join(unknown)} not in {first} (it has "
                                     f"{', '.join(table.measures)})", param_hint="--measure")
        add_table(sources, first)
        items: list | Gaps = []
        files = [first]
        summary: str | None = (f"{len(table.means)} runs, {len(table.topics)} topics, "
                               f"{len(table.measures)} measures: {', '.join(table.measures)}.")
    elif len(assessments) == 1 and is_battles(first):  # pairwise battles: their own figures
        from nuggetizer.organizer.battle_figures import FIGURES

        table = score_files(make_method("battles"), [first], None, lenient)
        chosen, items, files, extra = list(measures) or ["win_rate"], [], [first], FIGURES
        summary = (f"{len(table.means)} runs, {len(table.topics)} topics, "
                   f"{sum(int(m['battles']) for m in table.means.values()) // 2} battles "
                   "with a result (blind, pairwise; README: Pairwise battles).")
    else:
        chosen = list(measures) or ["V_strict"]
        for measure in chosen:
            if measure not in (*MEASURES, *SUB_NARRATIVE_MEASURES):
                raise click.BadParameter(f"{measure!r} is not one of {', '.join(MEASURES)} "
                                         f"(or {', '.join(SUB_NARRATIVE_MEASURES)})",
                                         param_hint="--measure")
        files = judgment_files(list(assessments))
        method = make_method("nuggets")
        keys = read_nuggets(nuggets, lenient=lenient) if nuggets else None
        items = Gaps(set(wanted) if wanted else None)
        table = score_judged(method, gathered(read_judged(method, files, lenient, True), items),
                             keys, lenient)
        summary = None
        key = nuggets or beside_key(files)
        if key is not None:
            add_jsonl(sources, key, queries=True)
            if nuggets is None:
                sources.notes.append(f"answer key found beside the assessments: {key}")
        for path in files:
            add_jsonl(sources, path)
    try:
        select_runs(table, wanted)  # checked before anything is written
    except UnknownRuns as exc:
        raise click.BadParameter(str(exc), param_hint="--runs") from None
    path = write_report(table, items, output, measure=chosen[0] if len(chosen) == 1 else chosen,
                        title=title, inputs=files, summary=summary, sources=sources,
                        runs=wanted or None, extra=extra)
    click.echo(f"report: {path} ({time.monotonic() - started:.1f} s)", err=True)


COMMANDS = (report_command,)
