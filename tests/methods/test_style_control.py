"""Style control and sandwich intervals of battles: a judge that prefers longer answers by a set
amount is caught; the fit equals an independent logistic regression with covariates; the
sandwich intervals equal a battle-by-battle computation; arena-rank's published examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.linear_model import LogisticRegression

from nuggetizer.measures.bradley_terry import (
    RIDGE,
    SCALE,
    Verdict,
    bootstrap_intervals,
    fit_model,
    sandwich_intervals,
)
from nuggetizer.measures.style import FEATURES, answer_style, fit_style, style_difference

RUNS = [f"run{k}" for k in range(10)]
THETA = np.linspace(-1.0, 1.0, len(RUNS))
LENGTH_TASTE = 1.2  # the judge's log-odds per unit of the length difference


def simulated(battles: int, seed: int = 0, ties: float = 0.0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Battles between random runs whose answers' lengths vary (by a factor of about 1.6 from
    answer to answer), the weakest runs writing the longest answers on average; the judge
    adds LENGTH_TASTE * d_words to the log-odds."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(RUNS), battles)
    b = (a + rng.integers(1, len(RUNS), battles)) % len(RUNS)
    mean_words = np.linspace(400, 120, len(RUNS))  # the weak runs write long
    words_a = np.round(mean_words[a] * rng.lognormal(0, 0.5, battles)) + 1
    words_b = np.round(mean_words[b] * rng.lognormal(0, 0.5, battles)) + 1
    bold_a, bold_b = rng.poisson(2, battles), rng.poisson(2, battles)
    x = np.array([style_difference({"words": wa, "bold": ba}, {"words": wb, "bold": bb})
                  for wa, wb, ba, bb in zip(words_a, words_b, bold_a, bold_b)])
    logit = THETA[a] - THETA[b] + LENGTH_TASTE * x[:, 0]
    p = 1 / (1 + np.exp(-logit))
    u = rng.random(battles)
    outcome = np.where(u < ties, 0.5, (rng.random(battles) < p).astype(float))
    return a, b, outcome, x, p


def test_counts_the_declared_covariates() -> None:
    text = ("# Answer\n\nIntro with **bold** and __more bold__.\n- one\n* two\n  + three\n"
            "1. first\n2) second\n#not a header\n**")
    assert answer_style(text, citations=4) == {
        "words": len(text.split()), "headers": 1, "list_items": 5, "bold": 2, "citations": 4}
    assert style_difference({"words": 30}, {"words": 10})[0] == pytest.approx(0.5)
    assert style_difference({}, {}) == [0.0] * len(FEATURES)


def test_recovers_a_judge_that_prefers_longer_answers() -> None:
    a, b, outcome, x, _ = simulated(40000)
    fit = fit_style(RUNS, a, b, outcome, x)
    points, low, high = fit.coefficients["words"]
    assert low <= SCALE * LENGTH_TASTE <= high
    assert points == pytest.approx(SCALE * LENGTH_TASTE, rel=0.1)
    for name in ("headers", "list_items", "bold", "citations"):  # no taste for these
        c, lo, hi = fit.coefficients[name]
        assert lo - 1e-9 <= 0.0 <= hi + 1e-9, name
    theta = np.array([(fit.scores[r] - 1000) / SCALE for r in RUNS])
    assert np.max(np.abs(theta - THETA)) < 0.1
    assert list(np.argsort(theta)) == list(range(len(RUNS)))
    # without style control the long-winded weak runs gain: the ranking is bent
    verdicts = [Verdict("q", RUNS[i], RUNS[j], {1.0: "a", 0.0: "b", 0.5: "tie"}[o])
                for i, j, o in zip(a, b, outcome)]
    plain = fit_model(verdicts).log_strengths
    assert plain[RUNS[0]] - plain[RUNS[-1]] > theta[0] - theta[-1] + 0.3


def test_equals_an_independent_logistic_regression_with_covariates() -> None:
    a, b, outcome, x, _ = simulated(3000, seed=3, ties=0.2)
    fit = fit_style(RUNS, a, b, outcome, x)
    n = len(RUNS)
    design = np.zeros((len(a), n + x.shape[1]))
    design[np.arange(len(a)), a] = 1.0
    design[np.arange(len(a)), b] = -1.0
    design[:, n:] = x
    # a tie is half a win and half a loss: two rows of weight 1/2
    rows = np.vstack([design, design])
    labels = np.r_[np.ones(len(a)), np.zeros(len(a))]
    weights = np.r_[outcome, 1 - outcome]
    keep = weights > 0
    model = LogisticRegression(C=1 / RIDGE, fit_intercept=False, tol=1e-12, max_iter=10000)
    model.fit(rows[keep], labels[keep], sample_weight=weights[keep])
    coef = model.coef_[0]
    theta = coef[:n] - coef[:n].mean()
    assert [fit.scores[r] for r in RUNS] == pytest.approx(list(1000 + SCALE * theta), abs=1e-3)
    assert [fit.coefficients[f][0] for f in FEATURES] == pytest.approx(
        list(SCALE * coef[n:]), abs=1e-3)


def _half_rule_sandwich(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, theta: np.ndarray,
                        x: np.ndarray | None = None, beta: np.ndarray | None = None,
                        level: float = 0.95) -> np.ndarray:
    """Standard errors by the sandwich, battle by battle (the independent computation)."""
    n = len(RUNS)
    k = 0 if x is None else x.shape[1]
    hess = np.zeros((n + k, n + k))
    meat = np.zeros((n + k, n + k))
    for t in range(len(a)):
        v = np.zeros(n + k)
        v[a[t]] += 1
        v[b[t]] -= 1
        if k:
            v[n:] = x[t]
        z = theta[a[t]] - theta[b[t]] + (float(x[t] @ beta) if k else 0.0)
        p = 1 / (1 + math.exp(-z))
        hess += p * (1 - p) * np.outer(v, v)
        meat += (outcome[t] - p) ** 2 * np.outer(v, v)
    hess += 1e-5 * len(a) * np.eye(n + k)  # arena-rank's hessian_reg, times the battles
    inverse = np.linalg.inv(hess)
    return norm.ppf(1 - (1 - level) / 2) * np.sqrt(np.diag(inverse @ meat @ inverse))


def test_sandwich_intervals_equal_a_battle_by_battle_computation() -> None:
    a, b, outcome, _, _ = simulated(1500, seed=5, ties=0.15)
    verdicts = [Verdict(f"q{t % 40}", RUNS[i], RUNS[j], {1.0: "a", 0.0: "b", 0.5: "tie"}[o])
                for t, (i, j, o) in enumerate(zip(a, b, outcome))]
    fit = fit_model(verdicts)
    theta = np.array([fit.log_strengths[r] for r in RUNS])
    width = _half_rule_sandwich(a, b, outcome, theta)
    got = sandwich_intervals(verdicts)
    for run, t, w in zip(RUNS, theta, width):
        assert got[run] == pytest.approx((1000 + SCALE * (t - w), 1000 + SCALE * (t + w)),
                                         abs=1e-6)
    # the style fit's intervals, the same way with the covariates
    x = np.random.default_rng(1).uniform(-1, 1, (len(a), len(FEATURES)))
    styled = fit_style(RUNS, a, b, outcome, x)
    theta_s = np.array([(styled.scores[r] - 1000) / SCALE for r in RUNS])
    beta = np.array([styled.coefficients[f][0] / SCALE for f in FEATURES])
    width = _half_rule_sandwich(a, b, outcome, theta_s, x, beta)
    for run, w in zip(RUNS, width[:len(RUNS)]):
        low, high = styled.intervals[run]
        assert (high - low) / 2 == pytest.approx(SCALE * w, rel=1e-6)
    for f, w in zip(FEATURES, width[len(RUNS):]):
        c, low, high = styled.coefficients[f]
        assert (high - low) / 2 == pytest.approx(SCALE * w, rel=1e-6)


def test_topic_clustered_sandwich_sees_topic_noise() -> None:
    """Battles on topics whose runs' strengths shift per topic: the battle-level sandwich is
    narrower than the topic bootstrap, the topic-clustered one close to it."""
    rng = np.random.default_rng(9)
    verdicts = []
    for t in range(80):
        shift = rng.normal(0, 0.6, len(RUNS))
        for _ in range(60):
            i, j = rng.choice(len(RUNS), 2, replace=False)
            p = 1 / (1 + math.exp(-(THETA[i] + shift[i] - THETA[j] - shift[j])))
            verdicts.append(Verdict(f"q{t}", RUNS[i], RUNS[j], "a" if rng.random() < p else "b"))
    battle = sandwich_intervals(verdicts)
    topic = sandwich_intervals(verdicts, cluster="topic")
    boot = bootstrap_intervals(verdicts, rounds=300, seed=1)

    def width(iv: dict[str, tuple[float, float]]) -> float:
        return float(np.mean([hi - lo for lo, hi in iv.values()]))

    assert width(battle) < 0.85 * width(boot)
    assert width(topic) == pytest.approx(width(boot), rel=0.2)


def arena_games(seed: int, plays: list[tuple[str, str, int]]) -> list[Verdict]:
    """Games as arena-rank's test writes them: each side drawn at random."""
    import random

    rnd = random.Random(seed)
    games = []
    for winner, loser, count in plays:
        for _ in range(count):
            first = rnd.choice([True, False])
            a, b = (winner, loser) if first else (loser, winner)
            games.append(Verdict(f"g{len(games)}", a, b, "a" if first else "b"))
    return games


def test_arena_rank_published_wikipedia_example() -> None:
    """arena-rank's tests/test_bradley_terry.py: the worked example of Wikipedia's
    Bradley-Terry article, p = 0.640, 1.043, 0.660, 2.270 (geometric mean 1), rtol 1e-3."""
    games = arena_games(67, [("A", "B", 2), ("B", "A", 3), ("A", "D", 1), ("D", "A", 4),
                             ("B", "C", 5), ("C", "B", 3), ("C", "D", 1), ("D", "C", 3)])
    theta = fit_model(games).log_strengths
    assert [math.exp(theta[t]) for t in "ABCD"] == pytest.approx(
        [0.640, 1.043, 0.660, 2.270], rel=1e-3)


def test_arena_rank_published_sandwich_against_bootstrap() -> None:
    """arena-rank's test_ci_methods_comparison: 4 competitors 0 to 1 apart, 10,000 games; the
    sandwich bounds within 10% of the bootstrap's (here each game its own topic, so the topic
    bootstrap is arena-rank's battle bootstrap)."""
    rng = np.random.default_rng(42)
    ratings = np.linspace(0.0, 1.0, 4)
    a = rng.integers(0, 4, 10000)
    b = (a + rng.integers(1, 4, 10000)) % 4
    wins = rng.random(10000) < 1 / (1 + np.exp(ratings[b] - ratings[a]))
    verdicts = [Verdict(f"g{k}", str(i), str(j), "a" if w else "b")
                for k, (i, j, w) in enumerate(zip(a, b, wins))]
    sandwich = sandwich_intervals(verdicts)
    boot = bootstrap_intervals(verdicts, rounds=200, seed=0)
    for run in sandwich:  # on arena-rank's scale (1, base e, centred at 0)
        s = [(v - 1000) / SCALE for v in sandwich[run]]
        t = [(v - 1000) / SCALE for v in boot[run]]
        assert s == pytest.approx(t, rel=0.1, abs=0.01)
