"""Paired tests of two runs over the same topics, and the family-wise corrections of many
such tests: the two-sided paired randomization test (sign flips of the per-topic differences,
seeded), the paired t-test, Holm's step-down and Bonferroni's correction.

`randomization_ps` tests many pairs at once (columns of a topics x pairs matrix) with the very
sign flips `randomization_p` draws for each pair alone, so the same p-values, at a fraction of
the time (one matrix product instead of a loop per pair).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

CORRECTIONS = ("holm", "bonferroni", "none")
EXACT_TOPICS = 16  # up to this many topics, every one of the 2^n sign flips
CHUNK = 2000  # sign flips drawn at a time (the draws' order, hence the p-values, depend on it)


def _signs(n: int, trials: int, seed: int) -> list[np.ndarray]:
    """The sign flips of a test over `n` topics: all 2^n of them (n <= EXACT_TOPICS), else
    `trials` seeded ones in chunks of CHUNK rows."""
    if n <= EXACT_TOPICS:
        return [np.array(list(itertools.product((1.0, -1.0), repeat=n)))]
    rng = np.random.default_rng(seed)
    return [rng.choice((-1.0, 1.0), size=(min(CHUNK, trials - start), n))
            for start in range(0, trials, CHUNK)]


def randomization_p(diffs: Sequence[float], trials: int = 10000, seed: int = 0) -> float:
    """Two-sided paired randomization test: share of sign flips at least as extreme.

    Exact (all 2^n flips) for n <= 16 topics, else `trials` random flips plus the observed one.
    """
    d = np.asarray(diffs, dtype=float)
    if not d.any():
        return 1.0
    return float(randomization_ps(d[:, None], trials, seed)[0])


def randomization_ps(diffs: np.ndarray, trials: int = 10000, seed: int = 0,
                     block: int = 2048) -> np.ndarray:
    """`randomization_p` of each column of `diffs` (topics x pairs), the same flips for every
    pair (as each call of `randomization_p` with the same seed draws), `block` pairs at a
    time; 1.0 for a column of zeros."""
    d = np.asarray(diffs, dtype=float)
    n, pairs = d.shape
    observed = np.abs(d.mean(axis=0)) - 1e-12
    hits = np.zeros(pairs)
    chunks = _signs(n, trials, seed)
    for start in range(0, pairs, block):
        part = d[:, start:start + block]
        for signs in chunks:
            hits[start:start + block] += np.sum(np.abs(signs @ part) / n
                                                >= observed[start:start + block], axis=0)
    p = hits / len(chunks[0]) if n <= EXACT_TOPICS else (hits + 1) / (trials + 1)
    p[~d.any(axis=0)] = 1.0
    return p


def t_test_p(diffs: Sequence[float]) -> float:
    """Two-sided paired t-test p-value; 1.0 when every difference is 0, 0.0 when all equal."""
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    if len(d) < 2 or not d.any():
        return 1.0
    if np.allclose(d, d[0]):
        return 0.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def adjust(pvalues: Sequence[float], method: str = "holm") -> list[float]:
    """Family-wise corrected p-values (Holm step-down, Bonferroni, or none); ValueError for
    another method."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}: use one of {', '.join(CORRECTIONS)}")
    m = len(pvalues)
    if method == "none":
        return list(pvalues)
    if method == "bonferroni":
        return [min(1.0, p * m) for p in pvalues]
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted
