"""`nuggetizer evaluate`: a track config's methods, each through the one flow (keys built,
graded or taken; judgments; scores), and every measure side by side."""


from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from nuggetizer.cli.batch import batch_options, echo_lines, executor_from
from nuggetizer.cli.common import (
    FOLDER,
    assessor_options,
    chosen_topics,
    dry_run_options,
    embedded_note,
    make_assessor_from,
    run_with,
    topic_options,
)
from nuggetizer.cli.steps import score_and_report
from nuggetizer.errors import ConfigError
from nuggetizer.flow.execute import Batched, Dry
from nuggetizer.flow.progress import Summary, token_text
from nuggetizer.flow.provenance import write_sidecar
from nuggetizer.flow.score_files import ScoreFiles, ScoreScope
from nuggetizer.flow.scoring import combine_tables
from nuggetizer.flow.tables import format_leaderboard, write_tables
from nuggetizer.flow.track_plan import track_method, track_plan
from nuggetizer.track import Track, load_track


@click.command("evaluate")
@click.option("--track", required=True, help="builtin track name (e.g. sample) or track.toml")
@click.option("-o", "--output", type=FOLDER, default=None,
              help="output folder [default: out/TRACK]")
@topic_options
@dry_run_options
@batch_options
@assessor_options
def evaluate_command(track: str, output: Path | None, only_topics: tuple[str, ...],
                     only_topics_file: Path | None, **options: Any) -> None:
    """Build the keys (or take the track's key file), judge the runs, score them; with several
    methods, each into OUT/METHOD/ and every measure side by side in OUT/leaderboard.tsv
    (--only-topics: on those topics only, every step)."""
    started = time.monotonic()
    only = chosen_topics(only_topics, only_topics_file)
    config: Track = load_track(track)
    out = output or Path("out") / config.name
    names = config.method_list()
    several = len(names) > 1
    plans = [track_method(config, name, out / name if several else out, several, only)
             for name in names]
    assessor = make_assessor_from(options, config.assessors or config.assessor, config.prices,
                                  config.samples, config.aggregate)
    runner = executor_from(options, assessor, out)
    if isinstance(runner, Batched) and config.relevance is not None and config.key is None:
        raise ConfigError("--batch-api does not cover a track with [relevance]: grade with "
                          "`relevance --batch-api` first and give the track those qrels")
    steps = [track_plan(config, plan, out, only) for plan in plans]

    async def run() -> list[Summary]:
        return [(await runner.run(step))[-1] for step in steps]

    summaries = run_with(assessor, run())  # one assessor for every method, closed once
    if isinstance(runner, Dry):
        return
    tables = []
    for plan in plans:
        if several:
            click.echo(f"== {plan.method.name} ==")
        scope = ScoreScope(plan.key, config.topics if plan.key is None else None, only,
                           config.lenient)
        tables.append(score_and_report(
            plan.method, [plan.judged], scope,
            ScoreFiles(plan.base / "leaderboard.tsv", plan.base / "per_topic.tsv"), started))
    table = tables[0]
    if several:
        table = combine_tables(tables)
        inputs = [config.topics] + [plan.base / name for plan in plans
                                    for name in ("leaderboard.tsv", "per_topic.tsv")]
        write_tables(table, out / "leaderboard.tsv", out / "per_topic.tsv")
        for name in ("leaderboard.tsv", "per_topic.tsv"):
            write_sidecar(out / name, inputs, table.left_out)
        click.echo(f"== {' + '.join(names)} (ranked by {table.primary}) ==")
        click.echo(format_leaderboard(table))
    embedded_note(assessor)
    stats = assessor.stats
    done = ", ".join(f"{s.done + s.resumed} {s.unit}" + (f" ({p.method.name})" if several else "")
                     for p, s in zip(plans, summaries))
    click.echo(
        f"evaluate: {len(table.topics)} topics, {done}, {stats.calls} LLM calls, "
        f"{stats.cache_hits} cache hits, {token_text(stats.as_dict())}{cost_text(assessor)}, "
        f"{sum(s.unjudged for s in summaries)} unjudged, "
        f"{time.monotonic() - started:.1f} s; outputs in {out}",
        err=True,
    )
    echo_lines(runner.lines())


def cost_text(assessor: Any) -> str:
    """`, cost X` of what the assessor spent, when prices were given."""
    cost = assessor.prices.spent(assessor.stats.as_dict()) if assessor.prices else None
    return "" if cost is None else f", cost {cost:.4f}"


COMMANDS = (evaluate_command,)
