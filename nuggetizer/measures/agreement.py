"""Agreement of judges on the same items (pure): Cohen's kappa, Krippendorff's alpha (any
number of judges, nominal / ordinal / interval), precision / recall / F1 and Jaccard of a
relevant set, and the confusion matrix.

Each function takes the two judges' labels of the same items, in the same order (integers:
relevance grades). Undefined values (no items, or no variation to agree on) are NaN.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any


def _check(a: Sequence[int], b: Sequence[int]) -> None:
    if len(a) != len(b):
        raise ValueError(f"the judges label {len(a)} and {len(b)} items: need the same items")


def confusion(a: Sequence[int], b: Sequence[int]) -> dict[tuple[int, int], int]:
    """How many items A labels x and B labels y, for every (x, y) that occurs."""
    _check(a, b)
    return dict(Counter(zip(a, b)))


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa (unweighted): (p_o - p_e) / (1 - p_e), p_e from each judge's marginals."""
    _check(a, b)
    n = len(a)
    if n == 0:
        return math.nan
    observed = sum(1 for x, y in zip(a, b) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[c] * cb[c] for c in ca) / (n * n)
    if expected == 1:
        return math.nan
    return (observed - expected) / (1 - expected)


def binary(labels: Sequence[int], threshold: int) -> list[int]:
    """1 where a label is at least `threshold`, else 0."""
    return [int(x >= threshold) for x in labels]


def krippendorff_alpha_ordinal(a: Sequence[int], b: Sequence[int]) -> float:
    """Krippendorff's alpha with the ordinal metric, two judges and no missing labels (see
    `krippendorff_alpha`)."""
    _check(a, b)
    return krippendorff_alpha(list(zip(a, b)), "ordinal")


METRICS = ("nominal", "ordinal", "interval")


def krippendorff_alpha(units: Iterable[Sequence[Hashable | None]], metric: str = "nominal"
                       ) -> float:
    """Krippendorff's alpha over any number of judges: `units` holds, per item, the values
    the judges gave it (None where a judge gave none). 1 - (n - 1) * sum o_ck d2_ck /
    sum n_c n_k d2_ck, where o is the coincidence matrix (an item with m values adds, for
    every ordered pair of two of them, 1 / (m - 1); items with fewer than two values add
    nothing), n_c its marginals and n their sum; d2_ck is 0 / 1 (nominal), (c - k) ** 2
    (interval), or (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2 over the values in rank order
    (ordinal). NaN when fewer than two values are pairable or nothing varies."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    coincidences: dict[tuple[Any, Any], float] = defaultdict(float)
    for unit in units:
        counts = Counter(v for v in unit if v is not None)
        m = sum(counts.values())
        if m < 2:
            continue
        for c, nc in counts.items():
            for k, nk in counts.items():
                coincidences[c, k] += (nc * (nc - 1) if c == k else nc * nk) / (m - 1)
    marginal: dict[Any, float] = defaultdict(float)
    for (c, _), weight in coincidences.items():
        marginal[c] += weight
    values = sorted(marginal)
    n = sum(marginal.values())
    if n < 2:
        return math.nan
    d2 = _distance(metric, values, marginal)
    observed = sum(w * d2(c, k) for (c, k), w in coincidences.items())
    expected = sum(marginal[c] * marginal[k] * d2(c, k) for c in values for k in values)
    if expected == 0:
        return math.nan
    return 1 - (n - 1) * observed / expected


def _distance(metric: str, values: list[Any], marginal: dict[Any, float]
              ) -> Callable[[Any, Any], float]:
    """The squared difference function d2(c, k) of `metric`."""
    if metric == "nominal":
        return lambda c, k: 0.0 if c == k else 1.0
    if metric == "interval":
        return lambda c, k: float(c - k) ** 2
    rank = {v: i for i, v in enumerate(values)}
    cumulative = [0.0]
    for v in values:
        cumulative.append(cumulative[-1] + marginal[v])

    def ordinal(c: Any, k: Any) -> float:
        lo, hi = sorted((rank[c], rank[k]))
        between = cumulative[hi + 1] - cumulative[lo]
        return (between - (marginal[c] + marginal[k]) / 2) ** 2

    return ordinal


def set_agreement(a: Sequence[int], b: Sequence[int], threshold: int
                  ) -> dict[str, float]:
    """Precision, recall, F1 and Jaccard of B's relevant set (label >= threshold) against
    A's as the reference, with the sizes of both sets and of their intersection."""
    _check(a, b)
    ra = {i for i, x in enumerate(a) if x >= threshold}
    rb = {i for i, y in enumerate(b) if y >= threshold}
    both = len(ra & rb)
    precision = both / len(rb) if rb else math.nan
    recall = both / len(ra) if ra else math.nan
    f1 = 2 * both / (len(ra) + len(rb)) if ra or rb else math.nan
    union = len(ra | rb)
    return {"precision": precision, "recall": recall, "f1": f1,
            "jaccard": both / union if union else math.nan,
            "relevant_a": len(ra), "relevant_b": len(rb), "relevant_both": both}
