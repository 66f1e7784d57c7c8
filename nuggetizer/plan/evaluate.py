"""`evaluate --track`: what each method of a track needs, read and checked before any LLM call,
and the whole evaluation as one plan that any executor runs (run/execute.py): each method's
keys (graded then built, built, or the track's) and judgments, then each method's scores, then
every measure side by side."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import click

from nuggetizer.errors import ConfigError, NuggetizerError
from nuggetizer.formats.topics import read_topics
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.interface.registry import make_method
from nuggetizer.plan.graded import KeySpec, PoolSpec, grade_then_build_plan
from nuggetizer.plan.score import TABLES, ShownScores, combine_stage, score_stage
from nuggetizer.plan.sources import (
    key_inputs_for,
    make_targets,
    restrict_inputs,
    restrict_targets,
    track_grading,
)
from nuggetizer.plan.steps import assign_stage, key_stage
from nuggetizer.plan.track import Track
from nuggetizer.run.progress import Summary
from nuggetizer.run.stages import Plan, Stage
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.files import ScoreFiles, ScoreScope


@dataclass
class TrackMethod:
    """One method of a track's evaluation: where its key and judgments go, what it judges."""

    method: AnswerKeyMethod
    base: Path
    targets: dict[str, dict[str, Target]]
    key: Path | None
    judged: Path
    inputs: list[KeyInput] = field(default_factory=list)
    skipped: int = 0


def track_method(config: Track, name: str, base: Path, several: bool, only: set[str] | None
                 ) -> TrackMethod:
    """Read and check what one method of the track needs before any LLM call. With several
    methods, each judges the runs of the kinds it judges (answers, retrieval contexts)."""
    method = make_method(name, config.settings(name), config.profile)
    runs, retrieval = config.runs, config.retrieval_runs
    if several:
        runs = runs if "answer" in method.targets else []
        retrieval = retrieval if "context" in method.targets else []
    targets = restrict_targets(make_targets(method, runs, retrieval, config.corpus,
                                            config.depth, config.allow_missing, "auto",
                                            config.topics), only)
    keyless, given = not method.judging.needs_key, config.key_of(method.name)
    if keyless and given is not None and not several:
        raise ConfigError(f"track {config.name}: method {method.name} judges without an answer "
                          "key: leave out `key`")
    key = None if keyless else given or base / method.judging.key_file
    plan = TrackMethod(method, base, targets, key, base / method.judging.judgments_dir)
    if given is None and not keyless and config.relevance is None:
        inputs, skipped = key_inputs_for(
            method, topics=config.topics, qrels=config.qrels, corpus=config.corpus,
            docs_runs=config.docs_runs, depth=config.depth)
        plan.inputs, plan.skipped = restrict_inputs(
            inputs, skipped, only, list(read_topics(config.topics)) if only else None)
    return plan


def track_plan(config: Track, plan: TrackMethod, out: Path, only: set[str] | None,
               judged: Callable[[Summary], None] | None = None) -> Plan:
    """One method's stages: its keys (graded pool then built, or built, or the track's) and
    its judgments, each named after the method (the batch state of each method apart); the
    last key stage and the judging say their summary when they end (the judging's also goes
    to `judged`), and a dry run their total."""
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
    last = len(stages) - 1
    stages = [replace(stage, name=f"{method.name}-{stage.name}",
                      done=_say if k == last else stage.done) for k, stage in enumerate(stages)]
    judge = replace(
        assign_stage(method, lambda: _keys(config, method, key, only), plan.targets,
                     plan.judged, config.name, lambda: {
                         q: t.text for q, t in read_topics(config.topics).items()}),
        name=f"{method.name}-assign", done=_then(_say, judged),
        blocked=lambda: None if key is None or key.exists() else (
            f"dry run assign: not counted: the answer key {key} is still to be built (run "
            "nuggetize first, then evaluate --dry-run counts assign exactly)"))
    return Plan([*stages, judge], total="evaluate (total)")


def _say(summary: Summary) -> None:
    click.echo(summary.line(), err=True)


def _keys(config: Track, method: AnswerKeyMethod, key: Path | None, only: set[str] | None
          ) -> dict[str, Any] | None:
    """The method's keys (of the chosen topics), None for a method that judges without."""
    keys = method.read_keys(key, config.lenient) if key is not None else None
    if keys is not None and key is not None:
        method.complete_keys(keys, key, read_topics(config.topics))
    if keys is not None and only is not None:
        keys = {q: k for q, k in keys.items() if q in only}
    return keys


class Shown(ShownScores, Protocol):
    """What the command shows as the scoring stages end (the CLI's presenting)."""

    def combined(self, names: list[str], table: ScoreTable) -> None: ...

    def failed(self, method: AnswerKeyMethod, why: str) -> None: ...


@dataclass
class Evaluation:
    """`evaluate`'s plan, and what its stages hand back as they end: each method's judging
    summary and score table, the combined board (several methods), and the methods that
    could not be scored, with why."""

    methods: list[TrackMethod]
    shown: Shown
    plan: Plan = field(default_factory=lambda: Plan(total="evaluate (total)"))
    summaries: list[Summary] = field(default_factory=list)
    tables: list[ScoreTable] = field(default_factory=list)
    board: ScoreTable | None = None
    failed: dict[str, str] = field(default_factory=dict)  # method: why it has no scores

    @property
    def table(self) -> ScoreTable | None:
        """The leaderboard the evaluation ends with: the combined one, else the method's
        (None: no method could be scored)."""
        return self.board if self.board is not None else \
            self.tables[0] if self.tables else None

    def scoring(self, method: AnswerKeyMethod) -> None:
        self.shown.scoring(method)

    def scored(self, method: AnswerKeyMethod, table: ScoreTable) -> None:
        self.tables.append(table)
        self.shown.scored(method, table)

    def combined(self, table: ScoreTable | None) -> None:
        """The combined board (None: no method was scored)."""
        if table is not None:
            self.board = table
            self.shown.combined(self.scored_names(), table)

    def failing(self, method: AnswerKeyMethod, why: str) -> None:
        self.failed[method.name] = why
        self.shown.failed(method, why)

    def scored_names(self) -> list[str]:
        """The methods scored, in the track's order."""
        return [one.method.name for one in self.methods if one.method.name not in self.failed]


def evaluate_plan(config: Track, methods: list[TrackMethod], out: Path, only: set[str] | None,
                  shown: Shown) -> Evaluation:
    """Every stage of `evaluate`: each method's LLM stages (track_plan), then each method's
    scores into BASE/leaderboard.tsv and BASE/per_topic.tsv, then, with several methods,
    every measure side by side in OUT/ (a method that cannot be scored is said, left out
    and named there, and the others go on)."""
    evaluation = Evaluation(methods, shown)
    stages = evaluation.plan.stages
    several = len(methods) > 1
    for one in methods:
        stages += track_plan(config, one, out, only, evaluation.summaries.append).stages
    for one in methods:
        scope = ScoreScope(one.key, config.topics if one.key is None else None, only,
                           config.lenient)
        files = ScoreFiles(one.base / TABLES[0], one.base / TABLES[1])
        stage = score_stage(one.method, [one.judged], scope, files, evaluation)
        stages.append(_tolerant(stage, one.method, evaluation) if several else stage)
    if several:

        def inputs() -> list[Path]:
            return [config.topics] + [one.base / name for one in methods
                                      if one.method.name not in evaluation.failed
                                      for name in TABLES]

        stages.append(combine_stage(lambda: evaluation.tables, out, inputs,
                                    done=evaluation.combined,
                                    missing=lambda: evaluation.failed))
    return evaluation


def _tolerant(stage: Stage, method: AnswerKeyMethod, evaluation: Evaluation) -> Stage:
    """The scoring stage of one of several methods, tolerant: a failure (nothing scored, a
    bad judgment file) is said and recorded in `evaluation.failed`, and the other methods'
    stages go on; the combined board names the method missing and why."""
    work, done = stage.work, stage.done

    async def tolerant(assessor: Any, where: Any) -> Any:
        try:
            return await work(assessor, where)
        except NuggetizerError as exc:
            evaluation.failing(method, str(exc))
            return None

    def scored(table: Any) -> None:
        if table is not None and done is not None:
            done(table)

    return replace(stage, work=tolerant, done=scored)


def _then(first: Callable[[Any], None], second: Callable[[Any], None] | None
          ) -> Callable[[Any], None]:
    """`first` then `second` (if any), each given the stage's result."""

    def both(result: Any) -> None:
        first(result)
        if second is not None:
            second(result)

    return both
