"""The data model shared by every step: topics, segments, answers, nuggets, assessments."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from nuggetizer.labels import Assignment, Importance


class Topic(BaseModel):
    """A query of the track; CRUX topics also carry a reference summary."""

    id: str
    text: str
    reference: str | None = None
    line: int | None = None  # 1-based line in the topics file, for error messages downstream


class Segment(BaseModel):
    """A passage of the corpus."""

    id: str
    text: str
    title: str = ""


class Qrel(BaseModel):
    """One relevance judgment: TREC `qid iter docid grade`."""

    qid: str
    docid: str
    grade: int
    line: int | None = None  # 1-based line in the qrels file, for error messages downstream


class Sentence(BaseModel):
    """One answer sentence with the indexes of the references it cites. A run read with
    `keep_unresolved` (formats/runs.py) keeps a citation that does not resolve as written (an
    index outside `references`, or a 2025 segment id not in them); the strict read never does."""

    text: str
    citations: list[int | str] = Field(default_factory=list)


class Answered(Protocol):
    """What assignment reads of an answer: its run and its sentences. An Answer read from a
    run file has them, and so has the Target the flow judges (interface/base.py)."""

    @property
    def run_id(self) -> str: ...

    @property
    def sentences(self) -> Sequence[Sentence]: ...


def joined(sentences: Iterable[Sentence]) -> str:
    """An answer's text from its sentences: each stripped, the empty ones dropped, joined by
    single spaces."""
    return " ".join(s.text.strip() for s in sentences if s.text.strip())


class Answer(BaseModel):
    """One run's answer to one topic (TREC RAG 2024 and 2025 answer formats)."""

    run_id: str
    topic_id: str
    topic: str = ""
    references: list[str] = Field(default_factory=list)
    response_length: int | None = None
    sentences: list[Sentence] = Field(default_factory=list)
    documents: dict[str, Segment] = Field(default_factory=dict)  # a report's own passages
    # the words its track allows (L is cut there): None for TREC RAG 2024's 400, 1,024 for a
    # TREC RAG 2026 run's answer
    word_limit: int | None = None
    path: str | None = None  # the run file and line it was read from, for messages downstream
    line: int | None = None

    def __eq__(self, other: object) -> bool:
        """Equal content: where an answer was read from is not part of it."""
        if not isinstance(other, Answer):
            return NotImplemented
        where = {"path", "line"}
        return self.model_dump(exclude=where) == other.model_dump(exclude=where)

    __hash__ = None  # type: ignore[assignment]  # mutable, as every BaseModel

    @property
    def text(self) -> str:
        """The answer text as the assignment prompt sees it: sentences joined by single spaces."""
        return joined(self.sentences)


class Nugget(BaseModel):
    """A key item of the AutoNuggetizer answer key."""

    text: str
    importance: Importance = "unjudged"
    # TREC RAG 2026 keys: the sub-narrative the nugget answers (as the file spells it) and
    # whether it was made by the nuggetizer or by a post-editor ("original", "post-edit")
    mapped_sub_narrative: str | None = None
    source: str | None = None


class NuggetList(BaseModel):
    """The answer key for one topic (one line of a nuggets file)."""

    qid: str
    query: str
    nuggets: list[Nugget]


class AssessedNugget(BaseModel):
    """A nugget with its label for one answer; `raw` holds unparseable LLM output."""

    text: str
    importance: Importance
    assignment: Assignment
    raw: str | None = None
    mapped_sub_narrative: str | None = None  # kept from the key (see Nugget)
    source: str | None = None


class Assessment(BaseModel):
    """One run's answer to one topic judged against the topic's nuggets."""

    run_id: str
    qid: str
    query: str
    answer_text: str
    length: int | None = None
    nuggets: list[AssessedNugget]
    # `length` is the run's self-reported `response_length` (castorini's files): reported as
    # read, never used for L, which is then counted from `answer_text`
    stated_length: bool = False
