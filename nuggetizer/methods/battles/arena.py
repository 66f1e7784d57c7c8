"""Battles in LMArena's form, as arena-rank and its datasets read them: one row per battle,
`model_a, model_b, winner` (winner "model_a", "model_b" or "tie"; arena's "tie (bothbad)" and
"both_bad" read as a tie), and here `question_id`, the topic.

`arena_rows` writes the battles with a result (the reconciled verdict of both orders; an
unjudged battle has no row); `write_arena` writes them as CSV (a `.csv` path) or JSONL.
`read_arena` reads such a file (CSV or JSONL) back as battle records of one order each (the
side named model_a shown first), scored like any battles; a row without `question_id` (or
`qid`) is its own topic (`row<line>`), so the topic bootstrap resamples battles as
arena-rank's does. A battle is one per pair and topic here: a pair's second battle on the same
question is given the topic `<question_id>#2` (and so on), a topic of its own.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nuggetizer.errors import InputError
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.labels import UNJUDGED

COLUMNS = ("model_a", "model_b", "winner", "question_id")
WINNERS = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "tie",
           "both_bad": "tie"}
_OUT = {"a": "model_a", "b": "model_b", "tie": "tie"}


def arena_rows(records: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """One row per battle with a result, run A as model_a."""
    return [{"model_a": r["run_a"], "model_b": r["run_b"], "winner": _OUT[r["result"]],
             "question_id": r["qid"]} for r in records if r["result"] != UNJUDGED]


def write_arena(rows: list[dict[str, str]], path: Path) -> None:
    """The rows as CSV (`path` ending in .csv) or JSONL, written atomically."""
    if path.suffix.lower() == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_text_atomic(path, buffer.getvalue())
    else:
        write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def _rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            yield line, row
        return
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(path, line, f"not JSON ({exc.msg}): one battle object a line, "
                             "or a .csv file") from None
        if not isinstance(obj, dict):
            raise InputError(path, line, "a battle is a JSON object with model_a, model_b, "
                             "winner")
        yield line, obj


def read_arena(path: Path) -> list[dict[str, Any]]:
    """Battle records from a file in arena's form (module docstring); InputError naming the
    line and the field for a row that is not a battle."""
    records = []
    met: dict[tuple[str, str, str], int] = {}
    for line, row in _rows(path):
        for name in ("model_a", "model_b", "winner"):
            if row.get(name) in (None, ""):
                raise InputError(path, line, f"field {name!r} is missing: arena battles have "
                                 "model_a, model_b and winner")
        a, b, winner = str(row["model_a"]), str(row["model_b"]), str(row["winner"])
        if winner not in WINNERS:
            raise InputError(path, line, f"field 'winner' is {winner!r}: one of "
                             f"{', '.join(WINNERS)}")
        if a == b:
            raise InputError(path, line, f"model {a!r} battles itself")
        qid = row.get("question_id") or row.get("qid") or f"row{line}"
        run_a, run_b = sorted((a, b))
        times = met[str(qid), run_a, run_b] = met.get((str(qid), run_a, run_b), 0) + 1
        if times > 1:
            qid = f"{qid}#{times}"
        verdict = WINNERS[winner]
        records.append({"qid": str(qid), "run_a": run_a, "run_b": run_b,
                        "orders": [{"first": a, "verdict": verdict}]})
    if not records:
        raise InputError(path, None, "no battles: expected rows of model_a, model_b, winner")
    return records
