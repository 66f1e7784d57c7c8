"""How sure a leaderboard is: each run's 95% interval on a measure (a seeded bootstrap over
topics) and the groups of runs that a family-wise test cannot tell apart, as a compact letter
display (runs sharing a letter cannot be told apart), as `nuggetizer significance` computes it.

The bootstrap: the topics in a canonical order (sorted by id, whatever the order of the files
they were read from), `rounds` resamples of them with replacement drawn once for every run
(`numpy.random.default_rng(seed).integers(0, topics, (rounds, topics))`, indices into the
sorted topics); a run's value in a resample is its mean over the drawn topics it has a value
for (a topic drawn twice counts twice); the interval is the (1 - level) / 2 and (1 + level) / 2
percentiles of those means (numpy's linear interpolation). A measure with intervals of its own
(bt_score: `bt_low`, `bt_high`, the battles' bootstrap) keeps them.

The groups: runs ranked by the measure, tested over the topics all of them share, sorted by
id. Two tests, `test="auto"` choosing the first up to HOLM_RUNS runs and the second beyond:
- "holm": every pair alone by the two-sided paired randomization test (`trials` seeded sign
  flips, measures/paired.py; all 2^n of them up to 16 topics), the p-values corrected together
  with Holm. With m pairs the test's smallest p-value is 1/(trials + 1), and Holm asks the
  smallest to be below alpha / m: when m / (trials + 1) >= alpha no pair can differ, the tests
  are not run, and `Groups.resolution` says so.
- "tukey": the randomised Tukey HSD test (measures/tukey.py: `trials` permutations of each
  topic's scores across the runs, one set for every pair), the family-wise error controlled
  for all the pairs at once, however many.
A group is a longest stretch of consecutive ranks in which no pair differs at p < alpha; each
gets a letter. How stable a decision is: a p-value drawn from `trials` random trials carries a
Monte-Carlo standard error sqrt(p (1 - p) / trials) (for Holm's, times the pair's Holm factor);
a decision whose p-value lies within two of them of alpha could change with another seed, and
`Groups.unstable` counts them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nuggetizer.measures.paired import EXACT_TOPICS, adjust, randomization_ps
from nuggetizer.measures.tukey import tukey_hsd
from nuggetizer.scoring.engine import ScoreTable

ROUNDS = 1000
TRIALS = 10000
SEED = 0
LEVEL = 0.95
ALPHA = 0.05
HOLM_RUNS = 5  # test="auto": the paired test with Holm up to this many runs (10 pairs)
TESTS = ("auto", "holm", "tukey")
OWN_INTERVALS = {"bt_score": ("bt_low", "bt_high")}  # measures with intervals of their own


def values(table: ScoreTable, measure: str, runs: Sequence[str]) -> np.ndarray:
    """runs x topics of `measure`, the topics sorted by id (NaN where a run has no value on
    a topic)."""
    grid = np.full((len(runs), len(table.topics)), math.nan)
    column = {q: k for k, q in enumerate(sorted(table.topics))}
    for i, run in enumerate(runs):
        for qid, row in table.per_topic.get(run, {}).items():
            value = row.get(measure)
            if value is not None and qid in column:
                grid[i, column[qid]] = value
    return grid


def bootstrap_intervals(table: ScoreTable, measure: str, *, rounds: int = ROUNDS,
                        seed: int = SEED, level: float = LEVEL
                        ) -> dict[str, tuple[float, float]]:
    """{run: (low, high)} of `measure` (module docstring); a measure with intervals of its own
    gives those; a run without per-topic values of it has none."""
    own = OWN_INTERVALS.get(measure)
    if own is not None:
        low, high = own
        return {r: (m[low], m[high]) for r, m in table.means.items() if low in m and high in m}
    runs = [r for r in table.ranking() if measure in table.means[r]]
    grid = values(table, measure, runs)
    topics = grid.shape[1]
    if not runs or not topics:
        return {}
    draws = np.random.default_rng(seed).integers(0, topics, size=(rounds, topics))
    counts = np.zeros((rounds, topics))
    np.add.at(counts, (np.arange(rounds)[:, None], draws), 1.0)
    known = ~np.isnan(grid)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (np.where(known, grid, 0.0) @ counts.T) / (known.astype(float) @ counts.T)
    intervals = {}
    for run, row in zip(runs, means):
        kept = row[~np.isnan(row)]
        if kept.size:
            low, high = np.percentile(kept, [50 * (1 - level), 50 * (1 + level)])
            intervals[run] = (float(low), float(high))
    return intervals


@dataclass
class Groups:
    """The runs a measure ranks, and the stretches of them the test cannot separate."""

    measure: str
    runs: list[str]  # ranked by the measure, best first
    topics: int  # topics shared by every run, the tests' sample
    pairs: int
    trials: int
    alpha: float
    test: str = "holm"  # "holm" or "tukey"
    seed: int = SEED
    means: dict[str, float] = field(default_factory=dict)  # each run's, the ranking's
    stretches: list[tuple[int, int]] = field(default_factory=list)  # 0-based, inclusive
    p_adjusted: dict[tuple[str, str], float] = field(default_factory=dict)  # ranked order
    separated: int = 0  # pairs told apart
    unstable: int = 0  # decisions within two Monte-Carlo standard errors of alpha
    critical: float | None = None  # Tukey HSD: the difference of means that separates
    resolution: str | None = None  # why no pair could be separated, when it could not

    def letters(self) -> dict[str, str]:
        """Each run's group letters (a, b, ..., z, aa, ...): runs sharing a letter cannot be
        told apart. A run's letters are consecutive; more than three are written as the
        first and the last ("c-k": every letter from c to k)."""
        mine: dict[str, list[str]] = {r: [] for r in self.runs}
        for k, (first, last) in enumerate(self.stretches):
            for run in self.runs[first:last + 1]:
                mine[run].append(_letter(k))
        return {r: "".join(v) if len(v) <= 3 else f"{v[0]}-{v[-1]}" for r, v in mine.items()}

    def described(self) -> str:
        """The test in words, with its sample and trials."""
        if self.test == "tukey":
            return (f"randomised Tukey HSD over {self.topics} topics, B = {self.trials:,} "
                    f"permutations of each topic's scores across the runs (seed {self.seed}), "
                    f"family-wise over {self.pairs:,} pairs")
        flips = f"all {2 ** self.topics}" if self.topics <= EXACT_TOPICS else \
            f"{self.trials} seeded"
        return (f"two-sided paired randomization test over {self.topics} topics, {flips} "
                f"sign flips, Holm over {self.pairs} pairs")

    def stability(self) -> str:
        """How stable the decisions are: the Monte-Carlo error of the p-values near alpha,
        and how many decisions lie within it ("" for an exact test)."""
        if self.resolution or (self.test == "holm" and self.topics <= EXACT_TOPICS):
            return ""
        error = 2 * math.sqrt(self.alpha * (1 - self.alpha) / self.trials)
        factor = " (times each pair's Holm factor)" if self.test == "holm" else ""
        return (f"A p-value near {self.alpha} carries a Monte-Carlo error of "
                f"±{error:.4f}{factor} (two standard errors at {self.trials:,} trials); "
                f"{self.unstable:,} of the {self.pairs:,} decisions lie within theirs and "
                "could change with another seed.")

    def sentence(self, ranks: Mapping[str, int] | None = None) -> str:
        """The groups in words ("runs ranked 1-3 cannot be told apart at p < 0.05 ...")."""
        if len(self.runs) < 2:
            return f"{self.measure}: one run, nothing to tell apart."
        rank = ranks or {r: k for k, r in enumerate(self.runs, 1)}
        test = self.described()
        told = (f"{self.separated:,} of {self.pairs:,} pairs told apart"
                + (f" (a difference of means above {self.critical:.4f})"
                   if self.critical is not None and math.isfinite(self.critical) else ""))
        stable = self.stability()
        wide = [(a, b) for a, b in self.stretches if b > a]
        if not wide:
            return (f"{self.measure}: every pair of runs is told apart at p < {self.alpha} "
                    f"({test}). {stable}").strip()
        if len(wide) <= 10:
            spans = [f"{rank[self.runs[a]]}-{rank[self.runs[b]]}" for a, b in wide]
            which = "runs ranked " + (", ".join(spans[:-1]) + " and " + spans[-1]
                                      if len(spans) > 1 else spans[0]) + " cannot be told apart"
        else:
            which = (f"{len(self.stretches)} groups of runs that cannot be told apart (letters "
                     f"a-{_letter(len(self.stretches) - 1)})")
        said = (f"{self.measure}: {which} at p < {self.alpha} ({test}); {told}; "
                "runs sharing a group letter cannot be told apart.")
        return " ".join(t for t in (said, self.resolution, stable) if t)


def _letter(k: int) -> str:
    """a, b, ..., z, aa, ab, ..."""
    text = ""
    k += 1
    while k:
        k, rest = divmod(k - 1, 26)
        text = chr(ord("a") + rest) + text
    return text


def stretches(runs: Sequence[str], separated: Mapping[tuple[str, str], bool]
              ) -> list[tuple[int, int]]:
    """The longest stretches [first, last] of consecutive `runs` in which no pair is
    `separated` (a pair missing from it is not), one for each place a stretch ends further
    than the one before."""
    found: list[tuple[int, int]] = []
    end = 0
    for first in range(len(runs)):
        end = max(end, first)
        while end + 1 < len(runs) and not any(
                separated.get((runs[k], runs[end + 1]), False) for k in range(first, end + 1)):
            end += 1
        if not found or end > found[-1][1]:
            found.append((first, end))
    return found


def chosen_test(test: str, runs: int) -> str:
    """The test `test` names ("auto": Holm up to HOLM_RUNS runs, else Tukey HSD)."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}: use one of {', '.join(TESTS)}")
    return ("holm" if runs <= HOLM_RUNS else "tukey") if test == "auto" else test


def groups(table: ScoreTable, measure: str, *, trials: int = TRIALS, seed: int = SEED,
           alpha: float = ALPHA, test: str = "auto") -> Groups:
    """The runs of `measure` ranked and grouped (module docstring); the tests over the topics
    every run has a value on."""
    ranked = sorted((r for r in table.means if measure in table.means[r]),
                    key=lambda r: (-table.means[r][measure], r))
    grid = values(table, measure, ranked)  # topics by id, as `significance` tests
    shared = ~np.isnan(grid).any(axis=0)
    grid = grid[:, shared]
    pairs = len(ranked) * (len(ranked) - 1) // 2
    result = Groups(measure, ranked, int(shared.sum()), pairs, trials, alpha,
                    chosen_test(test, len(ranked)), seed,
                    {r: table.means[r][measure] for r in ranked})
    if pairs == 0:
        result.stretches = [(0, 0)] if ranked else []
        return result
    if result.topics < 2:
        result.resolution = ("Fewer than two topics are scored for every run: no pair "
                             "can be tested.")
        result.stretches = [(0, len(ranked) - 1)]
        return result
    if result.test == "holm" and result.topics > EXACT_TOPICS and \
            pairs / (trials + 1) >= alpha:
        result.resolution = (
            f"With {pairs} pairs no pair can be told apart: {trials} sign flips give no "
            f"p-value below 1/{trials + 1}, and Holm asks the smallest to be below "
            f"{alpha}/{pairs}; it would take at least {math.ceil(pairs / alpha)} flips "
            "(report --trials), or the randomised Tukey HSD test (report --test tukey).")
        result.stretches = [(0, len(ranked) - 1)]
        return result
    first, second = np.triu_indices(len(ranked), k=1)
    if result.test == "tukey":
        hsd = tukey_hsd(grid.T, trials, seed)
        corrected = hsd.p_values()[first, second]
        errors = np.sqrt(corrected * (1 - corrected) / trials)
        result.critical = hsd.critical(alpha)
    else:
        raw = randomization_ps((grid[first] - grid[second]).T, trials, seed)  # topics x pairs
        corrected = np.array(adjust(list(map(float, raw)), "holm"))
        # Holm's factor of each pair: pairs minus its place among the raw p-values
        factor = np.empty(pairs)
        factor[np.argsort(raw, kind="stable")] = pairs - np.arange(pairs)
        errors = (np.zeros(pairs) if result.topics <= EXACT_TOPICS
                  else factor * np.sqrt(raw * (1 - raw) / trials))
    separated: dict[tuple[str, str], bool] = {}
    for i, j, p in zip(first, second, corrected):
        a, b = ranked[i], ranked[j]
        result.p_adjusted[(a, b)] = float(p)
        separated[(a, b)] = separated[(b, a)] = bool(p < alpha)
    result.separated = int((corrected < alpha).sum())
    result.unstable = int((np.abs(corrected - alpha) < 2 * errors).sum())
    result.stretches = stretches(ranked, separated)
    return result
