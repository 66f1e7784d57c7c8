"""`agreement` of N evaluations (N >= 3) of the same runs (compare/judges.py).

Scores: every pair's correlations on the measure (as `agreement A B` reports them: Kendall's
tau and Spearman's rho of the run means, tau over all (topic, run) pairs, the mean per-topic
tau, tau_AP-b), and Krippendorff's alpha (interval) over all of them on the (topic, run) values
and on the run means.

Labels, when every input is a set of nugget assessments: the assignment labels of the
(run, topic, nugget) items the judges share, on the credit scale not_support < partial_support
< support (unjudged ones left out): every pair's Cohen's kappa on the labels, at some support
(>= partial_support) and at support, and over all of them Krippendorff's alpha, ordinal and
nominal, and nominal at each of those two cut-offs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from nuggetizer.compare.agreement import Scores, compare
from nuggetizer.compare.judges import (
    JudgesAgreement,
    judges_agreement,
    label_pair,
    overall_alpha,
    units_of,
)
from nuggetizer.formats.assessments import iter_assessments
from nuggetizer.measures import agreement as ma
from nuggetizer.scoring.engine import judgment_files

CREDIT_RANK = {"not_support": 0, "partial_support": 1, "support": 2}
SCORE_LABELS = {"run_tau": "tau (runs)", "run_spearman": "rho (runs)",
                "pair_tau": "tau (topic, run)", "topic_tau": "mean topic tau",
                "tau_ap_b": "tau_AP-b"}
LABEL_LABELS = {"kappa": "kappa (labels)", "kappa_ge1": "kappa >= partial_support",
                "kappa_ge2": "kappa = support", "alpha_ordinal": "alpha (ordinal)"}


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def score_agreement(scores: Sequence[Scores], measure: str, k: int = 10) -> JudgesAgreement:
    """Every pair of evaluations correlated, and alpha (interval) over all of them."""
    names = [s.name for s in scores]

    def pair(i: int, j: int) -> tuple[int, dict[str, float]]:
        result = compare(scores[i], scores[j], measure, k)
        return len(result.runs), {
            "run_tau": result.run_tau, "run_spearman": result.run_spearman,
            "pair_tau": _nan(result.pair_tau), "topic_tau": _nan(result.topic_tau),
            "tau_ap_b": result.meta.get("tau_ap_b", math.nan)}

    values = [{(r, q): v for r, row in (s.per_topic or {}).items() for q, v in row.items()}
              for s in scores]
    means = units_of([s.means for s in scores])[0]

    def overall(units: list[list[float | None]]) -> dict[str, float]:
        return {"alpha_interval": ma.krippendorff_alpha(units, "interval"),
                "alpha_interval_run_means": ma.krippendorff_alpha(means, "interval")}

    return judges_agreement(names, values, pair, overall, "(topic, run) pairs")


def assessment_labels(path: Path, lenient: bool = False) -> dict[tuple[str, str, str], int]:
    """(run, topic, nugget text) -> credit rank of the assignment, judged ones only."""
    labels: dict[tuple[str, str, str], int] = {}
    for file in judgment_files([path]):
        for _, assessment in iter_assessments(file, lenient=lenient):
            for nugget in assessment.nuggets:
                if nugget.assignment in CREDIT_RANK:
                    labels[assessment.run_id, assessment.qid, nugget.text] = \
                        CREDIT_RANK[nugget.assignment]
    return labels


def label_agreement(paths: Sequence[Path], lenient: bool = False) -> JudgesAgreement:
    """The judges' agreement on the assignment labels of the nuggets they share."""
    labels = [assessment_labels(p, lenient) for p in paths]
    thresholds = (1, 2)
    return judges_agreement([str(p) for p in paths], labels, label_pair(labels, thresholds),
                            lambda units: overall_alpha(units, thresholds),
                            "(run, topic, nugget) items")


def is_assessments(path: Path) -> bool:
    """Whether `path` is a set of assessments (a folder, or a .jsonl file), not a table."""
    return path.is_dir() or ".jsonl" in path.name.lower()
