"""Assessments: one JSONL line per (run, topic), each nugget with its assignment label.

`{"run_id", "qid", "query", "answer_text", "length"?, "nuggets": [{"text", "importance",
"assignment", "raw"?, "mapped_sub_narrative"?, "source"?}], "provenance"?}` (the last two kept
from a TREC RAG 2026 key). castorini's assignment files read too: they spell
`length` as `response_length` (the run's self-reported, uncut figure: kept as read, marked
`stated_length`, never used for L, which scoring counts from the answer text), and older ones
have no `run_id` (the file name stands in: castorini names each assignment file after its run).
castorini writes the assignment `failed` when its LLM call failed: that is an unjudged item,
counted, never a score.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import StrictInt, StrictStr, ValidationError

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_lines, parse_object
from nuggetizer.formats.nuggets import (
    NuggetItem,
    OffMenu,
    check_label,
    extras_record,
    importance_label,
    warn_labels,
)
from nuggetizer.formats.records import IdText, Record, validated
from nuggetizer.labels import (
    ASSIGNMENT_VALUES,
    CASTORINI_FAILED,
    assignment_of,
    importance_of,
)
from nuggetizer.types import AssessedNugget, Assessment, NuggetList


class AssessedItem(NuggetItem):
    """A judged nugget as a file gives it: the nugget, its assignment label and, where the
    LLM's answer could not be read, that answer."""

    assignment: StrictStr
    raw: StrictStr | None = None


class AssessmentLine(Record):
    """A line of an assessments file (castorini's spell `length` as `response_length`, and
    older ones have no `run_id`)."""

    run_id: IdText | None = None
    qid: IdText
    query: StrictStr
    answer_text: StrictStr
    length: StrictInt | None = None
    response_length: StrictInt | None = None
    nuggets: list[AssessedItem]


def _well_formed(obj: dict[str, Any]) -> Assessment | None:
    """The assessment of a line exactly as this toolkit writes it (string ids without
    surrounding space, an integer or null length, labels spelled exactly, non-empty texts),
    validated in one strict pydantic call; None sends the line down the careful path below,
    which accepts the other spellings and names every problem. Three times faster at track
    scale."""
    run_id, qid = obj.get("run_id"), obj.get("qid")
    if (type(run_id) is not str or type(qid) is not str or not run_id or not qid
            or run_id != run_id.strip() or qid != qid.strip()
            or ("length" not in obj and "response_length" in obj)):
        return None
    try:
        assessment = Assessment.model_validate(obj, strict=True)
    except ValidationError:
        return None
    for n in assessment.nuggets:
        if not n.text or n.text.isspace():
            return None
    return assessment


def parse_assessment(obj: dict[str, Any], path: Path, line: int, *, lenient: bool,
                     off_menu: OffMenu | None = None) -> Assessment:
    """One assessment line; under `lenient`, unknown labels become "unjudged" and go to
    `off_menu` (said once for the file), else are logged for the line."""
    given = validated(AssessmentLine, obj, path, line)
    stated = "length" not in obj and "response_length" in obj
    nuggets: list[AssessedNugget] = []
    bad_importance: list[str] = []
    bad_assignment: list[str] = []
    for k, item in enumerate(given.nuggets):
        importance, raw_importance = importance_label(item, k, path, line, lenient=lenient)
        label = item.assignment
        assignment = "unjudged" if label.strip().lower() in CASTORINI_FAILED else check_label(
            label, ASSIGNMENT_VALUES, f"nuggets[{k}].assignment label", path, line,
            lenient=lenient)
        if importance is None:
            bad_importance.append(raw_importance)
        if assignment is None:
            bad_assignment.append(label)
        nuggets.append(AssessedNugget(text=item.text, importance=importance_of(importance),
                                      assignment=assignment_of(assignment), raw=item.raw,
                                      **item.extras()))
    for what, labels in (("importance", bad_importance), ("assignment", bad_assignment)):
        if off_menu is not None:
            off_menu.add(line, what, labels)
        else:
            warn_labels(path, line, what, labels)
    return Assessment(run_id=given.run_id or path.stem, qid=given.qid, query=given.query,
                      answer_text=given.answer_text,
                      length=given.response_length if stated else given.length,
                      nuggets=nuggets, stated_length=stated)


def iter_assessments(path: str | Path, *, lenient: bool = False
                     ) -> Iterator[tuple[int, Assessment]]:
    """(line, assessment) of every line of an assessments file, in file order.

    An unknown importance or assignment label is an InputError naming it; with `lenient` it
    becomes "unjudged", the file's such labels logged in one warning once it is read.
    """
    path = Path(path)
    off_menu = OffMenu(path)
    for number, text in iter_lines(path):
        if not text.strip():
            continue
        obj = parse_object(text, path, number)
        fast = _well_formed(obj)
        yield number, fast or parse_assessment(obj, path, number, lenient=lenient,
                                               off_menu=off_menu)
    off_menu.say()


def read_assessments(path: str | Path, *, lenient: bool = False) -> list[Assessment]:
    """Read an assessments file in file order (see `iter_assessments`); a (run, topic) pair
    twice is an error."""
    path = Path(path)
    result: list[Assessment] = []
    lines: dict[tuple[str, str], int] = {}
    # Parsing makes millions of short-lived containers without cycles (refcounting frees them);
    # the cyclic collector would scan them again and again: a quarter of the time at track scale.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for number, assessment in iter_assessments(path, lenient=lenient):
            key = (assessment.run_id, assessment.qid)
            if key in lines:
                raise InputError(
                    path,
                    number,
                    f"run {key[0]!r} topic {key[1]!r} assessed twice (also on line {lines[key]})",
                )
            lines[key] = number
            result.append(assessment)
    finally:
        if collecting:
            gc.enable()
    if not result:
        raise InputError(path, None, "no assessments in file")
    return result


def assessment_record(a: Assessment, provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSONL record of one assessment; `raw` only where set, `provenance` when given."""
    nuggets = []
    for n in a.nuggets:
        item: dict[str, Any] = {
            "text": n.text,
            "importance": n.importance,
            "assignment": n.assignment,
        }
        if n.raw is not None:
            item["raw"] = n.raw
        item.update(extras_record(n))
        nuggets.append(item)
    record: dict[str, Any] = {
        "run_id": a.run_id,
        "qid": a.qid,
        "query": a.query,
        "answer_text": a.answer_text,
        "length": a.length,
        "nuggets": nuggets,
    }
    if provenance is not None:
        record["provenance"] = provenance
    return record


def keep_key_extras(assessment: Assessment, key: NuggetList) -> None:
    """Give each nugget of `assessment`, in place, the EXTRAS of the key's nugget of the same
    text (an assessment read back from a sheet, which does not carry them)."""
    extras = {n.text: extras_record(n) for n in key.nuggets}
    for n in assessment.nuggets:
        for name, value in extras.get(n.text, {}).items():
            setattr(n, name, value)


MISSING = "(not in this assessment: a nugget of the key it is scored against)"


def align_with_key(assessment: Assessment, key: NuggetList, path: Path, line: int,
                   lenient: bool) -> list[str]:
    """Replace an assessment's nuggets by its key's, in place, when their texts differ. A
    nugget of the key missing from the assessment, one the key does not have, or one re-worded
    is an InputError naming file, line, run, topic and nugget; under `lenient` a missing (or
    re-worded) one is unjudged (its `raw` is MISSING) and one not in the key is left out, and
    both are noted in the returned list."""
    run = f"run {assessment.run_id!r} topic {assessment.qid!r}"
    have: dict[str, list[AssessedNugget]] = {}
    for n in assessment.nuggets:
        have.setdefault(n.text, []).append(n)
    wanted = {n.text for n in key.nuggets}
    extra = [n.text for n in assessment.nuggets if n.text not in wanted]
    missing = [n.text for n in key.nuggets if n.text not in have]
    if not lenient:
        if missing and extra and len(key.nuggets) == len(assessment.nuggets):
            problem = f"nugget {missing[0]!r} of the key reads {extra[0]!r} here (re-worded?)"
        elif missing:
            problem = f"nugget {missing[0]!r} of the key is missing from this assessment"
        else:
            problem = f"nugget {extra[0]!r} is not in the key"
        raise InputError(path, line, f"{run}: {problem} ({len(missing)} missing, "
                         f"{len(extra)} not in the key): score against the key the assessments "
                         "were made with, or give --lenient to score the missing ones as "
                         "unjudged")
    aligned = []
    for keyed in key.nuggets:
        found = have.get(keyed.text)
        if found:
            aligned.append(found.pop(0))
        else:
            aligned.append(AssessedNugget(text=keyed.text, importance=keyed.importance,
                                          assignment="unjudged", raw=MISSING,
                                          **extras_record(keyed)))
    assessment.nuggets = aligned
    notes = []
    if missing:
        notes.append(f"{path}:{line}: {run}: {len(missing)} nuggets of the key are missing here "
                     f"(unjudged), e.g. {missing[0]!r}")
    if extra:
        notes.append(f"{path}:{line}: {run}: {len(extra)} nuggets are not in the key (left out),"
                     f" e.g. {extra[0]!r}")
    return notes
