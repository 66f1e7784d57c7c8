"""The files of the TREC AutoJudge framework (autojudge-base), written and read back.

- Leaderboard: whitespace-separated `run_id measure topic value`, one row per (run, measure,
  topic) plus `all` rows holding the run means, no header (the framework's "tot" format);
  read back in that order or in `run_id topic measure value` (ir_measures' order, and that of
  castorini RAGDoll's `support metric-rows`, which has no `all` rows), the file telling which
  (`measure_column`).
- Qrels: the TREC `qid 0 docid grade` our relevance step already writes (`formats.qrels`).
- Nugget bank: the framework's Nuggetizer nugget-bank JSONL, one bank a line
  `{"qid", "query", "nuggets": [{"text", "importance"}]}` (importance vital/okay; an unjudged
  nugget has none); our `read_nuggets` reads it back. Or its own nugget bank (`NuggetBanks`,
  format v3): `{"query_id", "title_query", "format_version": "v3", "claim_bank": [{"claim",
  "claim_id", "query_id", "importance"}]}`, each nugget a claim.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
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


def _columns(path: Path) -> tuple[set[str], set[str]]:
    """The values of the second and third columns of a 4-column leaderboard."""
    second: set[str] = set()
    third: set[str] = set()
    for _, line in iter_lines(path):
        cells = line.split()
        if len(cells) == 4:
            second.add(cells[1])
            third.add(cells[2])
    return second, third


def measure_column(path: str | Path, known: Collection[str] = ()) -> str:
    """Which column of a headerless 4-column leaderboard holds the measure: "tot" (`run_id
    measure topic value`, the framework's) or "ir_measures" (`run_id topic measure value`,
    also the order of castorini RAGDoll's `support metric-rows`), told from the file itself,
    never from the measure asked for: the column holding `all` (the run means) is the
    topics'; else the one whose every value is a `known` measure name is the measures'; else
    the one whose every value is a number is the topics'; else tot."""
    second, third = _columns(Path(path))
    for topics, order in ((third, "tot"), (second, "ir_measures")):
        if ALL in topics and ALL not in (second if topics is third else third):
            return order
    names = set(known)
    if names and third <= names and not second <= names:
        return "ir_measures"
    if names and second <= names and not third <= names:
        return "tot"
    if all(map(_looks_numeric, second)) and not all(map(_looks_numeric, third)):
        return "ir_measures"
    return "tot"


def iter_leaderboard(path: str | Path, order: str = "tot"
                     ) -> Iterator[tuple[str, str, str, float]]:
    """(run, topic, measure, value) of every row of a framework leaderboard, `all` rows
    included, its columns in `order` ("tot" or "ir_measures": `measure_column`); strict,
    file:line errors."""
    path = Path(path)
    names = "run_id measure topic value" if order == "tot" else "run_id topic measure value"
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in iter_lines(path):
        cells = line.split()
        if not cells:
            continue
        if len(cells) != 4:
            raise InputError(path, number, f"expected 4 columns ({names}), found {len(cells)}")
        run, measure, topic, value = cells if order == "tot" else \
            (cells[0], cells[2], cells[1], cells[3])
        if not _looks_numeric(value):
            raise InputError(path, number, f"value {value!r} is not a number (the 4th column "
                             f"of a leaderboard: {names})")
        if (run, measure, topic) in seen:
            raise InputError(path, number, f"a second row for run {run!r}, measure "
                             f"{measure!r}, topic {topic!r} (also on line "
                             f"{seen[run, measure, topic]}): a leaderboard ({names}) holds "
                             "one value each")
        seen[run, measure, topic] = number
        yield run, topic, measure, float(value)
    if not seen:
        raise InputError(path, None, f"empty file: expected leaderboard rows ({names})")


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
