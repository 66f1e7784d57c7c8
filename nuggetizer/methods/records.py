"""The key and judgment records of the answer-key methods (crux, kpr, udcg, support, rubrics,
battles) as pydantic models: the fields each method reads, with their types; checked at the
file edge by formats/records.validated, which names file, line and the dotted field.

Records are validated, not converted: a method keeps the dict it read, so what it writes back
stays byte for byte as it was. Checks a model cannot say simply (a label off the menu, which
`--lenient` records unjudged) stay with the method.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictInt, StrictStr

from nuggetizer.formats.records import Id, JudgmentIds, KeyIds, Number, Record, Text

Rating = Annotated[StrictInt, Field(ge=0, le=5)]


class TextItem(Record):
    """A question or key point: its text."""

    text: StrictStr


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


class Labelled(Record):
    """A judged item: its label (the method checks the menu)."""

    label: StrictStr


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


class Sentence(Record):
    """A support judgment's sentence: its (sentence, passage) pairs."""

    pairs: list[Labelled]


class SupportJudgment(JudgmentIds):
    """A support judgment: its sentences."""

    sentences: list[Sentence]


class Criterion(Record):
    """A rubric criterion: its text (not empty: an empty one cannot be graded), weight
    (negative: a failure mode) and axis."""

    criterion: Text
    weight: Number
    axis: StrictStr = ""


class RubricsKey(Record):
    """A rubrics line: `qid` and its criteria (the query, or `prompt`, optional)."""

    qid: Id
    rubrics: list[Criterion]


class JudgedCriterion(Criterion):
    """A graded criterion: its label (`label` checked against the menu by the method)."""

    label: Any = None


class RubricsJudgment(JudgmentIds):
    """A rubrics judgment: its graded criteria."""

    criteria: list[JudgedCriterion]


class Order(Record):
    """One order of a battle: the run shown first and its verdict (checked by the method)."""

    first: Id
    verdict: Any = None


class BattleJudgment(Record):
    """A battle: the topic, both runs, and one or two orders."""

    qid: Id
    run_a: Id
    run_b: Id
    orders: Annotated[list[Order], Field(min_length=1, max_length=2)]
