"""RAG answer runs: the TREC RAG 2024 and 2025 answer JSONL shapes and the report shape of
NeuCLIR / RAGTIME / DRAGUN / AutoJudge, one run per file, detected per line.

2024: `{"run_id", "topic_id", "topic", "references", "response_length", "answer": [...]}`.
2025: `{"metadata": {"run_id", "narrative_id", "narrative"?, ...}, "references", "answer"}`.
Each `answer` item is `{"text": str, "citations": [int, ...]}`, a citation being an index into
`references`; the 2025 shape may also cite by segment id, which is turned into that index.
A 2025-shape line with ClimbMix doc ids is a TREC RAG 2026 run, also held to that track's
rules there (formats/rag26.py).
Report: `{"metadata": {"run_id", "topic_id" | "request_id", "team_id"?, ...}, "responses":
[{"text", "citations"}], "references": [doc ids]}`, where `citations` is a list of doc ids or a
`{doc id: confidence}` map; each becomes an index into `references`. A cited id not in a
non-empty `references` is an error; a report whose `references` is empty or missing (as the
AutoJudge spot-check runs) takes its cited ids, in citation order, as its references. A 2026
report may carry its cited passages in `documents` {doc id: {"id", "text", "title"?, "url"?}}:
they are the texts a step reads when no corpus is given (or the corpus lacks the id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import AliasChoices, Field, StrictInt, StrictStr

from nuggetizer.errors import InputError
from nuggetizer.formats import rag26
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.records import (
    IdText,
    ListOrObject,
    Record,
    close_key,
    type_name,
    validated,
)
from nuggetizer.types import Answer, Segment, Sentence

REPORT_TOPIC_KEYS = ("topic_id", "request_id")
REPORT_SHAPE = "the report shape of NeuCLIR / RAGTIME / DRAGUN / AutoJudge"
L = TypeVar("L", bound=Record)


class AnswerSentence(Record):
    """A sentence of a TREC RAG answer: its text and the references it cites (checked against
    the references by `_citations`)."""

    text: StrictStr
    citations: list[Any]


class RagAnswer(Record):
    """What a TREC RAG 2024 and 2025 answer line share: references, length and sentences."""

    references: list[StrictStr] | None = None
    response_length: StrictInt | None = None
    answer: list[AnswerSentence]


class Rag2024Answer(RagAnswer):
    """A TREC RAG 2024 answer line: the run and topic at the top level."""

    run_id: IdText
    topic_id: IdText
    topic: StrictStr | None = None


class Rag2025Metadata(Record):
    """The `metadata` of a TREC RAG 2025 (and 2026) answer line."""

    run_id: IdText
    narrative_id: IdText
    narrative: StrictStr | None = None


class Rag2025Answer(RagAnswer):
    """A TREC RAG 2025 (and 2026) answer line: the run and topic in `metadata`."""

    metadata: Rag2025Metadata


class ReportMetadata(Record):
    """The `metadata` of a report: its run and its topic (`topic_id` or `request_id`)."""

    run_id: IdText
    topic_id: IdText = Field(validation_alias=AliasChoices(*REPORT_TOPIC_KEYS))
    topic: StrictStr | None = None


class ReportResponse(Record):
    """A sentence of a report: its text and citations (doc ids, or {doc id: confidence})."""

    text: StrictStr
    citations: ListOrObject | None = None


class ReportDocument(Record):
    """A passage a 2026 report carries: its text (its `id` and `title` read as written)."""

    text: StrictStr


class Report(Record):
    """A line of the report shape."""

    metadata: ReportMetadata
    references: list[StrictStr] | None = None
    responses: list[ReportResponse]
    documents: dict[str, ReportDocument] | None = None


def _citations(raw: list[Any], references: list[str], by_id: bool, where: str,
               keep_unresolved: bool) -> list[int | str]:
    """The citation indexes of one answer sentence, each checked against `references`; with
    `keep_unresolved` one that does not resolve is kept as written instead of an error. The
    problem of a citation that does not resolve, in words, is raised as ValueError."""
    out: list[int | str] = []
    for k, cite in enumerate(raw):
        label = f"{where}citations[{k}]"
        if by_id and isinstance(cite, str):
            if cite in references:
                cite = references.index(cite)
            elif keep_unresolved:
                out.append(cite)
                continue
            else:
                raise ValueError(f"{label} cites {cite!r}, which is not in references")
        elif isinstance(cite, bool) or not isinstance(cite, int):
            raise ValueError(f"{label} must be an integer index into references, got "
                             f"{type_name(cite)}")
        if not 0 <= cite < len(references) and not keep_unresolved:
            raise ValueError(f"{label} is {cite}, outside references (0..{len(references) - 1})"
                             if references else f"{label} is {cite}, but references is empty")
        out.append(cite)
    return out


def _sentences(line: RagAnswer, by_id: bool, keep_unresolved: bool) -> list[Sentence]:
    """The answer's sentences, their citations resolved; a citation's problem, naming the
    sentence, is raised as ValueError."""
    references = line.references or []
    sentences: list[Sentence] = []
    for k, item in enumerate(line.answer):
        try:
            cites = _citations(item.citations, references, by_id, f"answer[{k}].",
                               keep_unresolved)
        except ValueError as exc:
            raise ValueError(f"sentence {k + 1}: {exc}") from None
        sentences.append(Sentence(text=item.text, citations=cites))
    return sentences


def report_documents(report: Report, path: Path, line: int) -> dict[str, Segment]:
    """The passages a report carries in `documents` ({doc id: {id, text, title, url}}), each
    filed under its own `id` (when given)."""
    documents: dict[str, Segment] = {}
    for docid, doc in (report.documents or {}).items():
        extra = doc.model_extra or {}
        own = str(extra.get("id", docid))
        if own != docid:
            raise InputError(path, line, f"documents[{docid!r}].id is {own!r}, but the document "
                             f"is filed under {docid!r}: the key must be the document's id")
        title = given if isinstance(given := extra.get("title"), str) else ""
        documents[docid] = Segment(id=docid, text=doc.text, title=title)
    return documents


def is_report(obj: dict[str, Any]) -> bool:
    """Whether an answer line has the report shape rather than RAG's: a `responses` list, or
    (its `responses` missing or misspelt) no `answer` and a `metadata` block naming its topic
    by `topic_id`/`request_id` rather than RAG 2025's `narrative_id`."""
    if "answer" in obj:
        return False
    if "responses" in obj:
        return True
    meta = obj.get("metadata")
    return (isinstance(meta, dict) and "narrative_id" not in meta
            and any(k in meta for k in REPORT_TOPIC_KEYS))


def missing_hint(obj: dict[str, Any], key: str, shape: str | None) -> str:
    """What to say of a line that lacks the list `key`: that it is missing and, when a key of
    the line is close to it, that key (a misspelling), with the shape the line was read as
    (given always for a report, whose shape is read from its metadata)."""
    close = close_key(obj, key)
    message = f"missing field {key!r} (expected array)"
    if close:
        message += f"; found {close!r}: rename it {key!r}"
    if close or shape == REPORT_SHAPE:
        message += f" (the line was read as {shape}, whose sentences are in {key!r})"
    return message


SHAPES: dict[type[Record], tuple[str, str]] = {  # model: (its sentence list, the shape's name)
    Rag2024Answer: ("answer", "the TREC RAG 2024 answer shape"),
    Rag2025Answer: ("answer", "the TREC RAG 2025 answer shape"),
    Report: ("responses", REPORT_SHAPE),
}


def missing_list(model: type[Record], obj: dict[str, Any]) -> str | None:
    """What is wrong with a line of the shape `model` (one of the SHAPES) that lacks its
    sentence list, in words naming the shape; None when the list is there."""
    key, shape = SHAPES[model]
    return None if key in obj else missing_hint(obj, key, shape)


def _shaped(model: type[L], obj: dict[str, Any], path: Path, line: int) -> L:
    """`obj` validated as `model`, one of the SHAPES (see `missing_list`)."""
    missing = missing_list(model, obj)
    if missing:
        raise InputError(path, line, missing)
    return validated(model, obj, path, line)


def _report_cites(raw: list[Any] | dict[str, Any], where: str) -> list[str]:
    """The doc ids one report response cites: a list of ids in its order, or an {id:
    confidence} map ordered by confidence, highest first, ties in map order (as
    auto-judge-base's `get_sentences_with_citations`), so the first is the most confident.
    A citation that is neither is raised as ValueError, in words."""
    if isinstance(raw, dict):
        for docid, confidence in raw.items():
            if isinstance(confidence, bool) or not isinstance(confidence, int | float):
                raise ValueError(f"{where}citations[{docid!r}] must be a number (the "
                                 f"citation's confidence), got {type_name(confidence)}")
        return [str(docid) for docid, _ in sorted(raw.items(), key=lambda kv: -kv[1])]
    for k, docid in enumerate(raw):
        if not isinstance(docid, str) or not docid.strip():
            raise ValueError(f"{where}citations[{k}] must be a doc id (a non-empty string), "
                             f"got {type_name(docid)}")
    return list(raw)


def parse_report(obj: dict[str, Any], path: Path, line: int) -> Answer:
    """One line of the report shape, as the same Answer model (citations index references)."""
    report = _shaped(Report, obj, path, line)
    try:
        cited = [_report_cites(item.citations or [], f"responses[{k}].")
                 for k, item in enumerate(report.responses)]
    except ValueError as exc:
        raise InputError(path, line, str(exc)) from None
    references = report.references or []
    if not references:  # no references listed: the cited ids are the references
        references = list(dict.fromkeys(d for ids in cited for d in ids))
    sentences = []
    for k, (item, ids) in enumerate(zip(report.responses, cited, strict=True)):
        indexes: list[int | str] = []
        for docid in ids:
            if docid not in references:
                raise InputError(path, line, f"responses[{k}].citations cites {docid!r}, which "
                                 "is not in references")
            indexes.append(references.index(docid))
        sentences.append(Sentence(text=item.text, citations=indexes))
    meta = report.metadata
    return Answer(run_id=meta.run_id, topic_id=meta.topic_id, topic=meta.topic or "",
                  references=references, sentences=sentences,
                  documents=report_documents(report, path, line), path=str(path), line=line)


def check_rag26(obj: dict[str, Any], path: Path, line: int, keep_unresolved: bool) -> None:
    """Stop at the first TREC RAG 2026 rule a line breaks (formats/rag26.py), naming its field
    and rule; with `keep_unresolved` a citation that does not resolve is left to the method."""
    for finding in rag26.check(obj):
        if finding.severity != "error" or (keep_unresolved and finding.rule == "rag26 citation"):
            continue
        raise InputError(path, line, f"{finding.field}: {finding.message} (read as "
                         f"{rag26.FORMAT})")


def parse_answer(obj: dict[str, Any], path: Path, line: int, keep_unresolved: bool = False
                 ) -> Answer:
    """One answer line of any shape (a report when it has `responses`, 2025 when a `metadata`
    key is present, else 2024). A RAG citation outside `references` is an error naming the
    topic and sentence; with `keep_unresolved` it is kept as written, for a method that records
    it unjudged (see Sentence)."""
    if is_report(obj):
        return parse_report(obj, path, line)
    is26 = rag26.is_rag26(obj)
    if is26:
        check_rag26(obj, path, line, keep_unresolved)
    line_read: Rag2024Answer | Rag2025Answer
    if "metadata" in obj:
        line_read = _shaped(Rag2025Answer, obj, path, line)
        meta = line_read.metadata
        run_id, topic_id, topic = meta.run_id, meta.narrative_id, meta.narrative
    else:
        line_read = _shaped(Rag2024Answer, obj, path, line)
        run_id, topic_id, topic = line_read.run_id, line_read.topic_id, line_read.topic
    try:
        sentences = _sentences(line_read, "metadata" in obj, keep_unresolved)
    except ValueError as exc:
        raise InputError(path, line, f"topic {topic_id!r}, {exc}") from None
    return Answer(run_id=run_id, topic_id=topic_id, topic=topic or "",
                  references=line_read.references or [],
                  response_length=line_read.response_length, sentences=sentences,
                  word_limit=rag26.WORD_LIMIT if is26 else None,
                  path=str(path), line=line)


def read_run(path: str | Path, keep_unresolved: bool = False
             ) -> tuple[str, dict[str, Answer]]:
    """Read one run file: (run id, answers by topic id in file order); `keep_unresolved` as
    in parse_answer."""
    path = Path(path)
    answers: dict[str, Answer] = {}
    lines: dict[str, int] = {}
    run_id: str | None = None
    first_line = 0
    first_shape = ""
    for number, obj in iter_jsonl(path):
        shape = "report" if is_report(obj) else "answer"
        if not first_shape:
            first_shape = shape
        elif shape != first_shape:
            raise InputError(path, number, f"a {shape}-shape line in a file whose line "
                             f"{first_line} has the {first_shape} shape: one shape per file")
        answer = parse_answer(obj, path, number, keep_unresolved)
        if run_id is None:
            run_id, first_line = answer.run_id, number
        elif answer.run_id != run_id:
            raise InputError(
                path,
                number,
                f"line {number} has run id {answer.run_id!r} but line {first_line} has "
                f"{run_id!r}: one run per file",
            )
        if answer.topic_id in answers:
            raise InputError(
                path,
                number,
                f"duplicate topic {answer.topic_id!r} (also on line {lines[answer.topic_id]})",
            )
        answers[answer.topic_id] = answer
        lines[answer.topic_id] = number
    if run_id is None:
        raise InputError(path, None, "run file is empty")
    return run_id, answers
