"""`nuggetizer report`: the static HTML report of an evaluation, for an organizer to publish."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nuggetizer.cli.common import ANY, FILE, LENIENT, PROFILE, listed_lines, method_options
from nuggetizer.errors import InputError, NothingJudgedError

if TYPE_CHECKING:
    from nuggetizer.interface.base import AnswerKeyMethod
    from nuggetizer.interface.report_part import ReportPart
    from nuggetizer.interface.table import Judged
    from nuggetizer.measures.base import Measure


def _runs_wanted(runs: str | None, runs_file: Path | None) -> list[str]:
    """Run ids of --runs (comma-separated) and --runs-file (one a line, # comments)."""
    wanted = [r.strip() for r in (runs or "").split(",") if r.strip()]
    return wanted + (listed_lines(runs_file) if runs_file is not None else [])


def gathered(judged: Iterable[Judged], part: ReportPart | None, pages: bool = True
             ) -> Iterable[Judged]:
    """The judgments, each of the runs shown added to the method's report `part` once the
    score engine is done with it (checked against the key), so that none is kept whole (what
    the drill-down pages show of it kept, compact, when `pages`); a method scored per run's
    table (read whole anyway) added at once and given back as it is."""
    from nuggetizer.interface.table import JudgedTable

    if part is None:
        return judged
    if isinstance(judged, JudgedTable):
        for item in judged:
            _show(part, item, pages)
        return judged
    return _gathered(judged, part, pages)


def _gathered(judged: Iterable[Judged], part: ReportPart, pages: bool) -> Iterator[Judged]:
    last = None
    for item in judged:
        if last is not None:
            _show(part, last, pages)
        yield item
        last = item
    if last is not None:
        _show(part, last, pages)


def _show(part: ReportPart, item: Judged, pages: bool) -> None:
    """A judgment added to the part when its run is shown (kept for the pages when `pages`)."""
    if part.shows(item.run_id, item.record):
        part.add(item.record)
        if pages:
            part.keep(item.record)


def measure_names(method: AnswerKeyMethod) -> str:
    """The measures of a method, its diagnostic ones in brackets (for messages)."""
    ranked = [m for m in method.measures if m not in method.diagnostic]
    rest = [m for m in method.measures if m in method.diagnostic]
    return ", ".join(ranked) + (f" (or {', '.join(rest)})" if rest else "")


def declared_measures() -> list[Measure]:
    """Every registered method's declared measures (the glossary of a per-topic TSV)."""
    from nuggetizer.interface.registry import method_class, method_names

    return [m for name in method_names() for m in method_class(name).declared]


@click.command("report")
@click.argument("assessments", nargs=-1, required=True, type=ANY)
@click.option("--nuggets", "--key", "nuggets", type=ANY, default=None,
              help="answer key of --method: topics scored (else seen)")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder for index.html and its PNGs")
@click.option("--measure", "measures", multiple=True,
              help="measure drawn (repeatable) [default: the primary measure of --method; "
                   "for a per-topic TSV, that of each method it holds]")
@click.option("--title", default="nuggetizer evaluation", show_default=True)
@click.option("--topics", type=ANY, default=None,
              help="topics (TSV or JSONL) for the query texts [default: those the "
                   "assessments and the answer key record]")
@click.option("--runs", default=None,
              help="show only these runs (comma-separated run ids); ranks stay among all")
@click.option("--runs-file", type=FILE, default=None,
              help="show only the runs listed in this file (one run id a line)")
@click.option("--pages/--no-pages", default=True, show_default=True,
              help="a page per run and per topic (runs/, topics/: every judgment)")
@click.option("--test", type=click.Choice(["auto", "holm", "tukey"]), default="auto",
              show_default=True,
              help="the test that groups the runs: the paired randomization test with Holm "
                   "(holm), the randomised Tukey HSD test (tukey); auto: holm up to 5 runs, "
                   "tukey beyond")
@click.option("--trials", type=click.IntRange(min=100), default=10000, show_default=True,
              help="trials of that test: sign flips (holm), permutations B (tukey)")
@method_options
@LENIENT
@PROFILE
def report_command(assessments: tuple[Path, ...], nuggets: Path | None, output: Path,
                   measures: tuple[str, ...], title: str, topics: Path | None,
                   runs: str | None, runs_file: Path | None, pages: bool, test: str,
                   trials: int, method: str, settings: tuple[str, ...], lenient: bool,
                   profile: str | None) -> None:
    """Write a static HTML report (how it was made: assessor, model, prompt hashes, dates,
    tokens; leaderboard; the measures as the method declares them; topics with their query
    texts; distributions, heat map, length; the method's own sections, e.g. the nuggets no
    run supported) of the judgments of --method, or of a per-topic TSV (every measure side
    by side: the combined per_topic.tsv of a several-method evaluate)."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats.autojudge import is_autojudge_leaderboard
    from nuggetizer.formats.topics import read_topics
    from nuggetizer.interface.profile import DEFAULT_PROFILE
    from nuggetizer.interface.registry import method_class, method_holding, method_names
    from nuggetizer.report.page import (
        UnknownRuns,
        select_runs,
        table_from_per_topic,
        write_report,
    )
    from nuggetizer.report.sources import Sources, add_jsonl, add_table, beside_key
    from nuggetizer.scoring.engine import judgment_files, read_judged, score_judged
    from nuggetizer.scoring.files import left_out_text
    from nuggetizer.scoring.tables import is_per_topic

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
    if len(assessments) == 1 and first.is_file() and first.suffix.lower() == ".tsv":
        if not is_per_topic(first):
            raise InputError(first, 1, "not a per-topic TSV: expected the header run_id "
                             "topic_id measure value (or give assessment files or folders)")
        if profile is not None:
            raise click.BadParameter("scores judgments: a per-topic TSV is scored already "
                                     "(its .provenance.json names its profile)",
                                     param_hint="--profile")
        table = table_from_per_topic(first)
        primaries = [method_class(n).primary for n in method_names()]
        chosen = list(measures) or [m for m in table.measures if m in primaries] or \
            [table.primary]
        unknown = [m for m in chosen if m not in table.measures]
        if unknown:
            raise click.BadParameter(f"{', '.join(unknown)} not in {first} (it has "
                                     f"{', '.join(table.measures)})", param_hint="--measure")
        add_table(sources, first)
        part: ReportPart | None = None
        declared = declared_measures()
        files = [first]
        summary: str | None = (f"{len(table.means)} runs, {len(table.topics)} topics, "
                               f"{len(table.measures)} measures: {', '.join(table.measures)}.")
    else:  # judgments of --method (else of the method they unmistakably are: battles)
        chosen_method = configured(method_holding(assessments) or method, settings, profile)
        if chosen_method.profile.name != DEFAULT_PROFILE:
            sources.notes.append(f"scored under the {chosen_method.profile.name} profile: "
                                 f"{chosen_method.profile.description}")
        part = chosen_method.report_part(set(wanted) if wanted else None)
        chosen = list(measures) or list(part.drawn if part else ()) or [chosen_method.primary]
        for measure in chosen:
            if measure not in chosen_method.measures:
                raise click.BadParameter(f"{measure!r} is not one of "
                                         f"{measure_names(chosen_method)}", param_hint="--measure")
        files = judgment_files(list(assessments))
        keys = chosen_method.read_keys(nuggets, lenient) if nuggets else None
        key = nuggets or beside_key(files, chosen_method.judging.key_file)
        if part is not None and pages and key is not None:  # the topic pages' answer key
            part.use_keys(keys if keys is not None else chosen_method.read_keys(key, True))
        table = score_judged(chosen_method,
                             gathered(read_judged(chosen_method, files, lenient, True), part,
                                      pages),
                             keys, lenient)
        if table.judged_nothing:  # as `score` says it: no page of scores that are not there
            raise NothingJudgedError(
                f"report --method {chosen_method.name}: nothing was judged in {len(files)} "
                f"judgment files ({left_out_text(table)}); no report written: judge again "
                "with an assessor that answers")
        declared = list(chosen_method.declared)
        summary = None
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
    path = write_report(table, part, output, measure=chosen[0] if len(chosen) == 1 else chosen,
                        title=title, inputs=files, summary=summary, sources=sources,
                        runs=wanted or None, declared=declared, trials=trials, test=test,
                        pages=pages)
    click.echo(f"report: {path} ({time.monotonic() - started:.1f} s)", err=True)
