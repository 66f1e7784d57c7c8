"""Sandwich intervals of the Davidson fit: equal to an independent computation (each battle's
log-likelihood under Davidson's model written out here, its scores and the Hessian taken by
finite differences, clustered by battle or by topic, the tie parameter kept in both and
marginalised), equal to the half rule's when there are no ties, close to the topic bootstrap,
and shown on the leaderboard under ties = "davidson"."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from nuggetizer.measures.bradley_terry import (
    SCALE,
    BattleCounts,
    Verdict,
    bootstrap_intervals,
    fit_model,
    sandwich_intervals,
)
from nuggetizer.methods.battles.measures import run_scores
from nuggetizer.methods.battles.table import table_of

RUNS = [f"run{k}" for k in range(7)]
THETA = np.linspace(-1.0, 1.0, len(RUNS))


def simulated(topics: int, per_topic: int, nu: float, shift: float = 0.5, seed: int = 0
              ) -> list[Verdict]:
    """Battles between random pairs drawn from Davidson's model with tie parameter `nu`, each
    topic shifting the runs' strengths (normal, sd `shift`): topic-to-topic noise."""
    rng = np.random.default_rng(seed)
    verdicts = []
    for t in range(topics):
        here = THETA + rng.normal(0, shift, len(RUNS))
        for _ in range(per_topic):
            i, j = rng.choice(len(RUNS), 2, replace=False)
            pa, pb = math.exp(here[i]), math.exp(here[j])
            tie = nu * math.sqrt(pa * pb)
            u = rng.random() * (pa + pb + tie)
            result = "a" if u < pa else "b" if u < pa + pb else "tie"
            verdicts.append(Verdict(f"q{t}", RUNS[i], RUNS[j], result))
    return verdicts


def battle_log_likelihoods(x: np.ndarray, a: np.ndarray, b: np.ndarray,
                           outcome: np.ndarray) -> np.ndarray:
    """log P(each battle's outcome) under Davidson's model at x = (theta, log nu)."""
    pi, nu = np.exp(x[:-1]), math.exp(x[-1])
    pa, pb = pi[a], pi[b]
    tie = nu * np.sqrt(pa * pb)
    chosen = np.where(outcome == "a", pa, np.where(outcome == "b", pb, tie))
    return np.log(chosen / (pa + pb + tie))


def battle_gradients(x: np.ndarray, a: np.ndarray, b: np.ndarray,
                     outcome: np.ndarray) -> np.ndarray:
    """Each battle's gradient of its log-likelihood over x = (theta, log nu), derived by hand in
    the pi, nu form: log P = log(chosen) - log D, D = pi_a + pi_b + t, t = nu sqrt(pi_a pi_b)."""
    pi, nu = np.exp(x[:-1]), math.exp(x[-1])
    pa, pb = pi[a], pi[b]
    t = nu * np.sqrt(pa * pb)
    d = pa + pb + t
    own_a = np.where(outcome == "a", 1.0, np.where(outcome == "b", 0.0, 0.5))
    own_b = np.where(outcome == "b", 1.0, np.where(outcome == "a", 0.0, 0.5))
    grads = np.zeros((len(a), len(x)))
    rows = np.arange(len(a))
    grads[rows, a] += own_a - (pa + t / 2) / d
    grads[rows, b] += own_b - (pb + t / 2) / d
    grads[:, -1] = (outcome == "tie") - t / d
    return grads


def independent_half_widths(verdicts: list[Verdict], cluster: str, level: float = 0.95,
                            nuisance: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(theta, half-width of each run's interval in theta) by the sandwich: each battle's
    score by central differences of its log-likelihood; H by central differences of the
    summed hand-derived gradient (plus arena-rank's 1e-5 per battle on its diagonal); G the sum
    over clusters of the outer products of their summed scores. Without `nuisance`, log nu is
    dropped from H and G (held fixed at its estimate) instead of marginalised out."""
    a = np.array([RUNS.index(v.run_a) for v in verdicts])
    b = np.array([RUNS.index(v.run_b) for v in verdicts])
    outcome = np.array([v.result for v in verdicts])
    fit = fit_model(verdicts, "davidson")
    theta = np.array([fit.log_strengths[r] for r in RUNS])
    assert fit.tie_parameter is not None
    x = np.append(theta, math.log(fit.tie_parameter))
    size = len(x)
    h = 1e-5
    scores = np.empty((len(verdicts), size))
    hess = np.empty((size, size))
    for k in range(size):
        step = np.zeros(size)
        step[k] = h
        scores[:, k] = (battle_log_likelihoods(x + step, a, b, outcome)
                        - battle_log_likelihoods(x - step, a, b, outcome)) / (2 * h)
        hess[:, k] = -(battle_gradients(x + step, a, b, outcome).sum(axis=0)
                       - battle_gradients(x - step, a, b, outcome).sum(axis=0)) / (2 * h)
    # the two derivations of the scores agree
    assert scores == pytest.approx(battle_gradients(x, a, b, outcome), abs=1e-8)
    hess = (hess + hess.T) / 2 + 1e-5 * len(verdicts) * np.eye(size)
    if cluster == "topic":
        topics = sorted({v.qid for v in verdicts})
        member = np.array([topics.index(v.qid) for v in verdicts])
        scores = np.array([scores[member == t].sum(axis=0) for t in range(len(topics))])
    if not nuisance:
        hess, scores = hess[:-1, :-1], scores[:, :-1]
    meat = scores.T @ scores
    inverse = np.linalg.inv(hess)
    sd = np.sqrt(np.diag(inverse @ meat @ inverse))[: len(RUNS)]  # log nu marginalised out
    return theta, norm.ppf(1 - (1 - level) / 2) * sd


@pytest.mark.parametrize("cluster", ["battle", "topic"])
def test_equals_an_independent_finite_difference_computation(cluster: str) -> None:
    verdicts = simulated(topics=30, per_topic=40, nu=0.8, seed=3)
    assert 0.15 < sum(v.result == "tie" for v in verdicts) / len(verdicts) < 0.35
    theta, width = independent_half_widths(verdicts, cluster)
    got = sandwich_intervals(verdicts, cluster=cluster, ties="davidson")
    for run, t, w in zip(RUNS, theta, width):
        low, high = got[run]
        assert (low + high) / 2 == pytest.approx(1000 + SCALE * t, abs=1e-6)
        # stated tolerance: finite differences, 1e-6 of the width
        assert (high - low) / 2 == pytest.approx(SCALE * w, rel=1e-6)


def test_the_tie_parameter_is_marginalised_not_held_fixed() -> None:
    """Holding log nu fixed (dropping it from H and G) would give other widths: log nu is
    estimated with the strengths, its uncertainty is in theirs."""
    verdicts = simulated(topics=30, per_topic=40, nu=0.8, seed=3)
    _, fixed = independent_half_widths(verdicts, "topic", nuisance=False)
    got = sandwich_intervals(verdicts, cluster="topic", ties="davidson")
    widths = np.array([(hi - lo) / 2 for lo, hi in got.values()])
    assert np.max(np.abs(widths / (SCALE * fixed) - 1)) > 0.01


@pytest.mark.parametrize("cluster", ["battle", "topic"])
def test_without_ties_it_equals_the_half_rule(cluster: str) -> None:
    verdicts = [v for v in simulated(topics=25, per_topic=40, nu=0.0, seed=5)]
    assert not any(v.result == "tie" for v in verdicts)
    half = sandwich_intervals(verdicts, cluster=cluster)
    davidson = sandwich_intervals(verdicts, cluster=cluster, ties="davidson")
    for run in RUNS:  # nu fitted near 0 (the ridge keeps it positive): 1e-3 points apart
        assert davidson[run] == pytest.approx(half[run], abs=1e-3)


def test_topic_clustered_intervals_are_close_to_the_topic_bootstrap() -> None:
    verdicts = simulated(topics=60, per_topic=40, nu=0.8, shift=0.6, seed=9)
    counts = BattleCounts(verdicts)
    topic = sandwich_intervals(counts, cluster="topic", ties="davidson")
    battle = sandwich_intervals(counts, ties="davidson")
    boot = bootstrap_intervals(counts, ties="davidson", rounds=200, seed=1)

    def width(iv: dict[str, tuple[float, float]]) -> float:
        return float(np.mean([hi - lo for lo, hi in iv.values()]))

    assert width(battle) < 0.85 * width(boot)
    assert width(topic) == pytest.approx(width(boot), rel=0.2)


def test_the_leaderboard_shows_them_under_davidson() -> None:
    verdicts = simulated(topics=12, per_topic=30, nu=0.8, seed=4)
    shown = {"a": "A", "b": "B", "tie": "tie"}  # one order, run A shown first
    records = [({"qid": v.qid, "run_a": v.run_a, "run_b": v.run_b,
                 "orders": [{"first": v.run_a, "verdict": shown[v.result]}]},
                Path("battles.jsonl"), line) for line, v in enumerate(verdicts, start=1)]
    scores = run_scores(table_of(records), "davidson", 0, 0, 0.95)
    expected = sandwich_intervals(verdicts, ties="davidson")
    for run in RUNS:
        measured = scores.means[run]
        assert (measured["sw_low"], measured["sw_high"]) == pytest.approx(expected[run])
        assert measured["sw_low"] < measured["bt_score"] < measured["sw_high"]


def test_battle_totals_are_the_sparse_matrix_s_products_exactly() -> None:
    """The per-pair totals, counted per topic without scipy, equal the topics x (pairs x 3)
    sparse matrix's product with the same topic weights, float for float (whole numbers):
    so the bootstrap's resamples fit the same counts as before; and so do weights that are
    not whole numbers, counted rather than multiplied in single precision."""
    rng = np.random.default_rng(3)
    runs = [f"run{k}" for k in range(9)]
    verdicts = [Verdict(f"q{rng.integers(0, 13)}", a, b, str(rng.choice(["a", "b", "tie"])))
                for a, b in (rng.choice(runs, 2, replace=False) for _ in range(3000))]
    counts = BattleCounts(verdicts)
    matrix = counts.by_topic
    assert matrix.shape == (13, 3 * len(counts.i)) and matrix.sum() == 3000
    resamples = [np.bincount(rng.integers(0, 13, 13), minlength=13).astype(float)
                 for _ in range(20)]
    halves = [w + 0.5 for w in resamples[:5]]  # not whole numbers: counted, not multiplied
    for weights in [None, *resamples, *halves]:
        product = np.asarray(matrix.T @ (np.ones(13) if weights is None else weights))
        assert np.array_equal(counts.totals(weights), product.reshape(-1, 3))
    assert counts._dense is not None  # the resamples took the single-precision product
