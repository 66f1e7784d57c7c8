"""The key and judgment records of the one-module methods (crux, kpr, udcg) as pydantic models (a
method package keeps its own in its `records` module): the fields each method reads, with their
types; checked at the file edge by formats/records.validated, which names file, line and the
dotted field.

Records are validated, not converted: a method keeps the dict it read, so what it writes back
stays byte for byte as it was. Checks a model cannot say simply (a label off the menu, which
`--lenient` records unjudged) stay with the method.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt, StrictStr

from nuggetizer.formats.records import JudgmentIds, KeyIds, Labelled, Number, Record, TextItem

Rating = Annotated[StrictInt, Field(ge=0, le=5)]


class CruxKey(KeyIds):
    """A CRUX key: its questions and each document's ratings (0-5, null when unrated)."""

    questions: list[TextItem]
    ratings: dict[str, list[Rating | None]]


class CruxAnswerJudgment(JudgmentIds):
    """A CRUX judgment of an answer: each question's rating and the answer's length."""

    ratings: list[Rating | None]
    tokens: StrictInt


class CruxContextJudgment(JudgmentIds):
    """A CRUX judgment of a context: its passages, each one's ratings and length."""

    docids: list[StrictStr]
    ratings: dict[str, list[Rating | None]]
    tokens: dict[str, StrictInt]


class KprKey(KeyIds):
    """A KPR key: its key points."""

    key_points: list[TextItem]


class KprJudgment(JudgmentIds):
    """A KPR judgment: each key point's label."""

    key_points: list[Labelled]


class Passage(Record):
    """A UDCG key passage: its document id."""

    doc_id: StrictStr


class UdcgKey(KeyIds):
    """A UDCG key: the topic's passages."""

    passages: list[Passage]


class UdcgJudgment(JudgmentIds):
    """A UDCG judgment: the utility of each passage (null: no p_NR for the generator)."""

    utilities: list[Number | None]
