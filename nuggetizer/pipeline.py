"""The AutoNuggetizer steps over files: nuggetize, assign, score."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import InputError
from nuggetizer.formats.assessments import assessment_record, read_assessments
from nuggetizer.formats.corpus import read_corpus
from nuggetizer.formats.nuggets import nuggets_record
from nuggetizer.keys.nuggets import (
    PROMPTS,
    NuggetConfig,
    assign_nuggets,
    create_nuggets,
    judged_pool,
)
from nuggetizer.leaderboard import ScoreTable, score
from nuggetizer.measures import answer_length
from nuggetizer.progress import Summary, progress_bar
from nuggetizer.provenance import provenance
from nuggetizer.resume import ResumableOutput
from nuggetizer.types import Answer, NuggetList, Qrel, Segment, Topic


def _provenance(assessor: Assessor, config: NuggetConfig, track: str | None) -> dict:
    return provenance(
        assessor.provenance(), PROMPTS, config=dataclasses.asdict(config), track=track
    )


@dataclass
class Pool:
    """What nugget creation reads: judged segments per topic, and their texts."""

    judged: dict[str, list[Qrel]]
    segments: dict[str, Segment]


def load_pool(qrels: Sequence[Qrel], qrels_path: Path, corpus_path: Path, min_grade: int) -> Pool:
    """Stream the corpus once, keeping the judged segments; each must be there."""
    judged = judged_pool(qrels, min_grade)
    wanted = {q.docid for qs in judged.values() for q in qs}
    segments = read_corpus(corpus_path, wanted)
    missing = [q for qs in judged.values() for q in qs if q.docid not in segments]
    if missing:
        first = min(missing, key=lambda q: q.line or 0)
        raise InputError(
            qrels_path,
            first.line,
            f"segment {first.docid} (judged for topic {first.qid}) is not in the corpus "
            f"{corpus_path}; {len(missing)} judged segments are missing: use the corpus the "
            "qrels were made on",
        )
    return Pool(judged, segments)


async def nuggetize(
    topics: dict[str, Topic],
    pool: Pool,
    assessor: Assessor,
    config: NuggetConfig,
    out: Path,
    track: str | None = None,
) -> Summary:
    """Build the nuggets of every topic that has judged segments; resumable."""
    summary = Summary("nuggetize")
    todo = [qid for qid in topics if qid in pool.judged]
    summary.skipped = len(topics) - len(todo)
    summary.skipped_why = f"no segments judged >= {config.min_grade}"
    stamp = _provenance(assessor, config, track)
    output = ResumableOutput(out, lambda r: r["qid"], stamp)

    async def one(qid: str, bar: object) -> None:
        segments = [pool.segments[q.docid] for q in pool.judged[qid]]
        result = await create_nuggets(assessor, qid, topics[qid].text, segments, config)
        record = nuggets_record(result.nuggets, stamp)
        if result.unparsed:
            record["unparsed"] = [u.record() for u in result.unparsed]
        output.add(record)
        summary.done += 1
        summary.unjudged += _nugget_problems(result.nuggets, len(result.unparsed))
        bar.update(1)  # type: ignore[attr-defined]

    summary.resumed = sum(1 for qid in todo if output.done(qid))
    for record in output.records.values():
        summary.unjudged += _nugget_problems(
            NuggetList.model_validate(record), len(record.get("unparsed", []))
        )
    with progress_bar(len(todo) - summary.resumed, "nuggetize") as bar:
        async with asyncio.TaskGroup() as group:
            for qid in todo:
                if not output.done(qid):
                    group.create_task(one(qid, bar))
    output.finish(todo)
    return summary


def _nugget_problems(nuggets: NuggetList, unparsed_windows: int) -> int:
    return unparsed_windows + sum(1 for n in nuggets.nuggets if n.importance == "unjudged")


def run_file_name(run_id: str) -> str:
    """The assessment file of a run inside the output folder."""
    return run_id.replace("/", "_").replace("\\", "_") + ".jsonl"


async def assign(
    runs: dict[str, dict[str, Answer]],
    keys: dict[str, NuggetList],
    assessor: Assessor,
    config: NuggetConfig,
    out_dir: Path,
    track: str | None = None,
) -> Summary:
    """Judge every answer of every run against its topic's nuggets; resumable per (run, topic)."""
    summary = Summary("assign", unit="answers", skipped_why="topic not in the answer key")
    stamp = _provenance(assessor, config, track)
    outputs = {
        run_id: ResumableOutput(out_dir / run_file_name(run_id), lambda r: r["qid"], stamp)
        for run_id in runs
    }
    todo: list[tuple[str, str]] = []
    for run_id, answers in runs.items():
        for qid in answers:
            if qid not in keys:
                summary.skipped += 1
            elif outputs[run_id].done(qid):
                summary.resumed += 1
                summary.unjudged += _unjudged(outputs[run_id].records[qid])
            else:
                todo.append((run_id, qid))

    async def one(run_id: str, qid: str, bar: object) -> None:
        answer = runs[run_id][qid]
        length = answer_length([s.text for s in answer.sentences])
        assessment = await assign_nuggets(assessor, keys[qid], answer, length, config)
        record = assessment_record(assessment, stamp)
        outputs[run_id].add(record)
        summary.done += 1
        summary.unjudged += _unjudged(record)
        bar.update(1)  # type: ignore[attr-defined]

    with progress_bar(len(todo), "assign") as bar:
        async with asyncio.TaskGroup() as group:
            for run_id, qid in todo:
                group.create_task(one(run_id, qid, bar))
    for run_id, answers in runs.items():
        outputs[run_id].finish(qid for qid in answers if qid in keys)
    return summary


def _unjudged(record: dict) -> int:
    return sum(1 for n in record["nuggets"] if n["assignment"] == "unjudged")


def assessment_files(paths: Sequence[Path]) -> list[Path]:
    """Files given, and the `*.jsonl` files inside folders given."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise InputError(path, None, "folder holds no *.jsonl assessment files")
            files += found
        else:
            files.append(path)
    return files


def score_files(
    paths: Sequence[Path], universe: Sequence[str] | None, *, lenient: bool = False
) -> ScoreTable:
    """Read assessment files (or folders of them) and score them."""
    assessments = []
    for path in assessment_files(paths):
        assessments += read_assessments(path, lenient=lenient)
    return score(assessments, universe)
