"""Support (attribution) of answer sentences by the passages they cite: pure functions over
labels (TREC RAG 2024/2025, Thakur et al., SIGIR 2025; ../shared/METHODS.md section 6).

Each judged (sentence, cited passage) pair is full_support (FS), partial_support (PS) or
no_support (NS), weighted 1, 0.5 and 0; a pair nobody could judge is `unjudged` and is left out
of both measures (counted elsewhere, never scored as NS).

- support_precision (penalises over-citation): the mean weight over every judged pair of the
  answer; 0 for an answer with no judged pair.
- support_recall (penalises under-citation): the mean over every sentence of the answer of its
  best judged weight; a sentence without citations counts 0; a sentence whose every pair is
  unjudged is left out (it cannot be scored either way); 0 for an answer with no sentence left.

TREC RAG 2026 (METHODS.md section 8; `citations = "all"`, every citation of an answer object
judged) is these same two measures, read from its text:
- "weighted citation precision (over answer objects with at least one citation: the weighted
  share of supplied citations that support their object)": a share of *citations*, so the mean
  weight over every judged pair (micro over citations, not a mean of per-object means); an
  object without citations supplies none and drops out by itself.
- "weighted citation recall (the weighted share of answer objects supported by their cited
  passages; an object with no citations scores 0 there)": an object is supported by its cited
  passages, together, as far as the best of them supports it, so its weight is the best label
  among its judged citations (FS by any cited passage makes it FS; one PS and one NS, PS); the
  pointwise judge never sees two passages at once, so support that only their combination
  gives is not credited. An object whose every citation is unjudged is left out, as above.

Per topic; a run's score is the plain mean over the topics (the score engine: an unanswered
topic scores 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from nuggetizer.labels import SUPPORT_WEIGHTS
from nuggetizer.measures.base import Measure, names

DECLARED: tuple[Measure, ...] = (
    Measure("support_recall", "mean over the answer's sentences of the best support (full 1, "
            "partial 0.5) by their cited passages; a sentence without citations scores 0"),
    Measure("support_precision", "mean support (full 1, partial 0.5) over every judged "
            "(sentence, cited passage) pair of the answer"),
)
MEASURES: tuple[str, ...] = names(DECLARED)


def object_mean_scores(sentences: Sequence[Sequence[str]]) -> dict[str, float]:
    """Both measures as castorini's RAGDoll computes them (support/metrics.py
    `support_metric`; the `ragdoll` scoring profile), from the labels of each sentence's
    citations in scope (its first only, or all of them, a passage cited twice counted twice):
    a sentence's weight is the mean weight of its judged citations; precision is the mean of
    those weights over the sentences with a judged citation (macro over answer objects),
    recall their sum over the sentences, less those whose every citation is unjudged (a
    sentence without citations counts 0); 0 when nothing is left."""
    total, judged, weight = len(sentences), 0, 0.0
    for labels in sentences:
        if not labels:
            continue
        weights = [SUPPORT_WEIGHTS[label] for label in labels if label in SUPPORT_WEIGHTS]
        if weights:
            weight += sum(weights) / len(weights)
            judged += 1
        else:
            total -= 1
    return {"support_recall": weight / total if total else 0.0,
            "support_precision": weight / judged if judged else 0.0}


def support_scores(sentences: Sequence[Sequence[str]]) -> dict[str, float]:
    """Both measures of one answer from the labels of each sentence's pairs (an empty list: a
    sentence without citations)."""
    weights = [SUPPORT_WEIGHTS[label] for pairs in sentences for label in pairs
               if label in SUPPORT_WEIGHTS]
    best: list[float] = []
    for pairs in sentences:
        judged = [SUPPORT_WEIGHTS[label] for label in pairs if label in SUPPORT_WEIGHTS]
        if judged:
            best.append(max(judged))
        elif not pairs:
            best.append(0.0)
    return {
        "support_recall": sum(best) / len(best) if best else 0.0,
        "support_precision": sum(weights) / len(weights) if weights else 0.0,
    }
