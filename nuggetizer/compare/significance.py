"""Paired significance tests between runs over topics, with a multiple-comparison correction.

For every pair of runs: a two-sided paired randomization test (sign flips of the per-topic
differences, seeded) and a paired t-test, each family corrected with Holm (default) or
Bonferroni. The table is TSV or markdown, ready to publish.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nuggetizer.errors import ConfigError, InputError

CORRECTIONS = ("holm", "bonferroni", "none")


@dataclass
class PairTest:
    """The tests of one pair of runs on one measure."""

    run_a: str
    run_b: str
    mean_a: float
    mean_b: float
    t_p: float
    rand_p: float
    t_p_adj: float = math.nan
    rand_p_adj: float = math.nan

    @property
    def diff(self) -> float:
        return self.mean_a - self.mean_b


def randomization_p(diffs: Sequence[float], trials: int = 10000, seed: int = 0) -> float:
    """Two-sided paired randomization test: share of sign flips at least as extreme.

    Exact (all 2^n flips) for n <= 16 topics, else `trials` random flips plus the observed one.
    """
    d = np.asarray(diffs, dtype=float)
    observed = abs(d.mean())
    if not d.any():
        return 1.0
    n = len(d)
    if n <= 16:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        means = np.abs(signs @ d) / n
        return float(np.mean(means >= observed - 1e-12))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, trials, 2000):
        size = min(2000, trials - start)
        signs = rng.choice((-1.0, 1.0), size=(size, n))
        hits += int(np.sum(np.abs(signs @ d) / n >= observed - 1e-12))
    return (hits + 1) / (trials + 1)


def t_test_p(diffs: Sequence[float]) -> float:
    """Two-sided paired t-test p-value; 1.0 when every difference is 0, 0.0 when all equal."""
    d = np.asarray(diffs, dtype=float)
    if len(d) < 2 or not d.any():
        return 1.0
    if np.allclose(d, d[0]):
        return 0.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def adjust(pvalues: Sequence[float], method: str = "holm") -> list[float]:
    """Family-wise corrected p-values (Holm step-down, Bonferroni, or none)."""
    if method not in CORRECTIONS:
        raise ConfigError(f"unknown correction {method!r}: use one of {', '.join(CORRECTIONS)}")
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


def pairwise(per_topic: dict[str, dict[str, float]], *, correction: str = "holm",
             trials: int = 10000, seed: int = 0) -> list[PairTest]:
    """Test every pair of runs over the topics all runs share; runs ordered by mean, best first."""
    if len(per_topic) < 2:
        raise InputError(None, None, "significance needs at least two runs")
    topics = sorted(set.intersection(*(set(v) for v in per_topic.values())))
    if len(topics) < 2:
        raise InputError(None, None, "significance needs at least two topics shared by all runs")
    means = {r: sum(v[q] for q in topics) / len(topics) for r, v in per_topic.items()}
    runs = sorted(means, key=lambda r: (-means[r], r))
    tests = []
    for a, b in itertools.combinations(runs, 2):
        diffs = [per_topic[a][q] - per_topic[b][q] for q in topics]
        tests.append(PairTest(a, b, means[a], means[b], t_test_p(diffs),
                              randomization_p(diffs, trials, seed)))
    for attr in ("t_p", "rand_p"):
        for test, p in zip(tests, adjust([getattr(t, attr) for t in tests], correction)):
            setattr(test, f"{attr}_adj", p)
    return tests


COLUMNS = ("run_a", "run_b", "mean_a", "mean_b", "diff", "t_p", "t_p_adj", "rand_p",
           "rand_p_adj", "sig")


def _cells(t: PairTest, alpha: float) -> list[str]:
    sig = "*" if max(t.t_p_adj, t.rand_p_adj) < alpha else ""
    return [t.run_a, t.run_b, f"{t.mean_a:.4f}", f"{t.mean_b:.4f}", f"{t.diff:+.4f}",
            f"{t.t_p:.4g}", f"{t.t_p_adj:.4g}", f"{t.rand_p:.4g}", f"{t.rand_p_adj:.4g}", sig]


def table_tsv(tests: list[PairTest], alpha: float = 0.05) -> str:
    """The table as TSV; `sig` is `*` when both corrected p-values are below `alpha`."""
    return "\n".join(["\t".join(COLUMNS)] + ["\t".join(_cells(t, alpha)) for t in tests]) + "\n"


def table_markdown(tests: list[PairTest], measure: str, topics: int, correction: str,
                   alpha: float = 0.05) -> str:
    """The table as markdown with a caption saying what was tested."""
    caption = (f"Paired tests on {measure} over {topics} topics: two-sided paired t-test and "
               f"randomization test, {correction} correction over {len(tests)} pairs; "
               f"* both corrected p < {alpha}.")
    lines = [caption, "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(COLUMNS))) + "|"]
    lines += ["| " + " | ".join(_cells(t, alpha)) + " |" for t in tests]
    return "\n".join(lines) + "\n"
