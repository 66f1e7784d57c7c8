"""The files of castorini's RAGDoll (github castorini/RAGDoll, the scorer of TREC RAG 2026),
read as the project's judgment records and written from them.

Only what RAGDoll's own code defines is taken, field by field (read from its source, not
copied): `src/ragdoll/support/metrics.py` and `support/assignments.py` (support), `rubric/`
(graded rubrics), `arena/` (battles), `nuggetizer/metrics.py` (nugget assignments, which
formats/assessments.py reads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nuggetizer.labels import UNJUDGED

# The measures of RAGDoll's `support metrics` (one row per topic and run) and the names its
# `support metric-rows` writes, `run_id topic_id metric value` a line.
SUPPORT_METRICS = (
    "weighted_precision_first_citation", "weighted_recall_first_citation",
    "weighted_precision_all_judged_citations", "weighted_recall_all_judged_citations",
    "hard_precision", "hard_recall",
)


def citation_labels(sentence: Mapping[str, Any], first_only: bool = False) -> list[str]:
    """The label of each citation of a support judgment's sentence (`{"citations": [as
    written], "pairs": [{"citation", "docid", "label"}]}`) as RAGDoll reads one, a label per
    citation: a passage cited twice (judged once here, one pair) counts twice, and a citation
    the record holds no label of (beyond the first, judged alone) is `unjudged`, as RAGDoll's
    "-1"; `first_only`: the first citation's alone."""
    cites, pairs = sentence["citations"], sentence["pairs"]
    if len(pairs) == len(cites):  # a pair per citation, in order
        labels = [str(p["label"]) for p in pairs]
    else:  # a repeat judged once: each citation takes the label of its passage's pair
        labels = [_label_of(cite, pairs) for cite in cites]
    return labels[:1] if first_only else labels


def _label_of(cite: Any, pairs: Sequence[Mapping[str, Any]]) -> str:
    """The label of the pair a citation names (as written, else by its doc id)."""
    for field in ("citation", "docid"):
        for pair in pairs:
            if type(pair.get(field)) is type(cite) and pair.get(field) == cite:
                return str(pair["label"])
    return UNJUDGED
