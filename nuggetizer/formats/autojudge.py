"""The files of the TREC AutoJudge framework (autojudge-base), written and read back.

- Leaderboard: whitespace-separated `run_id measure topic value`, one row per (run, measure,
  topic) plus `all` rows holding the run means, no header (the framework's "tot" format).
- Qrels: the TREC `qid 0 docid grade` our relevance step already writes (`formats.qrels`).
- Nugget bank: the framework's Nuggetizer nugget-bank JSONL, one bank a line
  `{"qid", "query", "nuggets": [{"text", "importance"}]}` (importance vital/okay; an unjudged
  nugget has none); our `read_nuggets` reads it back. Or its own nugget bank (`NuggetBanks`,
  format v3): `{"query_id", "title_query", "format_version": "v3", "claim_bank": [{"claim",
  "claim_id", "query_id", "importance"}]}`, each nugget a claim.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggetizer import names
from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_lines
from nuggetizer.types import NuggetList

ALL = "all"
BANK_IMPORTANCE = ("vital", "okay", "failed")  # what the framework's nugget bank accepts


def leaderboard_text(per_topic: Mapping[str, Mapping[str, Mapping[str, float]]],
                     means: Mapping[str, Mapping[str, float]],
                     measures: Sequence[str], runs: Sequence[str] | None = None) -> str:
    """`run_id measure topic value` rows (tab-separated): per run and measure, the topics
    then `all`; `per_topic` is run -> topic -> measure -> value, `means` run -> measure ->
    value. Values with 6 decimals, so that ties are not made by rounding."""
    lines = []
    for run in runs if runs is not None else sorted(means):
        for m in measures:
            for topic, row in per_topic.get(run, {}).items():
                if m in row:
                    lines.append(f"{run}\t{m}\t{topic}\t{row[m]:.6f}")
            if m in means.get(run, {}):
                lines.append(f"{run}\t{m}\t{ALL}\t{means[run][m]:.6f}")
    return "\n".join(lines) + "\n"


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def is_autojudge_leaderboard(path: str | Path) -> bool:
    """Whether the file's first row is a `run_id measure topic value` row (4 whitespace
    columns, a number last, no `run_id` header)."""
    for _, line in iter_lines(Path(path)):
        cells = line.split()
        if not cells:
            continue
        return len(cells) == 4 and cells[0] != "run_id" and _looks_numeric(cells[3])
    return False


def iter_leaderboard(path: str | Path) -> Iterator[tuple[str, str, str, float]]:
    """(run, topic, measure, value) of every row of a framework leaderboard, `all` rows
    included; strict, file:line errors."""
    path = Path(path)
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in iter_lines(path):
        cells = line.split()
        if not cells:
            continue
        if len(cells) != 4:
            raise InputError(path, number, "expected 4 columns (run_id measure topic value), "
                             f"found {len(cells)}")
        run, measure, topic, value = cells
        if not _looks_numeric(value):
            raise InputError(path, number, f"value {value!r} is not a number (the 4th column "
                             "of an AutoJudge leaderboard: run_id measure topic value)")
        if (run, measure, topic) in seen:
            raise InputError(path, number, f"a second row for run {run!r}, measure "
                             f"{measure!r}, topic {topic!r} (also on line "
                             f"{seen[run, measure, topic]}): an AutoJudge leaderboard "
                             "(run_id measure topic value) holds one value each")
        seen[run, measure, topic] = number
        yield run, topic, measure, float(value)
    if not seen:
        raise InputError(path, None, "empty file: expected AutoJudge leaderboard rows "
                         "(run_id measure topic value)")


def bank_record(nl: NuggetList) -> dict[str, Any]:
    """One topic's nuggets as a bank of the framework's Nuggetizer nugget-bank format."""
    nuggets = []
    for n in nl.nuggets:
        item: dict[str, Any] = {"text": n.text}
        if n.importance in BANK_IMPORTANCE:
            item["importance"] = n.importance
        nuggets.append(item)
    return {"qid": nl.qid, "query": nl.query, "nuggets": nuggets}


def claim_bank_record(nl: NuggetList) -> dict[str, Any]:
    """One topic's nuggets as a bank of the framework's own format (v3), nuggets as claims
    (claim_id QID-N, N from 1 in the key's order)."""
    claims = []
    for k, n in enumerate(nl.nuggets, 1):
        claim: dict[str, Any] = {"claim": n.text, "claim_id": f"{nl.qid}-{k}",
                                 "query_id": nl.qid}
        if n.importance in BANK_IMPORTANCE:
            claim["importance"] = n.importance
        claims.append(claim)
    return {"query_id": nl.qid, "title_query": nl.query, "format_version": "v3",
            "claim_bank": claims}


BANK_FORMATS = {"nuggetizer": bank_record, "autojudge": claim_bank_record}
assert tuple(BANK_FORMATS) == names.BANK_FORMATS  # the names the command line offers


def bank_records(keys: Iterable[NuggetList], fmt: str = "nuggetizer") -> list[dict[str, Any]]:
    """The banks of an answer key in one of BANK_FORMATS."""
    return [BANK_FORMATS[fmt](nl) for nl in keys]
