"""The AutoNuggetizer's steps in-process, as the CLI runs them (for tests that drive the flow
without a subprocess): the same functions of nuggetizer.plan and run, given nuggets inputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.assessors import Assessor
from nuggetizer.formats import TrackInputs, Wanted, read_passages
from nuggetizer.interface import Judged
from nuggetizer.methods.nuggets import NuggetConfig, NuggetsMethod
from nuggetizer.plan import answer_targets, key_inputs
from nuggetizer.run import Summary, build_keys, judge_targets
from nuggetizer.scoring import ScoreTable, score_judged, score_paths
from nuggetizer.types import Answer, Assessment, NuggetList, Qrel, Topic


async def assign(runs: dict[str, dict[str, Answer]], keys: dict[str, NuggetList],
                 assessor: Assessor, config: NuggetConfig, out: Path) -> Summary:
    """`nuggetizer assign`: every answer of every run against its topic's nuggets."""
    return await judge_targets(NuggetsMethod(config), keys, answer_targets(runs), assessor, out)


async def nuggetize(topics: dict[str, Topic], qrels: Sequence[Qrel], corpus: Path,
                    assessor: Assessor, config: NuggetConfig, out: Path) -> Summary:
    """`nuggetizer nuggetize`: nuggets of every topic with judged segments."""
    judged = {q.docid for q in qrels if q.grade >= config.min_grade}
    read = TrackInputs(Wanted(corpus=corpus), qrels=list(qrels),
                       passages=read_passages(corpus, judged))
    inputs, skipped = key_inputs(topics, read, config.min_grade, skip_without_documents=True)
    return await build_keys(NuggetsMethod(config), inputs, assessor, out, None, skipped)


def score(assessments: Iterable[Assessment], universe: Sequence[str] | None = None
          ) -> ScoreTable:
    """`nuggetizer score` over assessments in memory; `universe`: the topics scored."""
    judged = [Judged(a.run_id, a.qid, a, Path("<memory>"), n)
              for n, a in enumerate(assessments, 1)]
    keys: Any = dict.fromkeys(universe) if universe is not None else None
    return score_judged(NuggetsMethod(), judged, keys)


def score_folder(paths: Sequence[Path]) -> ScoreTable:
    """`nuggetizer score FOLDER` without a key."""
    return score_paths(NuggetsMethod(), paths)
