"""CRUX measures (as published): pure functions over 0-5 answerability ratings.

A rating table maps a passage id to one rating per sub-question (None: unjudged, the published
rule scores it as 0). A question is covered by a passage when its rating >= eta (3 by default).
Coverage, alpha-nDCG@k (questions as subtopics, alpha = 0.5, ideal ranking greedy over the
judged pool as ndeval does), density and the greedy oracle context.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from nuggetizer.measures.base import Measure, names

DECLARED: tuple[Measure, ...] = (
    Measure("alpha_nDCG", "alpha-nDCG@k of the retrieval context, sub-questions as subtopics "
            "(answered at rating >= eta, alpha 0.5, ideal ranking greedy over the pool)"),
    Measure("Cov", "share of the answerable sub-questions the retrieval context answers "
            "(rating >= eta)"),
    Measure("Den", "density: the context's coverage per token against the greedy oracle "
            "context's, square-rooted"),
    Measure("Cov_answer", "share of the answerable sub-questions the answer answers "
            "(rating >= eta)"),
)
MEASURES: tuple[str, ...] = names(DECLARED)
ETA = 3
ALPHA = 0.5

Ratings = Sequence[int | None]


def covered(ratings: Ratings, eta: int = ETA) -> set[int]:
    """Indexes of the questions a text answers (rating >= eta); unjudged counts as 0."""
    return {i for i, r in enumerate(ratings) if r is not None and r >= eta}


def coverage(
    ratings: Iterable[Ratings], answerable: Sequence[bool] | None = None, eta: int = ETA
) -> float:
    """Cov(Z): answerable questions answered by some text of Z, over the answerable questions.

    `answerable` marks the questions kept by the unanswerable-question filter (all when None);
    a filtered question is left out of numerator and denominator (the paper's definition).
    """
    rows = list(ratings)
    n = len(answerable) if answerable is not None else (len(rows[0]) if rows else 0)
    keep = [i for i in range(n) if answerable is None or answerable[i]]
    if not keep:
        return 0.0
    hit: set[int] = set()
    for row in rows:
        hit |= covered(row, eta)
    return len(hit & set(keep)) / len(keep)


def binary_coverage(labels: Sequence[int], *, filtered_in_denominator: bool = False) -> float:
    """Coverage from binary answerability labels (1 answered, 0 not, -2 filtered out).

    By default (the paper's definition) filtered questions leave the denominator; with
    `filtered_in_denominator` they count as unanswered questions instead.
    """
    if filtered_in_denominator:
        total = len(labels)
    else:
        total = sum(1 for v in labels if v != -2)
    return sum(1 for v in labels if v == 1) / total if total else 0.0


def _gain(row: Ratings, seen: list[int], keep: Sequence[int], alpha: float, eta: int) -> float:
    hits = covered(row, eta)
    return sum((1 - alpha) ** seen[i] for i in keep if i in hits)


def alpha_dcg(
    ranking: Sequence[Ratings], keep: Sequence[int], k: int, alpha: float = ALPHA, eta: int = ETA
) -> float:
    """alpha-DCG@k of rated passages in rank order; rank r (1-based) is discounted by log2(r+1)."""
    seen = [0] * (max(keep) + 1 if keep else 0)
    total = 0.0
    for rank, row in enumerate(ranking[:k], 1):
        total += _gain(row, seen, keep, alpha, eta) / math.log2(rank + 1)
        for i in covered(row, eta):
            if i < len(seen):
                seen[i] += 1
    return total


def ideal_ranking(
    pool: Mapping[str, Ratings], keep: Sequence[int], k: int, alpha: float = ALPHA, eta: int = ETA
) -> list[str]:
    """Greedy ideal ranking of the judged pool: each step takes the largest marginal gain."""
    seen = [0] * (max(keep) + 1 if keep else 0)
    left = sorted(pool)
    order: list[str] = []
    while left and len(order) < k:
        best = max(left, key=lambda d: _gain(pool[d], seen, keep, alpha, eta))
        order.append(best)
        left.remove(best)
        for i in covered(pool[best], eta):
            if i < len(seen):
                seen[i] += 1
    return order


def alpha_ndcg(
    ranking: Sequence[str],
    pool: Mapping[str, Ratings],
    k: int,
    answerable: Sequence[bool] | None = None,
    alpha: float = ALPHA,
    eta: int = ETA,
) -> float:
    """alpha-nDCG@k of `ranking` (passage ids; unrated ones gain nothing) against the pool."""
    widest = max((len(r) for r in pool.values()), default=0)
    n = len(answerable) if answerable is not None else widest
    keep = [i for i in range(n) if answerable is None or answerable[i]]
    best = ideal_ranking(pool, keep, k, alpha, eta)
    ideal = alpha_dcg([pool[d] for d in best], keep, k, alpha, eta)
    if ideal <= 0:
        return 0.0
    rows = [pool.get(d, ()) for d in ranking]
    return alpha_dcg(rows, keep, k, alpha, eta) / ideal


def oracle_context(
    pool: Mapping[str, Ratings], answerable: Sequence[bool] | None = None, eta: int = ETA
) -> list[str]:
    """Z*: greedily the passage covering most still-uncovered answerable questions (ties: the
    passage id first in sorted order) until no passage adds any."""
    n = max((len(r) for r in pool.values()), default=0)
    todo = {i for i in range(n) if answerable is None or answerable[i]}
    chosen: list[str] = []
    left = sorted(pool)
    while todo and left:
        best = max(left, key=lambda d: len(covered(pool[d], eta) & todo))
        gain = covered(pool[best], eta) & todo
        if not gain:
            break
        chosen.append(best)
        left.remove(best)
        todo -= gain
    return chosen


def density(
    context_coverage: float, context_tokens: int, oracle_coverage: float, oracle_tokens: int
) -> float:
    """Den(Z) = ((Cov(Z) / tokens(Z)) / (Cov(Z*) / tokens(Z*))) ** 0.5; 0 when undefined."""
    if context_tokens <= 0 or oracle_tokens <= 0 or oracle_coverage <= 0:
        return 0.0
    ratio = (context_coverage / context_tokens) / (oracle_coverage / oracle_tokens)
    return math.sqrt(max(ratio, 0.0))


def tokens(text: str) -> int:
    """Length of a text for density: whitespace-separated tokens."""
    return len(text.split())


def diversity_qrels(
    qid: str, pool: Mapping[str, Ratings], answerable: Sequence[bool] | None = None,
    eta: int = ETA,
) -> list[str]:
    """Lines `qid subtopic docid rel` (TREC qrels with the question index as the iteration
    column, the shape ir_measures' alpha_nDCG reads): one per (answerable question, passage)."""
    lines = []
    for docid in sorted(pool):
        row = pool[docid]
        for i, rating in enumerate(row):
            if answerable is not None and not answerable[i]:
                continue
            rel = 1 if rating is not None and rating >= eta else 0
            lines.append(f"{qid} {i} {docid} {rel}")
    return lines
