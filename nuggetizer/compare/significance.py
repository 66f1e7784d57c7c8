"""Paired significance tests between runs over topics, with a multiple-comparison correction.

For every pair of runs: a two-sided paired randomization test (sign flips of the per-topic
differences, seeded) and a paired t-test, each family corrected with Holm (default) or
Bonferroni. The table is TSV or markdown, ready to publish.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.measures.paired import CORRECTIONS, randomization_p, t_test_p
from nuggetizer.measures.paired import adjust as _adjust

__all__ = ["CORRECTIONS", "PairTest", "adjust", "pairwise", "randomization_p", "t_test_p"]


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


def adjust(pvalues: list[float], method: str = "holm") -> list[float]:
    """Family-wise corrected p-values (measures/paired.py); a ConfigError for an unknown
    correction (an option's value)."""
    try:
        return _adjust(pvalues, method)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


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
