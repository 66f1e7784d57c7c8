"""The `nuggetizer` command: nuggetize, assign, score, evaluate."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click

from nuggetizer.assessors import make_assessor
from nuggetizer.assessors.base import Assessor
from nuggetizer.cache import Cache, default_cache_path
from nuggetizer.errors import NuggetizerError
from nuggetizer.formats.nuggets import read_nuggets
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.runs import read_runs
from nuggetizer.formats.topics import read_topics
from nuggetizer.keys.nuggets import NuggetConfig
from nuggetizer.leaderboard import ScoreTable, format_leaderboard, write_tables
from nuggetizer.pipeline import assessment_files, assign, load_pool, nuggetize, score_files
from nuggetizer.progress import Summary
from nuggetizer.provenance import write_sidecar
from nuggetizer.track import load_track

T = TypeVar("T")
DEFAULT_ASSESSOR = "local"


class _Group(click.Group):
    """Turns the toolkit's own errors into one line on stderr and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NuggetizerError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            click.echo(f"error: {exc.filename or ''}: {exc.strerror or exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted: finished work is kept; rerun the command to resume", err=True)
            ctx.exit(130)


def assessor_options(command: Callable[..., T]) -> Callable[..., T]:
    """The options every LLM-driven command takes to choose and tune its assessor."""
    options = [
        click.option("--assessor", "assessor_spec", default=None, envvar="NUGGETIZER_ASSESSOR",
                     help=f"local | openai:MODEL | vllm:MODEL  [default: {DEFAULT_ASSESSOR}]"),
        click.option("--base-url", default=None,
                     help="OpenAI-compatible server URL [env OPENAI_BASE_URL]"),
        click.option("--api-key", default=None, help="API key [env OPENAI_API_KEY]"),
        click.option("--temperature", type=float, default=0.0, show_default=True),
        click.option("--max-tokens", type=int, default=None, help="cap on tokens per answer"),
        click.option("--concurrency", type=int, default=None,
                     help="LLM calls at once (default: what the backend takes)"),
        click.option("--structured", type=click.Choice(["json_schema", "json_object", "none"]),
                     default=None, help="structured-output mode of an openai: server"),
        click.option("--model-path", type=click.Path(dir_okay=False, path_type=Path),
                     default=None, help="GGUF file for --assessor local"),
        click.option("--cache", "cache_path", type=click.Path(dir_okay=False, path_type=Path),
                     default=None, help=f"LLM call cache [default: {default_cache_path()}]"),
        click.option("--no-cache", is_flag=True, help="do not read or write the LLM call cache"),
    ]
    return functools.reduce(lambda f, option: option(f), reversed(options), command)


def _assessor(options: dict[str, Any], fallback: str | None = None) -> Assessor:
    cache = None if options["no_cache"] else Cache(options["cache_path"] or default_cache_path())
    return make_assessor(
        options["assessor_spec"] or fallback or DEFAULT_ASSESSOR,
        base_url=options["base_url"],
        api_key=options["api_key"],
        temperature=options["temperature"],
        max_tokens=options["max_tokens"],
        concurrency=options["concurrency"],
        structured=options["structured"],
        model_path=options["model_path"],
        cache=cache,
    )


def _run(assessor: Assessor, work: Coroutine[Any, Any, T]) -> T:
    async def main() -> T:
        try:
            return await work
        finally:
            await assessor.aclose()

    return asyncio.run(main())


def _nugget_config(**options: Any) -> NuggetConfig:
    return NuggetConfig(**{k: v for k, v in options.items() if v is not None})


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nuggetizer")
def cli() -> None:
    """TREC-style nugget evaluation of retrieval-augmented generation."""


@cli.command("nuggetize")
@click.option("--topics", required=True, type=click.Path(path_type=Path), help="TSV or JSONL")
@click.option("--qrels", required=True, type=click.Path(path_type=Path), help="TREC qrels")
@click.option("--corpus", required=True, type=click.Path(path_type=Path), help="JSONL segments")
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path))
@click.option("--min-grade", type=int, default=None, help="judged segments used [default: 1]")
@click.option("--window", type=int, default=None, help="segments per call [default: 10]")
@click.option("--max-nuggets", type=int, default=None, help="nuggets kept while creating [30]")
@click.option("--keep", type=int, default=None, help="nuggets kept after sorting [20; 0: all]")
@click.option("--no-labels", is_flag=True, help="skip importance and trim (for post-editing)")
@assessor_options
def nuggetize_command(
    topics: Path, qrels: Path, corpus: Path, output: Path, min_grade: int | None,
    window: int | None, max_nuggets: int | None, keep: int | None, no_labels: bool,
    **options: Any,
) -> None:
    """Build an answer key (nuggets) for each topic from its judged segments."""
    config = _nugget_config(min_grade=min_grade, window=window, max_nuggets=max_nuggets,
                            keep=keep, label=False if no_labels else None)
    topic_map = read_topics(topics)
    pool = load_pool(read_qrels(qrels), qrels, corpus, config.min_grade)
    assessor = _assessor(options)
    summary = _run(assessor, nuggetize(topic_map, pool, assessor, config, output))
    click.echo(summary.line(assessor.stats), err=True)


@cli.command("assign")
@click.option("--run", "run_paths", multiple=True, required=True,
              type=click.Path(path_type=Path), help="answer run JSONL (repeatable)")
@click.option("--nuggets", required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder: one assessment file per run")
@click.option("--batch", type=int, default=None, help="nuggets per call [default: 10]")
@click.option("--lenient", is_flag=True,
              help="off-menu labels in input files become unjudged items instead of errors")
@assessor_options
def assign_command(
    run_paths: tuple[Path, ...], nuggets: Path, output: Path, batch: int | None, lenient: bool,
    **options: Any,
) -> None:
    """Judge every answer of the runs against the nuggets of its topic."""
    runs, keys = read_runs(list(run_paths)), read_nuggets(nuggets, lenient=lenient)
    assessor = _assessor(options)
    config = _nugget_config(assign_batch=batch)
    summary = _run(assessor, assign(runs, keys, assessor, config, output))
    click.echo(summary.line(assessor.stats), err=True)


def _report_scores(table: ScoreTable, started: float) -> None:
    click.echo(format_leaderboard(table))
    for qid in table.no_vital:
        click.echo(f"warning: topic {qid} has no vital nugget: its V and V_strict are 0", err=True)
    unjudged = sum(table.unjudged.values())
    missing = sum(table.missing.values())
    click.echo(
        f"score: {len(table.means)} runs, {len(table.topics)} topics, {missing} unanswered "
        f"(scored 0), {table.outside} outside the answer key, {unjudged} unjudged nuggets "
        f"(left out), {time.monotonic() - started:.1f} s",
        err=True,
    )


@cli.command("score")
@click.argument("assessments", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="leaderboard TSV")
@click.option("--per-topic", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="long TSV: run_id topic_id measure value")
@click.option("--nuggets", type=click.Path(path_type=Path), default=None,
              help="answer key: its topics are the ones every run is scored on")
@click.option("--lenient", is_flag=True,
              help="off-menu labels in input files become unjudged items instead of errors")
def score_command(
    assessments: tuple[Path, ...], output: Path | None, per_topic: Path | None,
    nuggets: Path | None, lenient: bool,
) -> None:
    """Score assessment files (or folders of them) into a leaderboard."""
    started = time.monotonic()
    universe = list(read_nuggets(nuggets, lenient=lenient)) if nuggets else None
    table = score_files(list(assessments), universe, lenient=lenient)
    write_tables(table, output, per_topic)
    inputs = assessment_files(list(assessments))
    for path in (output, per_topic):
        if path is not None:
            write_sidecar(path, inputs)
    _report_scores(table, started)


@cli.command("evaluate")
@click.option("--track", required=True, help="builtin track name (e.g. sample) or track.toml")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="output folder [default: out/TRACK]")
@assessor_options
def evaluate_command(track: str, output: Path | None, **options: Any) -> None:
    """Run nuggetize, assign and score for a track config."""
    started = time.monotonic()
    config = load_track(track)
    out = output or Path("out") / config.name
    settings = config.nuggets.config()
    topic_map = read_topics(config.topics)
    pool = load_pool(read_qrels(config.qrels), config.qrels, config.corpus, settings.min_grade)
    runs = read_runs(config.runs)
    assessor = _assessor(options, config.assessor)
    nuggets_path, assessed = out / "nuggets.jsonl", out / "assessments"

    async def work() -> tuple[Summary, Summary]:
        made = await nuggetize(topic_map, pool, assessor, settings, nuggets_path, config.name)
        click.echo(made.line(), err=True)
        judged = await assign(runs, read_nuggets(nuggets_path), assessor, settings, assessed,
                              config.name)
        click.echo(judged.line(), err=True)
        return made, judged

    made, judged = _run(assessor, work())
    table = score_files([assessed], list(read_nuggets(nuggets_path)))
    leaderboard, per_topic = out / "leaderboard.tsv", out / "per_topic.tsv"
    write_tables(table, leaderboard, per_topic)
    for path in (leaderboard, per_topic):
        write_sidecar(path, [nuggets_path, *assessment_files([assessed])])
    _report_scores(table, started)
    stats = assessor.stats
    click.echo(
        f"evaluate: {made.done + made.resumed} topics, {judged.done + judged.resumed} answers, "
        f"{stats.calls} LLM calls, {stats.cache_hits} cache hits, "
        f"{made.unjudged + judged.unjudged} unjudged, {time.monotonic() - started:.1f} s; "
        f"outputs in {out}",
        err=True,
    )


def main() -> None:
    """Console entry point."""
    cli(prog_name="nuggetizer")


# Command modules register themselves on `cli` when imported; each adds one import here.
from nuggetizer import cli_commands  # noqa: E402, F401
