"""The battles step over files: schedule the battles, judge each one once, journal it.

One judgments file (`battles.jsonl` in the output folder) holds every battle, one line each,
in schedule order; finished battles go to its journal at once (run/resume.py), keyed by
(topic, run A, run B), so a killed run loses nothing and a rerun repeats no battle. Every call
goes through the assessor (its cache); provenance is on every line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer import names
from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import ConfigError
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import validated
from nuggetizer.interface.base import AnswerKeyMethod, Target
from nuggetizer.labels import UNJUDGED
from nuggetizer.methods.battles.measures import verdicts
from nuggetizer.methods.battles.records import BATTLES_FILE, BattleJudgment, battle_key
from nuggetizer.methods.battles.schedule import Pairing, adaptive_pairs, schedule_battles
from nuggetizer.run.progress import Summary
from nuggetizer.run.provenance import same_identity
from nuggetizer.run.resume import ResumableOutput
from nuggetizer.run.steps import _stamp, run_journalled
from nuggetizer.run.usage import UsageLedger, added

SCHEDULES = names.SCHEDULES  # uniform, active


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


def check_common_topics(targets: Mapping[str, Mapping[str, Target]],
                        runs: Mapping[str, Sequence[str]]) -> None:
    """ConfigError naming the runs that share no topic with any other run: they would play
    no battle and get no score."""
    playing = {run_id for ids in runs.values() for run_id in ids}
    alone = [run_id for run_id in targets if run_id not in playing]
    if not alone:
        return
    said = ", ".join(f"{r!r} ({len(targets[r])} topics)" for r in alone)
    raise ConfigError(f"battles: no topic of run{'s' if len(alone) > 1 else ''} {said} is "
                      "answered by another run, so no battle can be judged for "
                      f"{'them' if len(alone) > 1 else 'it'}: give runs that answer the same "
                      "topics (check their topic ids and --only-topics)")


def plan_battles(targets: Mapping[str, Mapping[str, Target]], narratives: Mapping[str, str],
                 per_topic: int | None, budget: int | None, seed: int) -> Plan:
    """The scheduled battles (methods/battles/schedule.py: balanced, seeded; every pair when neither
    `per_topic` nor `budget` is given) between the runs that answered each topic; a topic's
    narrative from `narratives`, else the first text a run gives with its answer."""
    if len(targets) < 2:
        raise ConfigError(f"battles need at least two runs, got {len(targets)}")
    runs: dict[str, list[str]] = {}
    for run_id, by_topic in targets.items():
        for qid in by_topic:
            runs.setdefault(qid, []).append(run_id)
    runs = {qid: sorted(ids) for qid, ids in runs.items() if len(ids) >= 2}
    check_common_topics(targets, runs)
    pairings: list[Pairing] = schedule_battles(runs, per_topic=per_topic, budget=budget,
                                               seed=seed)
    shown = {}
    for qid, ids in runs.items():
        texts = [narratives.get(qid)] + [targets[r][qid].query for r in ids]
        shown[qid] = next((t for t in texts if t), "")
        if not shown[qid]:
            raise ConfigError(f"topic {qid!r} has no text to show the judge: give --topics")
    pairs = [dataclasses.replace(targets[p.run_a][p.qid], opponent=targets[p.run_b][p.qid])
             for p in pairings]
    all_pairs = sum(len(ids) * (len(ids) - 1) // 2 for ids in runs.values())
    return Plan(pairs, shown, len(targets), len(runs), all_pairs)


def judged_before(out: Path, stamp: dict) -> dict[str, dict[str, Any]]:
    """The battles an earlier, finished run wrote to `out` ({key: record}), judged the same
    way (assessor, prompt, settings); ConfigError when they were judged another way."""
    if not out.is_file():
        return {}
    found = {}
    for line, record in iter_jsonl(out):
        if not same_identity(record.get("provenance"), stamp):
            raise ConfigError(f"{out}:{line} holds battles judged with another assessor, "
                              "prompt or setting: give another -o folder, or delete it")
        battle = validated(BattleJudgment, record, out, line)
        found[battle_key(str(battle.qid), str(battle.run_a), str(battle.run_b))] = record
    return found


class RoundsLedger(UsageLedger):
    """The usage of one invocation of `battles` across its rounds: each round's spend added to
    the rounds' before it and written as one invocation (kept open until `close`)."""

    def __init__(self, output: Path, step: str) -> None:
        super().__init__(output, step, folder=True)
        self.carried: dict[str, Any] = {}
        self.latest: dict[str, Any] = {}

    def write(self, tokens: Mapping[str, Any], prices: Any, finished: bool, *,
              last: bool = True) -> dict[str, Any]:
        self.latest = dict(tokens)
        return super().write(added(self.carried, tokens), prices, finished, last=False)

    def next_round(self) -> None:
        """A round ended: its spend is carried; what a killed invocation spent is said once."""
        self.carried, self.latest = added(self.carried, self.latest), {}
        self.recovered = []

    def close(self, prices: Any, finished: bool = True) -> dict[str, Any]:
        """The invocation's last write: every round's spend."""
        self.next_round()
        return super().write(self.carried, prices, finished, last=True)


def battles_step(method: AnswerKeyMethod) -> str:
    """The step name battles are journalled and booked under."""
    return f"battles --method {method.name}"


async def judge_battles(method: AnswerKeyMethod, plan: Plan, assessor: Assessor,
                        out_dir: Path, track: str | None = None,
                        usage: UsageLedger | None = None) -> Summary:
    """Judge every battle of the plan into `out_dir/battles.jsonl`; resumable per battle, and
    cumulative: the battles the file already holds (a smaller budget, an earlier adaptive
    round) are kept and not judged again. `usage`: the ledger the spend is booked in (a
    RoundsLedger for an invocation of several rounds), else one of its own."""
    summary = Summary(battles_step(method), unit="battles",
                      unjudged_what="presentation orders")
    stamp = _stamp(method, assessor, track)
    output = ResumableOutput(out_dir / BATTLES_FILE,
                             lambda r: battle_key(r["qid"], r["run_a"], r["run_b"]), stamp)
    earlier = judged_before(out_dir / BATTLES_FILE, stamp)
    for key, record in earlier.items():
        output.records.setdefault(key, record)
    by_key = {pair_key(t): t for t in plan.pairs}
    if len(by_key) != len(plan.pairs):
        raise ConfigError("the schedule gave a battle twice")
    todo = []
    for key in by_key:
        if output.done(key):
            summary.resumed += 1
            summary.unjudged += int(output.records[key].get("unjudged") or 0)
            summary.empty += output.records[key].get("result") == UNJUDGED
        else:
            todo.append(key)

    def keep(key: str, record: dict[str, Any]) -> None:
        output.add(record)
        summary.empty += record.get("result") == UNJUDGED  # no order's verdict parsed

    await run_journalled(
        todo, lambda key: method.judge(assessor, plan.narratives[by_key[key].qid], by_key[key]),
        keep, stamp, summary, "battles", assessor,
        usage if usage is not None else UsageLedger(out_dir, summary.step, folder=True))
    output.finish([*earlier, *(k for k in by_key if k not in earlier)])
    return summary


def adaptive_plan(method: AnswerKeyMethod, plan: Plan, targets: Mapping[str, Mapping[str, Target]],
                  judged: Sequence[Mapping[str, Any]], per_topic: int | None,
                  budget: int | None, seed: int, schedule: str = "uniform") -> Plan:
    """A further round fitted on the `judged` battles (those of the rounds before): under the
    uniform schedule (schedule.py `adaptive_pairs`), battles not played yet between runs whose
    bootstrap intervals overlap, `per_topic` or `budget`; under the active one
    (methods/battles/active.py), as many battles as the first round, those that remove the
    most expected discordant pairs of the half-rule fit's ranking."""
    from nuggetizer.measures.bradley_terry import (  # numpy: when it fits
        bootstrap_intervals,
        fit_model,
    )
    from nuggetizer.methods.battles.active import active_pairs  # numpy and scipy too

    if schedule not in SCHEDULES:
        raise ConfigError(f"the battle schedule is one of {', '.join(SCHEDULES)}, not "
                          f"{schedule!r}")
    cfg = method.config
    found = verdicts(judged)
    runs: dict[str, list[str]] = {}
    for run_id, by_topic in targets.items():
        for qid in by_topic:
            runs.setdefault(qid, []).append(run_id)
    runs = {q: sorted(ids) for q, ids in runs.items() if len(ids) >= 2}
    played = [Pairing(str(r["qid"]), r["run_a"], r["run_b"]) for r in judged]
    if schedule == "active":
        scores = fit_model(found).scores if found else {}
        pairings = active_pairs(runs, scores, played, len(plan.pairs), seed=seed)
    else:
        intervals = bootstrap_intervals(found, ties=cfg.ties, rounds=max(1, cfg.rounds),
                                        seed=cfg.seed, level=cfg.level) if found else {}
        pairings = adaptive_pairs(runs, intervals, played, per_topic=per_topic,
                                  budget=budget, seed=seed)
    pairs = [dataclasses.replace(targets[p.run_a][p.qid], opponent=targets[p.run_b][p.qid])
             for p in pairings]
    return Plan(pairs, plan.narratives, plan.runs, plan.topics, plan.all_pairs)
