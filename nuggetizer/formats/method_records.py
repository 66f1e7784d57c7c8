"""The record models of the answer-key methods other than the AutoNuggetizer's (whose key and
assessments are the models of nuggetizer/types.py): what every key line and judgment line
must carry, checked at the file edge by formats/records.py. Extra fields are kept."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from nuggetizer.formats.records import Id, Record

Number = float | int  # JSON's numbers (a boolean is none)
Rating = Annotated[int, Field(ge=0, le=5)]  # a CRUX rating


class KeyIds(Record):
    """A key line: its topic and the topic's text."""

    qid: Id
    query: str


class JudgmentIds(Record):
    """A judgment line: its run and topic."""

    run_id: Id
    qid: Id


class Text(Record):
    text: str


class CruxKey(KeyIds):
    """CRUX: the sub-questions, and each passage's 0-5 rating of each (null: unrated)."""

    questions: list[Text]
    ratings: dict[str, list[Rating | None]]

    @model_validator(mode="after")
    def _one_rating_per_question(self) -> CruxKey:
        n = len(self.questions)
        for docid, row in self.ratings.items():
            if len(row) != n:
                raise ValueError(f"ratings[{docid!r}] must list {n} ratings (integers 0-5 or "
                                 f"null), got {len(row)}")
        return self


class KprKey(KeyIds):
    """Long2RAG: the key points."""

    key_points: list[Text]


class UdcgPassage(Record):
    doc_id: str


class UdcgKey(KeyIds):
    """UDCG: the passages whose utilities the key holds."""

    passages: list[UdcgPassage]


class Criterion(Record):
    """A ResearchRubrics criterion: its text, weight (negative: a failure mode) and axis."""

    criterion: str
    weight: Number
    axis: str = ""


class RubricsKey(Record):
    """A rubrics line: its topic and criteria (`query`/`prompt` optional)."""

    qid: Id
    rubrics: list[Criterion]


class GradedCriterion(Criterion):
    label: str


class RubricsJudgment(JudgmentIds):
    criteria: list[GradedCriterion]


class SupportPair(Record):
    label: str


class SupportSentence(Record):
    pairs: list[SupportPair]


class SupportJudgment(JudgmentIds):
    """Support: each sentence's (sentence, cited passage) pairs and their labels."""

    sentences: list[SupportSentence]


class BattleOrder(Record):
    """One presentation order: the run shown first, and the verdict (checked against the
    menu by the method, which under --lenient records an off-menu one unjudged)."""

    first: Id
    verdict: Any = None


class BattleJudgment(Record):
    """A battle: its topic, both runs and the verdict of each presentation order."""

    qid: Id
    run_a: Id
    run_b: Id
    orders: Annotated[list[BattleOrder], Field(min_length=1, max_length=2)]

