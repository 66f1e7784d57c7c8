"""Reference resolving (RAGDoll's `support resolve-references`): the texts of the passages runs
reference, read from a searcher (castorini's search API, or a BM25 index built before) when the
corpus is no file at hand (ClimbMix-400b), written as a corpus file that `assign --corpus`
reads. Each text is cut as RAGDoll cuts it: its first `lines` lines, then its first `words`
words (RAGDoll's defaults: 200 and 4,096).

A reference the searcher does not have is left out of the corpus, counted and named (support's
`assign --allow-missing` then leaves its citations unjudged); every other passage is written,
once, in the order the runs first reference it, its provenance saying where it was read and
how it was cut (`stamp`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nuggetizer.names import READ_LINES, READ_WORDS
from nuggetizer.search.base import Searcher, truncate_words
from nuggetizer.types import Answer


@dataclass
class Resolved:
    """The passages read, and the references that were not found."""

    passages: dict[str, dict[str, Any]] = field(default_factory=dict)  # id: corpus record
    missing: list[str] = field(default_factory=list)
    cut: int = 0  # passages cut to the limits


def references(answers: Iterable[Answer], cited_only: bool = False) -> list[str]:
    """The distinct references of the answers, in order (`cited_only`: those a sentence
    cites)."""
    found: dict[str, None] = {}
    for answer in answers:
        if not cited_only:
            found.update(dict.fromkeys(answer.references))
            continue
        for sentence in answer.sentences:
            for cite in sentence.citations:
                if isinstance(cite, int) and 0 <= cite < len(answer.references):
                    found[answer.references[cite]] = None
                elif isinstance(cite, str):
                    found[cite] = None
    return list(found)


async def resolve(searcher: Searcher, docids: Iterable[str], *, lines: int = READ_LINES,
                  words: int = READ_WORDS, stamp: dict[str, Any] | None = None) -> Resolved:
    """Read every docid from `searcher`, cut to `lines` then `words` (0: no cut); each record
    carries `stamp` as its provenance when given."""
    resolved = Resolved()
    for docid in docids:
        document = await searcher.document(docid)
        if document is None:
            resolved.missing.append(docid)
            continue
        text_lines = document.text.splitlines() or [document.text]
        kept = "\n".join(text_lines[:lines] if lines > 0 else text_lines)
        text, cut = truncate_words(kept, words)
        resolved.cut += cut or len(text_lines) > lines > 0
        record: dict[str, Any] = {"id": docid, "contents": text}
        if document.title:
            record["title"] = document.title
        if stamp is not None:
            record["provenance"] = stamp
        resolved.passages[docid] = record
    return resolved
