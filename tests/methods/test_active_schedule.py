"""The active schedule: the least certain pairs first, seeded, never a battle twice, exactly
min(budget, battles left) a round, its balance rules; and `battles --schedule active` end to end:
the dry run counts the real calls, a killed run resumes without repeating a battle and makes
the same rounds, and all the rounds are one invocation in the usage."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import emulator, kill_after
from methods.test_battles import FAST, baselines, battles_args, dry_calls, records

from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError
from nuggetizer.methods.battles.schedule import active_pairs, schedule_battles

RUNS = [f"run{k:02d}" for k in range(12)]
TOPICS = {f"q{t}": RUNS for t in range(8)}
SCORES = {r: 100.0 * k for k, r in enumerate(RUNS)}  # neighbours 100 apart
SD = {r: 30.0 for r in RUNS}  # neighbours: z = 100 / 42 = 2.36; the next ones 4.7: settled


def test_least_certain_pairs_first_and_never_a_battle_twice() -> None:
    played = schedule_battles(TOPICS, per_topic=2, seed=1)
    chosen = active_pairs(TOPICS, SCORES, SD, played, budget=40, seed=1)
    assert len(chosen) == 40 and len(set(chosen)) == 40
    assert not set(chosen) & set(played)
    # only neighbours in the ranking (the only unsettled pairs) while they have battles left
    assert all(abs(RUNS.index(p.run_a) - RUNS.index(p.run_b)) == 1 for p in chosen)
    # reproducible from the seed, and the seed matters
    assert active_pairs(TOPICS, SCORES, SD, played, budget=40, seed=1) == chosen
    assert active_pairs(TOPICS, SCORES, SD, played, budget=40, seed=2) != chosen


def test_exactly_min_budget_and_battles_left() -> None:
    everything = schedule_battles(TOPICS, seed=0)
    played = everything[:-15]
    chosen = active_pairs(TOPICS, SCORES, SD, played, budget=100, seed=0)
    assert sorted(chosen) == sorted(everything[-15:])  # the last 15, capped runs or not
    assert active_pairs(TOPICS, SCORES, SD, everything, budget=5, seed=0) == []
    with pytest.raises(ConfigError):
        active_pairs(TOPICS, SCORES, SD, played, budget=0)


def test_balance_rules() -> None:
    """Battles go to the least used topics; no run plays more than twice its share; settled
    pairs only when the unsettled ones are spent."""
    budget = 30
    chosen = active_pairs(TOPICS, SCORES, SD, [], budget=budget, seed=3)
    loads = Counter(p.qid for p in chosen)
    assert max(loads.values()) - min(loads.values()) <= 1 and len(loads) == len(TOPICS)
    plays = Counter(r for p in chosen for r in (p.run_a, p.run_b))
    cap = max(2, -(-4 * budget // len(RUNS)))
    assert max(plays.values()) <= cap
    # the neighbours have 11 pairs x 8 topics = 88 battles: a round of 100 spends them first
    big = active_pairs(TOPICS, SCORES, SD, [], budget=100, seed=3)
    neighbours = [p for p in big if abs(RUNS.index(p.run_a) - RUNS.index(p.run_b)) == 1]
    assert len(neighbours) == 88 and len(big) == 100
    # a run with no score yet is uncertain against everyone: it plays first
    fresh = dict(SCORES)
    del fresh["run05"]
    some = active_pairs(TOPICS, fresh, SD, [], budget=11, seed=0, cap=11)
    assert all("run05" in (p.run_a, p.run_b) for p in some)


def test_cli_dry_run_counts_and_rounds_are_one_invocation(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=8)
    out = tmp_path / "out"
    with emulator(tmp_path, "--seed", "4") as server:
        common = ["--battles-per-topic", "1", "--seed", "3", "--schedule", "active",
                  "--adaptive-rounds", "1", "--no-cache", "--assessor", "openai:emulated",
                  "--base-url", server.url]
        dry = CliRunner().invoke(cli, battles_args(paths, out, "--dry-run", *common))
        assert dry.exit_code == 0, dry.output
        real = CliRunner().invoke(cli, battles_args(paths, out, *common))
        assert real.exit_code == 0, real.output
        answered = [r for r in server.requests() if r["outcome"] == "ok"]
    battles = records(out)
    assert len(battles) == 16 and len({(r["qid"], r["run_a"], r["run_b"]) for r in battles}) == 16
    more = re.search(r"about (\d+) more calls not rendered", dry.output)
    assert more, dry.output
    assert dry_calls(dry.output) + int(more.group(1)) == len(answered) == 2 * 16
    usage = json.loads((out / "usage.json").read_text())
    assert usage["invocations"] == 1
    assert usage["usage"]["calls"] == len(answered)  # both rounds' spend, none under-counted
    # a (run, topic) cell without a battle is not drawn: counted, no row, never a 0
    drawn = {(r[side], r["qid"]) for r in battles for side in ("run_a", "run_b")}
    not_drawn = 3 * 8 - len(drawn)
    pt = tmp_path / "pt.tsv"
    scored = CliRunner().invoke(cli, ["score", "--method", "battles", str(out), "-o",
                                      str(tmp_path / "b.tsv"), "--per-topic", str(pt)])
    assert scored.exit_code == 0, scored.output
    assert f"{not_drawn} (run, topic) cells not drawn" in scored.output
    assert "unanswered" not in scored.output
    cells = {(row.split("\t")[0], row.split("\t")[1]) for row in pt.read_text().splitlines()[1:]}
    assert {c for c in cells if c[1] != "all"} == drawn


def test_a_killed_active_run_resumes_to_the_same_rounds(tmp_path: Path) -> None:
    paths = baselines(tmp_path, topics=8)
    args = ["--battles-per-topic", "1", "--seed", "3", "--schedule", "active",
            "--adaptive-rounds", "1", "--assessor", "openai:emulated"]
    whole = tmp_path / "whole"
    with emulator(tmp_path, "--seed", "4", name="whole") as server:
        done = CliRunner().invoke(cli, battles_args(paths, whole, *args, "--no-cache",
                                                    "--base-url", server.url))
        assert done.exit_code == 0, done.output
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    env = {**os.environ, **FAST}
    command = [str(Path(sys.executable).parent / "nuggetizer"),
               *battles_args(paths, out, *args, "--cache", str(cache), "--concurrency", "2")]
    with emulator(tmp_path, "--seed", "4", "--latency", "0.01", name="first") as server:
        first = kill_after(server, [*command, "--base-url", server.url], 21, env=env)
    with emulator(tmp_path, "--seed", "4", name="second") as server:
        rerun = subprocess.run([*command, "--base-url", server.url], env=env,
                               capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        second = [r for r in server.requests() if r["outcome"] == "ok"]
    # every order asked once in all, and the rounds the uninterrupted run made
    assert {r["digest"] for r in first}.isdisjoint(r["digest"] for r in second)
    assert len(first) + len(second) == 2 * 16
    key = [(r["qid"], r["run_a"], r["run_b"], r["result"]) for r in records(out)]
    assert sorted(key) == sorted((r["qid"], r["run_a"], r["run_b"], r["result"])
                                 for r in records(whole))
