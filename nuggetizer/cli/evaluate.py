"""`nuggetizer evaluate`: a track config's evaluation as one plan (plan/evaluate.py: each
method's keys built, graded or taken, its judgments and scores, and every measure side by
side), run by the executor the options select; this module shows what comes back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.cli.batch import batch_options, echo_lines
from nuggetizer.cli.common import (
    FOLDER,
    PROFILE,
    assessor_options,
    chosen_topics,
    dry_run_options,
    embedded_note,
    topic_options,
)
from nuggetizer.errors import ConfigError, NuggetizerError

if TYPE_CHECKING:
    from nuggetizer.interface.base import AnswerKeyMethod
    from nuggetizer.plan.track import Track
    from nuggetizer.scoring.engine import ScoreTable


@click.command("evaluate")
@click.option("--track", required=True, help="builtin track name (e.g. sample) or track.toml")
@click.option("-o", "--output", type=FOLDER, default=None,
              help="output folder [default: out/TRACK]")
@PROFILE
@topic_options
@dry_run_options
@batch_options
@assessor_options
def evaluate_command(track: str, output: Path | None, profile: str | None,
                     only_topics: tuple[str, ...], only_topics_file: Path | None,
                     **options: Any) -> None:
    """Build the keys (or take the track's key file), judge the runs, score them; with several
    methods, each into OUT/METHOD/ and every measure side by side in OUT/leaderboard.tsv
    (--only-topics: on those topics only, every step)."""
    from nuggetizer.formats.track_inputs import read_track_inputs
    from nuggetizer.plan.evaluate import (
        TrackScope,
        evaluate_plan,
        track_methods,
        track_methods_made,
        track_wanted,
    )
    from nuggetizer.plan.score import MISSING
    from nuggetizer.plan.track import load_track
    from nuggetizer.run.execute import Batched, Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with
    from nuggetizer.run.progress import token_text

    started = time.monotonic()
    only = chosen_topics(only_topics, only_topics_file)
    config: Track = load_track(track)
    if profile is not None:
        config.profile = profile  # type: ignore[assignment]  # one of the Choice's
    made = track_methods_made(config)
    scope = TrackScope(config, read_track_inputs(track_wanted(config, made)),
                       output or Path("out") / config.name, only)
    out, names, several = scope.out, config.method_list(), scope.several
    methods = track_methods(scope, made)
    assessor = make_assessor_from(options, config.assessors or config.assessor, config.prices,
                                  config.samples, config.aggregate)
    runner = executor_from(options, assessor, out)
    if isinstance(runner, Batched) and config.relevance is not None and config.key is None:
        raise ConfigError("--batch-api does not cover a track with [relevance]: grade with "
                          "`relevance --batch-api` first and give the track those qrels")
    evaluation = evaluate_plan(scope, methods, Shown(several))
    run_with(assessor, runner.run(evaluation.plan))  # one assessor for every method, closed once
    if isinstance(runner, Dry):
        return
    embedded_note(assessor)
    stats = assessor.stats
    done = ", ".join(f"{s.done + s.resumed} {s.unit}" + (f" ({m.method.name})" if several else "")
                     for m, s in zip(methods, evaluation.summaries))
    board = evaluation.table
    topics = len(board.topics) if board is not None else 0
    click.echo(
        f"evaluate: {topics} topics, {done}, {stats.calls} LLM calls, "
        f"{stats.cache_hits} cache hits, {token_text(stats.as_dict())}{cost_text(assessor)}, "
        f"{sum(s.unjudged for s in evaluation.summaries)} unjudged, "
        f"{time.monotonic() - started:.1f} s; outputs in {out}",
        err=True,
    )
    echo_lines(runner.lines())
    if evaluation.failed:
        said = "; ".join(f"{name}: {why}" for name, why in evaluation.failed.items())
        kept = "the other methods' boards are written" if board is not None else \
            "no method could be scored"
        raise NotScored(f"evaluate: {len(evaluation.failed)} of {len(names)} methods not "
                        f"scored ({said}); {kept}, and {out / MISSING} says which is missing "
                        "and why")


class NotScored(NuggetizerError):
    """A method of an evaluation could not be scored (the others were)."""

    exit_code = 1


class Shown:
    """What `evaluate` shows as its scoring stages end: each method's board (under its name,
    with several), then the combined one."""

    def __init__(self, several: bool) -> None:
        self.several, self.started = several, time.monotonic()

    def scoring(self, method: AnswerKeyMethod) -> None:
        self.started = time.monotonic()  # the score line gives the scoring's own time
        if self.several:
            click.echo(f"== {method.name} ==")

    def scored(self, method: AnswerKeyMethod, table: ScoreTable) -> None:
        from nuggetizer.cli.steps import show_scores

        show_scores(method, table, self.started)

    def combined(self, names: list[str], table: ScoreTable) -> None:
        from nuggetizer.scoring.tables import format_leaderboard

        click.echo(f"== {' + '.join(names)} (ranked by {table.primary}) ==")
        click.echo(format_leaderboard(table))

    def failed(self, method: AnswerKeyMethod, why: str) -> None:
        click.echo(f"evaluate: method {method.name} not scored, left out of the combined "
                   f"board: {why}", err=True)


def cost_text(assessor: Any) -> str:
    """`, cost X` of what the assessor spent, when prices were given."""
    cost = assessor.prices.spent(assessor.stats.as_dict()) if assessor.prices else None
    return "" if cost is None else f", cost {cost:.4f}"
