"""Nugget answer keys: one JSONL line per topic.

`{"qid", "query", "nuggets": [{"text", "importance"}]}`, the format the castorini nuggetizer
reads and writes, plus a `provenance` block on output. The TREC RAG 2026 nuggets give no
`query`: a step that shows it to the LLM (assign) takes it from the topics file
(`add_queries`). The TREC RAG 2026 keys' nugget fields `mapped_sub_narrative` and `source`
(strings) are kept and written back where present (see EXTRAS); other extra keys are ignored
on input.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import StrictStr

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import IdText, Record, Text, validated
from nuggetizer.labels import IMPORTANCE_VALUES, importance_of
from nuggetizer.types import Nugget, NuggetList, Topic

log = logging.getLogger(__name__)
# Optional string fields of a nugget, kept through reading, assignment, sheets and writing.
EXTRAS = ("mapped_sub_narrative", "source")


class NuggetItem(Record):
    """A nugget as a file gives it: its text, its importance label (none: unjudged) and the
    EXTRAS."""

    text: Text
    importance: StrictStr | None = None
    mapped_sub_narrative: StrictStr | None = None
    source: StrictStr | None = None

    def extras(self) -> dict[str, str]:
        """The EXTRAS it carries (null or absent leaves one out)."""
        return {name: value for name in EXTRAS if (value := getattr(self, name)) is not None}


class NuggetLine(Record):
    """A line of a nuggets file: the topic, its query (absent in the TREC RAG 2026 nuggets:
    then the topics file's text, see `add_queries`) and its nuggets."""

    qid: IdText
    query: StrictStr | None = None
    nuggets: list[NuggetItem]


def check_label(
    value: str,
    allowed: tuple[str, ...],
    what: str,
    path: Path,
    line: int,
    *,
    lenient: bool,
) -> str | None:
    """`value` as one of `allowed` (case and surrounding space ignored).

    Anything else is an InputError naming the label, or, when `lenient`, None: the caller
    records "unjudged" (never a real label) and reports the label with `warn_labels`.
    """
    label = value.strip().lower()
    if label in allowed:
        return label
    if not lenient:
        raise InputError(path, line, f"{what} {value!r} is not one of {', '.join(allowed)} "
                         "(--lenient records off-menu labels as unjudged items)")
    return None


def warn_labels(path: Path, line: int, what: str, labels: list[str]) -> None:
    """Log, once for the line, the unknown labels a lenient read recorded as unjudged."""
    if labels:
        shown = ", ".join(repr(x) for x in dict.fromkeys(labels))
        log.warning(
            "%s:%d: %d %s label(s) not recognised (%s); recorded as unjudged",
            path,
            line,
            len(labels),
            what,
            shown,
        )


class OffMenu:
    """The off-menu labels a lenient read of one file recorded as unjudged, said once for the
    file (`say`) rather than once per line."""

    SHOWN = 5  # distinct labels named in the warning

    def __init__(self, path: Path) -> None:
        self.path = path
        self.labels: dict[str, Counter[str]] = {}  # kind ("importance") -> label -> count
        self.lines: dict[str, list[int]] = {}

    def add(self, line: int, what: str, labels: list[str]) -> None:
        """The unknown `what` labels of one line."""
        if labels:
            self.labels.setdefault(what, Counter()).update(labels)
            self.lines.setdefault(what, []).append(line)

    def say(self) -> None:
        """One warning per kind of label: how many, on how many lines, which."""
        for what, counts in self.labels.items():
            lines = self.lines[what]
            shown = ", ".join(f"{label!r} x{n}" if n > 1 else repr(label)
                              for label, n in counts.most_common(self.SHOWN))
            more = len(counts) - self.SHOWN
            log.warning("%s: %d %s label(s) not recognised on %d line(s), the first on line "
                        "%d (%s%s); recorded as unjudged", self.path, counts.total(), what,
                        len(lines), lines[0], shown, f", {more} more" if more > 0 else "")


def importance_label(item: NuggetItem, k: int, path: Path, line: int, *, lenient: bool
                     ) -> tuple[str | None, str]:
    """(importance or None when unknown under `lenient`, the label as written) of `nuggets[k]`."""
    raw = "unjudged" if item.importance is None else item.importance
    return check_label(raw, IMPORTANCE_VALUES, f"nuggets[{k}].importance label", path, line,
                       lenient=lenient), raw


def extras_record(nugget: Any) -> dict[str, str]:
    """The EXTRAS fields of a nugget (key or assessed) that are set, for its JSON record."""
    return {name: value for name in EXTRAS if (value := getattr(nugget, name)) is not None}


def parse_nugget_list(obj: dict[str, Any], path: Path, line: int, *, lenient: bool,
                      off_menu: OffMenu | None = None) -> NuggetList:
    """One topic's nuggets from a line of a nuggets file (see `read_nuggets`); the labels a
    lenient read does not know go to `off_menu`, else are warned about for the line."""
    topic = validated(NuggetLine, obj, path, line)
    nuggets, unknown = [], []
    for k, item in enumerate(topic.nuggets):
        importance, raw = importance_label(item, k, path, line, lenient=lenient)
        nuggets.append(Nugget(text=item.text, importance=importance_of(importance),
                              **item.extras()))
        if importance is None:
            unknown.append(raw)
    if off_menu is not None:
        off_menu.add(line, "importance", unknown)
    else:
        warn_labels(path, line, "importance", unknown)
    return NuggetList(qid=topic.qid, query=topic.query or "", nuggets=nuggets)


def read_nuggets(path: str | Path, *, lenient: bool = False) -> dict[str, NuggetList]:
    """Read a nuggets file: {qid: NuggetList} in file order.

    A missing importance means "unjudged". An unknown importance label is an InputError; with
    `lenient` (for files written by other tools, e.g. castorini's "failed") it becomes
    "unjudged" and is logged, in one warning for the file, so it can never pass for vital or
    okay.
    """
    path = Path(path)
    result: dict[str, NuggetList] = {}
    lines: dict[str, int] = {}
    off_menu = OffMenu(path)
    for number, obj in iter_jsonl(path):
        nuggets = parse_nugget_list(obj, path, number, lenient=lenient, off_menu=off_menu)
        qid = nuggets.qid
        if qid in result:
            raise InputError(path, number, f"duplicate qid {qid!r} (also on line {lines[qid]})")
        result[qid] = nuggets
        lines[qid] = number
    if not result:
        raise InputError(path, None, "no nugget lists in file")
    off_menu.say()
    return result


def add_queries(keys: Mapping[str, NuggetList], path: Path,
                topics: Mapping[str, Topic] | None) -> None:
    """Give each key without a query (a 2026 nuggets file has none) its topic's text from
    `topics` (None: no topics file given); InputError naming the key file, the field and what
    to give when a query stays missing."""
    lacking = [qid for qid, nl in keys.items() if not nl.query]
    for qid in lacking:
        if topics is not None and qid in topics:
            keys[qid].query = topics[qid].text
    missing = [qid for qid in lacking if not keys[qid].query]
    if not missing:
        return
    what = f"{len(missing)} of its {len(keys)} topics (e.g. {missing[0]!r}) have no field 'query'"
    if topics is None:
        raise InputError(path, None, f"{what}, as the TREC RAG 2026 nuggets: give --topics FILE, "
                         "the topics or narratives file, whose text becomes each one's query")
    raise InputError(path, None, f"{what} and no line in the topics file: give the topics file "
                     "these nuggets were made for")


def nuggets_record(nl: NuggetList, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSONL record of one topic's nuggets; `provenance` is added when given."""
    record: dict[str, Any] = {
        "qid": nl.qid,
        "query": nl.query,
        "nuggets": [{"text": n.text, "importance": n.importance, **extras_record(n)}
                    for n in nl.nuggets],
    }
    if provenance is not None:
        record["provenance"] = provenance
    return record

