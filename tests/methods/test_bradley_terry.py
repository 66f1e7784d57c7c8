"""Bradley-Terry scores from battles: recovery of known strengths, an independent fit, the tie
rules, bootstrap intervals over topics, and the counts drawn from verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from nuggetizer.errors import ConfigError
from nuggetizer.measures import (
    RIDGE,
    SCALE,
    TwoOrders,
    Verdict,
    bootstrap_intervals,
    fit_bradley_terry,
    fit_model,
    flip_rates,
    per_topic,
    reconcile,
    win_matrix,
)

RUNS = [f"run{k:02d}" for k in range(12)]
# known log-strengths, 0.27 apart: more than four standard errors of a fit on 200 topics (the
# largest is about 0.06 for the end runs with ties)
THETA = np.linspace(-1.5, 1.5, len(RUNS))


def simulate(topics: int, nu: float = 0.0, seed: int = 0) -> list[Verdict]:
    """Every pair on every topic, drawn from Davidson's model with tie parameter `nu` (plain
    Bradley-Terry when 0)."""
    rng = np.random.default_rng(seed)
    verdicts = []
    for t in range(topics):
        for a in range(len(RUNS)):
            for b in range(a + 1, len(RUNS)):
                pa, pb = math.exp(THETA[a] / 2), math.exp(THETA[b] / 2)
                z = pa**2 + pb**2 + nu * pa * pb
                u = rng.random() * z
                result = "a" if u < pa**2 else "b" if u < pa**2 + pb**2 else "tie"
                verdicts.append(Verdict(f"q{t:03d}", RUNS[a], RUNS[b], result))
    return verdicts


def strengths(fit: dict[str, float]) -> np.ndarray:
    return np.array([fit[run] for run in RUNS])


@pytest.mark.parametrize("nu, ties", [(0.0, "half"), (0.0, "davidson"), (0.6, "davidson")])
def test_recovers_known_strengths(nu, ties):
    fitted = fit_model(simulate(200, nu), ties)
    theta = strengths(fitted.log_strengths)
    assert list(np.argsort(theta)) == list(range(len(RUNS)))  # rank correlation 1.0
    assert np.max(np.abs(theta - THETA)) < 0.25  # stated tolerance: 4 standard errors
    assert theta.mean() == pytest.approx(0.0, abs=1e-9)
    scores = strengths(fitted.scores)
    assert scores.mean() == pytest.approx(1000.0)
    assert scores == pytest.approx(1000.0 + SCALE * theta)
    if ties == "davidson":
        assert fitted.tie_parameter == pytest.approx(nu, abs=0.08)


def test_half_rule_keeps_the_ranking_with_ties():
    theta = strengths(fit_model(simulate(200, nu=0.6)).log_strengths)
    assert list(np.argsort(theta)) == list(range(len(RUNS)))
    # halved ties shrink the scale: P(i beats j | decided) is unchanged, ties pull toward 0.5
    assert 0.5 < (theta[-1] - theta[0]) / (THETA[-1] - THETA[0]) < 1.0


def test_matches_a_logistic_regression_in_scikit_learn():
    verdicts = simulate(30, nu=0.6, seed=4)
    rows, labels, weights = [], [], []
    for v in verdicts:  # one +1/-1 row per verdict and outcome; a tie half each way
        x = np.zeros(len(RUNS))
        x[RUNS.index(v.run_a)], x[RUNS.index(v.run_b)] = 1.0, -1.0
        for label, weight in ((1, v.score(v.run_a)), (0, v.score(v.run_b))):
            if weight:
                rows.append(x)
                labels.append(label)
                weights.append(weight)
    # the same objective: L2 with C = 1 / RIDGE, no intercept
    model = LogisticRegression(C=1 / RIDGE, fit_intercept=False, tol=1e-12, max_iter=10_000,
                               solver="newton-cholesky")
    model.fit(np.array(rows), np.array(labels), sample_weight=np.array(weights))
    theirs = model.coef_[0] - model.coef_[0].mean()
    ours = fit_bradley_terry(verdicts)
    # stated tolerance: 0.01 points on the Elo-like scale
    assert strengths(ours) == pytest.approx(1000.0 + SCALE * theirs, abs=0.01)


def test_davidson_matches_a_direct_likelihood_fit_in_scipy():
    verdicts = simulate(20, nu=0.8, seed=6)
    a = np.array([RUNS.index(v.run_a) for v in verdicts])
    b = np.array([RUNS.index(v.run_b) for v in verdicts])
    outcome = np.array([v.result for v in verdicts])

    def loss(x: np.ndarray) -> float:  # one term per verdict, Davidson's probabilities
        pi, nu = np.exp(x[:-1]), math.exp(x[-1])
        pa, pb = pi[a], pi[b]
        tie = nu * np.sqrt(pa * pb)
        chosen = np.where(outcome == "a", pa, np.where(outcome == "b", pb, tie))
        return float(-np.sum(np.log(chosen / (pa + pb + tie))) + RIDGE / 2 * x @ x)

    direct = minimize(loss, np.zeros(len(RUNS) + 1), method="BFGS", options={"gtol": 1e-8}).x
    fitted = fit_model(verdicts, "davidson")
    # stated tolerance: 1e-4 in log-strength (0.02 points) and in nu
    assert strengths(fitted.log_strengths) == pytest.approx(direct[:-1] - direct[:-1].mean(),
                                                            abs=1e-4)
    assert fitted.tie_parameter == pytest.approx(math.exp(direct[-1]), abs=1e-4)


def test_half_rule_is_a_half_win_and_a_half_loss():
    verdicts = simulate(40, nu=1.0, seed=2)
    doubled = []  # each decided battle twice, each tie as one win for each side
    for v in verdicts:
        if v.result == "tie":
            doubled += [Verdict(v.qid, v.run_a, v.run_b, side) for side in ("a", "b")]
        else:
            doubled += [v, v]
    # twice the likelihood under the same ridge: equal to well within 0.05 points
    assert strengths(fit_bradley_terry(doubled)) == pytest.approx(
        strengths(fit_bradley_terry(verdicts)), abs=0.05)


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_all_ties_give_equal_scores(ties):
    verdicts = [Verdict(f"q{t}", a, b, "tie") for t in range(5)
                for a in RUNS[:4] for b in RUNS[:4] if a < b]
    assert list(fit_bradley_terry(verdicts, ties).values()) == pytest.approx([1000.0] * 4)


def test_orientation_and_order_of_verdicts_do_not_matter():
    verdicts = simulate(10, nu=0.5, seed=9)
    swapped = [Verdict(v.qid, v.run_b, v.run_a, {"a": "b", "b": "a", "tie": "tie"}[v.result])
               for v in reversed(verdicts)]
    for ties in ("half", "davidson"):
        assert fit_bradley_terry(swapped, ties) == pytest.approx(fit_bradley_terry(verdicts, ties))


def test_a_run_that_wins_everything_gets_a_finite_top_score():
    verdicts = [Verdict("q1", "best", other, "a") for other in RUNS[:5]]
    verdicts += [Verdict("q1", a, b, "a") for a in RUNS[:5] for b in RUNS[:5] if a < b]
    for ties in ("half", "davidson"):
        fitted = fit_model(verdicts, ties)
        assert fitted.iterations < 500
        assert all(math.isfinite(s) for s in fitted.scores.values())
        assert max(fitted.scores, key=fitted.scores.__getitem__) == "best"
    assert fit_bradley_terry([]) == {}


def test_bootstrap_intervals():
    verdicts = simulate(50, nu=0.4, seed=3)
    fitted = fit_bradley_terry(verdicts)
    intervals = bootstrap_intervals(verdicts, rounds=200, seed=1)
    assert set(intervals) == set(RUNS)
    for run, (low, high) in intervals.items():
        assert low < fitted[run] < high
    assert bootstrap_intervals(verdicts, rounds=200, seed=1) == intervals
    assert bootstrap_intervals(verdicts, rounds=200, seed=2) != intervals
    narrow = bootstrap_intervals(verdicts, rounds=200, seed=1, level=0.5)
    assert all(intervals[r][0] < narrow[r][0] < narrow[r][1] < intervals[r][1] for r in RUNS)
    # 8 times the topics: intervals about sqrt(8) = 2.8 times narrower
    many = bootstrap_intervals(simulate(400, nu=0.4, seed=3), rounds=200, seed=1)
    widths = [hi - lo for lo, hi in intervals.values()]
    widths_many = [hi - lo for lo, hi in many.values()]
    assert np.mean(widths_many) < 0.5 * np.mean(widths)
    davidson = bootstrap_intervals(verdicts, ties="davidson", rounds=100, seed=1)
    davidson_fit = fit_bradley_terry(verdicts, "davidson")
    assert all(low < davidson_fit[run] < high for run, (low, high) in davidson.items())


def test_bad_settings_are_refused():
    verdicts = simulate(2)
    with pytest.raises(ConfigError, match="tie rule"):
        fit_bradley_terry(verdicts, ties="elo")
    with pytest.raises(ConfigError, match="rounds"):
        bootstrap_intervals(verdicts, rounds=0)
    with pytest.raises(ValueError, match="tie"):
        Verdict("q1", "x", "y", "draw")
    with pytest.raises(ValueError, match="two different runs"):
        Verdict("q1", "x", "x", "a")


def test_reconcile_both_orders():
    # `second` is as the judge gave it with the answers swapped: its "b" is run_a
    assert reconcile("a", "b") == "a"
    assert reconcile("b", "a") == "b"
    assert reconcile("tie", "tie") == "tie"
    assert reconcile("a", "a") == "tie"  # the judge picked the first position both times
    assert reconcile("a", "tie") == "tie"
    assert reconcile(None, "a") is None and reconcile("a", None) is None
    with pytest.raises(ValueError):
        reconcile("a", "A")


def test_flip_rates_win_matrix_and_per_topic():
    battles = [TwoOrders("q1", "x", "y", "a", "b"),  # x wins in both orders
               TwoOrders("q1", "x", "z", "a", "a"),  # flips: a tie
               TwoOrders("q2", "y", "z", "b", "a"),  # z wins
               TwoOrders("q2", "x", "y", None, "a")]  # unjudged
    assert flip_rates(battles) == {"x": 0.5, "y": 0.0, "z": 0.5}
    verdicts = [v for b in battles if (v := b.verdict()) is not None]
    assert [v.result for v in verdicts] == ["a", "tie", "b"]
    assert win_matrix(verdicts) == {("x", "y"): (1, 0, 0), ("y", "x"): (0, 0, 1),
                                    ("x", "z"): (0, 1, 0), ("z", "x"): (0, 1, 0),
                                    ("y", "z"): (0, 0, 1), ("z", "y"): (1, 0, 0)}
    assert per_topic(verdicts) == {"q1": {"x": 0.75, "y": 0.0, "z": 0.5},
                                   "q2": {"y": 0.0, "z": 1.0}}
