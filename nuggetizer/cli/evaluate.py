"""`nuggetizer evaluate`: a track config's methods, each through the one flow (keys built,
graded or taken; judgments; scores), and every measure side by side."""


from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from nuggetizer.cli.batch import batch_options, batched, batcher_from, report
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
from nuggetizer.cli.dry import (
    ASSIGN_NOTE,
    NUGGETIZE_NOTE,
    dry_grade_then_build,
    dry_step,
    echo_report,
)
from nuggetizer.cli.grading import track_grading
from nuggetizer.cli.steps import (
    grade_then_build,
    key_inputs_for,
    make_targets,
    restrict_inputs,
    restrict_targets,
    score_and_report,
)
from nuggetizer.errors import ConfigError
from nuggetizer.flow.dryrun import Ledger, dry_assessor, importance_estimate
from nuggetizer.flow.progress import Summary, token_text
from nuggetizer.flow.provenance import write_sidecar
from nuggetizer.flow.scoring import combine_tables
from nuggetizer.flow.steps import build_keys, judge_targets
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
    batcher = batcher_from(options, assessor, out)
    if batcher is not None and config.relevance is not None and config.key is None:
        raise ConfigError("--batch-api does not cover a track with [relevance]: grade with "
                          "`relevance --batch-api` first and give the track those qrels")
    if options["dry_run"]:
        dry = dry_assessor(assessor, options)
        for plan in plans:
            dry_evaluate(config, plan.method, dry, plan.inputs, plan.skipped, plan.targets,
                         plan.key, only, assessor.prices)
        return

    async def steps() -> list[Summary]:
        return [await _evaluate_steps(config, plan, assessor, out, only, batcher)
                for plan in plans]

    summaries = run_with(assessor, steps())  # one assessor for every method, closed once
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
    report(batcher)


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


async def _evaluate_steps(config: Track, plan: _Plan, assessor: Any, out: Path,
                          only: set[str] | None, batcher: Any = None) -> Summary:
    """One method's keys (graded pool, built, or the track's) and judgments."""
    method, key, graded = plan.method, plan.key, config.relevance
    given = config.key_of(method.name)
    if key is not None and given is None and graded is not None:
        _, made = await grade_then_build(
            method, assessor, topics=config.topics, run_paths=config.runs,
            retrieval_runs=config.retrieval_runs, depth=graded.depth,
            cited_only=graded.cited_only, corpus=config.corpus, fill=config.qrels,
            graded_qrels=out / "relevance.qrels", key=key, reasks=graded.reasks,
            allow_missing=graded.allow_missing, track=config.name, need_keys=True,
            lower=f"min_grade = 0 in the track's [{method.name}] table", only=only,
            grading=track_grading(config), map_sub_narratives=graded.map_sub_narratives)
        click.echo(made.line(), err=True)
    elif key is not None and given is None:
        made = await batched(
            batcher, assessor, f"{method.name}-nuggetize", lambda a, tmp: build_keys(
                method, plan.inputs, a, tmp / key.name if tmp else key, config.name,
                plan.skipped))
        click.echo(made.line(), err=True)
    keys = method.read_keys(key, config.lenient) if key is not None else None
    if keys is not None and only is not None:
        keys = {q: k for q, k in keys.items() if q in only}
    summary = await batched(
        batcher, assessor, f"{method.name}-assign", lambda a, tmp: judge_targets(
            method, keys, plan.targets, a, tmp or plan.judged, config.name))
    click.echo(summary.line(), err=True)
    return summary


def dry_evaluate(config: Track, method: Any, dry: Any, inputs: list[KeyInput], skipped: int,
                 targets: dict, key: Path | None, only: set[str] | None, prices: Any) -> None:
    """`evaluate --dry-run`: the key step (when the track builds its keys) and the assign step
    (when the keys exist: the track's, or an earlier run's), counted, nothing sent."""
    total = Ledger()
    graded, given = config.relevance, config.key_of(method.name)
    if key is not None and given is None and graded is not None:
        total = dry_grade_then_build(
            method, dry, prices, topics=config.topics, run_paths=config.runs,
            retrieval_runs=config.retrieval_runs, depth=graded.depth,
            cited_only=graded.cited_only, corpus=config.corpus, fill=config.qrels,
            reasks=graded.reasks, allow_missing=graded.allow_missing, only=only,
            track=config.name, grading=track_grading(config),
            map_sub_narratives=graded.map_sub_narratives)
    elif key is not None and given is None:
        built = dry_step(dry, lambda tmp: build_keys(method, inputs, dry, tmp / key.name,
                                                     config.name, skipped))
        built.estimated_calls += importance_estimate(method, len(inputs))
        echo_report(f"nuggetize --method {method.name} ({len(inputs)} topics)", built, dry,
                    prices, NUGGETIZE_NOTE)
        total = built
    if key is not None and not key.exists():
        click.echo(f"dry run assign: not counted: the answer key {key} is still to be built "
                   "(run nuggetize first, then evaluate --dry-run counts assign exactly)",
                   err=True)
    else:
        keys = method.read_keys(key, config.lenient) if key is not None else None
        if keys is not None and only is not None:
            keys = {q: k for q, k in keys.items() if q in only}
        judged = dry_step(dry, lambda tmp: judge_targets(method, keys, targets, dry, tmp,
                                                         config.name))
        echo_report(f"assign --method {method.name}", judged, dry, prices, ASSIGN_NOTE)
        total = total.plus(judged)
    echo_report("evaluate (total)", total, dry, prices)


COMMANDS = (evaluate_command,)
