"""Judgments written for the tests of castorini RAGDoll's reading (issue 40): seeded, with the
cases where RAGDoll's definitions and the guideline's reading part."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

W = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}
LABELS = [*W, "unjudged"]
TOPICS = [f"t{k}" for k in range(1, 7)]
RUNS = ["r1", "r2", "r3"]


def answered() -> Iterator[tuple[str, str]]:
    """(run, topic) of every answer: r3 leaves t6 unanswered."""
    return ((run, topic) for run in RUNS for topic in TOPICS if (run, topic) != ("r3", "t6"))


def support_judgments(seed: int) -> list[dict[str, Any]]:
    """Support records as `assign --set citations=all` writes them: per object its citations
    as written (positions into 5 references, a position sometimes repeated) and a pair per
    passage (a repeat judged once); r3 leaves t6 unanswered; r2's t5 has nothing judged."""
    rng = random.Random(seed)
    records = []
    for run, topic in answered():
        sentences = []
        for k in range(rng.randint(1, 6)):
            cites = [rng.randrange(5) for _ in range(rng.choice([0, 1, 1, 2, 3, 3]))]
            pairs = []
            for c in dict.fromkeys(cites):
                label = "unjudged" if (run, topic) == ("r2", "t5") else \
                    rng.choices(LABELS, [4, 3, 3, 1])[0]
                pairs.append({"citation": c, "docid": f"d{c}", "passage": "p", "label": label})
            sentences.append({"text": f"object {k}", "citations": cites, "pairs": pairs})
        records.append({"run_id": run, "qid": topic, "query": "q", "sentences": sentences,
                        "unjudged": 0})
    return records
