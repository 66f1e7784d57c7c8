"""Significance tests between runs over topics, ready to publish as TSV or markdown.

`pairwise`: for every pair of runs, a two-sided paired randomization test (sign flips of the
per-topic differences, seeded) and a paired t-test, each family corrected with Holm (default)
or Bonferroni. `tukey`: the randomised Tukey HSD test of all the runs at once (one set of
permutations for every pair, measures/tukey.py), with the groups of runs it cannot tell apart
as a compact letter display, as the report shows them (scoring/uncertainty.py).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.measures.paired import CORRECTIONS, randomization_p, t_test_p
from nuggetizer.measures.paired import adjust as _adjust
from nuggetizer.report.board import markdown_cell
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.uncertainty import Groups, groups

__all__ = ["CORRECTIONS", "PairTest", "adjust", "pairwise", "randomization_p", "t_test_p",
           "tukey", "tukey_markdown", "tukey_tsv"]


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


def shared_topics(per_topic: dict[str, dict[str, float]]) -> list[str]:
    """The topics every run has a value on, sorted; an InputError for fewer than two runs or
    two such topics."""
    if len(per_topic) < 2:
        raise InputError(None, None, "significance needs at least two runs")
    topics = sorted(set.intersection(*(set(v) for v in per_topic.values())))
    if len(topics) < 2:
        raise InputError(None, None, "significance needs at least two topics shared by all runs")
    return topics


def pairwise(per_topic: dict[str, dict[str, float]], *, correction: str = "holm",
             trials: int = 10000, seed: int = 0) -> list[PairTest]:
    """Test every pair of runs over the topics all runs share; runs ordered by mean, best first."""
    topics = shared_topics(per_topic)
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
             "|" + "|".join(":---" if i < 2 else "---:" for i in range(len(COLUMNS))) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in _cells(t, alpha)) + " |"
              for t in tests]
    return "\n".join(lines) + "\n"


def tukey(per_topic: dict[str, dict[str, float]], measure: str, *, trials: int = 10000,
          seed: int = 0, alpha: float = 0.05) -> Groups:
    """The randomised Tukey HSD test of every run over the topics all runs share (their means
    over those topics rank them): each pair's p-value, the groups and their letters."""
    topics = shared_topics(per_topic)
    table = ScoreTable((measure,), measure, topics,
                       {r: {q: {measure: v[q]} for q in topics} for r, v in per_topic.items()},
                       {r: {measure: sum(v[q] for q in topics) / len(topics)}
                        for r, v in per_topic.items()})
    return groups(table, measure, trials=trials, seed=seed, alpha=alpha, test="tukey")


TUKEY_COLUMNS = ("run_a", "run_b", "mean_a", "mean_b", "diff", "tukey_p", "sig")


def _tukey_rows(result: Groups) -> list[list[str]]:
    means = {r: k for k, r in enumerate(result.runs)}
    rows = []
    for (a, b), p in result.p_adjusted.items():
        mean_a, mean_b = (float(result.means[r]) for r in (a, b))
        rows.append([a, b, f"{mean_a:.4f}", f"{mean_b:.4f}", f"{mean_a - mean_b:+.4f}",
                     f"{p:.4g}", "*" if p < result.alpha else ""])
    rows.sort(key=lambda row: (means[row[0]], means[row[1]]))
    return rows


def tukey_tsv(result: Groups) -> str:
    """Every pair's Tukey HSD p-value as TSV; `sig` is `*` when it is below alpha."""
    return "\n".join(["\t".join(TUKEY_COLUMNS)]
                     + ["\t".join(row) for row in _tukey_rows(result)]) + "\n"


def tukey_markdown(result: Groups) -> str:
    """The groups (run, mean, letters) and every pair's p-value as markdown, the test, the
    pairs told apart and how stable the decisions are in the caption."""
    letters = result.letters()
    lines = [result.sentence(), "", "| run | mean | group |", "|:---|---:|:---|"]
    lines += [f"| {markdown_cell(r)} | {float(result.means[r]):.4f} | {letters[r]} |"
              for r in result.runs]
    lines += ["", "| " + " | ".join(TUKEY_COLUMNS) + " |",
              "|" + "|".join(":---" if i < 2 else "---:" for i in range(len(TUKEY_COLUMNS)))
              + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |"
              for row in _tukey_rows(result)]
    return "\n".join(lines) + "\n"
