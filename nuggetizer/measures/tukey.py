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

The draw: `numpy.random.default_rng(seed)`; the topics x runs matrix tiled CHUNK times (rows:
a trial's topics), each chunk of trials shuffled in place by `rng.permuted(rows, axis=1,
out=rows)` (every row alone; a row shuffled again is still uniformly shuffled), the last chunk
its first rows only; each run's sum over the topics of each trial (a product with a vector of
ones). Memory: CHUNK x topics x runs values (36 MB at 150 runs x 300 topics), whatever the
number of trials.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CHUNK = 100  # trials shuffled at a time
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


def tukey_hsd(grid: np.ndarray, trials: int = 10000, seed: int = 0,
              chunk: int = CHUNK) -> TukeyHSD:
    """The randomised Tukey HSD test of the columns (runs) of `grid` (topics x runs, no NaN),
    `trials` permutations drawn as the module says."""
    values = np.ascontiguousarray(grid, dtype=float)
    topics, runs = values.shape
    ranges = np.empty(trials)
    rng = np.random.default_rng(seed)
    rows = np.tile(values, (min(chunk, trials), 1))
    ones = np.ones(topics)
    done = 0
    while done < trials:
        count = min(chunk, trials - done)
        part = rows[:count * topics]
        rng.permuted(part, axis=1, out=part)
        sums = ones @ part.reshape(count, topics, runs)  # each trial's sum over its topics
        ranges[done:done + count] = sums.max(axis=1) - sums.min(axis=1)
        done += count
    ranges.sort()
    return TukeyHSD(values.sum(axis=0) / topics, ranges / topics, topics, trials, seed)
