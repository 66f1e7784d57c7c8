"""The measures of every method: pure functions, one module per method."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.measures.base import Measure
    from nuggetizer.measures.bradley_terry import (
        RIDGE,
        SCALE,
        TwoOrders,
        Verdict,
        bootstrap_intervals,
        fit_bradley_terry,
        fit_model,
        flip_rates,
        per_topic,
        reconcile,
        win_matrix,
    )
    from nuggetizer.measures.meta import bland_altman, coverage, tau_gap
    from nuggetizer.measures.nuggets import (
        answer_length,
        label_scores,
        nugget_scores,
        unjudged_measures,
        word_count,
    )
    from nuggetizer.measures.rubrics import compliance
    from nuggetizer.measures.support import support_scores


__getattr__ = lazy_face(__name__)


__all__ = [
    "Measure", "RIDGE", "SCALE", "TwoOrders", "Verdict", "answer_length", "bland_altman",
    "bootstrap_intervals", "compliance", "coverage", "fit_bradley_terry", "fit_model",
    "flip_rates", "label_scores", "nugget_scores", "per_topic", "reconcile", "support_scores",
    "tau_gap", "unjudged_measures", "win_matrix", "word_count",
]
