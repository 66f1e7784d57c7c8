"""TREC 6-column retrieval runs: `qid Q0 docid rank score tag`, whitespace separated.

Strict: exactly 6 columns, an integer rank, a finite number as score, one tag per file, a
(qid, docid) pair at most once; every problem names the file and the 1-based line. A topic's
ranking is by score descending, ties broken by docid ascending (the order ndeval, and so
ir_measures' alpha_nDCG, uses; the rank column is not used, as in trec_eval).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import excerpt, iter_lines

_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass
class TrecRun:
    """One retrieval run: per topic, (docid, score) rows in file order."""

    path: Path
    tag: str
    rows: dict[str, list[tuple[str, float]]] = field(default_factory=dict)

    def ranking(self, qid: str, k: int | None = None) -> list[str]:
        """Doc ids of topic `qid` by score descending, ties by docid; the first `k` when given."""
        ordered = [d for d, _ in sorted(self.rows.get(qid, []), key=lambda r: (-r[1], r[0]))]
        return ordered[:k] if k is not None else ordered

    @property
    def topics(self) -> list[str]:
        """Topic ids in file order."""
        return list(self.rows)


def read_trec_run(path: str | Path) -> TrecRun:
    """Read a TREC run; the run id is its tag column (one tag per file)."""
    path = Path(path)
    run: TrecRun | None = None
    seen: dict[tuple[str, str], int] = {}
    for number, line in iter_lines(path):
        columns = line.split()
        if not columns:
            continue
        if len(columns) != 6:
            raise InputError(
                path, number,
                f"expected 6 columns (qid Q0 docid rank score tag), found {len(columns)}: "
                f"{excerpt(line)}",
            )
        qid, _, docid, rank, score_text, tag = columns
        if not _INTEGER.fullmatch(rank):
            raise InputError(path, number, f"rank must be an integer, got {rank!r}")
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(path, number, f"score must be a finite number, got {score_text!r}")
        if run is None:
            run = TrecRun(path=path, tag=tag)
        elif tag != run.tag:
            raise InputError(
                path, number, f"run tag {tag!r} differs from {run.tag!r}: one run per file"
            )
        if (qid, docid) in seen:
            raise InputError(
                path, number,
                f"topic {qid!r} retrieves {docid!r} twice (also on line {seen[qid, docid]})",
            )
        seen[qid, docid] = number
        run.rows.setdefault(qid, []).append((docid, score))
    if run is None:
        raise InputError(path, None, "run file is empty")
    return run


def read_trec_runs(paths: Iterable[str | Path]) -> dict[str, TrecRun]:
    """Several runs by tag; a tag in two files is an error."""
    runs: dict[str, TrecRun] = {}
    for p in paths:
        run = read_trec_run(p)
        if run.tag in runs:
            other = runs[run.tag].path
            raise InputError(p, None, f"run tag {run.tag!r} is also the tag of {other}")
        runs[run.tag] = run
    return runs
