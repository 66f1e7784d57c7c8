"""A breach of a named rule of a run format or track (formats/track_rules.py, formats/rag26.py)."""

from __future__ import annotations

from typing import NamedTuple


class Finding(NamedTuple):
    """One breach of a track rule: the field, the message (ending in the rule's name), how
    bad, and the rule (`track rule`)."""

    field: str
    message: str
    severity: str
    rule: str
