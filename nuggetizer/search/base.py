"""What every search backend gives: hits for a query, and a document by its id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from nuggetizer.types import Segment


@dataclass(frozen=True)
class Hit:
    """One ranked result: the document's id, its score and its text (title first, if any)."""

    docid: str
    score: float
    text: str
    title: str = ""


class Searcher(Protocol):
    """A corpus that can be searched and read. `spec` names it (in messages and provenance)."""

    spec: str

    async def search(self, query: str, k: int) -> list[Hit]:
        """The best `k` documents for `query`, best first (fewer when fewer match)."""
        ...

    async def document(self, docid: str) -> Segment | None:
        """The document `docid`, or None when the corpus has none of that id."""
        ...

    def provenance(self) -> dict[str, Any]:
        """What to record of it beside every output made with it."""
        ...

    async def aclose(self) -> None: ...


def truncate_words(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to its first `limit` whitespace-separated words (joined by single spaces
    when cut; `limit` 0: no cut), and whether it was cut."""
    if limit <= 0:
        return text, False
    words = text.split()
    if len(words) <= limit:
        return text, False
    return " ".join(words[:limit]), True


def passage_text(segment: Segment) -> str:
    """A document as it is read: `title: text` when it has a title (as castorini's search API
    shows a segment), else its text."""
    return f"{segment.title}: {segment.text}" if segment.title else segment.text
