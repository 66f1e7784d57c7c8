"""The battle schedule: which pairs of runs meet on which topic, under a budget.

`schedule_battles(runs, per_topic=None, budget=None, seed=0)` returns `Pairing`s
(`run_a < run_b`; the method decides the presentation order, both orders by default).

Sampling design (per topic, with the topic's runs sorted and de-duplicated):

1. The runs are shuffled onto the vertices of a complete graph by a generator seeded with
   `f"{seed}:{qid}"` (so the schedule is the same whatever the order of `runs`, and each topic
   draws its own opponents: across topics every run meets many different runs).
2. The pairs are listed as a sequence of balanced "rounds" that cover every pair once:
   - an even number of runs: the circle method (round-robin) gives n-1 rounds, each a perfect
     matching, so every run plays once per round;
   - an odd number: Walecki's decomposition gives (n-1)/2 Hamiltonian cycles, each listed as
     alternate edges first (a matching that leaves one run out, then the edge closing it,
     then the rest), so every run plays twice per cycle.
   The rounds are taken in a seeded random order.
3. The first k pairs of that sequence are the topic's battles. Every prefix of the sequence is
   balanced: each run plays floor(2k/n) or ceil(2k/n) battles (within one), no pair is played
   twice, and all pairs when k >= n(n-1)/2.

Because the sequence does not depend on k, a larger budget with the same seed extends a
smaller one: battles judged before are kept (and replayed from the cache).

Budget: `per_topic` gives each topic k battles (capped at its number of pairs); `budget`
splits a total over the topics that have a pair, evenly, the remainder one each to the
first topics in sorted order, and what a topic cannot use (it has fewer pairs) goes to the
others the same way; neither gives all pairs. Topics with fewer than two runs get none.

Adaptive round (`adaptive_pairs`, optional): after a first round has been judged and fitted,
more battles where the ranking is still uncertain. Per topic, the candidates are the pairs of
that topic's sequence (same seed, same order) not played yet whose two runs' score intervals
overlap (a run without an interval overlaps every run); the round takes the first candidates
of each topic, `per_topic` or a `budget` split as above (the remainder, and a budget below the
number of topics, to the first topics in a seeded random order). Deterministic given the seed,
the intervals and what was played; it never repeats a battle. Balance within one is not kept
here on purpose: runs with many close rivals play more.

The active schedule (`active_pairs`, methods/battles/active.py) chooses its rounds from the fit
of the battles judged before; it returns `Pairing`s too.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nuggetizer.errors import ConfigError


@dataclass(frozen=True, order=True)
class Pairing:
    """One battle to judge: two runs' answers to topic `qid`, `run_a < run_b`."""

    qid: str
    run_a: str
    run_b: str


def _circle_rounds(n: int) -> list[list[tuple[int, int]]]:
    """The circle method for an even n: n-1 perfect matchings covering every pair once."""
    rounds = []
    for r in range(n - 1):
        ring = [n - 1] + [(r + i) % (n - 1) for i in range(n - 1)]
        rounds.append([(ring[i], ring[n - 1 - i]) for i in range(n // 2)])
    return rounds


def _walecki_rounds(n: int) -> list[list[tuple[int, int]]]:
    """Walecki's decomposition for an odd n: (n-1)/2 Hamiltonian cycles covering every pair
    once, each listed so that every prefix is balanced (even edges, closing edge, odd edges)."""
    m = (n - 1) // 2
    rounds = []
    for c in range(m):
        path = [c]
        for step in range(1, m + 1):
            path.append((c + step) % (2 * m))
            if step < m:
                path.append((c - step) % (2 * m))
        cycle = [n - 1] + path  # vertex n-1 is Walecki's centre
        edges = [(cycle[i], cycle[(i + 1) % n]) for i in range(n)]
        rounds.append(edges[0:n:2] + edges[1:n:2])
    return rounds


def pair_sequence(qid: str, runs: Sequence[str], seed: int = 0) -> list[tuple[str, str]]:
    """All pairs of `runs` for topic `qid` in the schedule's order (see the module docstring);
    each pair sorted. Any prefix of it is a balanced schedule."""
    names = sorted(set(runs))
    n = len(names)
    if n < 2:
        return []
    rng = random.Random(f"{seed}:{qid}")
    rng.shuffle(names)
    rounds = _circle_rounds(n) if n % 2 == 0 else _walecki_rounds(n)
    rng.shuffle(rounds)
    out = []
    for edges in rounds:
        if n % 2 == 0:  # a matching: any subset is balanced, so its order is random too
            edges = edges[:]
            rng.shuffle(edges)
        for i, j in edges:
            a, b = sorted((names[i], names[j]))
            out.append((a, b))
    return out


def _split(budget: int, capacity: dict[str, int], order: list[str]) -> dict[str, int]:
    """Water-filling: `budget` spread evenly over the topics, none above its capacity, the
    remainder one each to the first topics in `order`."""
    share = {qid: 0 for qid in capacity}
    left = budget
    open_ = [qid for qid in order if capacity[qid] > 0]
    while left > 0 and open_:
        each, extra = divmod(left, len(open_))
        for i, qid in enumerate(open_):
            give = min(each + (1 if i < extra else 0), capacity[qid] - share[qid])
            share[qid] += give
            left -= give
        open_ = [qid for qid in open_ if share[qid] < capacity[qid]]
    return share


def _take(sequences: dict[str, list[tuple[str, str]]], per_topic: int | None,
          budget: int | None, order: list[str] | None = None) -> list[Pairing]:
    """The first pairs of each topic's sequence: `per_topic`, a `budget` split with its
    remainder to the first topics in `order` (sorted by default), or all."""
    if per_topic is not None and budget is not None:
        raise ConfigError("battles: give either battles per topic or a total budget, not both")
    capacity = {qid: len(seq) for qid, seq in sequences.items()}
    if per_topic is not None:
        if per_topic < 1:
            raise ConfigError(f"battles per topic must be at least 1, not {per_topic}")
        share = {qid: min(per_topic, cap) for qid, cap in capacity.items()}
    elif budget is not None:
        if budget < 1:
            raise ConfigError(f"a battle budget must be at least 1, not {budget}")
        share = _split(budget, capacity, sorted(sequences) if order is None else order)
    else:
        share = capacity
    return [Pairing(qid, a, b) for qid in sorted(sequences)
            for a, b in sequences[qid][:share[qid]]]


def schedule_battles(runs: Mapping[str, Sequence[str]], per_topic: int | None = None,
                     budget: int | None = None, seed: int = 0) -> list[Pairing]:
    """The battles to judge: `runs` maps each topic to the run ids that answered it;
    `per_topic` battles per topic, or a total `budget` (at least one per topic with a pair),
    or neither for all pairs. Sorted by topic, each topic's battles in schedule order.
    Raises ConfigError on a bad budget."""
    sequences = {qid: pair_sequence(qid, names, seed) for qid, names in runs.items()}
    topics = sum(1 for seq in sequences.values() if seq)
    if budget is not None and per_topic is None and budget < topics:
        raise ConfigError(
            f"a battle budget of {budget} is below the {topics} topics with two or more runs: "
            f"give at least one battle per topic (--battles-per-topic 1 or a budget "
            f">= {topics})")
    return _take(sequences, per_topic, budget)


def adaptive_pairs(runs: Mapping[str, Sequence[str]],
                   intervals: Mapping[str, tuple[float, float]], played: Iterable[Pairing],
                   per_topic: int | None = None, budget: int | None = None,
                   seed: int = 0) -> list[Pairing]:
    """A further round of battles between runs whose score `intervals` (low, high) overlap,
    none of them `played` before (module docstring); `seed` as for the first round. Empty when
    no unplayed pair overlaps."""
    done = {(p.qid, p.run_a, p.run_b) for p in played}

    def overlap(a: str, b: str) -> bool:
        if a not in intervals or b not in intervals:
            return True
        (low_a, high_a), (low_b, high_b) = intervals[a], intervals[b]
        return low_a <= high_b and low_b <= high_a

    sequences = {qid: [(a, b) for a, b in pair_sequence(qid, names, seed)
                       if (qid, a, b) not in done and overlap(a, b)]
                 for qid, names in runs.items()}
    order = sorted(sequences)
    random.Random(f"{seed}:adaptive").shuffle(order)
    return _take(sequences, per_topic, budget, order)

