"""Resumable outputs: finished units go to a journal at once; the final file is written whole."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from nuggetizer.errors import ConfigError
from nuggetizer.formats.jsonl import Journal, write_jsonl_atomic
from nuggetizer.provenance import same_identity


class ResumableOutput:
    """An output file built unit by unit; `<out>.partial` keeps finished units across a kill."""

    def __init__(self, out: Path, key: Callable[[dict], str], provenance: dict) -> None:
        self.out = out
        self.key = key
        self.journal = Journal(out.with_name(out.name + ".partial"))
        self.records: dict[str, dict] = {}
        for record in self.journal.load():
            if not same_identity(record.get("provenance"), provenance):
                raise ConfigError(
                    f"{self.journal.path} holds unfinished work made with another assessor, "
                    "prompt or setting: rerun with the same options to resume it, or delete it"
                )
            self.records[key(record)] = record

    def done(self, key: str) -> bool:
        """Whether this unit was finished by an earlier, interrupted run."""
        return key in self.records

    def add(self, record: dict) -> None:
        """Keep a finished unit: journalled (flushed and synced) before anything else happens."""
        self.journal.append(record)
        self.records[self.key(record)] = record

    def finish(self, order: Iterable[str]) -> None:
        """Write the output in `order` atomically and drop the journal."""
        write_jsonl_atomic(self.out, [self.records[k] for k in order if k in self.records])
        self.journal.remove()
