"""Battle verdicts and the counts drawn from them (pure; the Bradley-Terry fit is in
`bradley_terry`, which re-exports these names).

- `Verdict(qid, run_a, run_b, result)`: the outcome of one battle on topic `qid`, `result` one
  of "a" (run_a won), "b" (run_b won) or "tie", after both presentation orders are reconciled.
- `reconcile(first, second_swapped)`: MT-Bench's rule for the two orders (Zheng et al. 2023):
  `first` is the judge's verdict with run_a shown as A, `second_swapped` its verdict with the
  answers swapped (run_b shown as A), both as the judge gave them ("a", "b", "tie", or None
  when unparseable).
  The same winner in both orders wins; any disagreement (a flip with the position) is a tie;
  a missing verdict in either order leaves the battle unjudged (None), never a tie.
- `TwoOrders` holds one battle's two raw verdicts; `flip_rates` gives, per run, the share of
  its battles judged in both orders whose verdict changed with the order (position bias).
- `win_matrix`: (row, column) -> (wins, ties, losses) of row against column.
- `per_topic`: per topic, each run's win rate there (a tie counts as half a win).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

RESULTS = ("a", "b", "tie")
SWAPPED = {"a": "b", "b": "a", "tie": "tie"}


@dataclass(frozen=True)
class Verdict:
    """One battle's outcome: "a" (run_a won), "b" (run_b won) or "tie"."""

    qid: str
    run_a: str
    run_b: str
    result: str

    def __post_init__(self) -> None:
        if self.result not in RESULTS:
            raise ValueError(f"a verdict is one of {', '.join(RESULTS)}, not {self.result!r}")
        if self.run_a == self.run_b:
            raise ValueError(f"a battle needs two different runs, not {self.run_a!r} twice")

    def score(self, run: str) -> float:
        """What the battle gives `run`: 1 for a win, 0.5 for a tie, 0 for a loss."""
        if self.result == "tie":
            return 0.5
        winner = self.run_a if self.result == "a" else self.run_b
        return 1.0 if run == winner else 0.0


def reconcile(first: str | None, second_swapped: str | None) -> str | None:
    """The battle's verdict from both presentation orders (`second_swapped` as the judge gave
    it with the answers swapped): the agreed winner, "tie" when they disagree, None when
    either is missing."""
    if first is None or second_swapped is None:
        return None
    for verdict in (first, second_swapped):
        if verdict not in RESULTS:
            raise ValueError(f"a verdict is one of {', '.join(RESULTS)}, not {verdict!r}")
    return first if first == SWAPPED[second_swapped] else "tie"


@dataclass(frozen=True)
class TwoOrders:
    """One battle judged in both orders: `first` with run_a shown as A, `second` with run_b
    shown as A (as the judge gave it); None where the judge's answer was unparseable."""

    qid: str
    run_a: str
    run_b: str
    first: str | None
    second: str | None

    def verdict(self) -> Verdict | None:
        """The reconciled verdict, None when the battle is unjudged."""
        result = reconcile(self.first, self.second)
        return None if result is None else Verdict(self.qid, self.run_a, self.run_b, result)

    def flipped(self) -> bool | None:
        """Whether the verdict changed with the order; None when either order is missing."""
        if self.first is None or self.second is None:
            return None
        return self.first != SWAPPED[self.second]


def flip_rates(battles: Iterable[TwoOrders]) -> dict[str, float]:
    """Per run, the share of its battles judged in both orders whose verdict flipped with the
    presentation order (a run with no such battle is left out)."""
    flips: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for battle in battles:
        flipped = battle.flipped()
        if flipped is None:
            continue
        for run in (battle.run_a, battle.run_b):
            flips[run][0] += int(flipped)
            flips[run][1] += 1
    return {run: flipped / total for run, (flipped, total) in sorted(flips.items())}


def win_matrix(verdicts: Iterable[Verdict]) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(row, column) -> (wins, ties, losses) of row against column, for every ordered pair
    of runs that met (both orientations)."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for v in verdicts:
        outcome = {"a": 0, "tie": 1, "b": 2}[v.result]
        counts[v.run_a, v.run_b][outcome] += 1
        counts[v.run_b, v.run_a][2 - outcome] += 1
    return {pair: (c[0], c[1], c[2]) for pair, c in sorted(counts.items())}


def per_topic(verdicts: Iterable[Verdict]) -> dict[str, dict[str, float]]:
    """Per topic, each run's win rate in its battles there (a tie counts as half a win)."""
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for v in verdicts:
        for run in (v.run_a, v.run_b):
            cell = sums[v.qid][run]
            cell[0] += v.score(run)
            cell[1] += 1
    return {qid: {run: won / played for run, (won, played) in sorted(runs.items())}
            for qid, runs in sorted(sums.items())}
