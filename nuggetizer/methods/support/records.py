"""The support method's judgment records (pydantic), checked at the file edge by
formats/records.validated."""

from __future__ import annotations

from nuggetizer.formats.records import JudgmentIds, Labelled, Record


class Sentence(Record):
    """A support judgment's sentence: its (sentence, passage) pairs."""

    pairs: list[Labelled]


class SupportJudgment(JudgmentIds):
    """A support judgment: its sentences."""

    sentences: list[Sentence]
