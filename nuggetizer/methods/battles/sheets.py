"""Blind battle sheets: pairwise battles for human judges, and their verdicts read back.

One TSV per topic (formats/sheets.py's quoting and `#` comments), one row per battle:
`qid battle left right verdict narrative left_answer right_answer`. `left` and `right` are the
runs' pseudonyms of blind review (formats/blind.py: an HMAC of the run id under the secret
of the mapping file, kept apart from the sheets), each cell on one line; which run is shown
left and the order of a topic's battles are HMACs under the same secret too, so the sheets say
nothing about the runs.
A judge fills `verdict` with left, right or tie; a blank verdict is unjudged (counted, never a
tie). Exported from battle records, the verdict is prefilled from their result.

Read back (`--mapping` restores the run ids), each row is a battle record judged in one order,
the left answer shown first: the same tables as the battles it was exported from, for battles
judged in one order (two orders leave a flip rate a sheet does not carry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer.assessors.untrusted import inline
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats.blind import blind, pseudonym, read_mapping, shuffle_key
from nuggetizer.formats.sheets import _rows, _tsv, sheet_file_name, sheet_files
from nuggetizer.interface.base import Target
from nuggetizer.labels import UNJUDGED
from nuggetizer.methods.battles.method import outcome, render_answer

HEADER = ("qid", "battle", "left", "right", "verdict", "narrative", "left_answer",
          "right_answer")
HINT = ("blind battles: read the narrative and both answers, fill verdict with left, right or "
        "tie (blank: not judged)")
_VERDICTS = {"left": "A", "right": "B", "tie": "tie", "a": "A", "b": "B", "": UNJUDGED}


def battle_sheets(records: Sequence[Mapping[str, Any]],
                  answers: Mapping[str, Mapping[str, Target]], mapping: Path,
                  blank: bool = False) -> dict[str, str]:
    """{qid: TSV text} of the battles (prefilled with their results unless `blank`); writes
    or extends the mapping file (its secret decides pseudonyms, sides and order)."""
    runs = sorted({r[side] for r in records for side in ("run_a", "run_b")})
    blind([{"run_id": run, "qid": ""} for run in runs], mapping)
    secret = read_mapping(mapping)["secret"]
    by_topic: dict[str, list[tuple[str, list[str]]]] = {}
    for r in records:
        qid, a, b = r["qid"], r["run_a"], r["run_b"]
        order = shuffle_key(secret, qid, f"{a}\x1f{b}")
        left, right = (a, b) if int(order[-1], 16) % 2 == 0 else (b, a)
        verdict = "" if blank or r["result"] == UNJUDGED else (
            "tie" if r["result"] == "tie" else
            "left" if (a if r["result"] == "a" else b) == left else "right")
        for run in (left, right):
            if qid not in answers.get(run, {}):
                raise ConfigError(f"run {run!r} has no answer to topic {qid!r} among the "
                                  "--run files")
        by_topic.setdefault(qid, []).append((order, [
            qid, "", pseudonym(secret, left), pseudonym(secret, right), verdict,
            inline(r.get("narrative", "")), inline(render_answer(answers[left][qid])),
            inline(render_answer(answers[right][qid]))]))
    sheets = {}
    for qid, rows in by_topic.items():
        ordered = [row for _, row in sorted(rows, key=lambda x: x[0])]
        for n, row in enumerate(ordered, 1):
            row[1] = str(n)
        sheets[qid] = _tsv(HEADER, ordered, f"topic {qid}: {HINT}")
    return sheets


def write_battle_sheets(sheets: Mapping[str, str], out_dir: Path) -> list[Path]:
    """One file per topic in `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for qid, text in sheets.items():
        path = out_dir / sheet_file_name(qid)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def read_battle_sheets(paths: Sequence[Path], mapping: Path) -> list[dict[str, Any]]:
    """Battle records from filled-in sheets (files or folders of *.tsv), run ids restored;
    strict: an unknown pseudonym, verdict or a battle twice is an InputError naming the line."""
    runs = read_mapping(mapping)["runs"]
    found: dict[tuple[str, str, str], tuple[Path, int]] = {}
    records = []
    for path in sheet_files(paths):
        for line, row in _rows(path, HEADER):
            ids = []
            for column in ("left", "right"):
                if row[column] not in runs:
                    raise InputError(path, line, f"column {column} is {row[column]!r}, a "
                                     f"pseudonym the mapping {mapping} does not know")
                ids.append(runs[row[column]])
            verdict = _VERDICTS.get(row["verdict"].lower())
            if verdict is None:
                raise InputError(path, line, f"column verdict is {row['verdict']!r}: write "
                                 "left, right or tie (blank: not judged)")
            if ids[0] == ids[1] or not row["qid"]:
                raise InputError(path, line, "a battle needs a qid and two different runs")
            a, b = sorted(ids)
            key = (row["qid"], a, b)
            if key in found:
                raise InputError(path, line, f"this battle is on {found[key][0]}:"
                                 f"{found[key][1]} too")
            found[key] = (path, line)
            record: dict[str, Any] = {"qid": row["qid"], "run_a": a, "run_b": b,
                                      "narrative": row["narrative"],
                                      "orders": [{"first": ids[0], "verdict": verdict}],
                                      "source": f"{path.name}:{line}"}
            record.update(outcome(record))
            records.append(record)
    return records
