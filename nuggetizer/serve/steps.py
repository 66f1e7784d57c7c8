"""A request's work as plans the live executor runs (the CLI's plans and steps: plan/steps.py,
relevance/grade.py), into the request's scratch folder; what they wrote, read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import AssessorError
from nuggetizer.formats.writing import Journal, run_file_name
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.plan.steps import assign_plan, nuggetize_plan
from nuggetizer.relevance.grade import Pool, assess_relevance, pair_key
from nuggetizer.relevance.scales import Grading
from nuggetizer.run.stages import Plan, Stage, Where
from nuggetizer.serve.engine import Work
from nuggetizer.serve.inputs import jsonl
from nuggetizer.types import Segment, Topic


async def build_keys(work: Work, method: AnswerKeyMethod, inputs: Sequence[KeyInput]
                     ) -> list[dict[str, Any]]:
    """Every topic's key record, in input order."""
    out = work.scratch / "keys.out.jsonl"
    await work.run(nuggetize_plan(method, inputs, out))
    return jsonl(out)


async def judge(work: Work, method: AnswerKeyMethod, keys: Mapping[str, Any] | None,
                targets: Mapping[str, Mapping[str, Target]], *, partial: bool = False
                ) -> tuple[list[dict[str, Any]], AssessorError | None]:
    """Every target's judgment record, run by run (a topic outside the keys: none), and None;
    with `partial`, an LLM that failed midway gives the records finished before it (its
    journals') and its error instead of raising it (castorini's routes mark the rest
    failed)."""
    out = work.scratch / "judged"
    failed = None
    try:
        await work.run(assign_plan(method, keys, targets, out))
    except AssessorError as exc:
        if not partial:
            raise
        failed = exc
    return [r for run_id in targets for r in finished(out / run_file_name(run_id))], failed


def finished(path: Path) -> list[dict[str, Any]]:
    """The records of a step's output file, or of its journal when the step stopped before
    writing it (resume.ResumableOutput)."""
    if path.exists():
        return jsonl(path)
    return Journal(path.with_name(path.name + ".partial")).load()


async def grade(work: Work, topics: Mapping[str, Topic], pool: Mapping[str, list[str]],
                texts: Mapping[str, Segment], grading: Grading, *, partial: bool = False
                ) -> tuple[dict[str, dict[str, Any]], AssessorError | None]:
    """Every (topic, passage) of `pool` graded on `grading`'s scale: pair key -> record, and
    None; with `partial`, as `judge`'s."""
    qrels, judgments = work.scratch / "graded.qrels", work.scratch / "graded.jsonl"

    async def run(assessor: Any, where: Where) -> Any:
        return await assess_relevance(topics, Pool(dict(pool)), texts, assessor,
                                      where.path(qrels), where.path(judgments), grading=grading)

    failed = None
    try:
        await work.run(Plan([Stage("relevance", run, title=lambda: "relevance")]))
    except AssessorError as exc:
        if not partial:
            raise
        failed = exc
    return {pair_key(r): r for r in finished(judgments)}, failed
