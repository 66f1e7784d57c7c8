"""Comparing evaluations and judges: agreement of two or more evaluations (agreement, many),
of judges on the same items (judges), of qrels (qrels), paired significance tests
(significance) and the AutoJudge meta-evaluation (meta_evaluate)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.compare.agreement import (
        compare,
        kendall_at_k,
        kendall_tau,
        load_scores,
        meta_evaluation,
        pearson,
        tau_ap,
        tau_ap_b,
    )
    from nuggetizer.compare.meta_evaluate import per_topic
    from nuggetizer.compare.qrels import compare_many_qrels, compare_qrels, label_agreement
    from nuggetizer.compare.significance import adjust, pairwise, randomization_p, t_test_p


__getattr__ = lazy_face(__name__)


__all__ = [
    "adjust", "compare", "compare_many_qrels", "compare_qrels", "kendall_at_k", "kendall_tau",
    "label_agreement", "load_scores", "meta_evaluation", "pairwise", "pearson", "per_topic",
    "randomization_p", "t_test_p", "tau_ap", "tau_ap_b",
]
