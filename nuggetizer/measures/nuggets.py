"""The AutoNuggetizer measures, as the TREC 2024 RAG Track scores: pure functions over labelled
nuggets."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from nuggetizer.labels import CREDIT, STRICT_CREDIT

MEASURES: tuple[str, ...] = ("V_strict", "V", "W_strict", "W", "A_strict", "A", "L")
LENGTH_LIMIT = 400



def nugget_scores(labels: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Score one answer from (importance, assignment) pairs.

    Unjudged assignments are left out of numerators and denominators (they are counted
    elsewhere, never scored as not_support); a nugget of unjudged importance counts in A only.
    A topic with no vital nugget gets V = V_strict = 0. (Sums over the counts of each pair:
    credits are 0, 0.5 and 1, so every sum is exact and equals the sum in nugget order; this
    runs once per judged answer, the counting in C.)
    """
    n_all = n_vital = n_okay = 0
    s_all = s_vital = s_okay = 0.0  # credit
    t_all = t_vital = t_okay = 0.0  # strict credit
    for (importance, assignment), count in Counter(labels).items():
        credit = CREDIT.get(assignment)
        if credit is None:
            continue
        credit *= count
        strict = STRICT_CREDIT[assignment] * count
        n_all += count
        s_all += credit
        t_all += strict
        if importance == "vital":
            n_vital += count
            s_vital += credit
            t_vital += strict
        elif importance == "okay":
            n_okay += count
            s_okay += credit
            t_okay += strict
    weight = n_vital + 0.5 * n_okay
    return {
        "V": s_vital / n_vital if n_vital else 0.0,
        "W": (s_vital + 0.5 * s_okay) / weight if weight else 0.0,
        "A": s_all / n_all if n_all else 0.0,
        "V_strict": t_vital / n_vital if n_vital else 0.0,
        "W_strict": (t_vital + 0.5 * t_okay) / weight if weight else 0.0,
        "A_strict": t_all / n_all if n_all else 0.0,
    }


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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def text_length(text: str, limit: int = LENGTH_LIMIT) -> int:
    """L of an answer known only as one text (castorini's assignment files join the sentences
    with spaces): split after sentence-final punctuation, then `answer_length`. On the TREC
    2024 baselines this gives the L of the run files' own sentences for gpt-4o (300.93) and
    Llama 3.1 70B exactly, and differs on one answer of command-r-plus's 301."""
    return answer_length(_SENTENCE_END.split(text.strip()), limit)
