"""The submission checker: TREC RAG 2024/2025 answer runs (checker), 2026 runs (rag26) and
report-shape runs (reports), each problem named with its rule, file and line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.validate.checker import LENGTH_TOLERANCE, exit_code, validate_run


__getattr__ = lazy_face(__name__)


__all__ = ["LENGTH_TOLERANCE", "exit_code", "validate_run"]
