"""Score tables read back: the per-topic TSV (`run_id topic_id measure value`, with `all` rows)
and the leaderboard TSV (`run_id` then one column per measure), strict, file:line errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_lines

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
        return float(text)
    except ValueError:
        raise InputError(path, line, f"value {text!r} is not a number") from None


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
