"""The active schedule: after battles have been judged and fitted, the next round goes where it
removes the most expected discordant pairs, pairs of runs the ranking puts in the wrong order.

`active_pairs(runs, scores, played, budget, seed=0)` returns `Pairing`s (schedule.py), none of
them `played`: exactly min(budget, battles left) of them.

The rule. The fit's scores give each run a log-strength theta (a run without one: their mean)
and each pair (a, b) the information of one battle between them, h = p (1 - p) with p = 1 /
(1 + exp(theta_b - theta_a)). With n_ab the battles the pair has played, the model covariance
of the log-strengths is S = (L + RIDGE I)^-1, L the graph Laplacian of the weights n_ab h_ab
(RIDGE keeps a run without battles finite, and very uncertain), and the difference d_ab =
theta_a - theta_b has the variance V_ab = S_aa + S_bb - 2 S_ab. The fit puts the pair in the
wrong order with probability w_ab = Phi(-|d_ab| / sqrt(V_ab)). One more battle between c and e
lowers every V_ab by h_ce (u_ab' S u_ce)^2 / (1 + h_ce V_ce) (u_ab: the unit vector of a minus
that of b; Sherman-Morrison), so the battle is worth

    gain(c, e) = h_ce / (1 + h_ce V_ce) * sum over pairs ab of w_ab (u_ab' S u_ce)^2 / V_ab,

each pair's chance of being in the wrong order times the share of its variance the battle
takes away (all pairs at once: K = S L_w S, L_w the Laplacian of the weights w / V, and gain =
h / (1 + h V) (K_cc + K_ee - 2 K_ce)). So battles go to neighbours in the ranking whose
intervals overlap (w large) and that are not measured well yet (V large), and to runs whose
place is uncertain; a pair whose order is settled (w near 0) gains nothing from its own
battles, and a battle between far runs (h small) tells little: such pairs are played when
nothing closer is worth more.

A round is built in steps of a hundredth of it (at least one battle): each step gives one
battle to each of the pairs with the largest gain, then counts them (n_ab) and computes S, V,
w and the gains again (theta stays: the verdicts are not known yet). Balance rules:
- no battle is repeated: a pair meets at most once per topic, on a topic both runs answered;
  a pair with no such topic left is not chosen;
- each battle goes to the topic, among those left to the pair, on which its two runs have
  played the fewest battles so far (ties: the topic with the fewest battles, then a seeded order
  of the topics), so each run's battles are spread over the topics as evenly as its pairs
  allow (the topic effects are averaged as in the all-pairs ranking);
- a step gives a pair one battle at most;
- gains equal in single precision are ordered by a seeded hash of the pair;
- a round is exactly min(budget, battles left) long (what a dry run counts).
Deterministic given the seed, the scores and what was played (so a resumed run makes the same
rounds); a round that finds no battle left returns none. At 83 runs x 119 topics a round of
2,000 battles takes about 0.13 s (benchmarks/battles_budget.py).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from scipy.special import ndtr

from nuggetizer.errors import ConfigError
from nuggetizer.measures.bradley_terry import CENTRE, SCALE
from nuggetizer.methods.battles.schedule import Pairing

RIDGE = 1e-2  # the precision of a run's log-strength before any battle (sd 10)
STEPS = 100  # the gains are computed again this many times a round (at most)


def _seeded(seed: int, *parts: str) -> int:
    """A stable seeded hash, for ties."""
    text = "\x1f".join((str(seed), *parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def _laplacian(n: int, i: np.ndarray, j: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The Laplacian of the graph whose edges (i, j), all distinct, carry `weight`."""
    lap = np.zeros((n, n))
    lap[i, j] = -weight
    lap[j, i] = -weight
    lap[np.arange(n), np.arange(n)] = np.bincount(i, weight, n) + np.bincount(j, weight, n)
    return lap


def pair_gains(theta: np.ndarray, battles: np.ndarray, i: np.ndarray,
               j: np.ndarray) -> np.ndarray:
    """The gain of one more battle for each pair (i, j) (module docstring), given the runs'
    log-strengths `theta` and the battles each pair has played."""
    n = len(theta)
    d = theta[i] - theta[j]
    p = 1 / (1 + np.exp(-d))
    h = p * (1 - p)
    cov = np.linalg.inv(_laplacian(n, i, j, battles * h) + RIDGE * np.eye(n))
    var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
    wrong = ndtr(-np.abs(d) / np.sqrt(var))
    k = cov @ _laplacian(n, i, j, wrong / var) @ cov
    return h / (1 + h * var) * (k[i, i] + k[j, j] - 2 * k[i, j])


def active_pairs(runs: Mapping[str, Sequence[str]], scores: Mapping[str, float],
                 played: Iterable[Pairing], budget: int, seed: int = 0) -> list[Pairing]:
    """The next `budget` battles, those that remove the most expected discordant pairs
    (module docstring): `runs` maps each topic to the runs that answered it, `scores` are the
    fit's Elo-like scores (`fit_model(...).scores`; a run without one is put at their mean),
    `played` the battles judged so far. Sorted."""
    if budget < 1:
        raise ConfigError(f"an active round needs a budget of at least 1, not {budget}")
    names = sorted({r for ids in runs.values() for r in ids})
    topics = sorted(runs)
    n, m = len(names), len(topics)
    index = {r: k for k, r in enumerate(names)}
    where = {q: t for t, q in enumerate(topics)}
    answered = np.zeros((n, m), dtype=bool)
    for qid, ids in runs.items():
        answered[[index[r] for r in ids], where[qid]] = True
    i, j = np.triu_indices(n, 1)
    left = answered[i] & answered[j]  # pairs x topics: the battles still possible

    def pair(a: int, b: int) -> int:  # the row of pair (a, b), a < b, in (i, j)
        return a * n - a * (a + 1) // 2 + b - a - 1

    battles = np.zeros(len(i))
    run_load = np.zeros((n, m))
    topic_load = np.zeros(m)
    for p in played:
        a, b, t = index.get(p.run_a), index.get(p.run_b), where.get(p.qid)
        if a is None or b is None or t is None or a == b:
            continue
        a, b = min(a, b), max(a, b)
        k = pair(a, b)
        if left[k, t]:
            left[k, t] = False
            battles[k] += 1
            run_load[a, t] += 1
            run_load[b, t] += 1
            topic_load[t] += 1
    remaining = left.sum(axis=1)
    known = [scores[r] for r in names if r in scores]
    middle = sum(known) / len(known) if known else CENTRE
    theta = np.array([(scores.get(r, middle) - CENTRE) / SCALE for r in names])
    pair_tie = np.array([_seeded(seed, "pair", names[a], names[b]) for a, b in zip(i, j)],
                        dtype=np.uint64)
    topic_tie = np.array([_seeded(seed, "topic", q) for q in topics], dtype=np.uint64)
    step = max(1, math.ceil(budget / STEPS))
    chosen: list[Pairing] = []
    while len(chosen) < budget:
        open_pairs = np.flatnonzero(remaining > 0)
        if not len(open_pairs):
            break
        gain = pair_gains(theta, battles, i, j)[open_pairs]
        best = np.lexsort((pair_tie[open_pairs], -gain.astype(np.float32)))
        for k in open_pairs[best[:min(step, budget - len(chosen))]]:
            a, b = i[k], j[k]
            free = np.flatnonzero(left[k])
            t = free[np.lexsort((topic_tie[free], topic_load[free],
                                 run_load[a, free] + run_load[b, free]))[0]]
            left[k, t] = False
            remaining[k] -= 1
            battles[k] += 1
            run_load[a, t] += 1
            run_load[b, t] += 1
            topic_load[t] += 1
            chosen.append(Pairing(topics[t], names[a], names[b]))
    return sorted(chosen)
