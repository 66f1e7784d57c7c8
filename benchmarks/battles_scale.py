"""Battles at TREC RAG 2026 scale: the schedule and the Bradley-Terry fit for 83 runs x 119
topics, with synthetic verdicts.

    .venv/bin/python benchmarks/battles_scale.py [--runs 83] [--topics 119]
        [--per-topic 415 ...] [--rounds 200] [--nu 0.5] [--seed 0]

For each schedule (battles per topic, default ~10 per run and all 3,403 pairs), draws each
verdict from Davidson's model with known strengths (normal, sd 1, seeded) and tie parameter
`--nu`, then times: the schedule, aggregating the verdicts into pair counts, the fit under
each tie rule, and the topic bootstrap (`--rounds`). Prints the Kendall tau of the fitted
ranking against the true strengths, the mean 95% interval width, and memory: the peak that
tracemalloc sees during the fit and bootstrap (verdicts already in memory), and the process's
peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

from nuggetizer.measures.bradley_terry import (  # noqa: E402
    BattleCounts,
    Verdict,
    bootstrap_intervals,
    fit_model,
)
from nuggetizer.methods.battles.schedule import Pairing, schedule_battles  # noqa: E402

T = TypeVar("T")


def verdicts_for(pairings: list[Pairing], theta: dict[str, float], nu: float,
                 seed: int) -> list[Verdict]:
    """One verdict per pairing, drawn from Davidson's model."""
    rng = np.random.default_rng(seed)
    half = np.array([(theta[p.run_a] - theta[p.run_b]) / 2 for p in pairings])
    z = np.exp(half) + np.exp(-half) + nu
    u = rng.random(len(pairings)) * z
    results = np.where(u < np.exp(half), "a", np.where(u < np.exp(half) + np.exp(-half), "b",
                                                        "tie"))
    return [Verdict(p.qid, p.run_a, p.run_b, str(r)) for p, r in zip(pairings, results)]


def timed(label: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """fn(*args, **kwargs), its time printed."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    print(f"  {label}: {time.perf_counter() - start:.2f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=83)
    parser.add_argument("--topics", type=int, default=119)
    parser.add_argument("--per-topic", type=int, nargs="+", default=[415, 3403])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--nu", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(machine())
    runs = [f"run{k:03d}" for k in range(args.runs)]
    rng = np.random.default_rng(args.seed)
    theta = dict(zip(runs, rng.normal(0.0, 1.0, len(runs))))
    topics = {f"topic{t:03d}": runs for t in range(args.topics)}
    print(f"input: {args.runs} runs x {args.topics} topics, Davidson verdicts with nu "
          f"{args.nu}, true log-strengths normal(0, 1), seed {args.seed}")
    for per_topic in args.per_topic:
        print(f"{per_topic} battles per topic "
              f"(~{2 * min(per_topic, args.runs * (args.runs - 1) // 2) / args.runs:.1f} "
              f"per run per topic):")
        pairings = timed("schedule", schedule_battles, topics, per_topic=per_topic,
                         seed=args.seed)
        verdicts = verdicts_for(pairings, theta, args.nu, args.seed)
        print(f"  {len(verdicts):,} verdicts, {sum(v.result == 'tie' for v in verdicts):,} ties")
        tracemalloc.start()
        counts = timed("aggregate into pair counts", BattleCounts, verdicts)
        for ties in ("half", "davidson"):
            fit = timed(f"fit ({ties}, from counts)", fit_model, counts, ties)
            tau = stats.kendalltau([fit.scores[r] for r in runs], [theta[r] for r in runs])
            intervals = timed(f"bootstrap ({ties}, {args.rounds} rounds)", bootstrap_intervals,
                              counts, ties, rounds=args.rounds, seed=args.seed)
            width = np.mean([hi - lo for lo, hi in intervals.values()])
            nu = f", nu {fit.tie_parameter:.3f}" if fit.tie_parameter is not None else ""
            print(f"    {fit.iterations} Newton iterations{nu}; Kendall tau vs truth "
                  f"{tau.statistic:.3f}; mean 95% interval width {width:.1f} points")
        timed("fit_bradley_terry straight from the verdicts (half)", fit_model, verdicts)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"  peak memory in aggregate + fits + bootstraps (tracemalloc): "
              f"{peak / 2**20:.1f} MiB")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
