"""The two LLM steps of every method over files: build keys, judge targets.

Both journal each finished unit at once (resume after a kill), record provenance on every
line, run units concurrently under the assessor's limit, show progress and end with a summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import Interrupted
from nuggetizer.formats.writing import run_file_name
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Outcome, Target
from nuggetizer.run.progress import Progress, Summary, progress_bar, say_recovered, usage_of
from nuggetizer.run.provenance import provenance
from nuggetizer.run.resume import ResumableOutput
from nuggetizer.run.usage import UsageLedger
from nuggetizer.run.votes import list_disagreements, note_votes, noting_votes

T = TypeVar("T")
U = TypeVar("U")


async def run_bounded(items: Sequence[T], start: Callable[[T], Awaitable[None]], limit: int,
                      stopped: Callable[[], bool] = lambda: False) -> None:
    """Run `start(item)` for every item, at most `limit` at once (a TaskGroup: the first error
    cancels the rest; the CLI unwraps the group). Starting units as others finish, rather than
    all at once, spreads their prompt rendering and cache look-ups between the LLM's answers
    instead of piling them up in front of the first ones; `limit` stays above the assessor's
    concurrency so it never idles. Once `stopped()` (Ctrl-C), no unit is started; those
    running end on their own (a unit stopped by the assessor ends cancelled, leaving its
    neighbours be)."""
    gate = asyncio.Semaphore(limit)

    async def run(item: T) -> None:
        try:
            await start(item)
        finally:
            gate.release()

    # The inputs already in memory (runs, keys: a few hundred thousand objects) live on until
    # the end: left to the cyclic collector, every full collection would scan them all again
    # (a 0.1 s pause with every call stalled). Frozen for the duration, they are skipped.
    gc.freeze()
    try:
        async with asyncio.TaskGroup() as group:
            for item in items:
                await gate.acquire()
                if stopped():
                    break
                group.create_task(run(item))
    finally:
        gc.unfreeze()


def _in_flight(assessor: Assessor) -> int:
    return assessor.concurrency + 16


async def run_journalled(
    todo: Sequence[U], work: Callable[[U], Awaitable[Outcome]],
    keep: Callable[[U, dict], None], stamp: dict, summary: Summary, label: str,
    assessor: Assessor, usage: UsageLedger | None = None,
) -> None:
    """The body of every journalled LLM step: run `work(unit)` for each unit still to do,
    concurrently under the assessor's limit; stamp each record with `stamp`, hand it to `keep`
    (which journals it at once), count it in `summary` and show progress. What it spent is
    written to `usage` (run/usage.py) at the end, when interrupted, and now and then while
    it runs, each answer paid for journalled as it comes (what a killed invocation spent is
    said, and counted); Interrupted when the assessor was stopped (Ctrl-C) before every unit
    was done."""
    before = assessor.stats.as_dict()
    if usage is not None:
        say_recovered(label, usage.recovered, usage.path)

    def settle(finished: bool, last: bool = True) -> None:
        summary.tokens = usage_of(before, assessor.stats.as_dict())
        summary.prices = assessor.prices
        if usage is not None:
            record = usage.write(summary.tokens, summary.prices, finished, last=last)
            summary.total, summary.invocations = record["usage"], record["invocations"]

    async def one(unit: U, bar: Progress) -> None:
        with noting_votes() as calls:
            outcome = await work(unit)
        note_votes(outcome.record, calls)
        info = assessor.provenance()  # what was sent: the server may have changed it
        if any(stamp.get(name) != value for name, value in info.items()):
            stamp.update(info)
        outcome.record["provenance"] = stamp
        keep(unit, outcome.record)
        summary.done += 1
        summary.unjudged += outcome.unjudged
        bar.update(1)
        if usage is not None and usage.due():
            settle(False, last=False)

    finished = False
    paying = usage.paying(assessor.prices) if usage is not None else contextlib.nullcontext()
    try:
        with paying, progress_bar(len(todo), label, unit=summary.unit,
                                  resumed=summary.resumed) as bar:
            await run_bounded(todo, lambda unit: one(unit, bar), _in_flight(assessor),
                              lambda: assessor.stopping)
        if assessor.stopping:
            await assessor.drained()
            raise Interrupted(f"{label}: {summary.done} of {len(todo)} {summary.unit} done "
                              "before the interrupt")
        finished = True
    finally:
        settle(finished)


def _stamp(method: AnswerKeyMethod, assessor: Assessor | None, track: str | None) -> dict:
    config = {"method": method.name, **method.settings()}
    info = assessor.provenance() if assessor is not None else None
    return provenance(info, method.used_prompts(), config=config, track=track,
                      prompt_dir=method.prompt_dir)


async def build_keys(
    method: AnswerKeyMethod, inputs: Sequence[KeyInput], assessor: Assessor, out: Path,
    track: str | None = None, skipped: int = 0, made_from: Sequence[Path] = (),
) -> Summary:
    """Build every topic's key into `out` (JSONL, input order); resumable per topic.
    `skipped` topics had no passage to build from (counted in the summary); `made_from`: the
    inputs made by an LLM step (graded qrels), whose usage the key's usage carries."""
    method.check_assessor(assessor)  # before anything is sent or written
    summary = Summary(f"nuggetize --method {method.name}", skipped=skipped,
                      skipped_why="no passage to build a key from")
    stamp = _stamp(method, assessor, track)
    output = ResumableOutput(out, lambda r: r["qid"], stamp)
    summary.resumed = sum(1 for i in inputs if output.done(i.qid))

    by_qid = {item.qid: item for item in inputs}
    todo = [item.qid for item in inputs if not output.done(item.qid)]
    await run_journalled(todo, lambda qid: method.build_key(assessor, by_qid[qid]),
                         lambda qid, record: output.add(record), stamp, summary, "nuggetize",
                         assessor, UsageLedger(out, summary.step, made_from))
    output.finish(i.qid for i in inputs)
    list_disagreements(out, output.records.values(), summary)
    return summary


def with_key_digest(method: AnswerKeyMethod, key: Any, record: dict) -> dict:
    """The record, its provenance recording the hash of the key it was judged against (the
    method's `key_digest`; a provenance of its own, the step's stamp being shared)."""
    digest = method.key_digest(key) if key is not None else None
    if digest is not None:
        record["provenance"] = {**record["provenance"], "key_sha256": digest}
    return record


async def judge_targets(
    method: AnswerKeyMethod, keys: Mapping[str, Any] | None,
    targets: Mapping[str, Mapping[str, Target]], assessor: Assessor, out_dir: Path,
    track: str | None = None,
) -> Summary:
    """Judge every target against its topic's key (`keys` None: a method that needs none, every
    target is judged with the key None): one file per run; resumable per topic."""
    if keys is None:
        keys = dict.fromkeys(q for by_topic in targets.values() for q in by_topic)
    kinds = {"answers" if t.answer is not None else "contexts"
             for by_topic in targets.values() for t in by_topic.values()}
    summary = Summary(f"assign --method {method.name}",
                      unit=kinds.pop() if len(kinds) == 1 else "targets",
                      skipped_why="topic not in the answer key")
    stamp = _stamp(method, assessor, track)
    outputs = {r: ResumableOutput(out_dir / run_file_name(r), lambda x: x["qid"], stamp)
               for r in targets}
    todo = []
    blank = {q: why for q, k in keys.items() if k is not None
             and (why := method.nothing_to_judge(k)) is not None}
    for run_id, by_topic in targets.items():
        for qid in by_topic:
            if qid in blank:
                summary.skip(f"topic's key has {blank[qid]}", f"topic {qid}")
            elif qid not in keys:
                summary.skip(summary.skipped_why, f"topic {qid}")
            elif outputs[run_id].done(qid):
                summary.resumed += 1
                journal = outputs[run_id].journal.path
                record = method.judgment_record(outputs[run_id].records[qid], journal, 0, True)
                summary.unjudged += method.judge_unjudged(record)
            else:
                todo.append((run_id, qid))

    await run_journalled(
        todo, lambda unit: method.judge(assessor, keys[unit[1]], targets[unit[0]][unit[1]]),
        lambda unit, record: outputs[unit[0]].add(with_key_digest(method, keys[unit[1]], record)),
        stamp, summary, "assign", assessor, UsageLedger(out_dir, summary.step, folder=True))
    for run_id, by_topic in targets.items():
        outputs[run_id].finish(q for q in by_topic if q in keys and q not in blank)
    list_disagreements(out_dir, (r for o in outputs.values() for r in o.records.values()),
                       summary)
    return summary
