"""The randomised Tukey HSD test of many runs over the same topics (Carterette 2012, "Multiple
testing in statistical analysis of systems-based information retrieval experiments", ACM
TOIS 30(1); Sakai 2014, "Statistical reform in information retrieval?" and "Laboratory
Experiments in Information Retrieval", ch. 4): one set of permutations for every pair, the
family-wise error of all the pairs controlled at once.

Under the null hypothesis that the runs do not differ, a topic's scores could have come from
any of the runs: each trial shuffles every topic's scores across the runs (a permutation of
its row drawn alone), takes the mean of each run over the topics, and keeps the range of those
means (largest minus smallest). Two runs differ at `alpha` when the difference of their means
is larger than what the range reaches in all but `alpha` of the trials: p, the share of the
`trials` ranges at least as large as the pair's |difference|, is below `alpha`.

The draw, with each topic's permutation uniform and independent of the others' in every trial,
as the test asks, at a seventh of the random draws that shuffling every topic in every trial
takes (450 million at 150 runs x 300 topics x 10,000 trials, 7 s of CPU here): the topics, in
their order, in groups of GROUP; for each group a pool of POOL sums over its topics, each topic
shuffled alone (`rng.permuted(rows, axis=1)`, `numpy.random.default_rng(seed)`); a trial adds,
for each group, a sum from its pool (the first group's in turn, the others' drawn at random)
shuffled once more as a whole. Up to GROUP topics (one group) the pool holds a sum for each
trial: every trial shuffles every topic afresh. A sum of
independently shuffled topics shuffled again is still such a sum (every topic's permutation
composed with one more uniform permutation is uniform, and the topics stay independent), so
each trial is a draw of the null distribution itself; the trials share pool entries (a group's
entry recurs in a tenth of a percent of the pairs of trials, differently shuffled each time),
so their Monte-Carlo error is close to, not exactly, that of independent trials. Memory:
groups x POOL x runs values for the pools (18 MB at 150 runs x 300 topics) and CHUNK x runs
for the trials drawn at a time, whatever the number of trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GROUP = 20  # topics summed in one pool
POOL = 1000  # sums in each group's pool (at most the trials)
CHUNK = 500  # trials drawn at a time
TOLERANCE = 1e-12  # a range equal to a difference, up to the order of additions


@dataclass(frozen=True)
class TukeyHSD:
    """The test's result: each run's mean (the columns' order), the sorted null ranges of the
    means, the trials and seed drawn with."""

    means: np.ndarray
    ranges: np.ndarray  # sorted, one per trial
    topics: int
    trials: int
    seed: int

    def p_values(self) -> np.ndarray:
        """runs x runs: the share of trials whose range is at least the pair's |difference|
        (1 on the diagonal)."""
        diff = np.abs(self.means[:, None] - self.means[None, :])
        below = np.searchsorted(self.ranges, diff - TOLERANCE, "left")
        return (self.trials - below) / self.trials

    def critical(self, alpha: float) -> float:
        """The critical difference: p < alpha separates two runs exactly when the difference
        of their means exceeds it (the range that all but fewer than alpha of the trials
        stay at or below: the (1 - alpha) quantile of the null ranges)."""
        allowed = math.ceil(alpha * self.trials) - 1  # trials at or above a separated difference
        return float(self.ranges[self.trials - 1 - allowed]) if allowed >= 0 else math.inf


def tukey_hsd(grid: np.ndarray, trials: int = 10000, seed: int = 0) -> TukeyHSD:
    """The randomised Tukey HSD test of the columns (runs) of `grid` (topics x runs, no NaN),
    `trials` permutations drawn as the module says."""
    values = np.ascontiguousarray(grid, dtype=float)
    topics, runs = values.shape
    rng = np.random.default_rng(seed)
    size = min(POOL, trials) if topics > GROUP else trials  # one group: a sum per trial
    pools = []
    for start in range(0, topics, GROUP):
        rows = values[start:start + GROUP]
        pool = np.empty((size, runs))
        for first in range(0, size, CHUNK // 5):
            count = min(CHUNK // 5, size - first)
            shuffled = np.tile(rows, (count, 1))
            rng.permuted(shuffled, axis=1, out=shuffled)
            pool[first:first + count] = shuffled.reshape(count, len(rows), runs).sum(axis=1)
        pools.append(pool)
    ranges = np.empty(trials)
    for first in range(0, trials, CHUNK):
        count = min(CHUNK, trials - first)
        sums = np.zeros((count, runs))
        for k, pool in enumerate(pools):
            # the first group's sums taken in turn (with one group, each trial its own)
            drawn = pool[np.arange(first, first + count) % size if k == 0
                         else rng.integers(0, size, size=count)]
            rng.permuted(drawn, axis=1, out=drawn)
            sums += drawn
        ranges[first:first + count] = sums.max(axis=1) - sums.min(axis=1)
    ranges.sort()
    return TukeyHSD(values.sum(axis=0) / topics, ranges / topics, topics, trials, seed)
