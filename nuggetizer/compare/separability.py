"""How well a ranking separates runs, and how well it agrees with a reference when both are
unsure (after Arena-Hard's benchmark measures, Li et al. 2024), for any two rankings with
intervals: battles (their bootstrap intervals over topics, `bt_low`/`bt_high`), nuggets,
support or human judgments (their per-topic scores: a percentile bootstrap of the run means
over topics, seeded).

- separability: the share of pairs of runs whose intervals do not overlap;
- agreement with confidence: over the pairs of runs the reference separates, +1 where the
  evaluated ranking separates them in the same order, -1 where it separates them in the
  opposite order, 0 where it does not separate them; the mean (from -1 to 1);
- pair agreement: over the pairs the reference separates, the share the evaluated ranking
  orders the same way by its scores alone (its intervals not asked).
Each is NaN where nothing can be said (fewer than two runs, no pair separated).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

Interval = tuple[float, float]


def topic_intervals(per_topic: Mapping[str, Mapping[str, float]], runs: Sequence[str],
                    rounds: int = 1000, seed: int = 0, level: float = 0.95
                    ) -> dict[str, Interval]:
    """Percentile intervals of each run's mean over the topics every run of `runs` has a
    value for, the topics resampled with replacement `rounds` times (numpy's default
    generator seeded with `seed`); {} when no topic is common."""
    import numpy as np

    topics = sorted(set.intersection(*(set(per_topic.get(r, {})) for r in runs))) \
        if runs else []
    if not topics:
        return {}
    values = np.array([[per_topic[r][q] for q in topics] for r in runs])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(topics), (rounds, len(topics)))
    means = values[:, picks].mean(axis=2)  # runs x rounds
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail], axis=1)
    return {r: (float(lo), float(hi)) for r, lo, hi in zip(runs, low, high)}


def _apart(a: Interval, b: Interval) -> int:
    """1 when interval a lies wholly above b, -1 wholly below, 0 when they overlap."""
    if a[0] > b[1]:
        return 1
    if a[1] < b[0]:
        return -1
    return 0


def separability(intervals: Mapping[str, Interval]) -> float:
    """The share of pairs of runs whose intervals do not overlap."""
    pairs = list(combinations(sorted(intervals), 2))
    if not pairs:
        return math.nan
    return sum(_apart(intervals[a], intervals[b]) != 0 for a, b in pairs) / len(pairs)


def agreement_with_confidence(reference: Mapping[str, Interval],
                              evaluated: Mapping[str, Interval]) -> float:
    """Over the pairs the reference separates (module docstring): +1 same order and
    separated, -1 opposite order and separated, 0 not separated; the mean."""
    runs = sorted(set(reference) & set(evaluated))
    marks = []
    for a, b in combinations(runs, 2):
        ref = _apart(reference[a], reference[b])
        if ref:
            marks.append(ref * _apart(evaluated[a], evaluated[b]))
    return sum(marks) / len(marks) if marks else math.nan


def pair_agreement(reference: Mapping[str, Interval], scores: Mapping[str, float]) -> float:
    """Over the pairs the reference separates, the share the `scores` order the same way."""
    runs = sorted(set(reference) & set(scores))
    marks = []
    for a, b in combinations(runs, 2):
        ref = _apart(reference[a], reference[b])
        if ref:
            marks.append(ref * (scores[a] - scores[b]) > 0)
    return sum(marks) / len(marks) if marks else math.nan
