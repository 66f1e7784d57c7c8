"""Sub-narratives of the narratives (TREC RAG 2026), for UMBRELA's 0-4 prompt. Two sources:

- a narratives file (`--narratives`): JSONL, one object per narrative, or a JSON array of them
  (the shape of the track's narratives file): an id (`qid`/`narrative_id`/`id`/`topic_id`),
  optionally the `narrative` text (so the same file can serve as --topics), and
  `sub_narratives`, a list of strings or of objects with a `text`;
- a nuggets file (`--sub-narratives-from`): the 2026 nuggets with `mapped_sub_narrative`; a
  topic's sub-narratives are the distinct ones its nuggets map to, in order of first
  appearance.

A sub-narrative wrapped whole in double quotes (as the 2026 nuggets write them:
`"\\"Key advantages of nuclear energy\\""`) loses that one pair of quotes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, Field, PlainValidator, StrictStr
from pydantic_core import PydanticCustomError

from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.jsonl import iter_jsonl, iter_objects, opening
from nuggetizer.formats.records import IdText, Record, validated


class NarrativeId(Record):
    """What names a narrative: its id, under the first of its names the line has."""

    qid: IdText = Field(validation_alias=AliasChoices("qid", "narrative_id", "id", "topic_id"))


def clean(text: str) -> str:
    """A sub-narrative without surrounding whitespace or one pair of wrapping quotes."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


def _sub_narrative(value: Any) -> str:
    """A non-empty string, or an object with a non-empty `text` string, cleaned."""
    text = value.get("text") if isinstance(value, dict) else value
    if not isinstance(text, str) or not clean(text):
        raise PydanticCustomError("text_sub_narrative", 'must be a non-empty string or an '
                                  'object with a "text" string')
    return clean(text)


class Narrative(NarrativeId):
    """A line of a narratives file: its id and sub-narratives."""

    sub_narratives: list[Annotated[str, PlainValidator(_sub_narrative)]]


class MappedNugget(Record):
    """A nugget of a 2026 nuggets file: the sub-narrative it maps to, if any."""

    mapped_sub_narrative: StrictStr | None = None


class MappedNuggets(NarrativeId):
    """A line of a 2026 nuggets file, as far as its sub-narratives go."""

    nuggets: list[MappedNugget]


def read_narratives(path: Path) -> dict[str, list[str]]:
    """narrative id -> its sub-narratives, from a narratives file."""
    if opening(path) not in ("{", "[", ""):
        raise InputError(path, 1, "not JSON: a narratives file of id<TAB>narrative lines has "
                         "no sub-narratives; give them as JSONL ({\"narrative_id\", "
                         "\"narrative\", \"sub_narratives\": [...]}) or --sub-narratives-from "
                         "a 2026 nuggets file (the TSV serves as --topics)")
    found: dict[str, list[str]] = {}
    for line, obj in iter_objects(path, "an object with an id and `sub_narratives`"):
        narrative = validated(Narrative, obj, path, line)
        if narrative.qid in found:
            raise InputError(path, line, f"narrative {narrative.qid!r} is listed twice")
        found[narrative.qid] = narrative.sub_narratives
    return found


def sub_narratives_from_nuggets(path: Path) -> dict[str, list[str]]:
    """topic id -> the distinct sub-narratives its nuggets map to, in order of first
    appearance (nuggets without `mapped_sub_narrative` add none)."""
    found: dict[str, list[str]] = {}
    for line, obj in iter_jsonl(path):
        topic = validated(MappedNuggets, obj, path, line)
        subs = found.setdefault(topic.qid, [])
        for nugget in topic.nuggets:
            mapped = nugget.mapped_sub_narrative
            if mapped is not None and clean(mapped) and clean(mapped) not in subs:
                subs.append(clean(mapped))
    return found


def sub_narrative_source(narratives: Path | None, nuggets: Path | None
                         ) -> tuple[dict[str, list[str]], dict[str, str]] | None:
    """The sub-narratives and the source they came from (for the provenance), or None when
    neither file is given."""
    if narratives is not None and nuggets is not None:
        raise ConfigError("give --narratives or --sub-narratives-from, not both")
    if narratives is not None:
        return read_narratives(narratives), {"from": "narratives", "path": str(narratives)}
    if nuggets is not None:
        return (sub_narratives_from_nuggets(nuggets),
                {"from": "nuggets (distinct mapped_sub_narrative, in order of first "
                         "appearance)", "path": str(nuggets)})
    return None
