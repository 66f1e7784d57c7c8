"""The submission checker for TREC RAG 2024 and 2025 answer runs, with a trimming fix, and for
runs in the report shape of NeuCLIR / RAGTIME / DRAGUN / AutoJudge (formats/runs.py).

Unlike the strict run reader, which stops at the first problem, the checker reads every line and
reports every problem with its file, line and field, as an organizer needs when a submission
arrives broken. Errors make a run unusable; warnings (answers over 400 words, a stated
response_length that differs from the computed one) do not. Reports cite doc ids of any
collection, so neither the MS MARCO segment-id check nor the RAG reference and length limits
apply to them (a --max-refs limit does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import StrictInt, StrictStr

from nuggetizer.errors import EXIT_WARNINGS, InputError
from nuggetizer.formats import rag26
from nuggetizer.formats.jsonl import iter_lines, parse_object
from nuggetizer.formats.records import IdText, Record, problems
from nuggetizer.formats.runs import (
    AnswerSentence,
    Rag2024Answer,
    Rag2025Answer,
    Rag2025Metadata,
    Report,
    ReportMetadata,
    ReportResponse,
    is_report,
    missing_list,
)
from nuggetizer.formats.track_rules import SEGMENT_ID, Limit
from nuggetizer.formats.writing import dumps, write_jsonl_atomic
from nuggetizer.measures.nuggets import LENGTH_LIMIT, answer_length, word_count
from nuggetizer.validate.rag26 import Rag26Checks
from nuggetizer.validate.reports import ReportChecks
from nuggetizer.validate.run_report import Problem, RunReport

REFERENCE_LIMITS = {2024: 20, 2025: 100}


class Rag2024Head(Record):
    """What a TREC RAG 2024 line holds beside its ids, each sentence checked on its own:
    references, the stated length, the sentence list."""

    references: list[StrictStr]
    response_length: StrictInt
    answer: list[Any]


class Rag2025Head(Record):
    """What a TREC RAG 2025 line holds beside its ids (its length stated or not)."""

    references: list[StrictStr]
    response_length: StrictInt | None = None
    answer: list[Any]


class ReportHead(Record):
    """What a report holds beside its ids (references may be left out)."""

    references: list[StrictStr] | None = None
    responses: list[Any]


class Rag2024Ids(Record):
    """The run and topic of a TREC RAG 2024 line."""

    run_id: IdText
    topic_id: IdText


class Rag2025Ids(Record):
    """The run and narrative of a TREC RAG 2025 or 2026 line."""

    metadata: Rag2025Metadata


class ReportIds(Record):
    """The run and topic of a report."""

    metadata: ReportMetadata


@dataclass(frozen=True)
class Shape:
    """The records of a line of one shape, checked in turn so that every problem is found:
    its ids, its head (None: formats/rag26.py checks the rest), the sentence list's name and
    each sentence; `read_as`: the strict reader's record (formats/runs.py SHAPES)."""

    ids: type[Record]
    head: type[Record] | None
    items: str
    item: type[Record]
    read_as: type[Record]


SHAPES = {
    "rag24": Shape(Rag2024Ids, Rag2024Head, "answer", AnswerSentence, Rag2024Answer),
    "rag25": Shape(Rag2025Ids, Rag2025Head, "answer", AnswerSentence, Rag2025Answer),
    rag26.NAME: Shape(Rag2025Ids, None, "answer", AnswerSentence, Rag2025Answer),
    "report": Shape(ReportIds, ReportHead, "responses", ReportResponse, Report),
}


class _Checker(ReportChecks, Rag26Checks):
    """Checks the lines of one file, collecting problems instead of raising."""

    def __init__(self, path: Path, topics: set[str] | None, ref_limit: int | None,
                 length_tolerance: int = 0, track: str = "auto",
                 limits: dict[str, Limit] | None = None, length_limit: int | None = None,
                 narratives: dict[str, str] | None = None) -> None:
        self.path, self.topics, self.ref_limit = path, topics, ref_limit
        self.narratives = narratives
        self.length_tolerance = length_tolerance
        self.track, self.limits, self.length_limit = track, limits or {}, length_limit
        self.report = RunReport(path=str(path), length_tolerance=length_tolerance)
        self.seen: dict[str, int] = {}
        self.first_run_line = 0
        self.lengths: list[int] = []
        self.fixed_records: list[dict[str, Any]] = []

    def add(self, line: int | None, fld: str, message: str, severity: str = "error",
            kind: str = "") -> None:
        self.report.problems.append(Problem(str(self.path), line, fld, severity, message, kind))

    def check_file(self) -> RunReport:
        try:
            for number, text in iter_lines(self.path):
                if not text.strip():
                    continue
                try:
                    obj = parse_object(text, self.path, number)
                except InputError as exc:
                    self.add(number, "", exc.message)
                    continue
                self.check_line(obj, number)
        except InputError as exc:
            self.add(exc.line, "", exc.message)
        if not self.seen and not self.report.errors:
            self.add(None, "", "run file holds no answers")
        if self.topics is not None:
            missing = [t for t in self.topics if t not in self.seen]
            if missing:
                shown = ", ".join(sorted(missing)[:5]) + (" ..." if len(missing) > 5 else "")
                self.add(None, "topic_id", f"{len(missing)} topics have no answer: {shown}"
                         + self.rule_tag("one-object-per-narrative"))
        self.report.topics = len(self.seen)
        if self.lengths:
            self.report.mean_length = sum(self.lengths) / len(self.lengths)
        return self.report

    def check_line(self, obj: dict[str, Any], n: int) -> None:
        report = is_report(obj)
        year = 2025 if "metadata" in obj else 2024
        shape = "report" if report else rag26.NAME if rag26.is_rag26(obj) \
            else f"rag{year % 100}"
        if shape == "rag25" and self.report.shape == rag26.NAME:
            shape = rag26.NAME  # a 2026 line that shows no ClimbMix id of its own
        if self.report.shape is None:
            self.report.shape = shape
            self.report.year = None if report else year
        elif shape != self.report.shape:
            self.add(n, "metadata", f"a {shape}-shape line in a {self.report.shape}-shape run")
            shape = self.report.shape
        spec = SHAPES[shape]
        found = problems(spec.ids, obj)
        for fld, message in found if spec.head else ():  # rag26.check says them, by rule
            self.add(n, fld, message)
        topic = self.check_ids(spec.ids.model_validate(obj), n) if not found else None
        if spec.head is None:
            self.check_rag26(obj, n)
            return
        missing = missing_list(spec.read_as, obj)
        if missing:
            self.add(n, spec.items, missing)
            return
        refused = set()
        for fld, message in problems(spec.head, obj):
            self.add(n, fld, message)
            refused.add(re.split(r"[.\[]", fld)[0])
        if spec.items in refused:
            return
        items = []  # the sentences with their types, by position
        for k, item in enumerate(obj[spec.items]):
            wrong = problems(spec.item, item, (spec.items, k))
            for fld, message in wrong:
                self.add(n, fld, message)
            if not wrong:
                items.append((k, item))
        refs = [] if "references" in refused else obj.get("references") or []
        if report:
            self.check_report(obj, n, topic, refs, items)
        else:
            self.check_rag(obj, n, refs, items, "response_length" not in refused)

    def check_ids(self, ids: Record, n: int) -> str:
        """One run per file, each topic once and (given topics) known; the line's topic."""
        if isinstance(ids, Rag2024Ids):
            run_id, topic_id, prefix = ids.run_id, ids.topic_id, ""
        else:
            meta = ids.metadata if isinstance(ids, Rag2025Ids | ReportIds) else None
            assert meta is not None
            topic_id = meta.narrative_id if isinstance(meta, Rag2025Metadata) else meta.topic_id
            run_id, prefix = meta.run_id, "metadata."
        if self.report.run_id is None:
            self.report.run_id, self.first_run_line = run_id, n
        elif run_id != self.report.run_id:
            self.add(n, f"{prefix}run_id", f"run id {run_id!r} differs from "
                     f"{self.report.run_id!r} on line {self.first_run_line}: one run per file")
        if topic_id in self.seen:
            self.add(n, f"{prefix}topic_id", f"duplicate topic {topic_id!r} "
                     f"(also on line {self.seen[topic_id]})"
                     + self.rule_tag("one-object-per-narrative"))
        elif self.topics is not None and topic_id not in self.topics:
            self.add(n, f"{prefix}topic_id", f"unknown topic {topic_id!r}"
                     + self.rule_tag("narrative-id"))
        self.seen.setdefault(topic_id, n)
        return topic_id

    def check_rag(self, obj: dict[str, Any], n: int, refs: list[str],
                  items: list[tuple[int, dict[str, Any]]], stated_ok: bool) -> None:
        """A TREC RAG 2024 or 2025 line (the latter's has metadata), from the parts whose
        types are right (see `check_line`): references, citations, the answer's length and
        the length it states."""
        year = 2025 if "metadata" in obj else 2024
        self.references(refs, n, year)
        self.empty_answer(obj, n)
        texts = [item["text"] for _, item in items]
        for k, item in items:
            for j, cite in enumerate(item["citations"]):
                self.citation(cite, refs, year, n, f"answer[{k}].citations[{j}]")
            self.repeats(item["citations"], refs, n, f"answer[{k}].citations")
        self.lengths.append(answer_length(texts))
        computed = sum(word_count(t) for t in texts)
        stated = obj.get("response_length") if stated_ok else None
        if stated is not None:
            if abs(stated - computed) > self.length_tolerance:
                self.add(n, "response_length", f"states {stated} words, the answer has "
                         f"{computed}", "warning", "response_length differs (beyond "
                         f"{self.length_tolerance} words)")
            elif stated != computed:
                self.report.length_within_tolerance += 1
        record = obj
        self.report.word_limit = LENGTH_LIMIT
        if computed > LENGTH_LIMIT:
            self.report.over_length += 1
            self.add(n, "answer", f"{computed} words, over the {LENGTH_LIMIT}-word limit "
                     f"(--fix trims trailing sentences)", "warning",
                     f"answer over {LENGTH_LIMIT} words")
            record = trim(obj)
        self.fixed_records.append(record)

    def empty_answer(self, obj: dict[str, Any], n: int) -> None:
        """A warning for an answer that is an empty list: the topic is answered with nothing
        (every nugget of it unsupported, L 0)."""
        if obj.get("answer") == []:
            self.add(n, "answer", "the answer list is empty: the topic is answered with "
                     "nothing (every nugget not supported, L 0)", "warning", "empty answer")

    def references(self, refs: list[str], n: int, year: int) -> None:
        """The references, each a segment id listed once, within the year's limit."""
        limit = self.ref_limit or REFERENCE_LIMITS[year]
        if len(refs) > limit:
            self.add(n, "references", f"{len(refs)} references, over the limit of {limit}")
        for k, ref in enumerate(refs):
            if not SEGMENT_ID.match(ref):
                self.add(n, f"references[{k}]", f"{ref!r} is not an MS MARCO v2.1 segment id "
                         f"(msmarco_v2.1_doc_N_N#N_N; the file was read as a TREC RAG {year} "
                         f"run; {rag26.FORMAT} cites ClimbMix doc ids, e.g. shard_00459_61697)")
            elif ref in refs[:k]:
                self.add(n, f"references[{k}]", f"{ref} is listed twice", "warning")

    def repeats(self, cites: list[Any], refs: list[str], n: int, where: str) -> None:
        """Count the citations of a sentence that name a reference it already cites, the first
        one kept for the note (the support method judges such a passage once; the older
        tracks' rules do not forbid it, a TREC RAG 2026 run may not)."""
        first: dict[int, int] = {}  # reference position -> the citation that named it
        for j, cite in enumerate(cites):
            at = rag26.position(cite, refs)
            if at is not None and at in first:
                self.report.repeated_citations += 1
                self.report.first_repeat = self.report.first_repeat or (
                    f"line {n} {where}[{j}] cites references[{at}] as citations[{first[at]}] did")
            elif at is not None:
                first[at] = j

    def citation(self, cite: Any, refs: list[str], year: int, n: int, where: str) -> None:
        self.report.citations += 1
        if year == 2025 and isinstance(cite, str):
            if cite not in refs:
                self.add(n, where, f"cites {cite!r}, which is not in references")
        elif isinstance(cite, bool) or not isinstance(cite, int):
            self.add(n, where, f"must be an integer index into references, got {cite!r}")
        elif not 0 <= cite < len(refs):
            self.add(n, where, f"is {cite}, outside references (0..{len(refs) - 1})"
                     if refs else f"is {cite}, but references is empty")


def trim(obj: dict[str, Any], limit: int = LENGTH_LIMIT) -> dict[str, Any]:
    """A copy of an answer line with trailing sentences dropped until it is within `limit`."""
    items = list(obj["answer"])
    total = sum(word_count(i["text"]) for i in items)
    while items and total > limit:
        total -= word_count(items.pop()["text"])
    fixed = dict(obj, answer=items)
    if "response_length" in obj or "metadata" not in obj:
        fixed["response_length"] = total
    return fixed


# Words a stated response_length may differ from the computed one without a warning: the
# official TREC RAG 2024 baselines state lengths off by 1 to 9 words (another word count).
LENGTH_TOLERANCE = 10


def validate_run(
    path: str | Path, topics: set[str] | None = None, *, ref_limit: int | None = None,
    fix_dir: Path | None = None, length_tolerance: int = LENGTH_TOLERANCE, track: str = "auto",
    limits: dict[str, Limit] | None = None, length_limit: int | None = None,
    narratives: dict[str, str] | None = None,
) -> RunReport:
    """Check one run file; with `fix_dir`, write a trimmed copy there when it has no errors.
    A stated response_length within `length_tolerance` words of the computed one is counted
    (`length_within_tolerance`), not warned about. A report run is also checked against its
    track's rules (`track`: a name, "none", or "auto": detected from the run), with each
    topic's length limit from `limits` (report requests), else `length_limit`. A TREC RAG
    2026 run is checked against its rules (formats/rag26.py) and `narratives` (by id); its
    fixed copy makes the safe fixes, and is written when every error is one of them."""
    checker = _Checker(Path(path), topics, ref_limit, length_tolerance, track, limits,
                       length_limit, narratives)
    report = checker.check_file()
    if fix_dir is not None and report.errors == checker.fixable_errors \
            and (report.over_length or report.fixes):
        out = fix_dir / Path(path).name
        write_jsonl_atomic(out, checker.fixed_records)
        report.fixed = str(out)
    return report


def summary_table(reports: list[RunReport]) -> str:
    """Aligned text: one row per file with run id, topics, the words an answer may have (its
    year's limit: 400, or 1,024 for TREC RAG 2026) and the answers over it, citations, mean L
    (cut at that limit, as `score` cuts it)."""
    head = ("file", "run_id", "topics", "limit", "over_limit", "citations", "mean_L", "errors",
            "warnings")
    rows = [head] + [
        (Path(r.path).name, r.run_id or "-", str(r.topics),
         "-" if r.word_limit is None else str(r.word_limit), str(r.over_length),
         str(r.citations), f"{r.mean_length:.1f}", str(r.errors), str(r.warnings))
        for r in reports
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))) for row in rows)


def grouped(reports: list[RunReport], examples: int = 3) -> list[str]:
    """The problems grouped per file, severity and kind, errors first, each with its count and
    its first `examples` (the full list: `validate --all-problems`)."""
    lines = []
    for report in reports:
        groups: dict[tuple[str, str], list[Problem]] = {}
        for problem in report.problems:
            groups.setdefault((problem.severity, problem.kind), []).append(problem)
        for (severity, kind), found in sorted(groups.items(),
                                              key=lambda g: (g[0][0] != "error", -len(g[1]))):
            lines.append(f"{report.path}: {len(found)} {severity}{'s' if len(found) > 1 else ''}"
                         f": {kind}")
            lines += [f"  {p}" for p in found[:examples]]
            if len(found) > examples:
                lines.append(f"  ... and {len(found) - examples} more")
        if report.shape == rag26.NAME:
            lines.append(f"{report.path}: note: read as {rag26.FORMAT} (ClimbMix doc ids; "
                         "guide: TREC RAG 2026 runs)")
        if report.track:
            lines.append(f"{report.path}: note: checked against the {report.track} rules "
                         "(--track-rules; guide: Track rules for report runs)")
        if report.repeated_citations:
            lines.append(f"{report.path}: note: {report.repeated_citations} citations name a "
                         f"reference their sentence already cites ({report.first_repeat}): "
                         "support judges each such passage once")
        if report.length_within_tolerance:
            lines.append(f"{report.path}: note: {report.length_within_tolerance} stated "
                         f"response_length values differ from the computed one by at most "
                         f"{report.length_tolerance} words (--length-tolerance): not warned")
    return lines


def exit_code(reports: list[RunReport], strict: bool = False) -> int:
    """2 when any error; warnings only: 0, or 1 when `strict` (errors.EXIT_CODES)."""
    if any(r.errors for r in reports):
        return 2
    return EXIT_WARNINGS if strict and any(r.warnings for r in reports) else 0


def reports_json(reports: list[RunReport], strict: bool = False) -> str:
    """The machine-readable result of a validation."""
    return dumps({"exit_code": exit_code(reports, strict),
                  "runs": [r.as_dict() for r in reports]})
