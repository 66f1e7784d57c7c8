"""The battles method's measures, from every battle's result at once: the Bradley-Terry score
of each run with its bootstrap interval over topics (measures/bradley_terry.py; the interval the
leaderboard shows) and arena-rank's sandwich interval beside it, its win rate, its flip rate,
its per-topic win rates and the win/tie/loss matrix; and, when the battles carry their answers'
style (`style` in each record, written when they are judged), the style-controlled score
(measures/style.py) with its interval, how many places the run moved under it, and the
covariates' coefficients (the extra table `style`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nuggetizer.interface.base import RunScores
from nuggetizer.measures.base import Measure
from nuggetizer.measures.verdicts import TwoOrders, Verdict, flip_rates, per_topic, win_matrix

DECLARED = (
    Measure("bt_score", "Bradley-Terry strength fitted by maximum likelihood on every battle "
            "(Elo-like scale, mean 1000; ties by the `ties` setting)", missing=None),
    Measure("bt_low", "lower bound of the bootstrap interval of bt_score (topics resampled)",
            missing=None),
    Measure("bt_high", "upper bound of the bootstrap interval of bt_score", missing=None),
    Measure("sw_low", "lower bound of the sandwich interval of bt_score (arena-rank's: battles "
            "taken as independent, so topic noise is not in it; half rule only)",
            missing=None),
    Measure("sw_high", "upper bound of the sandwich interval of bt_score", missing=None),
    Measure("sc_score", "style-controlled Bradley-Terry score: the answers' length, headers, "
            "list items, bold spans and citations as covariates (half rule)", missing=None),
    Measure("sc_low", "lower bound of the sandwich interval of sc_score", missing=None),
    Measure("sc_high", "upper bound of the sandwich interval of sc_score", missing=None),
    Measure("sc_moved", "places the run moves up the ranking when style is controlled "
            "(its bt_score rank minus its sc_score rank)", missing=None),
    Measure("win_rate", "share of the run's battles it won, a tie counting half",
            missing=None),
    Measure("flip_rate", "share of the run's battles judged in both orders whose verdict "
            "reversed with the order (position bias; such a battle is a tie)", missing=None,
            higher_better=False),
    Measure("battles", "battles of the run with a result", missing=None),
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


def win_rates(found: Sequence[Verdict]) -> dict[str, float]:
    """Each run's share of its battles won, a tie half."""
    points: dict[str, float] = {}
    played: Counter[str] = Counter()
    for v in found:
        for run in (v.run_a, v.run_b):
            points.setdefault(run, 0.0)
            points[run] += v.score(run)
            played[run] += 1
    return {run: points[run] / played[run] for run in played}


def matrix_tsv(found: Sequence[Verdict], runs: Sequence[str]) -> str:
    """The win/tie/loss matrix: one row per ordered pair of runs that met, `run opponent wins
    ties losses win_rate` (the row's run's results)."""
    matrix = win_matrix(found)
    lines = ["run_id\topponent\twins\tties\tlosses\twin_rate"]
    for run in runs:
        for other in runs:
            if run == other:
                continue
            if (run, other) in matrix:
                wins, ties, losses = matrix[(run, other)]
            elif (other, run) in matrix:
                losses, ties, wins = matrix[(other, run)]
            else:
                continue
            total = wins + ties + losses
            if total:
                lines.append(f"{run}\t{other}\t{wins}\t{ties}\t{losses}\t"
                             f"{(wins + ties / 2) / total:.4f}")
    return "\n".join(lines) + "\n"


def style_table(records: Sequence[Mapping[str, Any]], found_runs: Sequence[str],
                level: float) -> tuple[dict[str, tuple[float, float, float]], str]:
    """The style-controlled scores {run: (score, low, high)} and the coefficients' TSV, from
    the records with a result; ({}, a TSV saying why) when some of them carry no style."""
    from nuggetizer.measures.style import FEATURES, fit_style, style_difference

    decided = [r for r in records if r["result"] in ("a", "b", "tie")]
    bare = sum(1 for r in decided if not isinstance(r.get("style"), Mapping))
    head = "feature\tcoefficient\tlow\thigh\tdescription\n"
    if bare or not decided:
        why = f"{bare} battles carry no answer style (judged before it was recorded)" \
            if bare else "no battle has a result"
        return {}, head + f"# not fitted: {why}\n"
    import numpy as np

    index = {run: k for k, run in enumerate(found_runs)}
    a = np.fromiter((index[r["run_a"]] for r in decided), np.int64, len(decided))
    b = np.fromiter((index[r["run_b"]] for r in decided), np.int64, len(decided))
    outcome = np.fromiter(({"a": 1.0, "b": 0.0, "tie": 0.5}[r["result"]] for r in decided),
                          float, len(decided))
    x = np.array([style_difference(r["style"]["a"], r["style"]["b"]) for r in decided])
    fit = fit_style(found_runs, a, b, outcome, x, level=level)
    lines = [f"{name}\t{c:.2f}\t{lo:.2f}\t{hi:.2f}\t{FEATURES[name]}"
             for name, (c, lo, hi) in fit.coefficients.items()]
    return ({run: (fit.scores[run], *fit.intervals[run]) for run in found_runs},
            head + "\n".join(lines) + "\n")


def run_scores(records: Sequence[Mapping[str, Any]], ties: str, rounds: int, seed: int,
               level: float) -> RunScores:
    """Every measure of every run from the battle records (those with a result)."""
    # numpy (the fit's) only when battles are scored: not at every command's start
    from nuggetizer.measures.bradley_terry import (
        bootstrap_intervals,
        fit_bradley_terry,
        sandwich_intervals,
    )

    found = verdicts(records)
    scores = fit_bradley_terry(found, ties=ties)
    intervals = bootstrap_intervals(found, ties=ties, rounds=rounds, seed=seed, level=level) \
        if rounds > 0 else {run: (score, score) for run, score in scores.items()}
    sandwich = sandwich_intervals(found, level=level) if ties == "half" and found else {}
    styled, style_tsv = style_table(records, sorted(scores), level)
    rates = win_rates(found)
    flips = flip_rates(two_orders(r) for r in records if len(r["orders"]) == 2)
    played = Counter(run for v in found for run in (v.run_a, v.run_b))
    unjudged: Counter[str] = Counter()
    for r in records:
        unjudged[r["run_a"]] += int(r.get("unjudged") or 0)
        unjudged[r["run_b"]] += int(r.get("unjudged") or 0)
    means: dict[str, dict[str, float]] = {}
    for run, score in scores.items():
        low, high = intervals.get(run, (score, score))
        means[run] = {"bt_score": score, "bt_low": low, "bt_high": high,
                      "win_rate": rates.get(run, 0.0), "battles": float(played[run])}
        if run in flips:
            means[run]["flip_rate"] = flips[run]
        if run in sandwich:
            means[run]["sw_low"], means[run]["sw_high"] = sandwich[run]
        if run in styled:
            means[run]["sc_score"], means[run]["sc_low"], means[run]["sc_high"] = styled[run]
    if styled:
        before = sorted(means, key=lambda r: (-means[r]["bt_score"], r))
        after = sorted(means, key=lambda r: (-means[r]["sc_score"], r))
        for run in means:
            means[run]["sc_moved"] = float(before.index(run) - after.index(run))
    topics: dict[str, dict[str, dict[str, float]]] = {}
    for qid, by_run in per_topic(found).items():
        for run, rate in by_run.items():
            topics.setdefault(run, {})[qid] = {"win_rate": rate}
    ranked = sorted(means, key=lambda r: (-means[r]["bt_score"], r))
    return RunScores(topics, means, {r: unjudged[r] for r in means},
                     {"matrix": matrix_tsv(found, ranked), "style": style_tsv})
