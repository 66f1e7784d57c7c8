"""`nuggetizer evaluate`: a track config's methods, each through the one flow (keys built,
graded or taken; judgments; scores), and every measure side by side."""


from __future__ import annotations

import time
from dataclasses import dataclass, field
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
from nuggetizer.cli.grading import track_grading
from nuggetizer.cli.steps import score_and_report
from nuggetizer.errors import ConfigError
from nuggetizer.flow.execute import Batched, Dry
from nuggetizer.flow.graded_plan import KeySpec, PoolSpec, grade_then_build_plan
from nuggetizer.flow.plan import Plan, assign_stage, key_stage
from nuggetizer.flow.progress import Summary, token_text
from nuggetizer.flow.provenance import write_sidecar
from nuggetizer.flow.scoring import combine_tables
from nuggetizer.flow.sources import (
    key_inputs_for,
    make_targets,
    restrict_inputs,
    restrict_targets,
)
from nuggetizer.flow.tables import format_leaderboard, write_tables
from nuggetizer.formats.topics import read_topics
from nuggetizer.methods.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.methods.registry import make_method
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
    plans = [_plan(config, name, out / name if several else out, several, only)
             for name in names]
    assessor = make_assessor_from(options, config.assessors or config.assessor, config.prices,
                                  config.samples, config.aggregate)
    runner = executor_from(options, assessor, out)
    if isinstance(runner, Batched) and config.relevance is not None and config.key is None:
        raise ConfigError("--batch-api does not cover a track with [relevance]: grade with "
                          "`relevance --batch-api` first and give the track those qrels")
    steps = [_steps(config, plan, out, only) for plan in plans]

    async def run() -> list[Summary]:
        return [(await runner.run(step))[-1] for step in steps]

    summaries = run_with(assessor, run())  # one assessor for every method, closed once
    if isinstance(runner, Dry):
        return
    tables = []
    for plan in plans:
        if several:
            click.echo(f"== {plan.method.name} ==")
        tables.append(score_and_report(
            plan.method, [plan.judged], plan.key, plan.base / "leaderboard.tsv",
            plan.base / "per_topic.tsv", config.lenient, started,
            topics=config.topics if plan.key is None else None, only=only))
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


@dataclass
class _Plan:
    """One method of a track's evaluation: where its key and judgments go, what it judges."""

    method: AnswerKeyMethod
    base: Path
    targets: dict[str, dict[str, Target]]
    key: Path | None
    judged: Path
    inputs: list[KeyInput] = field(default_factory=list)
    skipped: int = 0


def _plan(config: Track, name: str, base: Path, several: bool, only: set[str] | None
          ) -> _Plan:
    """Read and check what one method of the track needs before any LLM call. With several
    methods, each judges the runs of the kinds it judges (answers, retrieval contexts)."""
    method = make_method(name, config.settings(name))
    runs, retrieval = config.runs, config.retrieval_runs
    if several:
        runs = runs if "answer" in method.targets else []
        retrieval = retrieval if "context" in method.targets else []
    targets = restrict_targets(make_targets(method, runs, retrieval, config.corpus,
                                            config.depth, config.allow_missing, "auto",
                                            config.topics), only)
    keyless, given = not method.needs_key, config.key_of(method.name)
    if keyless and given is not None and not several:
        raise ConfigError(f"track {config.name}: method {method.name} judges without an answer "
                          "key: leave out `key`")
    key = None if keyless else given or base / method.key_file
    plan = _Plan(method, base, targets, key, base / method.judgments_dir)
    if given is None and not keyless and config.relevance is None:
        inputs, skipped = key_inputs_for(
            method, topics=config.topics, qrels=config.qrels, corpus=config.corpus,
            docs_runs=config.docs_runs, depth=config.depth)
        plan.inputs, plan.skipped = restrict_inputs(
            inputs, skipped, only, list(read_topics(config.topics)) if only else None)
    return plan


def _steps(config: Track, plan: _Plan, out: Path, only: set[str] | None) -> Plan:
    """One method's stages: its keys (graded pool then built, or built, or the track's) and
    its judgments; each says its summary when it ends, and a dry run their total."""
    method, key, graded = plan.method, plan.key, config.relevance
    given = config.key_of(method.name)
    stages = []
    if key is not None and given is None and graded is not None:
        stages = grade_then_build_plan(
            PoolSpec(config.topics, config.corpus, config.runs, config.retrieval_runs,
                     graded.depth, graded.cited_only, config.qrels, graded.reasks,
                     graded.allow_missing, track_grading(config), only),
            KeySpec(method, track=config.name, need_keys=True,
                    lower=f"min_grade = 0 in the track's [{method.name}] table",
                    mapped=graded.map_sub_narratives),
            out / "relevance.qrels", key).stages
    elif key is not None and given is None:
        stages = [key_stage(method, plan.inputs, key, skipped=plan.skipped, track=config.name)]
    judge = assign_stage(method, lambda: _keys(config, method, key, only), plan.targets,
                         plan.judged, config.name)
    for stage in stages:
        stage.name = f"{method.name}-{stage.name}"  # the batch state of each method apart
    for stage in stages[-1:]:
        stage.done = _say
    judge.blocked = lambda: None if key is None or key.exists() else (
        f"dry run assign: not counted: the answer key {key} is still to be built (run "
        "nuggetize first, then evaluate --dry-run counts assign exactly)")
    judge.name, judge.done = f"{method.name}-assign", _say
    return Plan([*stages, judge], total="evaluate (total)")


def _say(summary: Summary) -> None:
    click.echo(summary.line(), err=True)


def _keys(config: Track, method: AnswerKeyMethod, key: Path | None, only: set[str] | None
          ) -> dict[str, Any] | None:
    """The method's keys (of the chosen topics), None for a method that judges without."""
    keys = method.read_keys(key, config.lenient) if key is not None else None
    if keys is not None and only is not None:
        keys = {q: k for q, k in keys.items() if q in only}
    return keys


COMMANDS = (evaluate_command,)
