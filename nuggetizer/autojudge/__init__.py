"""The AutoNuggetizer as a TREC AutoJudge judge (judge) and what it checks before it writes
anything (inputs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.autojudge.judge import (
    AutoNuggetizerJudge,
    assessor_args,
    corpus_file,
    workflow_path,
)
from nuggetizer.faces import lazy_face

__all__ = [
    "AutoNuggetizerJudge", "assessor_args", "corpus_file", "workflow_path", "CACHE_FILE",
    "check_settings",
]


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.autojudge.inputs import CACHE_FILE, check_settings


__getattr__ = lazy_face(__name__)
