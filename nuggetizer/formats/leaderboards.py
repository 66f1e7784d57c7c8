"""Leaderboards in every format the TREC AutoJudge framework reads (autojudge-base's
`Leaderboard.load`, autojudge-evaluate's `meta-evaluate --truth-format/--eval-format`),
written and read back. One row per (run, measure, topic), `all` rows holding the run means:

- tot: `run_id measure topic value` (our default, `formats.autojudge`);
- trec_eval: `measure topic value`, one file per run named by its run id (a folder);
- ir_measures: `run_id topic measure value`;
- rag4reports: `topic run_id measure value`;
- ranking: `topic Q0 run_id rank value measure` (a TREC run whose documents are the runs and
  whose tag is the measure; rank 1 is the best value of the topic, ties by run id);
- jsonl: `{"run_id", "topic_id", "measure", "value"}` per line.

Text formats are tab-separated, values with 6 decimals (so that rounding makes no ties).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import PlainValidator, StrictStr
from pydantic_core import PydanticCustomError

from nuggetizer import names
from nuggetizer.errors import InputError
from nuggetizer.formats.autojudge import ALL
from nuggetizer.formats.jsonl import iter_lines, parse_object
from nuggetizer.formats.records import IdText, JsonType, Record, validated, wrong_type
from nuggetizer.formats.writing import write_text_atomic

FORMATS = names.LEADERBOARD_FORMATS  # tot, trec_eval, ir_measures, rag4reports, ranking, jsonl
Row = tuple[str, str, str, float]  # run, measure, topic, value
COLUMNS = {"tot": ("run", "measure", "topic", "value"),
           "trec_eval": ("measure", "topic", "value"),
           "ir_measures": ("run", "topic", "measure", "value"),
           "rag4reports": ("topic", "run", "measure", "value"),
           "ranking": ("topic", "q0", "run", "rank", "value", "measure")}


def table_rows(table: Any, measures: Sequence[str] | None = None) -> list[Row]:
    """The rows of a `ScoreTable`: per run (in ranking order) and measure, its topics, then
    `all` (the run's mean)."""
    rows: list[Row] = []
    for run in table.ranking():
        for m in table.measures if measures is None else measures:
            for topic, values in table.per_topic.get(run, {}).items():
                if m in values:
                    rows.append((run, m, topic, values[m]))
            if m in table.means.get(run, {}):
                rows.append((run, m, ALL, table.means[run][m]))
    return rows


def _ranks(rows: Sequence[Row]) -> dict[tuple[str, str, str], int]:
    """(run, measure, topic) -> rank among the runs on that topic and measure (1: best)."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row[1], row[2]), []).append(row)
    ranks = {}
    for group in groups.values():
        for rank, (run, m, topic, _) in enumerate(sorted(group, key=lambda r: (-r[3], r[0])),
                                                  1):
            ranks[run, m, topic] = rank
    return ranks


def format_text(rows: Sequence[Row], fmt: str) -> str:
    """The rows in one format (trec_eval: the rows of one run, its run id left out)."""
    ranks = _ranks(rows) if fmt == "ranking" else {}
    lines = []
    for run, m, topic, value in rows:
        if fmt == "jsonl":
            lines.append(json.dumps({"run_id": run, "topic_id": topic, "measure": m,
                                     "value": round(value, 6)}))
            continue
        cells = {"run": run, "measure": m, "topic": topic, "value": f"{value:.6f}", "q0": "Q0",
                 "rank": str(ranks.get((run, m, topic), 0))}
        lines.append("\t".join(cells[c] for c in COLUMNS[fmt]))
    return "\n".join(lines) + "\n"


def write_leaderboard(path: Path, rows: Sequence[Row], fmt: str) -> None:
    """Write the rows in `fmt` to `path` (trec_eval: a folder of one file per run)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown leaderboard format {fmt!r}")
    if fmt != "trec_eval":
        write_text_atomic(path, format_text(rows, fmt))
        return
    by_run: dict[str, list[Row]] = {}
    for row in rows:
        by_run.setdefault(row[0], []).append(row)
    for run, own in by_run.items():
        write_text_atomic(Path(path) / run, format_text(own, fmt))


def _score(value: Any) -> float:
    """A score: a number, or a number written as text (as the text formats hold it)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise wrong_type("number")
    try:
        return float(value)
    except ValueError:
        raise PydanticCustomError("number", "must be a number or a number's text") from None


class JsonlRow(Record):
    """A row of a JSONL leaderboard (its value a number, or a number's text)."""

    run_id: IdText
    topic_id: IdText
    measure: StrictStr
    value: Annotated[float, PlainValidator(_score), JsonType("number")]


def _value(text: str, path: Path, line: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(path, line, f"value {text!r} is not a number") from None


def _file_rows(path: Path, fmt: str) -> Iterator[Row]:
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        if fmt == "jsonl":
            row = validated(JsonlRow, parse_object(line, path, number), path, number)
            yield row.run_id, row.measure, row.topic_id, row.value
            continue
        cells = dict(zip(COLUMNS[fmt], line.split()))
        if len(line.split()) != len(COLUMNS[fmt]):
            raise InputError(path, number, f"expected {len(COLUMNS[fmt])} columns "
                             f"({' '.join(COLUMNS[fmt])}) for --format {fmt}, found "
                             f"{len(line.split())}")
        run = path.name if fmt == "trec_eval" else cells["run"]
        yield run, cells["measure"], cells["topic"], _value(cells["value"], path, number)


def read_leaderboard_rows(path: str | Path, fmt: str) -> list[Row]:
    """Every row of a leaderboard in `fmt` (trec_eval: a file, its name the run id, or a
    folder of them); strict, file:line errors."""
    path = Path(path)
    files: Iterable[Path] = (sorted(p for p in path.iterdir() if p.is_file()
                                    and not p.name.startswith("."))
                             if path.is_dir() else [path])
    rows = [row for f in files for row in _file_rows(f, fmt)]
    if not rows:
        raise InputError(path, None, "empty leaderboard")
    return rows
