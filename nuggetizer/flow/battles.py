"""The battles step over files: schedule the battles, judge each one once, journal it.

One judgments file (`battles.jsonl` in the output folder) holds every battle, one line each,
in schedule order; finished battles go to its journal at once (flow/resume.py), keyed by
(topic, run A, run B), so a killed run loses nothing and a rerun repeats no battle. Every call
goes through the assessor (its cache); provenance is on every line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import ConfigError
from nuggetizer.flow.progress import Summary
from nuggetizer.flow.resume import ResumableOutput
from nuggetizer.flow.schedule import Pairing, schedule_battles
from nuggetizer.flow.steps import _stamp, run_journalled
from nuggetizer.flow.usage import UsageLedger
from nuggetizer.methods.base import AnswerKeyMethod, Target
from nuggetizer.methods.battles import BATTLES_FILE, battle_key


@dataclass
class Plan:
    """The battles a schedule chose, as pair targets (run A's answer with run B's as its
    `opponent`) and the narrative each topic is judged on."""

    pairs: list[Target]
    narratives: dict[str, str]
    runs: int
    topics: int
    all_pairs: int  # battles if every pair met on every topic both answered


def pair_key(target: Target) -> str:
    """The resume key of a pair target."""
    assert target.opponent is not None
    return battle_key(target.qid, target.run_id, target.opponent.run_id)


def plan_battles(targets: Mapping[str, Mapping[str, Target]], narratives: Mapping[str, str],
                 per_topic: int | None, budget: int | None, seed: int) -> Plan:
    """The scheduled battles (flow/schedule.py: balanced, seeded; every pair when neither
    `per_topic` nor `budget` is given) between the runs that answered each topic; a topic's
    narrative from `narratives`, else the runs' own topic text."""
    if len(targets) < 2:
        raise ConfigError(f"battles need at least two runs, got {len(targets)}")
    runs: dict[str, list[str]] = {}
    for run_id, by_topic in targets.items():
        for qid in by_topic:
            runs.setdefault(qid, []).append(run_id)
    runs = {qid: sorted(ids) for qid, ids in runs.items() if len(ids) >= 2}
    pairings: list[Pairing] = schedule_battles(runs, per_topic=per_topic, budget=budget,
                                               seed=seed)
    pairs, shown = [], {}
    for p in pairings:
        a, b = targets[p.run_a][p.qid], targets[p.run_b][p.qid]
        narrative = narratives.get(p.qid) or a.query or b.query
        if not narrative:
            raise ConfigError(f"topic {p.qid!r} has no text to show the judge: give --topics")
        shown[p.qid] = narrative
        pairs.append(dataclasses.replace(a, opponent=b))
    all_pairs = sum(len(ids) * (len(ids) - 1) // 2 for ids in runs.values())
    return Plan(pairs, shown, len(targets), len(runs), all_pairs)


async def judge_battles(method: AnswerKeyMethod, plan: Plan, assessor: Assessor,
                        out_dir: Path, track: str | None = None) -> Summary:
    """Judge every battle of the plan into `out_dir/battles.jsonl`; resumable per battle."""
    summary = Summary(f"battles --method {method.name}", unit="battles")
    stamp = _stamp(method, assessor, track)
    output = ResumableOutput(out_dir / BATTLES_FILE,
                             lambda r: battle_key(r["qid"], r["run_a"], r["run_b"]), stamp)
    by_key = {pair_key(t): t for t in plan.pairs}
    if len(by_key) != len(plan.pairs):
        raise ConfigError("the schedule gave a battle twice")
    todo = []
    for key in by_key:
        if output.done(key):
            summary.resumed += 1
            summary.unjudged += int(output.records[key].get("unjudged") or 0)
        else:
            todo.append(key)
    await run_journalled(
        todo, lambda key: method.judge(assessor, plan.narratives[by_key[key].qid], by_key[key]),
        lambda key, record: output.add(record), stamp, summary, "battles", assessor,
        UsageLedger(out_dir, summary.step, folder=True))
    output.finish(by_key)
    return summary
