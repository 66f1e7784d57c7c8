"""The measures autojudge-evaluate 1.1 adds to the TREC AutoJudge meta-evaluation (pure):
tau_GAP, how much of the reference leaderboard an evaluated one covers, and Bland-Altman
agreement of the two leaderboards' scores.

Each takes the two evaluations' scores of the same runs in the same order (the reference, the
"truth", first); undefined values are NaN.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence

LOA_Z = 1.96  # the 95% limits of agreement: bias -/+ 1.96 standard deviations


def _check(truth: Sequence[float], evaluated: Sequence[float]) -> None:
    if len(truth) != len(evaluated):
        raise ValueError(f"unequal lengths: {len(truth)} != {len(evaluated)}")


def tau_gap(truth: Sequence[float], evaluated: Sequence[float]) -> float:
    """tau_GAP (Gao and Oard, SIGIR 2015): head-weighted and gap-sensitive. Down the ranking by
    `evaluated` (ties by list order), each position i contributes the share of the truth gap
    |t_j - t_i| over the items j above it that the ranking gets right (t_j > t_i); tau_GAP is
    2 * (mean over the positions with any gap) - 1. A swap across a large truth gap, or near
    the head, costs more than a small swap at the tail; pairs tied in the truth count in
    neither sum. NaN for fewer than 2 items or when every pair is tied in the truth."""
    _check(truth, evaluated)
    n = len(truth)
    order = sorted(range(n), key=lambda k: (-evaluated[k], k))
    shares = []
    for i in range(1, n):
        below = truth[order[i]]
        gaps = [truth[order[j]] - below for j in range(i)]
        mass = sum(abs(g) for g in gaps)
        if mass > 0:
            shares.append(sum(g for g in gaps if g > 0) / mass)
    if not shares:
        return math.nan
    return 2.0 * sum(shares) / len(shares) - 1.0


def coverage(truth_runs: Collection[str], evaluated_runs: Collection[str]) -> float:
    """The share of the reference's runs that the evaluated leaderboard scores."""
    if not truth_runs:
        return math.nan
    return len(set(truth_runs) & set(evaluated_runs)) / len(set(truth_runs))


def bland_altman(truth: Sequence[float], evaluated: Sequence[float]) -> dict[str, float]:
    """Bland-Altman agreement of the scores: the bias (mean of evaluated - truth) and the 95%
    limits of agreement, bias -/+ 1.96 times the differences' sample standard deviation
    (NaN below 2 runs)."""
    _check(truth, evaluated)
    diffs = [e - t for t, e in zip(truth, evaluated)]
    if len(diffs) < 2:
        return {"ba_bias": math.nan, "ba_loa_low": math.nan, "ba_loa_high": math.nan}
    bias = statistics.fmean(diffs)
    spread = LOA_Z * statistics.stdev(diffs)
    return {"ba_bias": bias, "ba_loa_low": bias - spread, "ba_loa_high": bias + spread}
