"""Topics, for every method: TSV `id<TAB>text`, or JSONL (or one JSON array) with an id
(`id`/`topic_id`/`qid`/`request_id`/`example_id`/`narrative_id`, the fourth being the NeuCLIR /
RAGTIME key, the last the TREC RAG 2025 and 2026 one), a text (`title`/`query`/`request`/`text`/
`question`/`narrative`, the last being the TREC RAG 2025 key) and, optionally, a reference text
(`summary`/`reference`, for CRUX). A narratives file (formats/narratives.py) is such a file: its
`sub_narratives` are read by the commands that take --narratives.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import AliasChoices, Field, StrictStr

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import base_suffix, iter_lines, iter_objects
from nuggetizer.formats.records import IdText, Record, validated
from nuggetizer.types import Topic

ID_KEYS = ("id", "topic_id", "qid", "request_id", "example_id", "narrative_id")
Row = tuple[int | None, str, str, str, str | None]  # line, item prefix, id, text, ref


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
        yield number, "", columns[0].strip(), columns[1].strip(), None


def _iter_json(path: Path) -> Iterator[Row]:
    """The topics of a JSONL file, or of a JSON array (named by item, its lines unknown)."""
    for index, (number, obj) in enumerate(iter_objects(path, "an object with an id and a text")):
        where = "" if number is not None else f"item {index}: "
        topic = validated(TopicLine, obj, path, number, where=where)
        yield number, where, topic.topic_id, topic.text.strip(), topic.reference


def read_topics(path: str | Path) -> dict[str, Topic]:
    """Read topics in file order; JSON for `.jsonl`/`.json` (optionally `.gz`), else TSV."""
    path = Path(path)
    rows = _iter_json(path) if base_suffix(path) in (".jsonl", ".json") else _iter_tsv(path)
    topics: dict[str, Topic] = {}
    for number, where, topic_id, text, reference in rows:
        if not topic_id:
            raise InputError(path, number, f"{where}empty topic id")
        if not text:
            raise InputError(path, number, f"{where}empty text for topic {topic_id!r}")
        if topic_id in topics:
            first = topics[topic_id].line
            also = f" (also on line {first})" if first is not None else " (listed twice)"
            raise InputError(path, number, f"{where}duplicate topic id {topic_id!r}{also}")
        topics[topic_id] = Topic(id=topic_id, text=text, reference=reference, line=number)
    if not topics:
        raise InputError(path, None, "no topics in file")
    return topics
