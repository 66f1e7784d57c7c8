"""Resumable outputs: finished units go to a journal at once; the final file is written whole."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from nuggetizer.errors import ConfigError
from nuggetizer.formats.writing import Journal, dumps, write_text_atomic
from nuggetizer.run.provenance import same_identity


class ResumableOutput:
    """An output file built unit by unit; `<out>.partial` keeps finished units across a kill."""

    def __init__(self, out: Path, key: Callable[[dict], str], provenance: dict) -> None:
        self.out = out
        self.key = key
        self.journal = Journal(out.with_name(out.name + ".partial"))
        self.records: dict[str, dict] = {}
        self._lines: dict[str, str] = {}
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
        """Keep a finished unit: written to the journal before anything else happens."""
        key = self.key(record)
        self._lines[key] = self.journal.append(record)
        self.records[key] = record

    def finish(self, order: Iterable[str]) -> None:
        """Write the output in `order` atomically and drop the journal. Lines serialised when
        journalled are reused (the same bytes `write_jsonl_atomic` would write)."""
        lines = [self._lines.get(k) or dumps(self.records[k]) for k in order if k in self.records]
        write_text_atomic(self.out, "".join(line + "\n" for line in lines))
        self.journal.remove()
