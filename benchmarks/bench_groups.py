"""Telling 150 runs apart: the pairs separated by the paired randomization test with Holm and by
the randomised Tukey HSD test, on synthetic runs whose true differences are known.

    .venv/bin/python benchmarks/bench_groups.py [--runs 150] [--topics 300] [--trials 10000]

The runs (`known_differences`): TIERS tiers of runs with the same true mean, STEP apart; each
score the tier's mean plus the topic's difficulty plus noise (sd NOISE). Each test at alpha
0.05 over `--trials` (sign flips of each of the 11,175 pairs, Holm-corrected; permutations B
of the Tukey HSD test): the pairs separated, those separated whose runs share a true mean
(false), those of runs at least 5 STEP apart left together, and the time each test took (CPU
seconds and wall). Holm is computed in full here, although at 11,175 pairs and 10,000 sign
flips it cannot separate any pair (the report says so without testing).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

from nuggetizer.measures.paired import adjust, randomization_ps  # noqa: E402
from nuggetizer.measures.tukey import tukey_hsd  # noqa: E402

TIERS = 15
STEP = 0.02
NOISE = 0.15


def known_differences(runs: int = 150, topics: int = 300, seed: int = 0
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(topics x runs scores, each run's true mean): runs in TIERS tiers, STEP apart."""
    rng = np.random.default_rng(seed)
    true = 0.3 + STEP * (np.arange(runs) * TIERS // runs)
    difficulty = rng.uniform(-0.2, 0.2, size=(topics, 1))
    return true + difficulty + rng.normal(0, NOISE, size=(topics, runs)), true


def verdicts(separated: np.ndarray, true: np.ndarray) -> str:
    """Pairs separated in all, falsely, and those far apart (5 steps) missed."""
    first, second = np.triu_indices(len(true), k=1)
    gap = np.abs(true[first] - true[second])
    same, far = gap < STEP / 2, gap >= 5 * STEP - 1e-9
    return (f"{int(separated.sum()):,} of {len(first):,} pairs separated; "
            f"{int((separated & same).sum())} of the {int(same.sum()):,} pairs of equal true "
            f"means separated (false); {int((~separated & far).sum())} of the "
            f"{int(far.sum()):,} pairs at least {5 * STEP:.2f} apart not separated")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=300)
    parser.add_argument("--trials", type=int, default=10000)
    args = parser.parse_args()
    print(machine())
    grid, true = known_differences(args.runs, args.topics)
    first, second = np.triu_indices(args.runs, k=1)
    cpu, wall = time.process_time(), time.perf_counter()
    hsd = tukey_hsd(grid, args.trials, 0)
    tukey = hsd.p_values()[first, second] < 0.05
    print(f"Tukey HSD, B = {args.trials:,}: {time.process_time() - cpu:.2f} s CPU, "
          f"{time.perf_counter() - wall:.2f} s wall; critical difference "
          f"{hsd.critical(0.05):.4f}; {verdicts(tukey, true)}")
    cpu, wall = time.process_time(), time.perf_counter()
    raw = randomization_ps(grid[:, first] - grid[:, second], args.trials, 0)
    holm = np.array(adjust(list(map(float, raw)), "holm")) < 0.05
    print(f"paired randomization test with Holm, {args.trials:,} sign flips: "
          f"{time.process_time() - cpu:.2f} s CPU, {time.perf_counter() - wall:.2f} s wall; "
          f"smallest raw p {raw.min():.2g}; {verdicts(holm, true)}")


if __name__ == "__main__":
    main()
