"""`evaluate --track`: what the methods of a track read (`track_wanted`, read in one pass by
formats/track_inputs.py), what each makes of the inputs read, checked before any LLM call, and
the whole evaluation as one plan that any executor runs (run/execute.py): each method's keys
(graded then built, built, or the track's) and judgments, then each method's scores, then every
measure side by side. Planning reads no input file: the judging reads the keys (given or built
by the stage before) and the scoring the judgments when they run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import click

from nuggetizer.errors import ConfigError, NuggetizerError
from nuggetizer.formats.track_inputs import TrackInputs, Wanted
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.interface.registry import make_method
from nuggetizer.plan.graded import KeySpec, PoolSpec, grade_then_build_plan, wanted_to_grade
from nuggetizer.plan.score import TABLES, ShownScores, combine_stage, score_stage
from nuggetizer.plan.sources import (
    key_inputs_for,
    make_targets,
    restrict_inputs,
    restrict_targets,
    threshold,
    track_grading,
    wanted_to_build,
    wanted_to_judge,
)
from nuggetizer.plan.steps import assign_stage, key_stage
from nuggetizer.plan.track import Track
from nuggetizer.run.progress import Summary
from nuggetizer.run.stages import Plan, Stage
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.files import ScoreFiles, ScoreScope


@dataclass
class TrackScope:
    """A track's evaluation as asked for: its config, its inputs read, the output folder, the
    chosen topics (None: all)."""

    config: Track
    inputs: TrackInputs
    out: Path
    only: set[str] | None = None

    @property
    def several(self) -> bool:
        """Several methods: each into OUT/METHOD/, every measure side by side in OUT/."""
        return len(self.config.method_list()) > 1


@dataclass
class TrackMethod:
    """One method of a track's evaluation: where its key and judgments go, what it judges,
    the key the track gives it (None: built, or none)."""

    method: AnswerKeyMethod
    base: Path
    targets: dict[str, dict[str, Target]]
    key: Path | None
    judged: Path
    given: Path | None = None
    inputs: list[KeyInput] = field(default_factory=list)
    skipped: int = 0


def track_methods_made(config: Track) -> list[AnswerKeyMethod]:
    """The track's methods with their settings, scoring under its profile."""
    return [make_method(name, config.settings(name), config.profile)
            for name in config.method_list()]


def _builds(config: Track, method: AnswerKeyMethod) -> bool:
    """Whether the method builds its key from the track's qrels (or --docs-run)."""
    return method.judging.needs_key and config.key_of(method.name) is None


def track_wanted(config: Track, methods: list[AnswerKeyMethod]) -> Wanted:
    """What the track's evaluation reads for its methods, in one pass: the topics, the runs
    they judge (report runs checked against their track's rules, the topics file giving the
    length limits), the qrels and runs keys are built from, the sub-narratives of a
    [relevance] table, and the passages of the corpus all of those need."""
    graded = config.relevance
    wanted = wanted_to_judge(methods, Wanted(
        topics=config.topics, qrels=config.qrels, corpus=config.corpus, runs=config.runs,
        retrieval_runs=config.retrieval_runs, docs_runs=config.docs_runs,
        narratives=graded.narratives if graded else None,
        sub_narratives_from=graded.sub_narratives_from if graded else None,
        track_rules="auto", requests=config.topics, depth=config.depth,
        allow_missing=config.allow_missing))
    builders = [m for m in methods if _builds(config, m)]
    if graded is None:
        for method in builders:
            wanted = wanted_to_build(method, wanted)
        return wanted
    return wanted_to_grade(wanted, graded.depth,
                           min((threshold(m) for m in builders), default=None))


def track_methods(scope: TrackScope, methods: list[AnswerKeyMethod]) -> list[TrackMethod]:
    """What each method of the track makes of the inputs read, checked before any LLM call."""
    return [_track_method(scope, method) for method in methods]


def _track_method(scope: TrackScope, method: AnswerKeyMethod) -> TrackMethod:
    """One method's targets, key and key inputs. With several methods, each judges the runs
    of the kinds it judges (answers, retrieval contexts)."""
    config, several, only = scope.config, scope.several, scope.only
    base = scope.out / method.name if several else scope.out
    targets = restrict_targets(make_targets(method, scope.inputs), only)
    keyless, given = not method.judging.needs_key, config.key_of(method.name)
    if keyless and given is not None and not several:
        raise ConfigError(f"track {config.name}: method {method.name} judges without an answer "
                          "key: leave out `key`")
    key = None if keyless else given or base / method.judging.key_file
    plan = TrackMethod(method, base, targets, key, base / method.judging.judgments_dir,
                       None if keyless else given)
    if given is None and not keyless and config.relevance is None:
        inputs, skipped = key_inputs_for(method, scope.inputs)
        topics = scope.inputs.topics or {}
        plan.inputs, plan.skipped = restrict_inputs(inputs, skipped, only,
                                                    list(topics) if only else None)
    return plan


def track_plan(scope: TrackScope, plan: TrackMethod,
               judged: Callable[[Summary], None] | None = None) -> Plan:
    """One method's stages: its keys (graded pool then built, or built, or the track's) and
    its judgments, each named after the method (the batch state of each method apart); the
    last key stage and the judging say their summary when they end (the judging's also goes
    to `judged`), and a dry run their total."""
    config, inputs, only = scope.config, scope.inputs, scope.only
    method, key, graded = plan.method, plan.key, config.relevance
    stages = []
    if key is not None and plan.given is None and graded is not None:
        stages = grade_then_build_plan(
            PoolSpec(inputs, graded.depth, graded.cited_only, graded.reasks,
                     graded.allow_missing, track_grading(config, inputs), only),
            KeySpec(method, track=config.name, need_keys=True,
                    lower=f"min_grade = 0 in the track's [{method.name}] table",
                    mapped=graded.map_sub_narratives),
            scope.out / "relevance.qrels", key).stages
    elif key is not None and plan.given is None:
        stages = [key_stage(method, plan.inputs, key, skipped=plan.skipped, track=config.name)]
    last = len(stages) - 1
    stages = [replace(stage, name=f"{method.name}-{stage.name}",
                      done=_say if k == last else stage.done) for k, stage in enumerate(stages)]
    topics = inputs.topics or {}
    judge = replace(
        assign_stage(method, lambda: _keys(scope, method, key), plan.targets,
                     plan.judged, config.name, lambda: {q: t.text for q, t in topics.items()}),
        name=f"{method.name}-assign", done=_then(_say, judged),
        blocked=lambda: None if key is None or key.exists() else (
            f"dry run assign: not counted: the answer key {key} is still to be built (run "
            "nuggetize first, then evaluate --dry-run counts assign exactly)"))
    return Plan([*stages, judge], total="evaluate (total)")


def _say(summary: Summary) -> None:
    click.echo(summary.line(), err=True)


def _keys(scope: TrackScope, method: AnswerKeyMethod, key: Path | None
          ) -> dict[str, Any] | None:
    """The method's keys (of the chosen topics), None for a method that judges without: read
    by the method (its own key format) when its judging starts, as they may be built by the
    stage before."""
    only = scope.only
    keys = method.read_keys(key, scope.config.lenient) if key is not None else None
    if keys is not None and key is not None:
        method.complete_keys(keys, key, scope.inputs.topics)
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


def evaluate_plan(scope: TrackScope, methods: list[TrackMethod], shown: Shown) -> Evaluation:
    """Every stage of `evaluate`: each method's LLM stages (track_plan), then each method's
    scores into BASE/leaderboard.tsv and BASE/per_topic.tsv, then, with several methods,
    every measure side by side in OUT/ (a method that cannot be scored is said, left out
    and named there, and the others go on). A dry run first says what was read."""
    config, out = scope.config, scope.out
    evaluation = Evaluation(methods, shown)
    evaluation.plan.read = scope.inputs.lines()
    stages = evaluation.plan.stages
    several = scope.several
    for one in methods:
        stages += track_plan(scope, one, evaluation.summaries.append).stages
    for one in methods:
        score = ScoreScope(one.key, config.topics if one.key is None else None, scope.only,
                           config.lenient)
        files = ScoreFiles(one.base / TABLES[0], one.base / TABLES[1])
        stage = score_stage(one.method, [one.judged], score, files, evaluation)
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
