"""Long2RAG Key Point Recall: pure functions over entailment labels.

Each key point of a question gets one label for an answer: yes, no or neutral (or unjudged when
the LLM's output never parsed). Only yes counts. KPR per question = entailed / judged key
points; unjudged ones are left out of both and counted elsewhere, never scored as no. A run's
KPR is the plain mean over questions (a question it did not answer scores 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nuggetizer.measures.base import Measure, names

DECLARED: tuple[Measure, ...] = (
    Measure("KPR", "key point recall: share of the question's judged key points the answer "
            "entails (only [yes] counts)"),
)
MEASURES: tuple[str, ...] = names(DECLARED)
LABELS: tuple[str, ...] = ("yes", "no", "neutral")


def kpr(labels: Iterable[str]) -> float:
    """Key point recall of one answer: share of judged key points labelled yes (0 when none)."""
    judged = [label for label in labels if label in LABELS]
    return sum(1 for label in judged if label == "yes") / len(judged) if judged else 0.0


def run_kpr(per_question: Sequence[float], questions: int | None = None) -> float:
    """Mean over questions; with `questions` given, the missing ones score 0."""
    count = questions if questions is not None else len(per_question)
    return sum(per_question) / count if count else 0.0
