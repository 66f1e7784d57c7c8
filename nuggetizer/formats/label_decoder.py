"""msgspec's typed decoding of an assessment line as `assign` writes it, for
formats/label_rows.py (imported only where msgspec is installed: an optional speed-up)."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, Literal, TypeVar

import msgspec

# orjson reads a larger integer as a float, which the careful path refuses: so must this one
INTEGERS = (-(2**63), 2**64 - 1)
T = TypeVar("T")


class _Nugget(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A nugget with exactly its three fields (a `raw` or any other: the careful path)."""

    text: str
    importance: Literal["vital", "okay", "unjudged"]
    assignment: Literal["support", "partial_support", "not_support", "unjudged"]


class _Line(msgspec.Struct, gc=False):
    """The fields an assessment line is scored from (others, e.g. `provenance`, skipped)."""

    run_id: str
    qid: str
    query: str
    answer_text: str
    nuggets: list[_Nugget]
    length: int | None = None
    response_length: Any = msgspec.UNSET  # castorini's spelling: the careful path
    stated_length: Any = msgspec.UNSET  # a field of the model, never written: ditto


_DECODE = msgspec.json.Decoder(_Line).decode
_TEXT, _IMPORTANCE, _ASSIGNMENT = (attrgetter(f) for f in ("text", "importance", "assignment"))
_ERRORS = (msgspec.MsgspecError, ValueError)  # ValueError: e.g. bytes that are not UTF-8
_UNSET = msgspec.UNSET


def row_decoder(row: Callable[..., T]) -> Callable[[bytes], T | None]:
    """A function reading a line that is exactly as `assign` writes it as `row(run_id, qid,
    query, answer_text, length, texts, importance, assignment)`, None for any other (the
    careful path reads it). It runs once per line, 45,000 times at track scale: the row is
    made here, with no tuple between."""
    low, high = INTEGERS

    def decode(raw: bytes) -> T | None:
        try:
            line = _DECODE(raw)
        except _ERRORS:
            return None
        run_id, qid, length = line.run_id, line.qid, line.length
        if (not run_id or not qid or run_id != run_id.strip() or qid != qid.strip()
                or line.response_length is not _UNSET or line.stated_length is not _UNSET
                or (length is not None and not low <= length <= high)):
            return None
        nuggets = line.nuggets
        texts = list(map(_TEXT, nuggets))
        if "" in texts or any(map(str.isspace, texts)):
            return None
        return row(run_id, qid, line.query, line.answer_text, length, texts,
                   list(map(_IMPORTANCE, nuggets)), list(map(_ASSIGNMENT, nuggets)))

    return decode
