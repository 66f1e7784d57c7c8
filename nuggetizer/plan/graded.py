"""The plans that grade a pool of (topic, passage) pairs: `relevance`, and grade-then-build
(`nuggetize --grade-pool`, a track's [relevance]): the pool graded, then the keys built from
the passages graded >= the method's threshold, two stages of one plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click

from nuggetizer.assessors.base import DEFAULT_REASKS
from nuggetizer.errors import ConfigError
from nuggetizer.formats.track_inputs import TrackInputs, Wanted
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput
from nuggetizer.plan.sources import (
    attach_sub_narratives,
    check_fill,
    key_inputs_for,
    report_graded,
    restrict_topic_map,
    threshold,
)
from nuggetizer.plan.steps import NUGGETIZE_NOTE
from nuggetizer.relevance.grade import (
    Graded,
    assess_relevance,
    build_pool,
    judgments_path_for,
    pool_texts,
)
from nuggetizer.relevance.scales import DEFAULT_GRADING, Grading
from nuggetizer.run.dryrun import Ledger
from nuggetizer.run.stages import NothingToCount, Plan, Stage, Where
from nuggetizer.run.steps import build_keys
from nuggetizer.types import Qrel

GRADE_NOTE = "one call per pooled (topic, passage) pair not judged in --fill: exact"
KEYS_EXACT = "keys from the grades the cache holds: " + NUGGETIZE_NOTE
KEYS_BOUND = ("keys depend on grades not made yet: counted as if every pooled passage were "
              "graded {top} (an upper bound on the passages read); " + NUGGETIZE_NOTE)


@dataclass
class PoolSpec:
    """What is pooled and how it is graded: of the inputs read, the answer runs' references
    (or citations) and the first `depth` passages of the retrieval runs, of the chosen topics
    (`only`); the pairs judged in the qrels read (--fill) are kept as they are."""

    inputs: TrackInputs
    depth: int = 20
    cited_only: bool = False
    reasks: int = DEFAULT_REASKS
    allow_missing: bool = False
    grading: Grading = DEFAULT_GRADING
    only: set[str] | None = None

    def made_from(self) -> list[Path]:
        """The files the graded qrels are made from (their sidecar records them)."""
        wanted = self.inputs.wanted
        return [p for p in (wanted.topics,) if p is not None] + [
            *wanted.runs, *wanted.retrieval_runs, *([wanted.qrels] if wanted.qrels else [])]


def wanted_to_grade(files: Wanted, depth: int, judged: int | None = None) -> Wanted:
    """`files` with what grading their pool reads of them: every passage the answer runs list
    (their references; the cited ones are among them), the first `depth` of each retrieval
    run, and the passages the qrels kept (--fill) grade >= `judged`, for the keys built from
    the grades."""
    demand = files.passages
    lowest = min((g for g in (judged, demand.judged) if g is not None), default=None)
    return replace(files, passages=replace(
        demand, references=True, retrieved=max(depth, demand.retrieved), judged=lowest))


@dataclass
class KeySpec:
    """The keys built from graded passages: the method, its threshold flag, the track whose
    provenance they carry; `need_keys` (evaluate): no key at all is an error, `lower` says
    how to lower the threshold; `mapped`: nuggets mapped to sub-narratives."""

    method: AnswerKeyMethod
    min_grade: int | None = None
    track: str | None = None
    need_keys: bool = False
    lower: str = "--min-grade 0, or --set min_grade=0"
    mapped: bool = False


@dataclass
class _Pooled:
    """The pool read once, and what the stages found (for the ones after them)."""

    spec: PoolSpec
    topic_map: dict[str, Any]
    pool: Any
    kept: list[Qrel]
    graded: Graded | None = None
    inputs: list[KeyInput] = field(default_factory=list)

    async def grade(self, assessor: Any, out: Path, judgments: Path | None) -> Graded:
        """The whole relevance step: read the pooled texts, grade them, write the qrels
        `out`, the judgments (default `OUT.judgments.jsonl`) and the summary's skipped
        count."""
        spec, pool = self.spec, self.pool
        spec.grading.check([q for q, docs in pool.docids.items() if docs], "the topics graded")
        texts = pool_texts(pool, spec.inputs.passages, self.kept, spec.allow_missing)
        judged = judgments or judgments_path_for(out)
        done = await assess_relevance(self.topic_map, pool, texts, assessor, out, judged,
                                      self.kept, spec.reasks, spec.grading)
        if pool.outside:
            done.summary.skipped = sum(pool.outside.values())
            done.summary.skipped_why = f"passages of {len(pool.outside)} topics not in --topics"
        self.graded = Graded(pool, done, out, judged, spec.grading)
        return self.graded


def _pooled(spec: PoolSpec) -> _Pooled:
    """The (topic, passage) pairs to grade, and the qrels read (--fill), kept as they are."""
    inputs = spec.inputs
    topic_map = restrict_topic_map(inputs.topics or {}, spec.only, str(inputs.wanted.topics))
    pool = build_pool(topic_map, inputs.answers, list(inputs.retrieval.values()), spec.depth,
                      spec.cited_only)
    return _Pooled(spec, topic_map, pool, inputs.qrels)


def _grade_stage(pooled: _Pooled, qrels: Path, judgments: Path | None, announce: bool
                 ) -> Stage:
    spec, pool = pooled.spec, pooled.pool

    async def work(assessor: Any, where: Where) -> Graded:
        graded = await pooled.grade(assessor, where.path(qrels),
                                    judgments if where.final else None)
        if where.final:
            report_graded(graded, qrels, spec.made_from())
            if announce:
                click.echo(graded.assessed.summary.line() + f"; qrels in {qrels}", err=True)
        return graded

    return Stage("relevance", work,
                 title=lambda: (f"relevance ({pool.size} pooled pairs of "
                                f"{len(pool.docids)} topics)"),
                 note=lambda ledgers: GRADE_NOTE)


def relevance_plan(spec: PoolSpec, qrels: Path, judgments: Path | None = None) -> Plan:
    """The pooled pairs graded into the qrels file `qrels` (and its judgments)."""
    return Plan([_grade_stage(_pooled(spec), qrels, judgments, announce=False)],
                read=spec.inputs.lines())


def _graded_rows(pooled: _Pooled, dry: bool) -> list[Qrel]:
    """The qrels the grading wrote, each with its line; a dry run's: the grades the cache
    held (and --fill's), every other pooled pair graded the scale's top grade."""
    assert pooled.graded is not None
    rows = list(pooled.graded.assessed.rows)
    if dry:
        judged = {(q.qid, q.docid) for q in rows}
        top = pooled.spec.grading.scale.grades[-1]
        rows += [Qrel(qid=qid, docid=d, grade=top) for qid, ds in pooled.pool.docids.items()
                 for d in ds if (qid, d) not in judged]
    return [q.model_copy(update={"line": number}) for number, q in enumerate(rows, 1)]


def _with_graded(inputs: TrackInputs, rows: list[Qrel], qrels: Path) -> TrackInputs:
    """The inputs with the graded qrels (written to `qrels`) as the ones keys are built from."""
    return replace(inputs, qrels=rows, docs=[],
                   wanted=replace(inputs.wanted, qrels=qrels, docs_runs=()))


def _keys_stage(pooled: _Pooled, keys: KeySpec, graded_qrels: Path, key: Path) -> Stage:
    spec, method = pooled.spec, keys.method

    async def work(assessor: Any, where: Where) -> Any:
        qrels = where.path(graded_qrels)
        rows = _graded_rows(pooled, where.dry)
        if where.dry and not rows:
            raise NothingToCount
        inputs, skipped = key_inputs_for(method, _with_graded(spec.inputs, rows, qrels),
                                         keys.min_grade)
        if spec.only is not None:
            inputs = [i for i in inputs if i.qid in spec.only]
            skipped = len(pooled.topic_map) - len(inputs)
        pooled.inputs = inputs
        if where.final:
            _say_skipped(keys, graded_qrels, skipped, len(pooled.topic_map), bool(inputs))
        if keys.mapped:
            attach_sub_narratives(method, inputs, spec.grading)
        return await build_keys(method, inputs, assessor, where.path(key), keys.track,
                                skipped, [qrels])

    def note(ledgers: Sequence[Ledger]) -> str:
        return KEYS_EXACT if ledgers[0].calls == 0 else KEYS_BOUND.format(
            top=spec.grading.scale.grades[-1])

    return Stage("nuggetize", work,
                 title=lambda: f"nuggetize --method {method.name} ({len(pooled.inputs)} topics)",
                 note=note,
                 estimate=lambda: method.unrendered_key_calls(pooled.inputs))


def _say_skipped(keys: KeySpec, graded_qrels: Path, skipped: int, topics: int,
                 any_key: bool) -> None:
    """The topics that get no key; no key at all is an error where keys are needed."""
    grade = threshold(keys.method, keys.min_grade)
    if keys.need_keys and not any_key:
        raise ConfigError(f"no topic has a passage graded >= {grade} in {graded_qrels}: no "
                          f"answer key to score with (the graded qrels and their judgments "
                          f"are kept; {keys.lower} builds from every graded passage)")
    if skipped:
        click.echo(f"note: {skipped} of {topics} topics have no passage graded >= "
                   f"{grade} in {graded_qrels}: they get no key (and no score); a lower "
                   f"threshold ({keys.lower}) builds from every graded passage", err=True)


def grade_then_build_plan(spec: PoolSpec, keys: KeySpec, graded_qrels: Path, key: Path
                          ) -> Plan:
    """Answer keys without qrels: the pooled passages graded into `graded_qrels` (with its
    judgments and provenance), then the keys built into `key` from the passages graded >=
    the method's threshold. Both stages resume and replay; checked before any call."""
    method = keys.method
    if "qrels" not in method.judging.reads:
        raise ConfigError(f"--grade-pool: --method {method.name} does not build its keys "
                          "from judged passages")
    wanted = spec.inputs.wanted
    if not wanted.runs and not wanted.retrieval_runs:
        raise ConfigError("--grade-pool needs runs to pool: give --run")
    if wanted.corpus is None:
        raise ConfigError("--grade-pool needs --corpus for the texts of the pooled passages")
    check_fill(wanted.qrels, spec.grading, graded_qrels)
    pooled = _pooled(spec)
    return Plan([_grade_stage(pooled, graded_qrels, None, announce=True),
                 _keys_stage(pooled, keys, graded_qrels, key)], read=spec.inputs.lines())
