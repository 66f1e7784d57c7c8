"""ResearchRubrics compliance: pure functions over graded rubric criteria.

The formula, as released with the paper (Sharma et al., "ResearchRubrics: A Benchmark of
Prompts and Rubrics For Evaluating Deep Research Agents", arXiv 2511.07685; evaluation code
https://github.com/scaleapi/researchrubrics). Its README ("Calculating Compliance Scores") and
src/calculate_metrics/calculate_compliance_score.py give the binary scale:

    "Binary grading: Satisfied = 1.0, Not Satisfied = 0.0
     Compliance Score = Σ(weight × score) / Σ(positive weights)
     Excludes negative-weight rubrics from denominator"

and src/calculate_metrics/calculate_final_score.py the same sum on the ternary scale the
paper's graders use (Satisfied / Partially Satisfied / Not Satisfied), its score map being
Satisfied 1.0, Partially Satisfied 0.5, Not Satisfied 0.0, and its binary mode reading a
Partially Satisfied as Not Satisfied. Both are here: `grading=binary` (the default; a
partially_satisfied label, say from a human's sheet, then counts 0) or `grading=ternary`.

So a negative-weight criterion (a failure mode) graded Satisfied (the answer shows the failure)
subtracts its weight from the numerator; graded Not Satisfied it adds nothing. The score can
therefore fall below 0. Ours adds one rule the release has no need of: a criterion that stayed
unjudged is left out of the numerator and the denominator (counted elsewhere, never scored as
Not Satisfied); an answer with no judged criterion has no score. Quoted from the release; the
paper's own scoring section could not be read here.
"""

from __future__ import annotations

from collections.abc import Iterable

from nuggetizer.measures.base import Measure, names

DECLARED: tuple[Measure, ...] = (
    Measure("compliance", "sum of weight x grade over the judged rubric criteria, over the sum "
            "of their positive weights (below 0 when failure modes show)"),
)
MEASURES: tuple[str, ...] = names(DECLARED)
# the ternary scale; binary grading reads partially_satisfied as not_satisfied
GRADES: dict[str, float] = {"satisfied": 1.0, "partially_satisfied": 0.5, "not_satisfied": 0.0}
LABELS: tuple[str, ...] = tuple(GRADES)
SCALES: dict[str, tuple[str, ...]] = {
    "binary": ("satisfied", "not_satisfied"), "ternary": LABELS}


def compliance(graded: Iterable[tuple[float, str]], grading: str = "binary", *,
               failures_zero: bool = False, empty: float = 0.0) -> float:
    """Σ(weight × grade) / Σ(positive weights) over the judged (weight, label) pairs; `empty`
    (0, the release's `else 0.0`) when no judged criterion has a positive weight. `grading`
    binary: a partially_satisfied label counts 0, as the release's binary mode reads it.
    `failures_zero`: an unjudged criterion counts as not satisfied, its weight kept (castorini
    RAGDoll's rubric/metrics.py `score_response`, with `empty` NaN there: the `ragdoll`
    scoring profile)."""
    half = GRADES["partially_satisfied"] if grading == "ternary" else 0.0
    judged = [(float(w), half if label == "partially_satisfied" else GRADES.get(label, 0.0))
              for w, label in graded if failures_zero or label in GRADES]
    numerator = sum(w * g for w, g in judged)
    denominator = sum(w for w, _ in judged if w > 0)
    return numerator / denominator if denominator > 0 else empty
