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

import difflib
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats import rag26
from nuggetizer.formats.jsonl import field, id_field, iter_jsonl, type_name
from nuggetizer.types import Answer, Segment, Sentence


def _citations(
    item: dict[str, Any],
    references: list[str],
    by_id: bool,
    path: Path,
    line: int,
    where: str,
    keep_unresolved: bool,
) -> list[int | str]:
    """The citation indexes of one answer sentence, each checked against `references`; with
    `keep_unresolved` one that does not resolve is kept as written instead of an error."""
    raw = field(item, "citations", list, path, line, where=where)
    out: list[int | str] = []
    for k, cite in enumerate(raw):
        label = f"{where}citations[{k}]"
        if by_id and isinstance(cite, str):
            try:
                cite = references.index(cite)
            except ValueError:
                if keep_unresolved:
                    out.append(cite)
                    continue
                raise InputError(
                    path, line, f"{label} cites {cite!r}, which is not in references"
                ) from None
        elif isinstance(cite, bool) or not isinstance(cite, int):
            raise InputError(
                path,
                line,
                f"{label} must be an integer index into references, got {type_name(cite)}",
            )
        if not 0 <= cite < len(references) and not keep_unresolved:
            raise InputError(
                path,
                line,
                f"{label} is {cite}, outside references (0..{len(references) - 1})"
                if references
                else f"{label} is {cite}, but references is empty",
            )
        out.append(cite)
    return out


def _sentences(
    obj: dict[str, Any], references: list[str], by_id: bool, path: Path, line: int,
    topic_id: str, keep_unresolved: bool,
) -> list[Sentence]:
    if "answer" not in obj:
        shape = "the TREC RAG 2025 answer shape" if by_id else "the TREC RAG 2024 answer shape"
        raise InputError(path, line, missing_hint(obj, "answer", shape))
    items = field(obj, "answer", list, path, line)
    sentences: list[Sentence] = []
    for k, item in enumerate(items):
        where = f"answer[{k}]."
        if not isinstance(item, dict):
            raise InputError(
                path,
                line,
                f"answer[{k}] must be an object with 'text' and 'citations', got {type_name(item)}",
            )
        text = field(item, "text", str, path, line, where=where)
        try:
            cites = _citations(item, references, by_id, path, line, where, keep_unresolved)
        except InputError as exc:  # name the topic and sentence too
            raise InputError(path, line, f"topic {topic_id!r}, sentence {k + 1}: "
                             f"{exc.message}") from None
        sentences.append(Sentence(text=text, citations=cites))
    return sentences


def _references(obj: dict[str, Any], path: Path, line: int) -> list[str]:
    refs = field(obj, "references", list, path, line, default=[])
    for k, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise InputError(
                path, line, f"references[{k}] must be a string doc id, got {type_name(ref)}"
            )
    return refs


REPORT_TOPIC_KEYS = ("topic_id", "request_id")
REPORT_SHAPE = "the report shape of NeuCLIR / RAGTIME / DRAGUN / AutoJudge"


def report_documents(obj: dict[str, Any], path: Path, line: int) -> dict[str, Segment]:
    """The passages a report carries in `documents` ({doc id: {id, text, title, url}}), checked:
    each an object with a string `text`, its `id` (when given) the key it is filed under."""
    raw = field(obj, "documents", dict, path, line, default={}) \
        if obj.get("documents") is not None else {}
    documents: dict[str, Segment] = {}
    for docid, doc in raw.items():
        where = f"documents[{docid!r}]."
        if not isinstance(doc, dict):
            raise InputError(path, line, f"documents[{docid!r}] must be an object with 'id' and "
                             f"'text', got {type_name(doc)}")
        text = field(doc, "text", str, path, line, where=where)
        own = str(doc.get("id", docid))
        if own != docid:
            raise InputError(path, line, f"{where}id is {own!r}, but the document is filed "
                             f"under {docid!r}: the key must be the document's id")
        title = given if isinstance(given := doc.get("title"), str) else ""
        documents[docid] = Segment(id=docid, text=text, title=title)
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
    close = difflib.get_close_matches(key, [k for k in obj if isinstance(k, str)], n=1,
                                      cutoff=0.6)
    message = f"missing field {key!r} (expected array)"
    if close:
        message += f"; found {close[0]!r}: rename it {key!r}"
    if close or shape == REPORT_SHAPE:
        message += f" (the line was read as {shape}, whose sentences are in {key!r})"
    return message


def _report_cites(
    item: dict[str, Any], path: Path, line: int, where: str
) -> list[str]:
    """The doc ids one report response cites: a list of ids in its order, or an {id:
    confidence} map ordered by confidence, highest first, ties in map order (as
    auto-judge-base's `get_sentences_with_citations`), so the first is the most confident."""
    raw = field(item, "citations", (list, dict), path, line, default=[], where=where)
    if isinstance(raw, dict):
        for docid, confidence in raw.items():
            if isinstance(confidence, bool) or not isinstance(confidence, int | float):
                raise InputError(path, line, f"{where}citations[{docid!r}] must be a number "
                                 f"(the citation's confidence), got {type_name(confidence)}")
        return [str(docid) for docid, _ in sorted(raw.items(), key=lambda kv: -kv[1])]
    for k, docid in enumerate(raw):
        if not isinstance(docid, str) or not docid.strip():
            raise InputError(path, line, f"{where}citations[{k}] must be a doc id (a non-empty "
                             f"string), got {type_name(docid)}")
    return list(raw)


def parse_report(obj: dict[str, Any], path: Path, line: int) -> Answer:
    """One line of the report shape, as the same Answer model (citations index references)."""
    meta = field(obj, "metadata", dict, path, line)
    run_id = id_field(meta, ("run_id",), path, line, where="metadata.")
    topic_id = id_field(meta, REPORT_TOPIC_KEYS, path, line, where="metadata.")
    references = _references(obj, path, line)
    if "responses" not in obj:
        raise InputError(path, line, missing_hint(obj, "responses", REPORT_SHAPE))
    items = field(obj, "responses", list, path, line)
    cited: list[list[str]] = []
    texts: list[str] = []
    for k, item in enumerate(items):
        where = f"responses[{k}]."
        if not isinstance(item, dict):
            raise InputError(path, line, f"responses[{k}] must be an object with 'text' and "
                             f"'citations', got {type_name(item)}")
        texts.append(field(item, "text", str, path, line, where=where))
        cited.append(_report_cites(item, path, line, where))
    derived = not references
    if derived:  # no references listed: the cited ids are the references
        references = list(dict.fromkeys(d for ids in cited for d in ids))
    sentences = []
    for k, (text, ids) in enumerate(zip(texts, cited)):
        indexes: list[int | str] = []
        for docid in ids:
            if docid not in references:
                raise InputError(path, line, f"responses[{k}].citations cites {docid!r}, which "
                                 "is not in references")
            indexes.append(references.index(docid))
        sentences.append(Sentence(text=text, citations=indexes))
    topic = field(meta, "topic", str, path, line, default="", where="metadata.")
    return Answer(run_id=run_id, topic_id=topic_id, topic=topic, references=references,
                  sentences=sentences, documents=report_documents(obj, path, line),
                  path=str(path), line=line)


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
    if rag26.is_rag26(obj):
        check_rag26(obj, path, line, keep_unresolved)
    references = _references(obj, path, line)
    if "metadata" in obj:
        meta = field(obj, "metadata", dict, path, line)
        run_id = id_field(meta, ("run_id",), path, line, where="metadata.")
        topic_id = id_field(meta, ("narrative_id",), path, line, where="metadata.")
        topic = field(meta, "narrative", str, path, line, default="", where="metadata.")
        by_id = True
    else:
        run_id = id_field(obj, ("run_id",), path, line)
        topic_id = id_field(obj, ("topic_id",), path, line)
        topic = field(obj, "topic", str, path, line, default="")
        by_id = False
    length = field(obj, "response_length", int, path, line, default=None)
    return Answer(
        run_id=run_id,
        topic_id=topic_id,
        topic=topic,
        references=references,
        response_length=length,
        sentences=_sentences(obj, references, by_id, path, line, topic_id, keep_unresolved),
        path=str(path),
        line=line,
    )


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
