"""The score tables as files, written and read back in one place: the leaderboard TSV
(`run_id` then one column per measure), the per-topic TSV (`run_id topic_id measure value`,
with `all` rows holding the run means), a terminal view; read back strictly, file:line errors."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, repeat
from operator import add, itemgetter
from pathlib import Path

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_lines
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.registry import method_class, method_names
from nuggetizer.measures.base import counted
from nuggetizer.scoring.engine import ScoreTable

PER_TOPIC_HEADER = ["run_id", "topic_id", "measure", "value"]
FORMATS = ("a per-topic TSV (header run_id topic_id measure value), a leaderboard TSV (header "
           "run_id then one column per measure) or an AutoJudge leaderboard (run_id measure "
           "topic value, whitespace-separated, no header)")


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    rows = [(n, [c.strip() for c in line.split("\t")]) for n, line in iter_lines(path)
            if line.strip()]
    if not rows:
        raise InputError(path, None, f"empty file: expected {FORMATS}")
    return rows


def _number(text: str, path: Path, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(path, line, f"value {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(path, line, f"value {text!r} is not a finite number: a score table "
                         "holds finite scores (leave out the row of a run without one)")
    return value


def is_per_topic(path: str | Path) -> bool:
    """Whether the file's header is the per-topic TSV's."""
    return _rows(Path(path))[0][1][:4] == PER_TOPIC_HEADER


def iter_per_topic(path: str | Path) -> Iterator[tuple[str, str, str, float]]:
    """(run, topic, measure, value) of every row of a per-topic TSV, `all` rows included."""
    path = Path(path)
    rows = _rows(path)
    if rows[0][1] != PER_TOPIC_HEADER:
        raise InputError(path, rows[0][0], "expected the header run_id topic_id measure value "
                         "(a per-topic TSV)")
    for number, cells in rows[1:]:
        if len(cells) != 4:
            raise InputError(path, number, f"expected 4 tab-separated columns (run_id topic_id "
                             f"measure value, a per-topic TSV), found {len(cells)}")
        run, topic, measure, value = cells
        yield run, topic, measure, _number(value, path, number)


def read_leaderboard(path: str | Path, measure: str) -> dict[str, float]:
    """{run: value of `measure`} of a leaderboard TSV."""
    path = Path(path)
    rows = _rows(path)
    header = rows[0][1]
    if not header or header[0] != "run_id":
        raise InputError(path, rows[0][0], f"not a score table: expected {FORMATS}")
    if measure not in header:
        raise InputError(path, rows[0][0], f"a leaderboard TSV without a {measure!r} column "
                         f"(it has {', '.join(header[1:]) or 'none'}); the formats read: "
                         f"{FORMATS}")
    col = header.index(measure)
    means: dict[str, float] = {}
    for number, cells in rows[1:]:
        if len(cells) != len(header):
            raise InputError(path, number, f"expected {len(header)} tab-separated columns, as "
                             f"the header (a leaderboard TSV), found {len(cells)}")
        means[cells[0]] = _number(cells[col], path, number)
    return means


def counts() -> frozenset[str]:
    """The measures a registered method declares as counts (battles): written whole."""
    return frozenset().union(*(counted(method_class(name).declared) for name in method_names()))


def _cell(measure: str, value: float, whole: frozenset[str]) -> str:
    return str(int(value)) if measure in whole and float(value).is_integer() else \
        f"{value:.4f}"


def leaderboard_tsv(table: ScoreTable, measures: Sequence[str] | None = None) -> str:
    """`run_id` then `measures`, 4 decimals ("-" where a run has no such measure), in ranking
    order (for the AutoNuggetizer `run_id V_strict V W_strict W A_strict A L` by V_strict);
    `measures` defaults to the table's; a count (battles) whole."""
    measures = table.measures if measures is None else measures
    whole = counts() if table.whole is None else table.whole
    lines = ["\t".join(("run_id", *measures))]
    for run_id in table.ranking():
        means = table.means[run_id]
        cells = [_cell(m, means[m], whole) if m in means else "-" for m in measures]
        lines.append("\t".join([run_id, *cells]))
    return "\n".join(lines) + "\n"


def per_topic_tsv(table: ScoreTable, measures: Sequence[str] | None = None) -> str:
    """Long form `run_id topic_id measure value`, with `all` rows holding the run means."""
    measures = table.measures if measures is None else measures
    whole = counts() if table.whole is None else table.whole
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    # no count among them: a run's lines made a column at a time, each value's text once
    # (300,000 cells at track scale; the same text as `_cell`'s)
    columns = None if whole.intersection(measures) else \
        [(itemgetter(m), _Cells(m).__getitem__) for m in measures]
    for run_id in table.ranking():
        rows = table.per_topic[run_id]
        if columns is None or not _column_lines(lines, run_id, rows, columns):
            for qid, row in rows.items():
                lines += [f"{run_id}\t{qid}\t{m}\t{_cell(m, row[m], whole)}" for m in measures
                          if m in row]
        means = table.means[run_id]
        lines += [f"{run_id}\tall\t{m}\t{_cell(m, means[m], whole)}" for m in measures
                  if m in means]
    return "\n".join(lines) + "\n"


class _Cells(dict[float, str]):
    """`MEASURE<tab>VALUE` of one measure that is not a count, each value formatted once (as
    `_cell`: 4 decimals). A zero is formatted each time (0.0 and -0.0 are one key here, and
    two texts)."""

    def __init__(self, measure: str) -> None:
        super().__init__()
        self.measure = measure

    def __missing__(self, value: float) -> str:
        text = f"{self.measure}\t{value:.4f}"
        if value:
            self[value] = text
        return text


def _column_lines(lines: list[str], run_id: str, rows: dict[str, dict[str, float]],
                  columns: Sequence[tuple[Callable[[dict[str, float]], float],
                                          Callable[[float], str]]]) -> bool:
    """A run's per-topic lines added a column at a time; False (nothing added) when a row
    lacks one of the measures."""
    try:
        cells = [list(map(text, map(value, rows.values()))) for value, text in columns]
    except KeyError:
        return False
    prefixes = [f"{run_id}\t{qid}\t" for qid in rows]
    lines += map(add, chain.from_iterable(map(repeat, prefixes, repeat(len(columns)))),
                 chain.from_iterable(zip(*cells)))
    return True


def format_leaderboard(table: ScoreTable) -> str:
    """The leaderboard as aligned text for a terminal."""
    rows = [line.split("\t") for line in leaderboard_tsv(table).splitlines()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def write_tables(table: ScoreTable, leaderboard: Path | None, per_topic: Path | None,
                 measures: Sequence[str] | None = None) -> None:
    """Write the requested TSVs atomically."""
    if leaderboard is not None:
        write_text_atomic(leaderboard, leaderboard_tsv(table, measures))
    if per_topic is not None:
        write_text_atomic(per_topic, per_topic_tsv(table, measures))
