"""The battle schedule: balanced per topic, reproducible, all pairs when the budget allows."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter

import pytest

from nuggetizer.errors import ConfigError
from nuggetizer.methods.battles import Pairing, adaptive_pairs, pair_sequence, schedule_battles


def runs_of(n: int) -> list[str]:
    return [f"run{k:02d}" for k in range(n)]


def played(pairings: list[Pairing], qid: str, runs: list[str]) -> Counter:
    counts = Counter({run: 0 for run in runs})
    for p in pairings:
        if p.qid == qid:
            counts[p.run_a] += 1
            counts[p.run_b] += 1
    return counts


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 11, 16, 83])
def test_every_prefix_is_balanced_and_covers_each_pair_once(n):
    runs = runs_of(n)
    sequence = pair_sequence("q1", runs, seed=5)
    assert len(sequence) == n * (n - 1) // 2 == len(set(sequence))
    assert all(a < b and a in runs and b in runs for a, b in sequence)
    counts = Counter({run: 0 for run in runs})
    for a, b in sequence:
        counts[a] += 1
        counts[b] += 1
        assert max(counts.values()) - min(counts.values()) <= 1


def test_per_topic_balance_with_different_runs_per_topic():
    rng = random.Random(1)
    runs = {f"q{t}": rng.sample(runs_of(30), rng.randint(2, 30)) for t in range(20)}
    for k in (1, 2, 7, 20, 100):
        schedule = schedule_battles(runs, per_topic=k, seed=3)
        for qid, names in runs.items():
            mine = [p for p in schedule if p.qid == qid]
            pairs = len(names) * (len(names) - 1) // 2
            assert len(mine) == min(k, pairs)
            assert len(set(mine)) == len(mine)  # no pair twice
            assert all(p.run_a < p.run_b for p in mine)
            counts = played(schedule, qid, names)
            assert max(counts.values()) - min(counts.values()) <= 1, (qid, k)


def test_reproducible_from_the_seed_and_independent_of_input_order():
    runs = {f"q{t}": runs_of(9) for t in range(6)}
    shuffled = {}
    rng = random.Random(4)
    for qid in rng.sample(sorted(runs), len(runs)):
        shuffled[qid] = rng.sample(runs[qid], len(runs[qid]))
    first = schedule_battles(runs, per_topic=10, seed=7)
    assert schedule_battles(shuffled, per_topic=10, seed=7) == first
    assert schedule_battles(runs, per_topic=10, seed=8) != first
    # topics draw their own opponents: not the same pairs on every topic
    by_topic = {qid: {(p.run_a, p.run_b) for p in first if p.qid == qid} for qid in runs}
    assert len({frozenset(pairs) for pairs in by_topic.values()}) > 1


def test_all_pairs_when_the_budget_allows():
    runs = {"q1": runs_of(7), "q2": runs_of(4)}
    everything = {Pairing(q, a, b) for q, names in runs.items()
                  for i, a in enumerate(sorted(names)) for b in sorted(names)[i + 1:]}
    assert set(schedule_battles(runs)) == everything
    assert len(schedule_battles(runs)) == 21 + 6
    assert set(schedule_battles(runs, per_topic=21)) == everything
    assert set(schedule_battles(runs, per_topic=1000)) == everything
    assert set(schedule_battles(runs, budget=27)) == everything
    assert set(schedule_battles(runs, budget=10**6)) == everything


def test_a_larger_budget_extends_a_smaller_one():
    runs = {"q1": runs_of(12)}
    small = schedule_battles(runs, per_topic=10, seed=2)
    large = schedule_battles(runs, per_topic=25, seed=2)
    assert large[:10] == small


def test_budget_split_evenly_remainder_to_first_topics_and_surplus_passed_on():
    runs = {"q3": runs_of(10), "q1": runs_of(10), "q2": runs_of(10)}
    per = Counter(p.qid for p in schedule_battles(runs, budget=10))
    assert per == {"q1": 4, "q2": 3, "q3": 3}
    # q1 has 3 pairs only: what it cannot use goes to the others, evenly
    runs = {"q1": runs_of(3), "q2": runs_of(10), "q3": runs_of(10), "q4": ["solo"]}
    per = Counter(p.qid for p in schedule_battles(runs, budget=31))
    assert per == {"q1": 3, "q2": 14, "q3": 14}


def test_opponents_spread_across_topics():
    runs = {f"q{t:03d}": runs_of(83) for t in range(119)}
    schedule = schedule_battles(runs, per_topic=415, seed=0)  # about 10 battles per run
    assert len(schedule) == 415 * 119
    opponents: dict[str, set[str]] = {run: set() for run in runs_of(83)}
    for p in schedule:
        opponents[p.run_a].add(p.run_b)
        opponents[p.run_b].add(p.run_a)
    # ~1,190 battles each over 82 possible opponents: every run meets nearly all of them
    assert min(len(o) for o in opponents.values()) >= 78


def test_bad_budgets_are_refused():
    runs = {"q1": runs_of(5), "q2": runs_of(5), "q3": runs_of(5)}
    with pytest.raises(ConfigError, match="below the 3 topics"):
        schedule_battles(runs, budget=2)
    with pytest.raises(ConfigError, match="at least 1"):
        schedule_battles(runs, per_topic=0)
    with pytest.raises(ConfigError, match="not both"):
        schedule_battles(runs, per_topic=2, budget=10)
    assert schedule_battles({"q1": ["only"]}) == []
    assert schedule_battles({"q1": ["a", "a", "b"]}) == [Pairing("q1", "a", "b")]


def test_adaptive_round_plays_only_unplayed_pairs_whose_intervals_overlap():
    runs = {f"q{t}": runs_of(8) for t in range(5)}
    first = schedule_battles(runs, per_topic=6, seed=1)
    # run00-run03 close together, run04-run07 each far from every other run
    intervals = {f"run{k:02d}": (1000.0 + 5 * k, 1030.0 + 5 * k) for k in range(4)}
    intervals |= {f"run{k:02d}": (2000.0 + 100 * k, 2050.0 + 100 * k) for k in range(4, 8)}
    more = adaptive_pairs(runs, intervals, first, per_topic=10, seed=1)
    close = {f"run{k:02d}" for k in range(4)}
    assert more and all(p.run_a in close and p.run_b in close for p in more)
    assert not set(more) & set(first)  # never a battle twice
    assert len(set(more)) == len(more)
    for qid in runs:  # every close pair not played in the first round, up to 10 per topic
        unplayed = {(a, b) for a in close for b in close if a < b} - {
            (p.run_a, p.run_b) for p in first if p.qid == qid}
        assert {(p.run_a, p.run_b) for p in more if p.qid == qid} == unplayed
    assert adaptive_pairs(runs, intervals, first, per_topic=10, seed=1) == more
    # a run without an interval overlaps everyone; a budget is split over the topics
    wide = adaptive_pairs(runs, {}, first, budget=7, seed=1)
    assert len(wide) == 7 and not set(wide) & set(first)
    assert sorted(Counter(p.qid for p in wide).values()) == [1, 1, 1, 2, 2]
    everything = schedule_battles(runs)
    assert adaptive_pairs(runs, {}, everything, budget=3) == []


def test_the_same_schedule_in_another_process():
    """Seeded by strings, not by Python's per-process hash: a rerun schedules the same."""
    code = ("from nuggetizer.methods.battles.schedule import schedule_battles; "
            "print(schedule_battles({f'q{t}': [f'r{k}' for k in range(9)] for t in range(4)}, "
            "per_topic=7, seed=11))")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONHASHSEED": hash_seed}).stdout
               for hash_seed in ("1", "2")}
    here = schedule_battles({f"q{t}": [f"r{k}" for k in range(9)] for t in range(4)},
                            per_topic=7, seed=11)
    assert outputs == {f"{here}\n"}
