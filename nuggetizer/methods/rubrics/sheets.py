"""Rubric sheets for manual grading (ResearchRubrics, methods/rubrics/method.py).

One TSV per topic (opens in a spreadsheet; `#` lines are comments): an `answer` row
(`kind qid run_id text`: the answer's text), followed by one `criterion` row per criterion
(`n weight axis text label`: its number, weight, axis and text); assessors fill `label` with
satisfied, partially_satisfied or not_satisfied (S, PS, NS), or unjudged. A negative weight
marks a failure mode: it is satisfied when the answer shows the failure. Imports are strict:
each problem an InputError naming file and line; with the rubrics file given, each criterion
must be the key's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.sheets import _answer_rows, _tsv, by_topic, records_by_run
from nuggetizer.labels import UNJUDGED
from nuggetizer.parsing import normalise_label

RUBRIC_COLUMNS = ("kind", "qid", "run_id", "n", "weight", "axis", "text", "label")
_SHORT = {"s": "satisfied", "ps": "partially_satisfied", "ns": "not_satisfied",
          "satisfied": "satisfied", "partially_satisfied": "partially_satisfied",
          "not_satisfied": "not_satisfied", UNJUDGED: UNJUDGED}


def rubric_sheets(judgments: Iterable[Mapping[str, Any]], comment: str) -> dict[str, str]:
    """Rubric judgment records as one TSV per topic: {qid: text}; judged labels shown,
    unjudged ones blank for the assessor."""
    sheets: dict[str, str] = {}
    for qid, group in by_topic(judgments).items():
        rows: list[tuple[object, ...]] = []
        for j in group:
            rows.append(("answer", qid, j["run_id"], "", "", "", j.get("answer_text", ""), ""))
            for n, c in enumerate(j["criteria"], 1):
                shown = "" if c["label"] == UNJUDGED else c["label"]
                rows.append(("criterion", qid, j["run_id"], n, f"{float(c['weight']):g}",
                             c.get("axis", ""), c["criterion"], shown))
        sheets[qid] = _tsv(RUBRIC_COLUMNS, rows, f"{comment}; topic {qid}")
    return sheets


def _weight(cell: str, path: Path, line: int) -> float:
    try:
        return float(cell)
    except ValueError:
        raise InputError(path, line, f"column weight is {cell!r}: write a number (negative "
                         "for a failure mode)") from None


def _grade(cell: str, path: Path, line: int, allow_blank: bool) -> str:
    label = _SHORT.get(normalise_label(cell)) if cell.strip() else None
    if label is not None:
        return label
    if not cell.strip() and allow_blank:
        return UNJUDGED
    hint = " (or pass --allow-blank to record it unjudged)" if not cell.strip() else ""
    raise InputError(path, line, f"column label is {repr(cell) if cell.strip() else 'empty'}: "
                     f"write satisfied, partially_satisfied or not_satisfied (S, PS, NS) or "
                     f"unjudged{hint}")


def _check_key(key: Mapping[str, Any] | None, n: int, text: str, weight: float, path: Path,
               line: int) -> None:
    """The n-th criterion of the sheet is the key's, text and weight; InputError otherwise."""
    if key is None:
        return
    rubrics = key["rubrics"]
    if n > len(rubrics):
        raise InputError(path, line, f"criterion {n}: topic {key['qid']} has "
                         f"{len(rubrics)} criteria in the rubrics file")
    given = rubrics[n - 1]
    if given["criterion"].strip() != text.strip() or float(given["weight"]) != weight:
        raise InputError(path, line, f"criterion {n} differs from the rubrics file's (text or "
                         "weight): do not edit the criterion columns")


def read_rubric_sheet(path: Path, keys: Mapping[str, Any] | None, *, allow_blank: bool = False
                      ) -> list[dict[str, Any]]:
    """One filled-in rubric sheet as judgment records (strict: file and line)."""
    result: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line, row, kind in _answer_rows(path, RUBRIC_COLUMNS, ("answer", "criterion")):
        if kind == "answer":
            if keys is not None and row["qid"] not in keys:
                raise InputError(path, line, f"topic {row['qid']} is not in the rubrics file")
            current = {"run_id": row["run_id"], "qid": row["qid"], "answer_text": row["text"],
                       "criteria": [], "unjudged": 0}
            result.append(current)
            continue
        criteria = current["criteria"]
        if row["n"] != str(len(criteria) + 1):
            raise InputError(path, line, f"column n is {row['n']!r}: criterion rows number "
                             f"the criteria 1, 2, ... (expected {len(criteria) + 1})")
        if not row["text"].strip():
            raise InputError(path, line, "column text (the criterion) is empty: an empty "
                             "criterion cannot be graded; write it back as exported")
        weight = _weight(row["weight"], path, line)
        _check_key(keys.get(row["qid"]) if keys is not None else None, len(criteria) + 1,
                   row["text"], weight, path, line)
        label = _grade(row["label"], path, line, allow_blank)
        criteria.append({"criterion": row["text"], "weight": weight, "axis": row["axis"],
                         "label": label})
        current["unjudged"] += label == UNJUDGED
    for record in result:
        expected = len(keys[record["qid"]]["rubrics"]) if keys is not None else None
        if expected is not None and len(record["criteria"]) != expected:
            raise InputError(path, None, f"run {record['run_id']} topic {record['qid']}: "
                             f"{len(record['criteria'])} criterion rows, the rubrics file has "
                             f"{expected}")
    if not result:
        raise InputError(path, None, "the sheet holds no answers")
    return result


def read_rubric_sheets(paths: Sequence[Path], keys: Mapping[str, Any] | None, *,
                       allow_blank: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Rubric sheets (files, or folders of `*.tsv`) as judgment records by run id."""
    return records_by_run(paths, lambda path: read_rubric_sheet(path, keys,
                                                                allow_blank=allow_blank))
