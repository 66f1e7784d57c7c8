"""The rubrics method's key and judgment records (pydantic), checked at the file edge by
formats/records.validated."""

from __future__ import annotations

from typing import Any

from pydantic import StrictStr

from nuggetizer.formats.records import Id, JudgmentIds, Number, Record, Text


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
