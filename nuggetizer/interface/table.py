"""Judgments read back for scoring: one at a time (`Judged`), or, for a method scored per run
(`judging.scoring` "runs"), all of them as one table (`JudgedTable`).

Such a method fits every judgment at once (battles: one Bradley-Terry fit on 400k battles), so
the score engine never looks at its judgments one by one: it asks the table the questions it
asks of each judgment of the other methods (which topics, judged twice?, nothing judged?,
unjudged items) and gives the method the table to score (`score_runs`). The arrays behind it
are the method's own; iterating a table gives each judgment as the report reads it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(slots=True)  # 400k of them for battles at scale: no __dict__ each
class Judged:
    """One judgment read back for scoring: where it came from, and the record as the method
    scores it (after `check` against the key)."""

    run_id: str
    qid: str
    record: Any
    path: Path
    line: int


@dataclass(frozen=True)
class Twice:
    """A judgment id judged twice on one topic, and where: the first place, then the second."""

    judgment: str
    qid: str
    first: tuple[Path, int]
    second: tuple[Path, int]


class JudgedTable(ABC):
    """Judgments of one method, as arrays (the method's own)."""

    @abstractmethod
    def __len__(self) -> int:
        """How many judgments."""

    @abstractmethod
    def __iter__(self) -> Iterator[Judged]:
        """Each judgment as the report's part reads it, in reading order."""

    @abstractmethod
    def topics_read(self) -> list[str]:
        """The topics judged, in the order they were first read."""

    @abstractmethod
    def restricted(self, qids: Collection[str]) -> tuple[JudgedTable, int]:
        """The judgments of these topics, and how many of the others were left out."""

    @abstractmethod
    def twice(self) -> Twice | None:
        """The first judgment id judged twice on a topic, None when every one is judged once."""

    @abstractmethod
    def unjudged(self) -> Counter[str]:
        """Items that stayed unjudged, by kind, over every judgment of the table."""

    @abstractmethod
    def judged(self) -> tuple[JudgedTable, str, dict[str, list[str]]]:
        """The judgments with something judged; what those with nothing judged are ("answer"),
        and their topics by judgment id (left out and counted by the engine, never scored)."""
