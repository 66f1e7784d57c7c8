"""The active schedule: neighbours in the ranking first, settled pairs never, seeded, never a
battle twice, exactly min(budget, battles left) a round, its balance rules; and `battles
--schedule active` end to end: the dry run counts the real calls, a killed run resumes without
repeating a battle and makes the same rounds, and all the rounds are one invocation in the
usage."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from emulated import emulator, kill_after
from methods.test_battles import FAST, baselines, battles_args, dry_calls, records

from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError
from nuggetizer.methods.battles.active import active_pairs, pair_gains
from nuggetizer.methods.battles.schedule import Pairing, schedule_battles

RUNS = [f"run{k:02d}" for k in range(12)]
TOPICS = {f"q{t}": RUNS for t in range(8)}
SCORES = {r: 100.0 * k for k, r in enumerate(RUNS)}  # neighbours 100 points (0.58 logit) apart


def places(p: Pairing) -> int:
    """How far apart the two runs of a battle are in SCORES' ranking."""
    return abs(RUNS.index(p.run_a) - RUNS.index(p.run_b))


def test_neighbours_first_and_never_a_battle_twice() -> None:
    played = schedule_battles(TOPICS, per_topic=6, seed=1)
    chosen = active_pairs(TOPICS, SCORES, played, budget=40, seed=1)
    assert len(chosen) == 40 and len(set(chosen)) == 40
    assert not set(chosen) & set(played)
    # neighbours in the ranking, and the next ones: farther pairs are settled
    distance = Counter(places(p) for p in chosen)
    assert set(distance) <= {1, 2} and distance[1] > distance[2]
    # reproducible from the seed, and the seed matters
    assert active_pairs(TOPICS, SCORES, played, budget=40, seed=1) == chosen
    assert active_pairs(TOPICS, SCORES, played, budget=40, seed=2) != chosen


def test_settled_pairs_get_no_battle() -> None:
    """Two groups of close runs, 2,000 points apart: every battle stays within a group."""
    scores = {r: (0.0 if k < 6 else 2000.0) + 10.0 * k for k, r in enumerate(RUNS)}
    played = schedule_battles(TOPICS, per_topic=6, seed=0)
    chosen = active_pairs(TOPICS, scores, played, budget=60, seed=0)
    assert len(chosen) == 60
    assert all((RUNS.index(p.run_a) < 6) == (RUNS.index(p.run_b) < 6) for p in chosen)


def test_gain_of_a_pair() -> None:
    """Close and not yet measured well: worth more; settled: worth (almost) nothing."""
    i, j = np.array([0, 0, 1]), np.array([1, 2, 2])
    theta = np.array([0.0, 0.05, 4.0])  # runs 0 and 1 close, run 2 far above both
    gain = pair_gains(theta, np.array([20.0, 20.0, 20.0]), i, j)
    assert gain[0] > 10 * max(gain[1], gain[2])
    fewer = pair_gains(theta, np.array([5.0, 20.0, 20.0]), i, j)
    assert fewer[0] > gain[0]  # fewer battles so far: one more takes a larger share


def test_exactly_min_budget_and_battles_left() -> None:
    everything = schedule_battles(TOPICS, seed=0)
    played = everything[:-15]
    chosen = active_pairs(TOPICS, SCORES, played, budget=100, seed=0)
    assert sorted(chosen) == sorted(everything[-15:])  # the last 15, settled or not
    assert active_pairs(TOPICS, SCORES, everything, budget=5, seed=0) == []
    with pytest.raises(ConfigError):
        active_pairs(TOPICS, SCORES, played, budget=0)


def test_topic_balance_and_a_run_without_battles() -> None:
    """A battle goes to the topic where its two runs have played least; a run without battles
    (and without a score) is the most uncertain: it plays first, and most."""
    runs = ["a", "b", "c"]
    topics = {q: runs for q in ("q0", "q1", "q2")}
    played = [Pairing("q0", "a", "c"), Pairing("q1", "b", "c"), Pairing("q0", "b", "c")]
    chosen = active_pairs(topics, {"a": 1000.0, "b": 1010.0, "c": 1005.0}, played, 1)
    assert chosen == [Pairing("q2", "a", "b")]  # a and b have played neither on q2
    without = [p for p in schedule_battles(TOPICS, per_topic=6, seed=1)
               if "run05" not in (p.run_a, p.run_b)]
    fresh = {r: s for r, s in SCORES.items() if r != "run05"}
    assert "run05" in astuple(active_pairs(TOPICS, fresh, without, budget=1)[0])
    some = active_pairs(TOPICS, fresh, without, budget=11, seed=0)
    plays = Counter(r for p in some for r in (p.run_a, p.run_b))
    assert plays.most_common(1)[0][0] == "run05"


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
