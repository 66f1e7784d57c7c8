"""The AutoNuggetizer measures (METHODS.md 1.3): pure functions over labelled nuggets."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

MEASURES: tuple[str, ...] = ("V_strict", "V", "W_strict", "W", "A_strict", "A", "L")
LENGTH_LIMIT = 400

_CREDIT = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
_STRICT = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _weighted(vital: list[float], okay: list[float]) -> float:
    denominator = len(vital) + 0.5 * len(okay)
    return (sum(vital) + 0.5 * sum(okay)) / denominator if denominator else 0.0


def nugget_scores(labels: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Score one answer from (importance, assignment) pairs.

    Unjudged assignments are left out of numerators and denominators (they are counted
    elsewhere, never scored as not_support); a nugget of unjudged importance counts in A only.
    A topic with no vital nugget gets V = V_strict = 0.
    """
    scores: dict[str, float] = {}
    judged = [(imp, asg) for imp, asg in labels if asg in _CREDIT]
    for suffix, credit in (("", _CREDIT), ("_strict", _STRICT)):
        every = [credit[a] for _, a in judged]
        vital = [credit[a] for i, a in judged if i == "vital"]
        okay = [credit[a] for i, a in judged if i == "okay"]
        scores["V" + suffix] = _mean(vital)
        scores["W" + suffix] = _weighted(vital, okay)
        scores["A" + suffix] = _mean(every)
    return scores


def word_count(sentence: str) -> int:
    """Words of one sentence: NFKC-normalised, split on whitespace."""
    return len(unicodedata.normalize("NFKC", sentence).split())


def answer_length(sentences: Sequence[str], limit: int = LENGTH_LIMIT) -> int:
    """L: the answer's word count after dropping trailing sentences until it is within `limit`."""
    counts = [word_count(s) for s in sentences]
    total = sum(counts)
    while counts and total > limit:
        total -= counts.pop()
    return total
