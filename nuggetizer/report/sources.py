"""What the report's inputs record about how they were made: the provenance block of each
answer key and assessment file (assessor, model, prompt template hashes, versions, date), the
token usage of the steps that made them (`usage.json` / `*.usage.json` beside them, or the
`usage` of a TSV's `.provenance.json` sidecar), and each topic's query text.

Nothing is guessed: what no file records stays absent, and the page says "not recorded".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nuggetizer.run.provenance import usage_of_input, usage_steps

ASSESSMENTS = "assessments"
KEY = "answer key"


@dataclass(frozen=True)
class Made:
    """One input file: its role, path and the provenance block it carries (None: none)."""

    role: str
    path: str
    provenance: dict | None


@dataclass
class Sources:
    """Everything the inputs record, gathered for the report's header."""

    made: list[Made] = field(default_factory=list)
    usage: dict[str, dict] = field(default_factory=dict)  # step -> counters (or "cost")
    queries: dict[str, str] = field(default_factory=dict)  # topic id -> query text
    notes: list[str] = field(default_factory=list)  # where a source was found, or skipped

    def add_queries(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Query texts, the first one seen for a topic kept."""
        for qid, text in pairs:
            if text:
                self.queries.setdefault(str(qid), text)


def _records(path: Path) -> Iterable[dict]:
    """The JSON records of a JSONL file (lines that are not objects skipped)."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def _first(path: Path) -> dict | None:
    try:
        return next(iter(_records(path)), None)
    except OSError:
        return None


def role_of(record: dict | None) -> str:
    """What a JSONL file holds, from its first record: judgments of runs, a key, or other."""
    if record is None:
        return "input"
    if "run_id" in record:
        return ASSESSMENTS
    return KEY if "nuggets" in record or "query" in record else "input"


def _add_usage(sources: Sources, path: Path) -> None:
    """The usage of the step that made `path`, and of the steps that made its inputs (the
    grading of a graded pool, for a key built from it)."""
    for step, counters in usage_steps(usage_of_input(path) or {}).items():
        sources.usage.setdefault(step, counters)


def _add_key_queries(sources: Sources, key: Path) -> None:
    """The query text of each topic of an answer key file."""
    sources.add_queries((r.get("qid", ""), r.get("query", "")) for r in _records(key))


def add_jsonl(sources: Sources, path: Path, *, queries: bool = False) -> None:
    """One JSONL input (a key or an assessment file): its provenance and its step's usage;
    with `queries`, the query text of each of its records too (a key's)."""
    first = _first(path)
    role = role_of(first)
    sources.made.append(Made(role, str(path), (first or {}).get("provenance")))
    _add_usage(sources, path)
    if queries and role == KEY:
        _add_key_queries(sources, path)


def add_table(sources: Sources, path: Path, seen: set[str] | None = None) -> None:
    """A TSV output: the inputs its `.provenance.json` sidecar lists (a TSV among them
    followed in turn), and the usage it records."""
    seen = set() if seen is None else seen
    if str(path) in seen:
        return
    seen.add(str(path))
    sidecar = path.with_name(path.name + ".provenance.json")
    try:
        block = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        sources.notes.append(f"{path}: no readable {sidecar.name} beside it")
        return
    for step, counters in (block.get("usage") or {}).items():
        if isinstance(counters, dict):
            sources.usage.setdefault(str(step), counters)
    for entry in block.get("inputs") or []:
        found = Path(str(entry.get("path", "")))
        if found.suffix.lower() == ".tsv" and found.is_file():
            add_table(sources, found, seen)
            continue
        first = _first(found) if found.is_file() else None
        role = role_of(first)
        sources.made.append(Made(role, str(found), entry.get("provenance")))
        if role == KEY:
            _add_key_queries(sources, found)


def beside_key(files: Sequence[Path], name: str = "nuggets.jsonl") -> Path | None:
    """The answer key `evaluate` writes beside a judgments folder (OUT/nuggets.jsonl for
    OUT/assessments/*.jsonl; `name`: the method's key file), when every file lies in that one
    folder and the key exists."""
    folders = {p.parent for p in files}
    if len(folders) != 1:
        return None
    candidate = next(iter(folders)).parent / name
    return candidate if candidate.is_file() else None
