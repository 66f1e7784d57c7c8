"""Pairwise battles (TREC RAG 2026): the method (method), its records (records), the
schedule of which runs meet where (schedule, and its active rounds: active), the step that
judges each battle once (step), the Bradley-Terry measures (measures), blind sheets for people
(sheets) and its part of the report (report, figures)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nuggetizer.faces import lazy_face
from nuggetizer.methods.battles.method import BattlesConfig, BattlesMethod

__all__ = [
    "BattlesConfig", "BattlesMethod", "BattlesPart", "Pairing", "active_pairs", "adaptive_pairs",
    "pair_sequence", "parse_verdict", "schedule_battles", "verdicts",
]


# The public face (nuggetizer/faces.py): each name imported from its module when first asked for.
if TYPE_CHECKING:
    from nuggetizer.methods.battles.active import active_pairs
    from nuggetizer.methods.battles.measures import verdicts
    from nuggetizer.methods.battles.method import parse_verdict
    from nuggetizer.methods.battles.report import BattlesPart
    from nuggetizer.methods.battles.schedule import (
        Pairing,
        adaptive_pairs,
        pair_sequence,
        schedule_battles,
    )


__getattr__ = lazy_face(__name__)
