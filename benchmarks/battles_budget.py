"""Budgets that buy rankings: the uniform schedule against the active one at TREC RAG 2026
scale (83 runs x 119 narratives), on synthetic verdicts.

    .venv/bin/python benchmarks/battles_budget.py [--runs 83] [--topics 119]
        [--fractions 0.02 0.05 0.1 0.2] [--round 2000] [--seeds 0 1]

The judge (synthetic, seeded): runs come in teams (25 teams, strengths normal(0, 0.8); a run
is its team's strength plus normal(0, 0.15): close siblings, as in the TREC RAG 2024 runs,
whose V_strict spread is mostly between teams), each topic shifts every run by normal(0, 0.5)
(topic noise), verdicts follow Davidson's model with tie parameter 0.4, and the answer shown
first gets +0.3 log-odds (a position bias; one order per battle, the first side a coin). Every
(topic, pair) verdict is drawn once, so every schedule reads the same judge, and the
all-pairs ranking is the fit on all 404,957 battles.

Uniform: `schedule_battles(budget=...)` (balanced, seeded). Active: a uniform first round of 1%
of the all-pairs battles, then rounds of `--round` battles from `active_pairs` (least certain
pairs first, topic-clustered sandwich standard errors of the half-rule fit), refitted after each
round. Prints, per budget (share of all-pairs calls), Kendall's tau against the all-pairs
ranking and against the true strengths for both schedules, and the time and memory of
scheduling and fitting.
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
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

from nuggetizer.measures.bradley_terry import (  # noqa: E402
    BattleCounts,
    Verdict,
    fit_model,
    sandwich_intervals,
)
from nuggetizer.methods.battles.schedule import (  # noqa: E402
    Pairing,
    active_pairs,
    schedule_battles,
)


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

    def verdicts(self, pairings: list[Pairing]) -> list[Verdict]:
        names = ("a", "b", "tie")
        return [Verdict(p.qid, p.run_a, p.run_b, names[self.result[
            self.topic_index[p.qid], self.pairs[p.run_a, p.run_b]]]) for p in pairings]


def tau(scores: dict[str, float], reference: dict[str, float] | np.ndarray,
        runs: list[str]) -> float:
    ref = [reference[r] for r in runs] if isinstance(reference, dict) else list(reference)
    return float(stats.kendalltau([scores.get(r, 0.0) for r in runs], ref).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=83)
    parser.add_argument("--topics", type=int, default=119)
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.02, 0.05, 0.1, 0.2])
    parser.add_argument("--round", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    print(machine())
    runs = [f"run{k:03d}" for k in range(args.runs)]
    topics = [f"t{t:03d}" for t in range(args.topics)]
    answered = {q: runs for q in topics}
    all_pairs = len(topics) * args.runs * (args.runs - 1) // 2
    budgets = [round(f * all_pairs) for f in sorted(args.fractions)]
    print(f"{args.runs} runs x {args.topics} topics: {all_pairs:,} battles all pairs; budgets "
          + ", ".join(f"{b:,} ({100 * f:g}%)" for b, f in zip(budgets, sorted(args.fractions))))
    z = float(norm.ppf(0.975))
    for seed in args.seeds:
        judge = Judge(runs, topics, seed)
        everything = schedule_battles(answered, seed=seed)
        start = time.perf_counter()
        reference = fit_model(judge.verdicts(everything)).scores
        print(f"seed {seed}: all-pairs fit {time.perf_counter() - start:.1f} s; tau(all pairs, "
              f"truth) {tau(reference, judge.theta, runs):.3f}")
        print("  budget   share  uniform tau(all) tau(truth)   active tau(all) tau(truth)  "
              "active rounds")
        # active: a uniform first round, then rounds of the least certain pairs
        first = round(0.01 * all_pairs)
        played = schedule_battles(answered, budget=first, seed=seed)
        verdicts = judge.verdicts(played)
        timings = {"schedule": 0.0, "fit": 0.0}
        rounds = 0
        tracemalloc.start()
        for budget in budgets:
            while len(played) < budget:
                t0 = time.perf_counter()
                counts = BattleCounts(verdicts)
                fit = fit_model(counts)
                spread = sandwich_intervals(counts, cluster="topic")
                sd = {r: (hi - lo) / (2 * z) for r, (lo, hi) in spread.items()}
                t1 = time.perf_counter()
                more = active_pairs(answered, fit.scores, sd, played,
                                    min(args.round, budget - len(played)), seed=seed)
                timings["fit"] += t1 - t0
                timings["schedule"] += time.perf_counter() - t1
                if not more:
                    break
                played += more
                verdicts += judge.verdicts(more)
                rounds += 1
            active = fit_model(verdicts).scores
            uniform = fit_model(judge.verdicts(schedule_battles(answered, budget=budget,
                                                                seed=seed))).scores
            print(f"  {budget:7,} {100 * budget / all_pairs:5.1f}%  "
                  f"{tau(uniform, reference, runs):15.3f} {tau(uniform, judge.theta, runs):10.3f}"
                  f"  {tau(active, reference, runs):14.3f} {tau(active, judge.theta, runs):10.3f}"
                  f"  {rounds:6d}")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"  active rounds: scheduling {timings['schedule']:.1f} s, fitting + sandwich "
              f"{timings['fit']:.1f} s in all ({rounds} rounds; per round "
              f"{timings['schedule'] / max(rounds, 1):.2f} s + "
              f"{timings['fit'] / max(rounds, 1):.2f} s); peak traced memory "
              f"{peak / 2**20:.0f} MiB")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
