"""Topics, for every method: TSV `id<TAB>text`, or JSONL with an id (`id`/`topic_id`/`qid`/
`request_id`/`example_id`, the fourth being the NeuCLIR / RAGTIME key), a text (`title`/`query`/
`request`/`text`/`question`/`narrative`, the last being the TREC RAG 2025 key) and, optionally,
a reference text (`summary`/`reference`, for CRUX).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import AliasChoices, Field, StrictStr

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import base_suffix, iter_jsonl, iter_lines
from nuggetizer.formats.records import IdText, Record, validated
from nuggetizer.types import Topic

ID_KEYS = ("id", "topic_id", "qid", "request_id", "example_id")
Row = tuple[int, str, str, str | None]


class TopicLine(Record):
    """A JSONL topic: its id, its text and (for CRUX) a reference text, each under the first
    of its names the line has."""

    topic_id: IdText = Field(validation_alias=AliasChoices(*ID_KEYS))
    text: StrictStr = Field(validation_alias=AliasChoices(
        "title", "query", "request", "text", "question", "narrative"))
    reference: StrictStr | None = Field(None, validation_alias=AliasChoices("summary",
                                                                           "reference"))


def _iter_tsv(path: Path) -> Iterator[Row]:
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) != 2:
            raise InputError(
                path,
                number,
                f"expected 2 tab-separated columns (id, text), found {len(columns)}",
            )
        yield number, columns[0].strip(), columns[1].strip(), None


def _iter_json(path: Path) -> Iterator[Row]:
    for number, obj in iter_jsonl(path):
        topic = validated(TopicLine, obj, path, number)
        yield number, topic.topic_id, topic.text.strip(), topic.reference


def read_topics(path: str | Path) -> dict[str, Topic]:
    """Read topics in file order; JSONL for `.jsonl`/`.json` (optionally `.gz`), else TSV."""
    path = Path(path)
    rows = _iter_json(path) if base_suffix(path) in (".jsonl", ".json") else _iter_tsv(path)
    topics: dict[str, Topic] = {}
    lines: dict[str, int] = {}
    for number, topic_id, text, reference in rows:
        if not topic_id:
            raise InputError(path, number, "empty topic id")
        if not text:
            raise InputError(path, number, f"empty text for topic {topic_id!r}")
        if topic_id in topics:
            raise InputError(
                path,
                number,
                f"duplicate topic id {topic_id!r} (also on line {lines[topic_id]})",
            )
        topics[topic_id] = Topic(id=topic_id, text=text, reference=reference, line=number)
        lines[topic_id] = number
    if not topics:
        raise InputError(path, None, "no topics in file")
    return topics
