"""AutoNuggetizer, the TREC 2024 RAG Track's nugget evaluation: the method (method), its steps
(steps: creation, importance, assignment; labelling: batches of labels; mapping: to given
sub-narratives) and its part of the report (report)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face
from nuggetizer.methods.nuggets.method import NuggetsMethod
from nuggetizer.methods.nuggets.steps import NuggetConfig

__all__ = [
    "NuggetConfig", "NuggetsMethod", "assign_nuggets", "create_nuggets", "label_importance",
    "unsupported_nuggets",
]


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.methods.nuggets.report import unsupported_nuggets
    from nuggetizer.methods.nuggets.steps import assign_nuggets, create_nuggets, label_importance


__getattr__ = lazy_face(__name__)
