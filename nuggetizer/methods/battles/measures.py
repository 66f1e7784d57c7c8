"""The battles method's measures, from every battle's result at once: the Bradley-Terry score
of each run with its bootstrap interval (measures/bradley_terry.py), its win rate, its flip
rate, its per-topic win rates and the win/tie/loss matrix."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nuggetizer.interface.base import RunScores
from nuggetizer.measures.base import Measure
from nuggetizer.measures.verdicts import TwoOrders, Verdict, flip_rates, per_topic, win_matrix

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


def run_scores(records: Sequence[Mapping[str, Any]], ties: str, rounds: int, seed: int,
               level: float) -> RunScores:
    """Every measure of every run from the battle records (those with a result)."""
    # numpy (the fit's) only when battles are scored: not at every command's start
    from nuggetizer.measures.bradley_terry import bootstrap_intervals, fit_bradley_terry

    found = verdicts(records)
    scores = fit_bradley_terry(found, ties=ties)
    intervals = bootstrap_intervals(found, ties=ties, rounds=rounds, seed=seed, level=level) \
        if rounds > 0 else {run: (score, score) for run, score in scores.items()}
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
    topics: dict[str, dict[str, dict[str, float]]] = {}
    for qid, by_run in per_topic(found).items():
        for run, rate in by_run.items():
            topics.setdefault(run, {})[qid] = {"win_rate": rate}
    ranked = sorted(means, key=lambda r: (-means[r]["bt_score"], r))
    return RunScores(topics, means, {r: unjudged[r] for r in means},
                     {"matrix": matrix_tsv(found, ranked)})
