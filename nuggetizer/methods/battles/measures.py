"""The battles method's measures, from every battle's result at once: the Bradley-Terry score
of each run with its bootstrap interval over topics (measures/bradley_terry.py; the interval the
leaderboard shows) and arena-rank's sandwich interval beside it, its win rate, its flip rate,
its per-topic win rates and the win/tie/loss matrix; and, when the battles carry their answers'
style (`style` in each record, written when they are judged), the style-controlled score
(measures/style.py) with its interval, how many places the run moved under it, and the
covariates' coefficients (the extra table `style`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nuggetizer.interface.base import RunScores
from nuggetizer.measures.base import Measure
from nuggetizer.measures.verdicts import TwoOrders, Verdict
from nuggetizer.methods.battles.table import BattleTable

ELO = "Elo-like (mean 1000)"
FIT = "one Bradley-Terry fit on every battle, not a mean over topics"
DECLARED = (
    Measure("bt_score", "Bradley-Terry strength fitted by maximum likelihood on every battle "
            "(Elo-like scale, mean 1000; ties by the `ties` setting)", missing=None, scale=ELO,
            how=FIT),
    Measure("bt_low", "lower bound of the bootstrap interval of bt_score (topics resampled)",
            missing=None, scale=ELO, how=FIT),
    Measure("bt_high", "upper bound of the bootstrap interval of bt_score", missing=None,
            scale=ELO, how=FIT),
    Measure("sw_low", "lower bound of the sandwich interval of bt_score (arena-rank's: battles "
            "taken as independent, so topic noise is not in it; Davidson's tie parameter, "
            "under ties = davidson, in it and marginalised out)",
            missing=None, scale=ELO, how=FIT),
    Measure("sw_high", "upper bound of the sandwich interval of bt_score", missing=None,
            scale=ELO, how=FIT),
    Measure("sc_score", "style-controlled Bradley-Terry score: the answers' length, headers, "
            "list items, bold spans and citations as covariates (half rule)", missing=None,
            scale=ELO, how=FIT),
    Measure("sc_low", "lower bound of the sandwich interval of sc_score", missing=None,
            scale=ELO, how=FIT),
    Measure("sc_high", "upper bound of the sandwich interval of sc_score", missing=None,
            scale=ELO, how=FIT),
    Measure("sc_moved", "places the run moves up the ranking when style is controlled "
            "(its bt_score rank minus its sc_score rank)", missing=None, scale="places",
            how=FIT),
    Measure("win_rate", "share of the run's battles it won, a tie counting half",
            missing=None, how="over every battle of the run, not a mean over topics"),
    Measure("flip_rate", "share of the run's battles judged in both orders whose verdict "
            "reversed with the order (position bias; such a battle is a tie)", missing=None,
            higher_better=False),
    Measure("battles", "battles of the run with a result", missing=None, scale="count",
            how="counted over every topic"),
)
MEASURES = tuple(m.name for m in DECLARED)


POSITION = {"A": "a", "B": "b", "tie": "tie"}  # a judge's verdict as measures/verdicts.py spells it


def two_orders(record: Mapping[str, Any]) -> TwoOrders:
    """A battle judged in both orders as Bradley-Terry's TwoOrders: the verdicts as the judge
    gave them ("a": the answer shown as A won), run A shown first in `first`."""
    by_first = {o["first"]: POSITION.get(o["verdict"]) for o in record["orders"]}
    return TwoOrders(record["qid"], record["run_a"], record["run_b"], by_first[record["run_a"]],
                     by_first[record["run_b"]])


def verdicts(records: Iterable[Mapping[str, Any]]) -> list[Verdict]:
    """The battles with a result as Bradley-Terry verdicts."""
    return [Verdict(r["qid"], r["run_a"], r["run_b"], r["result"]) for r in records
            if r["result"] in ("a", "b", "tie")]


def style_table(cols: BattleTable, level: float, start: Mapping[str, float] | None = None
                ) -> tuple[dict[str, tuple[float, float, float]], str]:
    """The style-controlled scores {run: (score, low, high)} and the coefficients' TSV; ({},
    a TSV saying why) when some battles carry no style. `start`: the fit without style's
    log-strengths by run, where the fit starts."""
    import numpy as np

    from nuggetizer.measures.style import FEATURES, fit_style

    head = "feature\tcoefficient\tlow\thigh\tdescription\n"
    bare = int(len(cols) - cols.styled.sum())
    if bare or not len(cols):
        why = f"{bare} battles carry no answer style (judged before it was recorded)" \
            if bare else "no battle has a result"
        return {}, head + f"# not fitted: {why}\n"
    k = len(FEATURES)
    # features x battles, made in place (a third of the memory of the whole expression: 48
    # MiB rather than 112 at 405k battles); both counts 0 (the difference 0) stays 0
    sides = cols.style.T
    x, total = sides[:k].astype(float), sides[k:].astype(float)
    np.subtract(x, total, out=x)
    total += sides[:k]
    np.divide(x, total, out=x, where=total > 0)
    x = x.T  # battles x features, each feature's values side by side (as the fit sums them)
    outcome = np.array([1.0, 0.0, 0.5])[cols.result]  # every battle here has a result
    fit = fit_style(cols.runs, cols.a, cols.b, outcome, x, level=level,
                    start=None if start is None else np.array([start[r] for r in cols.runs]))
    lines = [f"{name}\t{c:.2f}\t{lo:.2f}\t{hi:.2f}\t{FEATURES[name]}"
             for name, (c, lo, hi) in fit.coefficients.items()]
    return ({run: (fit.scores[run], *fit.intervals[run]) for run in cols.runs},
            head + "\n".join(lines) + "\n")


def matrix_from_counts(counts: Any, ranked: Sequence[str]) -> str:
    """The win/tie/loss matrix (`matrix_tsv`'s) from the fit's pair counts."""
    totals = counts.totals()
    cells: dict[tuple[str, str], tuple[int, int, int]] = {}
    for i, j, (won, lost, tied) in zip(counts.i, counts.j, totals):
        a, b = counts.runs[i], counts.runs[j]
        cells[a, b] = (int(won), int(tied), int(lost))
        cells[b, a] = (int(lost), int(tied), int(won))
    lines = ["run_id\topponent\twins\tties\tlosses\twin_rate"]
    for run in ranked:
        for other in ranked:
            if (run, other) in cells:
                wins, ties, losses = cells[run, other]
                total = wins + ties + losses
                if total:
                    lines.append(f"{run}\t{other}\t{wins}\t{ties}\t{losses}\t"
                                 f"{(wins + ties / 2) / total:.4f}")
    return "\n".join(lines) + "\n"


def run_scores(table: BattleTable, ties: str, rounds: int, seed: int, level: float
               ) -> RunScores:
    """Every measure of every run from the battles with a result (`table`), as arrays: the
    fit's counts, win rates and per-topic win rates by counting arrays."""
    # numpy (the fit's) only when battles are scored: not at every command's start
    import numpy as np

    from nuggetizer.measures.bradley_terry import (
        BattleCounts,
        bootstrap_intervals,
        fit_model,
        one_blas_thread,
        sandwich_intervals,
    )

    cols = table.compact()
    n = len(cols.runs)
    counts = BattleCounts.from_arrays(cols.runs, cols.topics, cols.topic, cols.a, cols.b,
                                      cols.result)
    with one_blas_thread():  # products of a few runs' matrices: BLAS threads only spin
        fit = fit_model(counts, ties=ties)
        scores = fit.scores
        intervals = bootstrap_intervals(counts, ties=ties, rounds=rounds, seed=seed,
                                        level=level) if rounds > 0 else \
            {run: (score, score) for run, score in scores.items()}
        sandwich = sandwich_intervals(counts, level=level, ties=ties) if n else {}
        styled, style_tsv = style_table(cols, level, fit.log_strengths)
    points_a = np.array([1.0, 0.0, 0.5])[cols.result]
    points = np.bincount(cols.a, points_a, n) + np.bincount(cols.b, 1 - points_a, n)
    played = np.bincount(cols.a, minlength=n) + np.bincount(cols.b, minlength=n)
    both = cols.flip >= 0
    flipped = np.bincount(cols.a[both], cols.flip[both], n) + \
        np.bincount(cols.b[both], cols.flip[both], n)
    judged_twice = np.bincount(cols.a[both], minlength=n) + np.bincount(cols.b[both],
                                                                        minlength=n)
    unjudged = np.bincount(cols.a, cols.unjudged_orders, n) + \
        np.bincount(cols.b, cols.unjudged_orders, n)
    means: dict[str, dict[str, float]] = {}
    for k, run in enumerate(cols.runs):
        score = scores[run]
        low, high = intervals.get(run, (score, score))
        means[run] = {"bt_score": score, "bt_low": low, "bt_high": high,
                      "win_rate": float(points[k] / played[k]), "battles": float(played[k])}
        if judged_twice[k]:
            means[run]["flip_rate"] = float(flipped[k] / judged_twice[k])
        if run in sandwich:
            means[run]["sw_low"], means[run]["sw_high"] = sandwich[run]
        if run in styled:
            means[run]["sc_score"], means[run]["sc_low"], means[run]["sc_high"] = styled[run]
    if styled:
        before = sorted(means, key=lambda r: (-means[r]["bt_score"], r))
        after = sorted(means, key=lambda r: (-means[r]["sc_score"], r))
        place = {run: k for k, run in enumerate(after)}
        for k, run in enumerate(before):
            means[run]["sc_moved"] = float(k - place[run])
    cell_points = np.bincount(cols.topic * n + cols.a, points_a, len(cols.topics) * n) + \
        np.bincount(cols.topic * n + cols.b, 1 - points_a, len(cols.topics) * n)
    cell_played = np.bincount(cols.topic * n + cols.a, minlength=len(cols.topics) * n) + \
        np.bincount(cols.topic * n + cols.b, minlength=len(cols.topics) * n)
    topics: dict[str, dict[str, dict[str, float]]] = {}
    for cell in np.flatnonzero(cell_played):
        t, k = divmod(int(cell), n)
        topics.setdefault(cols.runs[k], {})[cols.topics[t]] = {
            "win_rate": float(cell_points[cell] / cell_played[cell])}
    ranked = sorted(means, key=lambda r: (-means[r]["bt_score"], r))
    return RunScores(topics, means, {r: int(unjudged[k]) for k, r in enumerate(cols.runs)},
                     {"matrix": matrix_from_counts(counts, ranked), "style": style_tsv})
