"""Humans in the loop: nugget lists for post-editing and assignment sheets for manual assessors.

Both are TSV files that open in a spreadsheet or an editor (csv quoting for tabs, quotes and
line breaks inside a cell). Lines starting with `#` are comments. Imports are strict: every
problem is an InputError naming the file, the line and the column.

- Nugget sheet: `qid  query  n  nugget  importance`, one row per nugget; rows may be edited,
  deleted or added (leave `n` empty); importance must be vital or okay. A TREC RAG 2026 key
  adds the columns `mapped_sub_narrative` and `source` (kept as written; empty leaves them out).
- Assignment sheets, one file per topic: an `answer` row (`kind qid run_id n text length`) followed
  by its `nugget` rows (`n text importance assignment`); assessors fill `assignment` with support,
  partial_support or not_support.

The sheets of other methods are next to them (methods/support/sheets.py,
methods/rubrics/sheets.py), made with the helpers here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_lines
from nuggetizer.formats.nuggets import EXTRAS
from nuggetizer.formats.writing import run_file_name
from nuggetizer.labels import (
    ASSIGNMENT_LABELS,
    IMPORTANCE_LABELS,
    assignment_of,
    importance_of,
)
from nuggetizer.types import (
    AssessedNugget,
    Assessment,
    Nugget,
    NuggetList,
)

NUGGET_COLUMNS = ("qid", "query", "n", "nugget", "importance")
SHEET_COLUMNS = ("kind", "qid", "run_id", "n", "text", "importance", "assignment", "length")


def _tsv(header: tuple[str, ...], rows: Iterable[Iterable[object]], comment: str) -> str:
    buffer = io.StringIO()
    buffer.write(f"# {comment}\n")
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _rows(path: Path, header: tuple[str, ...], optional: tuple[str, ...] = ()
          ) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) for each data row of a sheet; the header must name `header` (any order);
    `optional` columns are read where the header names them (else absent from the row)."""
    lines = [(n, text) for n, text in iter_lines(path) if not text.lstrip().startswith("#")]
    numbers = [n for n, _ in lines]
    reader = csv.reader((text + "\n" for _, text in lines), delimiter="\t")
    columns: list[str] | None = None
    try:
        for row in reader:
            line = numbers[min(reader.line_num, len(numbers)) - 1]
            if not any(cell.strip() for cell in row):
                continue
            if columns is None:
                columns = [c.strip().lower() for c in row]
                missing = [c for c in header if c not in columns]
                if missing:
                    raise InputError(path, line, f"header lacks column(s) {', '.join(missing)}; "
                                     f"expected: {' '.join(header)}")
                continue
            if len(row) > len(columns):
                raise InputError(path, line, f"{len(row)} cells but the header has "
                                 f"{len(columns)} columns (a tab inside a cell needs quotes)")
            cells = dict(zip(columns, [c.strip() for c in row]))
            values = {c: cells.get(c, "") for c in header}
            values.update({c: cells.get(c, "") for c in optional if c in columns})
            yield line, values
    except csv.Error as exc:
        raise InputError(path, None, f"not a readable TSV sheet: {exc}") from None
    if columns is None:
        raise InputError(path, None, f"empty sheet: expected a header {' '.join(header)}")


def _answer_rows(path: Path, header: tuple[str, ...], kinds: tuple[str, ...]
                 ) -> Iterator[tuple[int, dict[str, str], str]]:
    """(line, row, kind) of a sheet of answers, each `answer` row followed by its own rows
    (`kinds` names them all): qid and run_id filled, each (run, topic) answered once, and every
    other row after its own answer's row; InputError naming the line otherwise."""
    seen: dict[tuple[str, str], int] = {}
    current: tuple[str, str] | None = None
    for line, row in _rows(path, header):
        kind, qid, run_id = row["kind"].lower(), row["qid"], row["run_id"]
        if not qid or not run_id:
            raise InputError(path, line, "columns qid and run_id must both be filled")
        if kind not in kinds:
            raise InputError(path, line, f"column kind is {row['kind']!r}: write "
                             f"{', '.join(kinds[:-1])} or {kinds[-1]}")
        if kind == "answer":
            if (run_id, qid) in seen:
                raise InputError(path, line, f"run {run_id} topic {qid} appears twice (also "
                                 f"on line {seen[(run_id, qid)]})")
            seen[(run_id, qid)] = line
            current = (run_id, qid)
        elif current != (run_id, qid):
            raise InputError(path, line, f"{kind} row for run {run_id} topic {qid} does not "
                             "follow that answer's answer row")
        yield line, row, kind


def _label(value: str, allowed: tuple[str, ...], column: str, path: Path, line: int,
           *, allow_blank: bool) -> str:
    label = value.strip().lower()
    if label in allowed:
        return label
    if not label and allow_blank:
        return "unjudged"
    hint = " (or pass --allow-blank to record it unjudged)" if not label else ""
    shown = repr(value) if label else "empty"
    raise InputError(path, line, f"column {column} is {shown}: write one of "
                     f"{', '.join(allowed)}{hint}")


def nugget_sheet(keys: dict[str, NuggetList], comment: str) -> str:
    """The nugget lists as an editable TSV; unjudged importance is left blank to fill in. The
    EXTRAS columns are added when any nugget carries one of them."""
    extras = tuple(e for e in EXTRAS if any(getattr(n, e) is not None
                                            for nl in keys.values() for n in nl.nuggets))
    rows = (
        (nl.qid, nl.query, k, n.text, "" if n.importance == "unjudged" else n.importance,
         *(getattr(n, e) or "" for e in extras))
        for nl in keys.values()
        for k, n in enumerate(nl.nuggets, 1)
    )
    return _tsv((*NUGGET_COLUMNS, *extras), rows, comment)


def read_nugget_sheet(path: str | Path, *, allow_blank: bool = False) -> dict[str, NuggetList]:
    """Read an edited nugget sheet into nugget lists (topic order as first seen)."""
    path = Path(path)
    result: dict[str, NuggetList] = {}
    queries: dict[str, tuple[str, int]] = {}
    for line, row in _rows(path, NUGGET_COLUMNS, EXTRAS):
        qid, query, text = row["qid"], row["query"], row["nugget"]
        if not qid:
            raise InputError(path, line, "column qid is empty")
        if not text:
            raise InputError(path, line, "column nugget is empty (delete the row to drop a nugget)")
        if qid in queries and query and query != queries[qid][0]:
            raise InputError(path, line, f"topic {qid} has query {query!r} here but "
                             f"{queries[qid][0]!r} on line {queries[qid][1]}")
        if qid not in queries:
            if not query:
                raise InputError(path, line, f"column query is empty for topic {qid}")
            queries[qid] = (query, line)
            result[qid] = NuggetList(qid=qid, query=query, nuggets=[])
        importance = _label(row["importance"], IMPORTANCE_LABELS, "importance", path, line,
                            allow_blank=allow_blank)
        extras = {e: row[e] for e in EXTRAS if row.get(e)}
        result[qid].nuggets.append(Nugget(text=text, importance=importance_of(importance),
                                          **extras))
    if not result:
        raise InputError(path, None, "the sheet holds no nuggets")
    return result


def assignment_sheets(assessments: Iterable[Assessment], comment: str) -> dict[str, str]:
    """One TSV per topic: {qid: text}; unjudged assignments are blank for the assessor."""
    by_topic: dict[str, list[Assessment]] = {}
    for a in assessments:
        by_topic.setdefault(a.qid, []).append(a)
    sheets: dict[str, str] = {}
    for qid, group in by_topic.items():
        rows: list[tuple[object, ...]] = []
        for a in group:
            rows.append(("answer", a.qid, a.run_id, "", a.answer_text, "", "",
                         "" if a.length is None else a.length))
            rows += [("nugget", a.qid, a.run_id, k, n.text, n.importance,
                      "" if n.assignment == "unjudged" else n.assignment, "")
                     for k, n in enumerate(a.nuggets, 1)]
        query = group[0].query.replace("\n", " ")
        sheets[qid] = _tsv(SHEET_COLUMNS, rows, f"{comment}; topic {qid}: {query}")
    return sheets


def sheet_file_name(qid: str) -> str:
    """The sheet file of a topic inside the sheets folder."""
    return run_file_name(qid).removesuffix(".jsonl") + ".tsv"


def read_assignment_sheet(path: str | Path, queries: dict[str, str], *,
                          allow_blank: bool = False) -> list[Assessment]:
    """Read one filled-in sheet; `queries` gives each topic's query text (from the nuggets)."""
    path = Path(path)
    result: list[Assessment] = []
    current: Assessment | None = None
    for line, row, kind in _answer_rows(path, SHEET_COLUMNS, ("answer", "nugget")):
        qid, run_id = row["qid"], row["run_id"]
        if kind == "answer":
            if qid not in queries:
                raise InputError(path, line, f"topic {qid} is not in the nuggets file")
            length = row["length"]
            if length and not length.isdigit():
                raise InputError(path, line, f"column length must be a whole number, got "
                                 f"{length!r}")
            current = Assessment(run_id=run_id, qid=qid, query=queries[qid],
                                 answer_text=row["text"], length=int(length) if length else None,
                                 nuggets=[])
            result.append(current)
        else:  # a nugget row of `current`
            assert current is not None
            if not row["text"]:
                raise InputError(path, line, "column text (the nugget) is empty")
            importance = _label(row["importance"], (*IMPORTANCE_LABELS, "unjudged"),
                                "importance", path, line, allow_blank=False)
            assignment = _label(row["assignment"], ASSIGNMENT_LABELS, "assignment", path, line,
                                allow_blank=allow_blank)
            current.nuggets.append(AssessedNugget(
                text=row["text"], importance=importance_of(importance),
                assignment=assignment_of(assignment)))
    if not result:
        raise InputError(path, None, "the sheet holds no answers")
    return result


def sheet_files(paths: Iterable[Path]) -> list[Path]:
    """Sheets given, and the `*.tsv` files inside folders given."""
    files: list[Path] = []
    for p in paths:
        found = sorted(p.glob("*.tsv")) if p.is_dir() else [p]
        if p.is_dir() and not found:
            raise InputError(p, None, "folder holds no *.tsv sheets")
        files += found
    return files


def read_assignment_sheets(paths: Iterable[Path], queries: dict[str, str], *,
                           allow_blank: bool = False) -> dict[str, list[Assessment]]:
    """Read sheets (files, or folders of `*.tsv`) into assessments grouped by run id."""
    files = sheet_files(paths)
    by_run: dict[str, list[Assessment]] = {}
    where: dict[tuple[str, str], Path] = {}
    for path in files:
        for a in read_assignment_sheet(path, queries, allow_blank=allow_blank):
            if (a.run_id, a.qid) in where:
                raise InputError(path, None, f"run {a.run_id} topic {a.qid} is also in "
                                 f"{where[(a.run_id, a.qid)]}")
            where[(a.run_id, a.qid)] = path
            by_run.setdefault(a.run_id, []).append(a)
    return by_run


# --- support sheets ---------------------------------------------------------------------------

def by_topic(judgments: Iterable[Any]) -> dict[str, list[Any]]:
    """Judgment records grouped by topic id, in order of first appearance."""
    grouped: dict[str, list[Any]] = {}
    for j in judgments:
        grouped.setdefault(str(j["qid"]), []).append(j)
    return grouped


def records_by_run(paths: Sequence[Path], read: Callable[[Path], list[dict[str, Any]]]
                   ) -> dict[str, list[dict[str, Any]]]:
    """The judgment records `read` finds in each sheet (files, or folders of `*.tsv`), by run
    id; a (run, topic) in two sheets is an InputError."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    where: dict[tuple[str, str], Path] = {}
    for path in sheet_files(paths):
        for record in read(path):
            ids = (record["run_id"], record["qid"])
            if ids in where:
                raise InputError(path, None, f"run {ids[0]} topic {ids[1]} is also in "
                                 f"{where[ids]}")
            where[ids] = path
            by_run.setdefault(record["run_id"], []).append(record)
    return by_run
