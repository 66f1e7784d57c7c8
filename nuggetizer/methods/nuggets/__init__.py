"""AutoNuggetizer, the TREC 2024 RAG Track's nugget evaluation: the method (method), its steps
(steps: creation, importance, assignment; labelling: batches of labels; mapping: to given
sub-narratives) and its part of the report (report)."""

from nuggetizer.methods.nuggets.method import NuggetsMethod
from nuggetizer.methods.nuggets.steps import NuggetConfig

__all__ = ["NuggetConfig", "NuggetsMethod"]
