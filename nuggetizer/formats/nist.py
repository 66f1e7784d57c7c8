"""NIST's published nugget assignments of TREC RAG 2024 (`nugget_assignment.20241218.jsonl`):
one line per judged answer, `{"query", "qid", "run_id", "answer_text", "response_length",
"nuggets": [{"text", "importance": "vital"|"okay", "assignment": "support"|
"partial_support"|"not_support"}]}`, the topic's nuggets (the assessors', in their order) with
the assessors' label of each for this answer.

`read_nist_assignments` checks every line (a one-line error naming file, line and field), and
that every answer of a topic carries the same nuggets (the key is per topic). It returns the
answers in file order; `topic_keys` gives each topic's nuggets and query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import Id, Record, Text, validated


class NistNugget(Record):
    """One nugget of the topic with the assessors' label for the answer."""

    text: Text
    importance: Literal["vital", "okay"]
    assignment: Literal["support", "partial_support", "not_support"]


class NistLine(Record):
    """One line of the assignment file."""

    qid: Id
    query: Text
    run_id: Id
    answer_text: Text
    response_length: int | None = None
    nuggets: Annotated[list[NistNugget], Field(min_length=1)]


@dataclass(frozen=True)
class HumanAnswer:
    """One answer as NIST's assessors judged it: its nuggets' texts, importance and labels in
    the topic's order."""

    qid: str
    query: str
    run_id: str
    answer: str
    length: int | None
    texts: tuple[str, ...]
    importance: tuple[str, ...]
    labels: tuple[str, ...]
    line: int


def read_nist_assignments(path: Path) -> list[HumanAnswer]:
    """Every answer of NIST's assignment file, checked (module docstring); InputError on a bad
    line, an answer given twice, or a topic whose answers carry different nuggets."""
    answers: list[HumanAnswer] = []
    first: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, obj in iter_jsonl(path):
        row = validated(NistLine, obj, path, line)
        qid, run_id = str(row.qid), str(row.run_id)
        if (run_id, qid) in seen:
            raise InputError(path, line, f"run {run_id!r} topic {qid!r} is given twice (also "
                             f"line {seen[run_id, qid]}): keep one line per answer")
        seen[run_id, qid] = line
        texts = tuple(n.text for n in row.nuggets)
        importance = tuple(n.importance for n in row.nuggets)
        known = first.setdefault(qid, (texts, importance, line))
        if (texts, importance) != known[:2]:
            raise InputError(path, line, f"topic {qid!r}: the nuggets differ from those of line "
                             f"{known[2]} (every answer of a topic is judged on the same "
                             "nuggets, in the same order)")
        answers.append(HumanAnswer(qid, row.query, run_id, row.answer_text,
                                   row.response_length, texts, importance,
                                   tuple(n.assignment for n in row.nuggets), line))
    if not answers:
        raise InputError(path, None, "no answers: expected NIST's nugget assignment JSONL, "
                         "one judged answer per line")
    return answers


def topic_keys(answers: Sequence[HumanAnswer]) -> dict[str, HumanAnswer]:
    """Each topic's first answer, whose nuggets, importance and query are the topic's key."""
    keys: dict[str, HumanAnswer] = {}
    for answer in answers:
        keys.setdefault(answer.qid, answer)
    return keys
