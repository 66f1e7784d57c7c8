"""Assessment lines read for scoring as label columns: one list of nugget texts, one of
importance labels, one of assignment labels, no object per nugget. The score engine reads
900,000 assessed nuggets at track scale (150 runs x 301 topics x 20 nuggets); a line exactly
as `assign` writes it is read this way, any other line as the Assessment of
formats/assessments.py (same errors). With msgspec installed, a line is decoded straight into
typed fields (JSON objects of the nuggets never made); without it, by orjson and checks on
whole columns. Both accept exactly the lines that `_well_formed` accepts without a `raw`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

from nuggetizer.formats.assessments import _well_formed, parse_assessment
from nuggetizer.formats.jsonl import iter_decoded
from nuggetizer.labels import ASSIGNMENT_VALUES, IMPORTANCE_VALUES
from nuggetizer.types import Assessment

_TEXT, _IMPORTANCE, _ASSIGNMENT = (itemgetter(f) for f in ("text", "importance", "assignment"))
_IMPORTANCES = frozenset(IMPORTANCE_VALUES)
_ASSIGNMENTS = frozenset(ASSIGNMENT_VALUES)


@dataclass(slots=True)
class LabelRow:
    """An assessment line exactly as this toolkit writes it (what `_well_formed` accepts,
    with no `raw` and no other field in its nuggets), read as columns: no object per nugget.
    The score engine reads these 900,000 nuggets at track scale; `assessment()` gives the
    Assessment the same line reads as."""

    run_id: str
    qid: str
    query: str
    answer_text: str
    length: int | None
    texts: list[str]
    importance: list[str]
    assignment: list[str]
    stated_length: bool = False

    def assessment(self) -> Assessment:
        """The line as an Assessment."""
        nuggets = [{"text": t, "importance": i, "assignment": a}
                   for t, i, a in zip(self.texts, self.importance, self.assignment)]
        return Assessment.model_validate({
            "run_id": self.run_id, "qid": self.qid, "query": self.query,
            "answer_text": self.answer_text, "length": self.length, "nuggets": nuggets})


# msgspec's typed decoding of a line straight into a LabelRow (None: read it as an object)
decode_line: Callable[[bytes], LabelRow | None] | None
try:
    from nuggetizer.formats.label_decoder import row_decoder
    decode_line = row_decoder(LabelRow)
except ImportError:  # pragma: no cover - msgspec is an optional speed-up
    decode_line = None


def _columns(obj: dict[str, Any]) -> LabelRow | None:
    """The line as a LabelRow when it is exactly as this toolkit writes it (the checks of
    `_well_formed`, made on whole columns at once); None sends it to `_well_formed`."""
    run_id, qid = obj.get("run_id"), obj.get("qid")
    query, answer, nuggets = obj.get("query"), obj.get("answer_text"), obj.get("nuggets")
    length = obj.get("length")
    if (type(run_id) is not str or type(qid) is not str or not run_id or not qid
            or run_id != run_id.strip() or qid != qid.strip() or type(query) is not str
            or type(answer) is not str or type(nuggets) is not list
            or (length is not None and type(length) is not int)
            or "response_length" in obj or "stated_length" in obj):
        return None
    try:
        texts, importance = list(map(_TEXT, nuggets)), list(map(_IMPORTANCE, nuggets))
        assignment = list(map(_ASSIGNMENT, nuggets))
        if (sum(map(len, nuggets)) != 3 * len(texts)  # `raw` or another field: the model's
                or "" in texts or any(map(str.isspace, texts))  # TypeError: not a string
                or not _IMPORTANCES.issuperset(importance)
                or not _ASSIGNMENTS.issuperset(assignment)):
            return None
    except (KeyError, TypeError):  # a nugget that is not an object, a field missing, a list
        return None
    return LabelRow(run_id, qid, query, answer, length, texts, importance, assignment)


def iter_label_rows(path: str | Path, *, lenient: bool = False
                    ) -> Iterator[tuple[int, LabelRow | Assessment]]:
    """(line, record) of every line of an assessments file, in file order, for scoring: a
    LabelRow for a line exactly as this toolkit writes it, else the Assessment of
    `iter_assessments` (same errors)."""
    path = Path(path)
    for number, obj in iter_decoded(path, decode_line):
        if isinstance(obj, LabelRow):
            yield number, obj
            continue
        row = _columns(obj)
        yield number, row if row is not None else (
            _well_formed(obj) or parse_assessment(obj, path, number, lenient=lenient))
