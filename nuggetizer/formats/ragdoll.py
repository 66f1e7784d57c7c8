"""The files of castorini's RAGDoll (github castorini/RAGDoll, the scorer of TREC RAG 2026),
read as the project's judgment records and written from them.

Only what RAGDoll's own code defines is taken, field by field (read from its source, not
copied): `src/ragdoll/support/metrics.py` and `support/assignments.py` (support), `rubric/`
(graded rubrics), `arena/` (battles), `nuggetizer/metrics.py` (nugget assignments, which
formats/assessments.py reads).
"""

from __future__ import annotations

# The measures of RAGDoll's `support metrics` (one row per topic and run) and the names its
# `support metric-rows` writes, `run_id topic_id metric value` a line.
SUPPORT_METRICS = (
    "weighted_precision_first_citation", "weighted_recall_first_citation",
    "weighted_precision_all_judged_citations", "weighted_recall_all_judged_citations",
    "hard_precision", "hard_recall",
)
