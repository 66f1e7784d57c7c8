"""UMBRELA relevance grading: (query or narrative, passage) pairs graded on 0-3 or 0-4 into
qrels (grade), and the two scales with their prompts and labels (scales). Not an answer-key
method: it makes the qrels that keys are built from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.relevance.grade import GRADE_SCHEMA, PROMPT, build_pool, parse_grade
    from nuggetizer.relevance.scales import SCALES, Grading, declared_scale


__getattr__ = lazy_face(__name__)


__all__ = [
    "GRADE_SCHEMA", "Grading", "PROMPT", "SCALES", "build_pool", "declared_scale", "parse_grade",
]
