"""Scoring: the one score engine over declared measures (engine), scoring judgment files into
the tables asked for (files), the score tables written and read back (tables), and ir_measures
interoperability (irm)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face

# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.scoring.engine import ScoreTable, read_judged, score_judged, score_paths
    from nuggetizer.scoring.files import score_files
    from nuggetizer.scoring.tables import leaderboard_tsv, per_topic_tsv


__getattr__ = lazy_face(__name__)


__all__ = [
    "ScoreTable", "leaderboard_tsv", "per_topic_tsv", "read_judged", "score_files", "score_judged",
    "score_paths",
]
