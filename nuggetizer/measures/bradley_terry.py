"""Bradley-Terry scores for runs from battle verdicts, with bootstrap intervals over topics.

Model: run i has a log-strength theta_i; without ties P(i beats j) = 1 / (1 + exp(theta_j -
theta_i)) (Bradley and Terry 1952). Fitted by maximum likelihood (Newton's method with a
step-halving line search, on verdicts aggregated per pair of runs, so 405k verdicts fit in
well under a second) with a tiny ridge, `RIDGE / 2 * sum(theta**2)` (RIDGE = 1e-4), which
keeps every fit finite (a run that wins or loses all its battles gets a large but finite
score) and changes a well-determined score by far less than a point. The ridge also centres
the log-strengths (they sum to zero at the optimum). It is the same objective as an L2
logistic regression with C = 1 / RIDGE, no intercept, on +1/-1 design columns.

Ties (`ties`):
- "half": a tie counts as half a win for each side (Chatbot Arena's practice);
- "davidson": Davidson's (1970) model, P(i wins) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D,
  D = pi_i + pi_j + nu sqrt(pi_i pi_j), pi = exp(theta), with the tie parameter nu fitted
  too (log nu under the same ridge). Both give P(i beats j | decided) = 1 / (1 +
  exp(theta_j - theta_i)); with many ties the half rule's scores lie closer together.

Scores are Elo-like: 1000 + 400 / ln(10) * theta, theta centred to mean 0 over the runs that
battled, so the mean score is 1000 and a gap of 400 points means odds of 10 to 1.

Runs that never meet, even through others (a disconnected comparison graph), are each centred
by the ridge within their own group: their scores are not comparable across groups.

`bootstrap_intervals` resamples TOPICS with replacement (seeded numpy generator), refits
each resample (a run absent from a resample is left out of that round) and returns
percentile intervals.

`sandwich_intervals` gives the robust (sandwich) intervals of arena-rank's BradleyTerry under
the half rule: covariance H^-1 G H^-1, H the Hessian of the negative log-likelihood at the fit
plus `hessian_reg` times the number of battles on its diagonal (arena-rank's 1e-5), G the sum
over battles of the outer product of each battle's score (its gradient), and score +- z sd.
They treat battles as independent: topic-to-topic variation (the same runs doing better on
some narratives) is not in them, while the topic bootstrap sees it, so on real battles the
sandwich intervals are narrower. With `cluster="topic"` the scores are summed per topic
before the outer product (a cluster-robust sandwich, which sees the topic noise). Under
Davidson's rule the same, over (theta, log nu): log nu is a nuisance parameter, in H (with
its cross terms) and in each battle's score, and the runs' intervals are read off the theta
block of the whole covariance (marginalised, not held fixed at its estimate). Without ties
the fitted nu is near 0 and they equal the half rule's.

The verdict types and counting helpers (Verdict, reconcile, TwoOrders, flip_rates,
win_matrix, per_topic) live in `verdicts` and are re-exported here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from nuggetizer.errors import ConfigError
from nuggetizer.measures.verdicts import (
    TwoOrders,
    Verdict,
    flip_rates,
    per_topic,
    reconcile,
    win_matrix,
)

__all__ = ["RIDGE", "SCALE", "TIE_RULES", "BattleCounts", "Fit", "TwoOrders", "Verdict",
           "bootstrap_intervals", "fit_bradley_terry", "fit_model", "flip_rates",
           "one_blas_thread", "per_topic", "reconcile", "sandwich_intervals", "win_matrix"]

RIDGE = 1e-4
SCALE = 400 / math.log(10)
CENTRE = 1000.0
TIE_RULES = ("half", "davidson")
Objective = Callable[[np.ndarray], tuple[float, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Fit:
    """A fitted model: Elo-like scores, centred log-strengths, Davidson's tie parameter nu
    (None under the half rule) and the Newton iterations taken."""

    scores: dict[str, float]
    log_strengths: dict[str, float]
    tie_parameter: float | None
    iterations: int


class BattleCounts:
    """Verdicts aggregated once: the runs (sorted), the pairs that met (i < j), and the
    topics x (pairs x 3) counts of (wins of i, wins of j, ties) per topic, kept as their
    nonzero cells (`by_topic` gives them as a sparse matrix)."""

    def __init__(self, verdicts: Iterable[Verdict]) -> None:
        rows = [(v.qid, v.run_a, v.run_b, v.result) for v in verdicts]
        runs = sorted({r for row in rows for r in row[1:3]})
        topics = sorted({row[0] for row in rows})
        run_index = {run: k for k, run in enumerate(runs)}
        topic_index = {qid: k for k, qid in enumerate(topics)}
        self._build(runs, topics,
                    np.fromiter((topic_index[r[0]] for r in rows), np.int64, len(rows)),
                    np.fromiter((run_index[r[1]] for r in rows), np.int64, len(rows)),
                    np.fromiter((run_index[r[2]] for r in rows), np.int64, len(rows)),
                    np.fromiter(({"a": 0, "b": 1, "tie": 2}[r[3]] for r in rows), np.int64,
                                len(rows)))

    @classmethod
    def from_arrays(cls, runs: list[str], topics: list[str], topic: np.ndarray, a: np.ndarray,
                    b: np.ndarray, result: np.ndarray) -> BattleCounts:
        """Counts from indices: each battle's topic, run A and run B (into the sorted `topics`
        and `runs`) and result (0: A won, 1: B won, 2: a tie)."""
        counts = cls.__new__(cls)
        counts._build(runs, topics, topic, a, b, result)
        return counts

    def _build(self, runs: list[str], topics: list[str], topic: np.ndarray, a: np.ndarray,
               b: np.ndarray, result: np.ndarray) -> None:
        self.runs, self.topics = runs, topics
        n = len(runs)
        swap = a > b  # put the lower index first; a win for the other side swaps too
        low, high = np.where(swap, b, a), np.where(swap, a, b)
        result = np.where(swap & (result < 2), 1 - result, result)
        keys, pair = np.unique(low * n + high, return_inverse=True)
        self.i, self.j = keys // n, keys % n
        width = 3 * len(keys)
        cells, count = np.unique(topic * width + pair * 3 + result, return_counts=True)
        self._topic, self._column = cells // width, cells % width
        self._count = count.astype(float)
        self._most = float(count.max()) if len(count) else 0.0  # the largest count
        self._shape = (len(topics), width)
        self._dense: np.ndarray | None = None

    @property
    def by_topic(self) -> Any:
        """The counts as a sparse topics x (pairs x 3) matrix (scipy's CSR; imported here, for
        the few who need it: its import costs 0.3 s)."""
        from scipy import sparse

        return sparse.csr_matrix((self._count, (self._topic, self._column)), shape=self._shape)

    def totals(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Per pair (wins of i, wins of j, ties), topics weighted (bootstrap multiplicities).
        The counts and weights are whole numbers, so every sum is exact, in any order: with
        weights, a product of the weights with the dense topics x (pairs x 3) counts in
        single precision where every sum stays below 2^24 (exact there too; a bootstrap
        round's totals in 0.2 ms rather than 1.5, 83 runs x 119 topics), else by counting."""
        if weights is not None:
            dense = self._dense_counts()
            if dense is not None and float(weights.sum()) * self._most < 2**24 and \
                    (weights >= 0).all() and (weights == np.floor(weights)).all():
                return (weights.astype(np.float32) @ dense).astype(float).reshape(-1, 3)
        values = self._count if weights is None else self._count * weights[self._topic]
        return np.bincount(self._column, values, self._shape[1]).reshape(-1, 3)

    def _dense_counts(self) -> np.ndarray | None:
        """The counts as a dense float32 topics x (pairs x 3) array, made once; None when it
        would exceed 2^24 cells (64 MiB) or a count 2^24."""
        if self._dense is None and self._shape[0] * self._shape[1] <= 2**24 and \
                len(self._count) and self._most < 2**24:
            self._dense = np.zeros(self._shape, dtype=np.float32)
            self._dense[self._topic, self._column] = self._count
        return self._dense


def one_blas_thread() -> AbstractContextManager[Any]:
    """BLAS on one thread, for the fits here: OpenBLAS's threads, on products of a few
    thousand pair counts or a few feature columns with 400,000 battles, cost CPU for no time
    saved, and spin after a product beside the work that follows (200 bootstrap rounds:
    0.86 s CPU on 2 threads, 0.47 s on one, 0.43 and 0.47 s wall; the style fit: 0.76 to
    0.88 s CPU against 0.51 s, 0.42 to 0.48 s wall either way; 83 runs x 119 topics, 2
    cores)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def newton(objective: Objective, x: np.ndarray, tol: float = 1e-9,
            max_iter: int = 500) -> tuple[np.ndarray, int]:
    """Minimise a smooth strictly convex objective by Newton's method with step halving (a
    step is taken when the objective falls enough, or rises by no more than its rounding:
    near the optimum the decrease a step promises is below what float sums can show)."""
    f, g, h = objective(x)
    for iteration in range(1, max_iter + 1):
        step = np.linalg.solve(h, g)
        t = 1.0
        while True:
            trial = x - t * step
            ft, gt, ht = objective(trial)
            if ft <= f - 1e-4 * t * float(g @ step) + 1e-13 * abs(f) or t < 1e-12:
                break
            t /= 2
        x, f, g, h = trial, ft, gt, ht
        if float(np.max(np.abs(t * step), initial=0.0)) < tol:
            return x, iteration
    return x, max_iter


def _pair_hessian(n: int, i: np.ndarray, j: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The Hessian of sum_k h_k/2 (x_i - x_j)^2 over the pairs (a weighted graph Laplacian)."""
    hess = np.zeros(n * n)  # filled by flat index: a third of the time of 2-d indexing
    hess[i * n + j] = hess[j * n + i] = -h  # each pair once (i < j)
    hess[::n + 1] = np.bincount(i, h, n) + np.bincount(j, h, n)
    return hess.reshape(n, n)


def _half_objective(n: int, i: np.ndarray, j: np.ndarray, won: np.ndarray,
                    lost: np.ndarray) -> Objective:
    """Bradley-Terry's penalised negative log-likelihood over theta, ties already halved."""
    def objective(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        d = theta[i] - theta[j]
        lose = np.logaddexp(0.0, -d)  # -log P(i beats j)
        p = np.exp(-lose)
        f = float(won @ lose + lost @ np.logaddexp(0.0, d))
        gd = (won + lost) * p - won
        grad = np.bincount(i, gd, n) - np.bincount(j, gd, n) + RIDGE * theta
        hess = _pair_hessian(n, i, j, (won + lost) * p * (1 - p)) + RIDGE * np.eye(n)
        return f + RIDGE / 2 * float(theta @ theta), grad, hess
    return objective


def _davidson_objective(n: int, i: np.ndarray, j: np.ndarray, won: np.ndarray,
                        lost: np.ndarray, tied: np.ndarray) -> Objective:
    """Davidson's penalised negative log-likelihood over (theta, log nu)."""
    total = won + lost + tied

    def objective(x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        half, log_z, pw, pl, pt = _davidson_probabilities(x, i, j)
        kappa = x[n]
        f = -float(won @ (half - log_z) + lost @ (-half - log_z) + tied @ (kappa - log_z))
        g_half = total * (pw - pl) - (won - lost)
        grad = np.empty(n + 1)
        grad[:n] = (np.bincount(i, g_half, n) - np.bincount(j, g_half, n)) / 2
        grad[n] = float(total @ pt - tied.sum())
        hess = _davidson_hessian(n, i, j, total, pw, pl, pt)
        return (f + RIDGE / 2 * float(x @ x), grad + RIDGE * x,
                hess + RIDGE * np.eye(n + 1))
    return objective


def _davidson_probabilities(x: np.ndarray, i: np.ndarray, j: np.ndarray
                            ) -> tuple[np.ndarray, ...]:
    """Per pair at x = (theta, log nu): half the log-strength gap, log D (pi_i pi_j scaled
    out) and the probabilities that i wins, j wins, they tie."""
    n = len(x) - 1
    theta, kappa = x[:n], x[n]
    half = (theta[i] - theta[j]) / 2
    log_z = np.logaddexp(np.logaddexp(half, -half), kappa)
    return half, log_z, np.exp(half - log_z), np.exp(-half - log_z), np.exp(kappa - log_z)


def _davidson_hessian(n: int, i: np.ndarray, j: np.ndarray, total: np.ndarray, pw: np.ndarray,
                      pl: np.ndarray, pt: np.ndarray) -> np.ndarray:
    """The Hessian of Davidson's negative log-likelihood over (theta, log nu), unpenalised:
    the pairs' `total` battles with the probabilities `pw`, `pl`, `pt`."""
    hess = np.zeros((n + 1, n + 1))
    hess[:n, :n] = _pair_hessian(n, i, j, total * (pw + pl - (pw - pl) ** 2) / 4)
    h_cross = -total * (pw - pl) * pt
    hess[:n, n] = hess[n, :n] = (np.bincount(i, h_cross, n) - np.bincount(j, h_cross, n)) / 2
    hess[n, n] = float(total @ (pt - pt**2))
    return hess


def _solve(counts: BattleCounts, totals: np.ndarray, ties: str,
           start: np.ndarray | None = None) -> tuple[np.ndarray, float | None, int]:
    """Centred log-strengths (NaN for a run without battles here), nu, and iterations."""
    n = len(counts.runs)
    won, lost, tied = totals[:, 0], totals[:, 1], totals[:, 2]
    met = won + lost + tied
    played = np.bincount(counts.i, met, n) + np.bincount(counts.j, met, n)
    if ties == "half":
        objective = _half_objective(n, counts.i, counts.j, won + tied / 2, lost + tied / 2)
        x0 = np.zeros(n) if start is None else start[:n]
    else:
        share = float(tied.sum() / max(totals.sum(), 1.0))
        kappa = math.log(min(max(2 * share / max(1 - share, 1e-6), 1e-6), 1e6))
        objective = _davidson_objective(n, counts.i, counts.j, won, lost, tied)
        x0 = np.append(np.zeros(n) if start is None else start[:n], kappa)
    x, iterations = newton(objective, x0)
    theta = np.where(played > 0, x[:n], np.nan)
    theta -= np.nanmean(theta) if np.any(played > 0) else 0.0
    return theta, (math.exp(x[n]) if ties == "davidson" else None), iterations


def _check(ties: str) -> None:
    if ties not in TIE_RULES:
        raise ConfigError(f"the tie rule is one of {', '.join(TIE_RULES)}, not {ties!r}")


def fit_model(verdicts: Iterable[Verdict] | BattleCounts, ties: str = "half") -> Fit:
    """The maximum-likelihood Bradley-Terry fit (module docstring) with its details."""
    _check(ties)
    counts = verdicts if isinstance(verdicts, BattleCounts) else BattleCounts(verdicts)
    if not counts.runs:
        return Fit({}, {}, None, 0)
    theta, nu, iterations = _solve(counts, counts.totals(), ties)
    return Fit({run: CENTRE + SCALE * float(t) for run, t in zip(counts.runs, theta)},
               {run: float(t) for run, t in zip(counts.runs, theta)}, nu, iterations)


def fit_bradley_terry(verdicts: Iterable[Verdict] | BattleCounts,
                      ties: str = "half") -> dict[str, float]:
    """Each run's Elo-like Bradley-Terry score (mean 1000; module docstring)."""
    return fit_model(verdicts, ties).scores


def bootstrap_intervals(verdicts: Iterable[Verdict] | BattleCounts, ties: str = "half",
                        rounds: int = 1000, seed: int = 0,
                        level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Percentile intervals of each run's score over `rounds` resamples of the topics with
    replacement (numpy's default generator seeded with `seed`)."""
    _check(ties)
    if rounds < 1 or not 0 < level < 1:
        raise ConfigError(f"bootstrap needs rounds >= 1 and 0 < level < 1, not {rounds}, {level}")
    counts = verdicts if isinstance(verdicts, BattleCounts) else BattleCounts(verdicts)
    if not counts.runs:
        return {}
    start, _, _ = _solve(counts, counts.totals(), ties)
    rng = np.random.default_rng(seed)
    topics = len(counts.topics)
    samples = np.empty((rounds, len(counts.runs)))
    with one_blas_thread():
        for r in range(rounds):
            weights = np.bincount(rng.integers(0, topics, topics), minlength=topics
                                  ).astype(float)
            theta, _, _ = _solve(counts, counts.totals(weights), ties, np.nan_to_num(start))
            samples[r] = CENTRE + SCALE * theta
    tail = (1 - level) / 2 * 100
    with warnings.catch_warnings():  # a run absent from every resample: (nan, nan)
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(samples, [tail, 100 - tail], axis=0)
    return {run: (float(lo), float(hi)) for run, lo, hi in zip(counts.runs, low, high)}



ARENA_HESSIAN_REG = 1e-5  # arena-rank 0.1's hessian_reg, times the number of battles


def sandwich_intervals(verdicts: Iterable[Verdict] | BattleCounts, level: float = 0.95,
                       cluster: str = "battle", hessian_reg: float = ARENA_HESSIAN_REG,
                       ties: str = "half") -> dict[str, tuple[float, float]]:
    """Sandwich (robust) intervals of each run's score under the tie rule `ties` (module
    docstring): `cluster` "battle" (arena-rank's) or "topic" (scores summed per topic first).
    Under Davidson's rule log nu is fitted with the strengths, so it is in H and G too, and
    the strengths' intervals are read off the whole covariance (log nu marginalised out)."""
    _check(ties)
    if cluster not in ("battle", "topic"):
        raise ConfigError(f"sandwich intervals cluster by battle or topic, not {cluster!r}")
    if not 0 < level < 1:
        raise ConfigError(f"the level of an interval is between 0 and 1, not {level}")
    counts = verdicts if isinstance(verdicts, BattleCounts) else BattleCounts(verdicts)
    if not counts.runs:
        return {}
    n = len(counts.runs)
    totals = counts.totals()
    theta, nu, _ = _solve(counts, totals, ties)
    theta = np.nan_to_num(theta)
    battles = totals.sum(axis=1)
    # each battle's score (the gradient of its log-likelihood) per outcome (i wins, j wins,
    # a tie): `given` to run i and taken from run j, and `nuisance` to log nu (Davidson)
    nuisance: np.ndarray | None = None
    if ties == "half":
        p = 1 / (1 + np.exp(theta[counts.j] - theta[counts.i]))
        given = np.column_stack([1 - p, -p, 0.5 - p])
        hess = _pair_hessian(n, counts.i, counts.j, battles * p * (1 - p))
    else:
        x = np.append(theta, math.log(nu or 1.0))
        _, _, pw, pl, pt = _davidson_probabilities(x, counts.i, counts.j)
        gap = pw - pl
        given = np.column_stack([(1 - gap) / 2, -(1 + gap) / 2, -gap / 2])
        nuisance = np.column_stack([-pt, -pt, 1 - pt])
        hess = _davidson_hessian(n, counts.i, counts.j, battles, pw, pl, pt)
    size = len(hess)
    hess += hessian_reg * float(battles.sum()) * np.eye(size)
    grad_cov = np.zeros((size, size))
    if cluster == "battle":  # each battle its own cluster: sums of squares per outcome
        grad_cov[:n, :n] = _pair_hessian(n, counts.i, counts.j,
                                         np.einsum("ko,ko->k", totals, given**2))
        if nuisance is not None:
            cross = np.einsum("ko,ko,ko->k", totals, given, nuisance)
            grad_cov[:n, n] = grad_cov[n, :n] = (np.bincount(counts.i, cross, n)
                                                 - np.bincount(counts.j, cross, n))
            grad_cov[n, n] = float(np.einsum("ko,ko->", totals, nuisance**2))
    else:  # per topic, each pair's summed score, given to run i and taken from run j
        from scipy import sparse

        by_topic = counts.by_topic.tocsc()
        pairs = np.arange(len(counts.i))

        def summed(per: np.ndarray) -> Any:  # topics x pairs: the scores of the topic's battles
            return (by_topic[:, 0::3].multiply(per[:, 0]) + by_topic[:, 1::3].multiply(per[:, 1])
                    + by_topic[:, 2::3].multiply(per[:, 2])).tocsr()

        incidence = sparse.csr_matrix(
            (np.r_[np.ones(len(pairs)), -np.ones(len(pairs))],
             (np.r_[pairs, pairs], np.r_[counts.i, counts.j])), shape=(len(pairs), n))
        per_topic_scores = np.asarray((summed(given) @ incidence).todense())  # topics x runs
        if nuisance is not None:
            per_topic_scores = np.column_stack(
                [per_topic_scores, np.asarray(summed(nuisance).sum(axis=1)).ravel()])
        grad_cov = per_topic_scores.T @ per_topic_scores
    inverse = np.linalg.inv(hess)
    sd = np.sqrt(np.clip(np.diag(inverse @ grad_cov @ inverse)[:n], 0.0, None))
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    return {run: (CENTRE + SCALE * float(t - z * s), CENTRE + SCALE * float(t + z * s))
            for run, t, s in zip(counts.runs, theta, sd)}
