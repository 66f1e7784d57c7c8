"""`evaluate --track`: what each method of a track needs, read and checked before any LLM call,
and its plan (keys graded then built, built, or the track's; then its judgments), which any
executor runs (flow/execute.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from nuggetizer.errors import ConfigError
from nuggetizer.flow.graded_plan import KeySpec, PoolSpec, grade_then_build_plan
from nuggetizer.flow.plan import Plan, assign_stage, key_stage
from nuggetizer.flow.progress import Summary
from nuggetizer.flow.sources import (
    key_inputs_for,
    make_targets,
    restrict_inputs,
    restrict_targets,
    track_grading,
)
from nuggetizer.formats.topics import read_topics
from nuggetizer.methods.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.methods.registry import make_method
from nuggetizer.track import Track


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
    plan = TrackMethod(method, base, targets, key, base / method.judgments_dir)
    if given is None and not keyless and config.relevance is None:
        inputs, skipped = key_inputs_for(
            method, topics=config.topics, qrels=config.qrels, corpus=config.corpus,
            docs_runs=config.docs_runs, depth=config.depth)
        plan.inputs, plan.skipped = restrict_inputs(
            inputs, skipped, only, list(read_topics(config.topics)) if only else None)
    return plan


def track_plan(config: Track, plan: TrackMethod, out: Path, only: set[str] | None) -> Plan:
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
    if keys is not None and key is not None:
        method.complete_keys(keys, key, read_topics(config.topics))
    if keys is not None and only is not None:
        keys = {q: k for q, k in keys.items() if q in only}
    return keys
