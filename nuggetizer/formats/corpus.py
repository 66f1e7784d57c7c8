"""Corpus passages: JSONL (or TSV `id<TAB>text`), streamed so only the wanted ids stay in memory.

A wanted-set read skips lines cheaply: the id is found with a regular expression and only
lines whose id is wanted (or whose id the expression cannot find) are parsed as JSON. A line
that does not even look like one object (a truncated line) is always parsed and reported; a
subtler defect in a line that is not wanted can go unreported, in a wanted line never.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import AliasChoices, Field, StrictStr

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import base_suffix, iter_lines, parse_object
from nuggetizer.formats.records import IdText, Record, validated
from nuggetizer.types import Segment


class PassageId(Record):
    """A corpus line's id, under the first of its names the line has."""

    id: IdText = Field(validation_alias=AliasChoices("id", "docid", "segment_id", "_id",
                                                     "docno", "doc_id"))


class Passage(PassageId):
    """A corpus line: its id, text and (optional) title."""

    text: StrictStr = Field(validation_alias=AliasChoices("contents", "segment", "text"))
    title: StrictStr | None = None

# A top-level or nested id key with a string or integer value. Quotes inside JSON strings are
# escaped, so `"docid": "` can only be structure, never text inside a value.
_ID_VALUE = re.compile(
    r'"(?:id|docid|segment_id|_id|docno|doc_id)"\s*:\s*(?:"([^"\\]*)(["\\])|(-?[0-9]+))')


def _quick_ids(text: str) -> list[str] | None:
    """Every id-like value on a raw JSONL line, or None when a full parse is needed to know."""
    ids: list[str] = []
    for match in _ID_VALUE.finditer(text):
        string, end, number = match.groups()
        if end == "\\":  # an escape inside the value: leave it to the JSON parser
            return None
        ids.append(string if number is None else number)
    return ids or None


def _looks_whole(text: str) -> bool:
    """A cheap guard before skipping a line unparsed: it must at least look like one object."""
    stripped = text.strip()
    return stripped.startswith("{") and stripped.endswith("}")


def _iter_jsonl(path: Path, wanted: set[str] | None) -> Iterator[tuple[int, Segment | None]]:
    """(line, segment) for every record; the segment is None for a record that is not wanted."""
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        if wanted is not None and _looks_whole(text):
            quick = _quick_ids(text)
            if quick is not None and not any(i.strip() in wanted for i in quick):
                yield number, None
                continue
        obj = parse_object(text, path, number)
        if wanted is not None and validated(PassageId, obj, path, number).id not in wanted:
            yield number, None
            continue
        passage = validated(Passage, obj, path, number)
        yield number, Segment(id=passage.id, text=passage.text, title=passage.title or "")


def _iter_tsv(path: Path, wanted: set[str] | None) -> Iterator[tuple[int, Segment | None]]:
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        columns = text.split("\t")
        if len(columns) != 2:
            raise InputError(
                path, number, f"expected 2 tab-separated columns (id, text), found {len(columns)}"
            )
        seg_id = columns[0].strip()
        if not seg_id:
            raise InputError(path, number, "empty segment id")
        if wanted is not None and seg_id not in wanted:
            yield number, None
            continue
        yield number, Segment(id=seg_id, text=columns[1].strip())


def read_corpus(path: str | Path, wanted: set[str] | None = None) -> dict[str, Segment]:
    """Read the segments whose id is in `wanted` (every segment when None), in file order.

    `.tsv` files are `id<TAB>text`; anything else is JSONL (`.gz` is read transparently).
    Ids in `wanted` that the corpus lacks are simply absent from the result.
    """
    path = Path(path)
    rows = _iter_tsv if base_suffix(path) == ".tsv" else _iter_jsonl
    segments: dict[str, Segment] = {}
    lines: dict[str, int] = {}
    records = 0
    for number, segment in rows(path, wanted):
        records += 1
        if segment is None:
            continue
        if segment.id in segments:
            first = lines[segment.id]
            raise InputError(
                path, number, f"duplicate segment id {segment.id!r} (also on line {first})"
            )
        segments[segment.id] = segment
        lines[segment.id] = number
    if records == 0:
        raise InputError(path, None, "corpus is empty")
    return segments
