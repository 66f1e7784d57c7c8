"""NIST's published citation-support judgments of TREC RAG 2024 (under `data/rag/` of the TREC
site, listed on its `rag2024.html`: `final.citation_judgments_without_prediction.20241025.jsonl`
and `final.citation_judgments_Webassess.20241031.jsonl`, the assessors not shown GPT-4o's label,
and `final.citation_judgments_with_prediction.20241025.jsonl`, shown it, in the first file's
shape by castorini's RAGDoll, whose docs/reproduction_trec-rag_2024_support.md describes the
files and counts their labels). One line per judged answer:

    {"topic_id", "run_id", "sentences": [{"sentenceID", "text", "citations": [{"citationID",
     "reference", "support"}]}]}

`reference` is the cited MS MARCO V2.1 segment and `support` the assessor's label as a string:
"2" full support (FS), "1" partial support (PS), "0" no support (NS), "-1" not judged (in the
Webassess file, the citations of a sentence the assessor marked not worth verifying). The
`*_prediction` files judge each sentence's first citation (`citationID` 0); the Webassess file
spells the ids `sentenceId` and `citationId` (the latter not numbered from 0 there) and judges
every citation of a sentence, with two more fields per sentence, `verification_worthy` ("1" or
"0", "0" where its citations are "-1") and `citationsCombibed` (sic; mostly "-1", otherwise a
support code, undocumented), which are kept as read and not used.

Eleven sentences of the two files without prediction have `"text": NaN` (pandas' missing
value, which is not JSON; Python's json module writes and reads it): such a line is read with
that NaN, and only a sentence's text may be it, read as a sentence without text (None), whose
citations keep their labels but cannot be judged again (compare/human_support.py counts them
apart).

`read_nist_support` checks every line (a one-line error naming file, line and field), that the
sentences are numbered 0, 1, ... in order, and that no answer (run, topic) is given twice, in
one file or across the files read together. It returns the answers in file order, each
sentence's citations as (segment id, label) with the project's support labels
(labels.SUPPORT_LABELS) and None where NIST gave "-1".
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, Field, PlainValidator
from pydantic_core import PydanticCustomError

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_decoded
from nuggetizer.formats.records import Id, IdText, JsonType, Record, validated, wrong_type

# NIST's support codes as the project's labels; "-1" (not judged) is None
NIST_SUPPORT: dict[str, str | None] = {"2": "full_support", "1": "partial_support",
                                       "0": "no_support", "-1": None}


def _support(value: Any) -> str | None:
    """A NIST support code, a string as published (or the same integer), as a label."""
    code = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(code, str) or code not in NIST_SUPPORT:
        raise PydanticCustomError("rule", "must be \"2\" (full support), \"1\" (partial), "
                                  "\"0\" (no support) or \"-1\" (not judged), got {got}",
                                  {"got": repr(value)})
    return NIST_SUPPORT[code]


Support = Annotated[str | None, PlainValidator(_support), JsonType("string")]


def _sentence_text(value: Any) -> str | None:
    """A sentence's text, or None for the NaN some published lines give instead."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if not isinstance(value, str):
        raise wrong_type("string")
    return value


SentenceText = Annotated[str | None, PlainValidator(_sentence_text), JsonType("string")]


def _with_nan(raw: bytes) -> dict[str, Any] | None:
    """A line holding NaN (module docstring) as Python's json reads it; None for any other
    line, or one still not an object, which then goes the strict way (and its errors)."""
    if b"NaN" not in raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class NistCitation(Record):
    """A citation of a sentence: the cited segment and the assessor's label."""

    reference: IdText
    support: Support


class NistSentence(Record):
    """An answer sentence with its citations."""

    sentence_id: int = Field(validation_alias=AliasChoices("sentenceID", "sentenceId"),
                             strict=True)
    text: SentenceText
    citations: list[NistCitation]


class NistSupportLine(Record):
    """One line of a citation-support file."""

    topic_id: Id
    run_id: Id
    sentences: Annotated[list[NistSentence], Field(min_length=1)]


@dataclass(frozen=True)
class HumanSupport:
    """One answer as NIST's assessors judged its citations: its sentences' texts and, per
    sentence, each citation as (segment id, label or None where not judged)."""

    qid: str
    run_id: str
    texts: tuple[str | None, ...]  # None: the file gives NaN for the sentence's text
    citations: tuple[tuple[tuple[str, str | None], ...], ...]
    path: str
    line: int

    @property
    def labelled(self) -> int:
        """Citations the assessors labelled."""
        return sum(label is not None for cites in self.citations for _, label in cites)


def read_nist_support(paths: Sequence[Path]) -> list[HumanSupport]:
    """Every answer of NIST's citation-support files, checked (module docstring); InputError
    on a bad line, sentences out of order, or an answer given twice."""
    answers: list[HumanSupport] = []
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    for path in paths:
        before = len(answers)
        for line, obj in iter_decoded(path, _with_nan):
            row = validated(NistSupportLine, obj, path, line)
            qid, run_id = str(row.topic_id), str(row.run_id)
            where = seen.setdefault((run_id, qid), (path, line))
            if where != (path, line):
                raise InputError(path, line, f"run {run_id!r} topic {qid!r} is given twice "
                                 f"(also {where[0]}:{where[1]}): keep one line per answer")
            for k, sentence in enumerate(row.sentences):
                if sentence.sentence_id != k:
                    raise InputError(path, line, f"run {run_id!r} topic {qid!r}: "
                                     f"sentences[{k}] has id {sentence.sentence_id}, expected "
                                     f"{k} (the sentences are numbered 0, 1, ... in order)")
            answers.append(HumanSupport(
                qid, run_id, tuple(s.text for s in row.sentences),
                tuple(tuple((c.reference, c.support) for c in s.citations)
                      for s in row.sentences), str(path), line))
        if len(answers) == before:
            raise InputError(path, None, "no answers: expected NIST's citation-support JSONL, "
                             "one judged answer per line")
    return answers
