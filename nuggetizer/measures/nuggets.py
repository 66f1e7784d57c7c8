"""The AutoNuggetizer measures, as the TREC 2024 RAG Track scores: pure functions over labelled
nuggets."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from operator import itemgetter

from nuggetizer.labels import CREDIT, STRICT_CREDIT, UNJUDGED
from nuggetizer.measures.base import Measure, names

DECLARED: tuple[Measure, ...] = (
    Measure("V_strict", "vital nuggets the answer supports fully, over its topic's vital "
            "nuggets (partial support counts 0); the primary measure"),
    Measure("V", "vital nuggets' support (full 1, partial 0.5), over the vital nuggets"),
    Measure("W_strict", "full support of the vital nuggets (weight 1) and okay ones (0.5), "
            "over their weights (partial support counts 0)"),
    Measure("W", "support (full 1, partial 0.5) of the vital nuggets (weight 1) and okay ones "
            "(0.5), over their weights"),
    Measure("A_strict", "nuggets the answer supports fully, over all the topic's nuggets"),
    Measure("A", "support (full 1, partial 0.5) of all the topic's nuggets, over their number"),
    Measure("L", "answer length in words (NFKC, whitespace tokens) after dropping trailing "
            "sentences to stay within 400", missing=None, scale="words", higher_better=None),
)
MEASURES: tuple[str, ...] = names(DECLARED)
# the measures computed from the nuggets' labels alone (every one but the length L)
LABEL_MEASURES: tuple[str, ...] = tuple(m.name for m in DECLARED if m.missing is not None)
LENGTH_LIMIT = 400
Pick = Callable[[Sequence[str]], tuple[str, ...]]
Picks = tuple[Pick, Pick, bool]  # `importance_picks`: vital's, okay's, every nugget one of them
# The assignment labels by credit: 1, 0.5 and 0 (labels.py), the weights `label_scores` uses.
FULL, HALF, NONE = sorted(CREDIT, key=CREDIT.__getitem__, reverse=True)
assert [CREDIT[x] for x in (FULL, HALF, NONE)] == [1.0, 0.5, 0.0]
assert [STRICT_CREDIT[x] for x in (FULL, HALF, NONE)] == [1.0, 0.0, 0.0]


def nugget_scores(labels: Iterable[tuple[str, str]]) -> dict[str, float]:
    """Score one answer from (importance, assignment) pairs (see `answer_scores`)."""
    pairs = list(labels)
    return answer_scores([i for i, _ in pairs], [a for _, a in pairs])


def answer_scores(importance: Sequence[str], assignment: Sequence[str],
                  picks: Picks | None = None) -> dict[str, float]:
    """An answer's scores as the score engine takes them: `label_scores`, with NaN for the
    measures nothing was judged for (`unjudged_measures`)."""
    scores = label_scores(importance, assignment, picks)
    if UNJUDGED in assignment:
        scores.update(unjudged_measures(importance, assignment))
    return scores


def label_scores(importance: Sequence[str], assignment: Sequence[str],
                 picks: Picks | None = None, all_judged: bool = False) -> dict[str, float]:
    """Score one answer from its nuggets' importance and assignment labels, in nugget order.

    Unjudged assignments are left out of numerators and denominators (they are counted
    elsewhere, never scored as not_support); a nugget of unjudged importance counts in A only.
    A topic with no vital nugget gets V = V_strict = 0. (From the count of each label, counted
    in C: this runs once per judged answer; `picks`: `importance_picks(tuple(importance))`, where
    the caller keeps it; `all_judged`: the caller knows no assignment is unjudged, so each
    group's not_support count is the rest of it. Credits are 0, 0.5 and 1, so every sum is
    exact and equals the sum in nugget order.)
    """
    vital_of, okay_of, every_nugget = picks or importance_picks(tuple(importance))
    vital, okay = vital_of(assignment), okay_of(assignment)
    vital_full, vital_half = vital.count(FULL), vital.count(HALF)
    okay_full, okay_half = okay.count(FULL), okay.count(HALF)
    if all_judged:
        n_vital, n_okay = len(vital), len(okay)
    else:
        n_vital = vital_full + vital_half + vital.count(NONE)
        n_okay = okay_full + okay_half + okay.count(NONE)
    if every_nugget:  # each nugget vital or okay (as a key's are): the totals are theirs
        full, half, n_all = vital_full + okay_full, vital_half + okay_half, n_vital + n_okay
    else:
        count = assignment.count
        full, half = count(FULL), count(HALF)
        n_all = full + half + count(NONE)
    s_all, s_vital, s_okay = full + 0.5 * half, vital_full + 0.5 * vital_half, \
        okay_full + 0.5 * okay_half
    weight = n_vital + 0.5 * n_okay
    return {
        "V": s_vital / n_vital if n_vital else 0.0,
        "W": (s_vital + 0.5 * s_okay) / weight if weight else 0.0,
        "A": s_all / n_all if n_all else 0.0,
        "V_strict": vital_full / n_vital if n_vital else 0.0,
        "W_strict": (vital_full + 0.5 * okay_full) / weight if weight else 0.0,
        "A_strict": full / n_all if n_all else 0.0,
    }


@lru_cache(maxsize=4096)
def importance_picks(importance: tuple[str, ...]) -> Picks:
    """Functions picking the vital and the okay nuggets' labels out of an answer's labels in
    nugget order, and whether every nugget is one or the other; made once per key (every
    run's answer to a topic has its key's importance labels, in its order)."""
    vital = [k for k, label in enumerate(importance) if label == "vital"]
    okay = [k for k, label in enumerate(importance) if label == "okay"]
    return _picker(vital), _picker(okay), len(vital) + len(okay) == len(importance)


def _picker(positions: list[int]) -> Pick:
    """The labels at `positions` as a tuple (itemgetter gives a bare item for one)."""
    if len(positions) > 1:
        return itemgetter(*positions)
    return lambda labels: tuple(labels[k] for k in positions)


def no_vital(qid: str) -> str:
    """The warning of a topic whose key has no vital nugget."""
    return f"topic {qid} has no vital nugget: its V and V_strict are 0"


def failures_scored(importance: Sequence[str], assignment: Sequence[str]) -> dict[str, float]:
    """`label_scores` with every unjudged assignment counted as not_support, its nugget kept
    in the denominators: castorini RAGDoll's reading of a failed assignment
    (nuggetizer/metrics.py `calculate_scores`), the `ragdoll` scoring profile's. An answer
    with nothing judged then scores 0, never NaN."""
    return label_scores(importance, [NONE if a == UNJUDGED else a for a in assignment])


def unjudged_measures(importance: Sequence[str], assignment: Sequence[str]
                      ) -> dict[str, float]:
    """NaN for the measures of one answer whose nuggets all stayed unjudged though the key has
    some: V and V_strict when every vital nugget's assignment did, W and W_strict when every
    vital and okay one's did. `label_scores` gives 0 there (as for a topic without such
    nuggets); these take their place, and the score engine leaves them out of the means and
    counts them: no score without a judgment."""
    if UNJUDGED not in assignment:
        return {}
    vital = [a for i, a in zip(importance, assignment) if i == "vital"]
    okay = [a for i, a in zip(importance, assignment) if i == "okay"]
    found: dict[str, float] = {}
    if vital and vital.count(UNJUDGED) == len(vital):
        found.update(V=math.nan, V_strict=math.nan)
        if okay.count(UNJUDGED) == len(okay):
            found.update(W=math.nan, W_strict=math.nan)
    elif not vital and okay and okay.count(UNJUDGED) == len(okay):
        found.update(W=math.nan, W_strict=math.nan)
    return found


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
