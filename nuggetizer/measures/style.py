"""Style control for battles (pure): a Bradley-Terry fit with the answers' style as covariates,
after LMArena's style-controlled leaderboard (arena-rank's ContextualBradleyTerry), so that a
judge's taste for long or heavily formatted answers is not counted as quality.

The covariates (`FEATURES`), counted on each answer as the judge reads it:
- words: whitespace-separated tokens of the answer text;
- headers: Markdown ATX headers, lines starting with 1 to 6 `#` and a space;
- list_items: lines starting (after indentation) with `-`, `*` or `+` and a space, or a
  number followed by `.` or `)` and a space;
- bold: `**...**` and `__...__` spans;
- citations: the citations of the answer object (every citation of every sentence).

Per battle, each covariate enters as the normalised difference of the two answers,
d = (x_a - x_b) / (x_a + x_b) (0 when both are 0), between -1 and 1, scale-free and
antisymmetric (swapping the sides negates it), as arena-hard-auto builds its style features.

Model: P(a beats b) = sigmoid(theta_a - theta_b + d . beta), a tie counting half a win to each
side; maximum likelihood by Newton's method with the ridge of measures/bradley_terry.py
(RIDGE / 2 on every parameter; no intercept), the same objective as an L2 logistic regression
with C = 1 / RIDGE on the +1/-1 run columns and the d columns. Not standardised: beta is the
log-odds of a win per unit of d (a +1 is "only A has it"); reported in Elo points
(400 / ln 10 * beta). Intervals: arena-rank's sandwich (battles independent), for the scores and
the coefficients. theta is centred (mean 1000 on the Elo-like scale) by the ridge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy when a fit runs: not at every command's start (methods read FEATURES)
    import numpy as np

FEATURES: dict[str, str] = {
    "words": "answer length in words (whitespace tokens)",
    "headers": "Markdown headers (lines starting with # to ###### and a space)",
    "list_items": "list items (lines starting with -, *, + or a number and . or ), then a "
                  "space)",
    "bold": "bold spans (**...** or __...__)",
    "citations": "citations of the answer object (all its sentences')",
}
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.M)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s", re.M)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__", re.S)


def answer_style(text: str, citations: int = 0) -> dict[str, int]:
    """The covariates of one answer (module docstring)."""
    return {"words": len(text.split()), "headers": len(_HEADER.findall(text)),
            "list_items": len(_ITEM.findall(text)), "bold": len(_BOLD.findall(text)),
            "citations": int(citations)}


def style_difference(a: Mapping[str, float], b: Mapping[str, float]) -> list[float]:
    """The normalised differences (x_a - x_b) / (x_a + x_b) of every covariate, in FEATURES
    order (0 where both are 0)."""
    out = []
    for name in FEATURES:
        x, y = float(a.get(name, 0)), float(b.get(name, 0))
        out.append((x - y) / (x + y) if x + y > 0 else 0.0)
    return out


@dataclass(frozen=True)
class StyleFit:
    """A style-controlled fit: each run's score and sandwich interval, and each covariate's
    coefficient in Elo points with its interval."""

    scores: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    coefficients: dict[str, tuple[float, float, float]]  # feature: (points, low, high)
    battles: int
    iterations: int


def _blocks(n: int, cell: np.ndarray, xt: np.ndarray, h: np.ndarray) -> np.ndarray:
    """sum over battles of h v v^T, v = (e_a - e_b, x): the (runs + features) square matrix
    (`cell`: each battle's a * n + b; `xt`: the covariates as features x battles). Summed per
    cell of runs first, one count per feature (not one per feature and side: 15 ms a matrix
    rather than 19 to 22, 405k battles)."""
    import numpy as np

    k = len(xt)
    out = np.zeros((n + k, n + k))
    m = np.bincount(cell, h, n * n).reshape(n, n)  # battles may repeat a pair
    out[:n, :n] = np.diag(m.sum(axis=0) + m.sum(axis=1)) - m - m.T
    hx = xt * h
    for f in range(k):
        c = np.bincount(cell, hx[f], n * n).reshape(n, n)
        out[:n, n + f] = c.sum(axis=1) - c.sum(axis=0)  # as run A, less as run B
    out[n:, :n] = out[:n, n:].T
    out[n:, n:] = hx @ xt.T
    return out


def fit_style(runs: Sequence[str], a: np.ndarray, b: np.ndarray, outcome: np.ndarray,
              x: np.ndarray, level: float = 0.95, tol: float = 1e-9,
              max_iter: int = 200, start: np.ndarray | None = None) -> StyleFit:
    """The style-controlled fit (module docstring): battles between run indices `a` and `b`
    (into `runs`), `outcome` 1 (a won), 0.5 (tie) or 0, covariate differences `x` (battles x
    FEATURES); `start`: the runs' log-strengths to start from (the fit without style: fewer
    steps), else 0."""
    import numpy as np

    from nuggetizer.measures.bradley_terry import (
        ARENA_HESSIAN_REG,
        CENTRE,
        RIDGE,
        SCALE,
        newton,
        one_blas_thread,
    )

    n, k = len(runs), x.shape[1]
    xt = np.ascontiguousarray(x.T)  # a feature's values side by side: 2-3 times faster sums
    params = np.zeros(n + k)
    if start is not None:
        params[:n] = start

    def parts(w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        z = w[a] - w[b] + w[n:] @ xt
        p = 1 / (1 + np.exp(-z))
        f = float(np.sum(np.logaddexp(0.0, z) - outcome * z)) + RIDGE / 2 * float(w @ w)
        r = p - outcome
        grad = np.empty(n + k)
        grad[:n] = np.bincount(a, r, n) - np.bincount(b, r, n)
        grad[n:] = xt @ r
        return f, grad + RIDGE * w, r, p

    cell = a * n + b
    last: dict[str, Any] = {}  # the point last evaluated: where Newton stops

    def objective(w: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        f, grad, r, p = parts(w)
        blocks = _blocks(n, cell, xt, p * (1 - p))
        last.update(w=w, r=r, blocks=blocks)
        return f, grad, blocks + RIDGE * np.eye(n + k)

    with one_blas_thread():
        params, iterations = newton(objective, params, tol=tol, max_iter=max_iter)
        if last["w"] is not params:  # not the point evaluated last (never, as newton stands)
            objective(params)
        hess = last["blocks"] + ARENA_HESSIAN_REG * len(a) * np.eye(n + k)
        inverse = np.linalg.inv(hess)
        cov = inverse @ _blocks(n, cell, xt, last["r"] ** 2) @ inverse
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    theta = params[:n] - params[:n].mean()
    scores = {run: CENTRE + SCALE * float(t) for run, t in zip(runs, theta)}
    intervals = {run: (scores[run] - SCALE * z * float(s), scores[run] + SCALE * z * float(s))
                 for run, s in zip(runs, sd[:n])}
    coefficients = {name: (SCALE * float(beta), SCALE * float(beta - z * s),
                           SCALE * float(beta + z * s))
                    for name, beta, s in zip(FEATURES, params[n:], sd[n:])}
    return StyleFit(scores, intervals, coefficients, len(a), iterations)
