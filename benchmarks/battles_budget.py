"""Budgets that buy rankings: the uniform schedule against the active one at TREC RAG 2026
scale (83 runs x 119 narratives), on synthetic verdicts.

    .venv/bin/python benchmarks/battles_budget.py [--runs 83] [--topics 119]
        [--fractions 0.02 0.05 0.1 0.2] [--round 2000] [--seeds 0 1] [--target 0.95]
        [--reach-max 0.3]

The judge (synthetic, seeded): runs come in teams (25 teams, strengths normal(0, 0.8); a run
is its team's strength plus normal(0, 0.15): close siblings, as in the TREC RAG 2024 runs,
whose V_strict spread is mostly between teams), each topic shifts every run by normal(0, 0.5)
(topic noise), verdicts follow Davidson's model with tie parameter 0.4, and the answer shown
first gets +0.3 log-odds (a position bias; one order per battle, the first side a coin). Every
(topic, pair) verdict is drawn once, so every schedule reads the same judge, and the
all-pairs ranking is the fit on all 404,957 battles.

Uniform: `schedule_battles(budget=...)` (balanced, seeded). Active: a uniform first round of 1%
of the all-pairs battles, then rounds of `--round` battles from `active_pairs`
(methods/battles/active.py: the battles that remove the most expected discordant pairs, each
pair's probability of being in the wrong order times the share of its variance a battle takes
away, under the half-rule fit and its model covariance), refitted after each round. Prints, per
budget (share of all-pairs calls), Kendall's tau against the all-pairs ranking and against the
true strengths for both schedules; the calls each schedule needs to first reach tau `--target`
against the all-pairs ranking (uniform: at the first round's budget plus whole rounds; active:
after each round; up to `--reach-max` of all pairs; tau is noisy, so it can dip below the
target again); the time of scheduling and fitting up to the largest budget, and the memory
of one more round there (traced apart: tracing slows the rounds); and, for several seeds, the
mean gain of active over uniform at each budget and on how many seeds each reaches the target
first.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

from nuggetizer.measures.bradley_terry import (  # noqa: E402
    BattleCounts,
    Verdict,
    fit_model,
)
from nuggetizer.methods.battles.active import active_pairs  # noqa: E402
from nuggetizer.methods.battles.schedule import Pairing, schedule_battles  # noqa: E402


class Judge:
    """Every (topic, pair) verdict, drawn once (module docstring)."""

    def __init__(self, runs: list[str], topics: list[str], seed: int) -> None:
        rng = np.random.default_rng(seed)
        n = len(runs)
        teams = rng.integers(0, 25, n)
        team_strength = rng.normal(0, 0.8, 25)
        self.theta = team_strength[teams] + rng.normal(0, 0.15, n)
        self.index = {r: k for k, r in enumerate(runs)}
        self.runs, self.topics = runs, topics
        i, j = np.triu_indices(n, 1)
        self.pairs = {(runs[a], runs[b]): k for k, (a, b) in enumerate(zip(i, j))}
        shift = rng.normal(0, 0.5, (len(topics), n))
        strength = self.theta[None, :] + shift  # topics x runs
        first_a = rng.random((len(topics), len(i))) < 0.5
        logit = strength[:, i] - strength[:, j] + np.where(first_a, 0.3, -0.3)
        half = logit / 2
        pa, pb, pt = np.exp(half), np.exp(-half), 0.4
        u = rng.random(logit.shape) * (pa + pb + pt)
        self.result = np.where(u < pa, 0, np.where(u < pa + pb, 1, 2)).astype(np.int8)
        self.topic_index = {q: k for k, q in enumerate(topics)}

    def counts(self, pairings: list[Pairing]) -> BattleCounts:
        """The verdicts of `pairings`, aggregated (as BattleCounts(self.verdicts(...)))."""
        topic = np.array([self.topic_index[p.qid] for p in pairings], dtype=np.int64)
        a = np.array([self.index[p.run_a] for p in pairings], dtype=np.int64)
        b = np.array([self.index[p.run_b] for p in pairings], dtype=np.int64)
        pair = np.array([self.pairs[p.run_a, p.run_b] for p in pairings], dtype=np.int64)
        return BattleCounts.from_arrays(self.runs, self.topics, topic, a, b,
                                        self.result[topic, pair].astype(np.int64))

    def verdicts(self, pairings: list[Pairing]) -> list[Verdict]:
        names = ("a", "b", "tie")
        return [Verdict(p.qid, p.run_a, p.run_b, names[self.result[
            self.topic_index[p.qid], self.pairs[p.run_a, p.run_b]]]) for p in pairings]


def tau(scores: dict[str, float], reference: dict[str, float] | np.ndarray,
        runs: list[str]) -> float:
    ref = [reference[r] for r in runs] if isinstance(reference, dict) else list(reference)
    return float(stats.kendalltau([scores.get(r, 0.0) for r in runs], ref).statistic)


def uniform_prefix(by_topic: dict[str, list[Pairing]], budget: int) -> list[Pairing]:
    """`schedule_battles(budget=...)` when every topic has every run (its sequences extend one
    another): the budget split evenly over the topics, the remainder to the first ones."""
    each, extra = divmod(budget, len(by_topic))
    return [p for k, qid in enumerate(sorted(by_topic))
            for p in by_topic[qid][:each + (k < extra)]]


def share(calls: int | None, all_pairs: int) -> str:
    return "not reached" if calls is None else f"{calls:,} ({100 * calls / all_pairs:.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=83)
    parser.add_argument("--topics", type=int, default=119)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.02, 0.05, 0.1, 0.2])
    parser.add_argument("--round", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--reach-max", type=float, default=0.3)
    args = parser.parse_args()
    print(machine())
    runs = [f"run{k:03d}" for k in range(args.runs)]
    topics = [f"t{t:03d}" for t in range(args.topics)]
    answered = {q: runs for q in topics}
    all_pairs = len(topics) * args.runs * (args.runs - 1) // 2
    budgets = [round(f * all_pairs) for f in sorted(args.fractions)]
    print(f"{args.runs} runs x {args.topics} topics: {all_pairs:,} battles all pairs; budgets "
          + ", ".join(f"{b:,} ({100 * f:g}%)" for b, f in zip(budgets, sorted(args.fractions))))
    first = round(0.01 * all_pairs)
    grid = range(first, min(all_pairs, round(args.reach_max * all_pairs)) + 1, args.round)
    gains: dict[int, list[float]] = {b: [] for b in budgets}  # tau(active) - tau(uniform)
    reached: list[tuple[int | None, int | None]] = []
    for seed in args.seeds:
        judge = Judge(runs, topics, seed)
        everything = schedule_battles(answered, seed=seed)
        by_topic: dict[str, list[Pairing]] = {q: [] for q in topics}
        for p in everything:
            by_topic[p.qid].append(p)
        start = time.perf_counter()
        reference = fit_model(judge.counts(everything)).scores
        print(f"seed {seed}: all-pairs fit {time.perf_counter() - start:.1f} s; tau(all pairs, "
              f"truth) {tau(reference, judge.theta, runs):.3f}")
        uniform = {}
        for budget in budgets:
            chosen = schedule_battles(answered, budget=budget, seed=seed)
            assert chosen == uniform_prefix(by_topic, budget)
            uniform[budget] = fit_model(judge.counts(chosen)).scores
        uniform_reach = next((b for b in grid if tau(fit_model(judge.counts(
            uniform_prefix(by_topic, b))).scores, reference, runs) >= args.target), None)
        print("  budget   share  uniform tau(all) tau(truth)   active tau(all) tau(truth)  "
              "active rounds")
        # active: a uniform first round, then rounds chosen from the fit of the rounds before
        played = schedule_battles(answered, budget=first, seed=seed)
        timings = {"schedule": 0.0, "fit": 0.0}
        rounds = 0
        active_reach = None
        while True:
            t0 = time.perf_counter()
            scores = fit_model(judge.counts(played)).scores
            timings["fit"] += time.perf_counter() - t0
            if active_reach is None and tau(scores, reference, runs) >= args.target:
                active_reach = len(played)
            if len(played) in uniform:
                gains[len(played)].append(tau(scores, reference, runs)
                                          - tau(uniform[len(played)], reference, runs))
                print(f"  {len(played):7,} {100 * len(played) / all_pairs:5.1f}%  "
                      f"{tau(uniform[len(played)], reference, runs):15.3f} "
                      f"{tau(uniform[len(played)], judge.theta, runs):10.3f}"
                      f"  {tau(scores, reference, runs):14.3f} "
                      f"{tau(scores, judge.theta, runs):10.3f}  {rounds:6d}")
            if len(played) == budgets[-1]:  # one more round, traced (tracing slows it)
                tracemalloc.start()
                active_pairs(answered, fit_model(judge.counts(played)).scores, played,
                             args.round, seed=seed)
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                print(f"  active rounds: scheduling {timings['schedule']:.1f} s, fitting "
                      f"{timings['fit']:.1f} s in all ({rounds} rounds; per round "
                      f"{timings['schedule'] / max(rounds, 1):.2f} s + "
                      f"{timings['fit'] / max(rounds, 1):.2f} s); peak traced memory of a "
                      f"round at {100 * len(played) / all_pairs:.0f}% (fit and schedule) "
                      f"{peak / 2**20:.0f} MiB")
            stop = next((b for b in budgets if b > len(played)), None)
            if stop is None:  # past the budgets: on until the target is reached
                if active_reach is not None or len(played) >= grid[-1]:
                    break
                stop = grid[-1]
            t0 = time.perf_counter()
            more = active_pairs(answered, scores, played, min(args.round, stop - len(played)),
                                seed=seed)
            timings["schedule"] += time.perf_counter() - t0
            if not more:
                break
            played += more
            rounds += 1
        print(f"  calls to reach tau {args.target:g} against all pairs (first budget of "
              f"{first:,} + k x {args.round:,}, up to {100 * args.reach_max:g}%): uniform "
              f"{share(uniform_reach, all_pairs)}, active {share(active_reach, all_pairs)}")
        reached.append((uniform_reach, active_reach))
    if len(args.seeds) > 1:
        print(f"over {len(args.seeds)} seeds, tau(active) - tau(uniform) against all pairs: "
              + "; ".join(f"{100 * b / all_pairs:.0f}% mean {np.mean(g):+.4f} (min {min(g):+.3f}, "
                          f"max {max(g):+.3f}, active ahead on {sum(x > 0 for x in g)}, behind "
                          f"on {sum(x < 0 for x in g)})" for b, g in gains.items()))
        both = [(u, a) for u, a in reached if u is not None and a is not None]
        print(f"  tau {args.target:g} reached within {100 * args.reach_max:g}%: uniform on "
              f"{sum(u is not None for u, _ in reached)}, active on "
              f"{sum(a is not None for _, a in reached)} of {len(reached)} seeds; where both "
              f"reach it ({len(both)}), active with fewer calls on "
              f"{sum(a < u for u, a in both)}, more on {sum(a > u for u, a in both)}, mean "
              f"calls uniform {np.mean([u for u, _ in both] or [0]):,.0f}, active "
              f"{np.mean([a for _, a in both] or [0]):,.0f}")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
