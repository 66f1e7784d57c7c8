"""Rubric scoring (ResearchRubrics): the method (method), its records (records) and sheets for
manual grading (sheets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face
from nuggetizer.methods.rubrics.method import RubricsConfig, RubricsMethod

__all__ = ["RubricsConfig", "RubricsMethod", "SCHEMA", "parse_verdict"]


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.methods.rubrics.method import SCHEMA, parse_verdict


__getattr__ = lazy_face(__name__)
