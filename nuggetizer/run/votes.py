"""An ensemble's votes in a step's outputs: each unit's record keeps them (`ensemble`), the
summary counts the items the judges disagreed on, and a TSV lists them.

The record of a unit judged by an ensemble (assessors/ensemble.py) gets

    "ensemble": {"items": N, "disagreements": D,
                 "calls": [{"value": AGGREGATE, "disagreement": [BOOL per item], "missing": M,
                            "votes": [{"assessor": SPEC, "sample": S, "value": V, "raw": R,
                                       "error"?: E}]}]}

one call per aggregated LLM call of the unit, in the order they were made; an item is one value
voted on (a listwise call of ten nugget assignments holds ten items). The TSV
(`OUTPUT.disagreements.tsv`, or `disagreements.tsv` in an output folder) has one row per item
the votes disagree on: run_id, qid, docid (those the record has), call, item, aggregate, votes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from nuggetizer.assessors.ensemble import VOTES
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.run.provenance import beside

COLUMNS = ("run_id", "qid", "docid", "call", "item", "aggregate", "votes")


@contextlib.contextmanager
def noting_votes() -> Iterator[list[dict[str, Any]]]:
    """The list the ensemble notes the current unit's calls in (this task's context only)."""
    calls: list[dict[str, Any]] = []
    token = VOTES.set(calls)
    try:
        yield calls
    finally:
        VOTES.reset(token)


def note_votes(record: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    """Keep the unit's aggregated calls in its record (nothing when none was aggregated)."""
    calls = [c for c in calls if c]  # a call cancelled before its answers noted nothing
    if not calls:
        return
    flags = [flag for call in calls for flag in call["disagreement"]]
    record["ensemble"] = {"items": len(flags), "disagreements": sum(flags), "calls": calls}


def disagreements_path(output: Path) -> Path:
    """Where a step's disagreements are listed (beside its output, as its usage)."""
    return beside(output, "disagreements.tsv")


def _cell(value: Any) -> str:
    return str(value).replace("\t", " ").replace("\n", " ")


def disagreement_rows(records: Iterable[dict[str, Any]]) -> Iterator[list[str]]:
    """One row per item the votes disagree on (COLUMNS)."""
    for record in records:
        ids = [_cell(record.get(k, "")) for k in ("run_id", "qid", "docid")]
        for number, call in enumerate((record.get("ensemble") or {}).get("calls", [])):
            value = call.get("value")
            for item, flag in enumerate(call.get("disagreement", [])):
                if not flag:
                    continue

                def at(v: Any, item: int = item) -> Any:
                    return v[item] if isinstance(v, list) and item < len(v) else v

                votes = ", ".join(f"{v['assessor']}#{v['sample']}={at(v.get('value'))}"
                                  for v in call.get("votes", []))
                yield [*ids, str(number), str(item), _cell(at(value)), _cell(votes)]


def votes_by_judge(records: Iterable[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """{judge: (votes missing, votes asked)} over every aggregated call of the records: a vote
    is missing when the judge's answer never parsed or was refused (its value None)."""
    counts: dict[str, list[int]] = {}
    for record in records:
        for call in (record.get("ensemble") or {}).get("calls", []):
            for vote in call.get("votes", []):
                entry = counts.setdefault(str(vote.get("assessor")), [0, 0])
                entry[0] += vote.get("value") is None
                entry[1] += 1
    return {judge: (missing, asked) for judge, (missing, asked) in counts.items()}


def list_disagreements(output: Path, records: Iterable[dict[str, Any]], summary: Any) -> None:
    """Count the items voted on and disagreed on in `summary` (resumed units too) and list the
    disagreements beside `output`; nothing when no record was judged by an ensemble."""
    voted = [r for r in records if "ensemble" in r]
    if not voted:
        return
    summary.voted = sum(r["ensemble"]["items"] for r in voted)
    summary.disagreements = sum(r["ensemble"]["disagreements"] for r in voted)
    summary.votes = votes_by_judge(voted)
    path = disagreements_path(output)
    rows = ["\t".join(COLUMNS)] + ["\t".join(row) for row in disagreement_rows(voted)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "\n".join(rows) + "\n")
    summary.disagreement_list = path
