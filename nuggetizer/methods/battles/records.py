"""The battles method's judgment records (pydantic), checked at the file edge by
formats/records.validated."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from nuggetizer.formats.records import Id, Record

BATTLES_FILE = "battles.jsonl"  # the judgments file of `nuggetizer battles`, in its folder


def battle_key(qid: str, run_a: str, run_b: str) -> str:
    """The resume key of a battle."""
    return f"{qid}\t{run_a}\t{run_b}"


class Order(Record):
    """One order of a battle: the run shown first and its verdict (checked by the method)."""

    first: Id
    verdict: Any = None


class BattleJudgment(Record):
    """A battle: the topic, both runs, and one or two orders."""

    qid: Id
    run_a: Id
    run_b: Id
    orders: Annotated[list[Order], Field(min_length=1, max_length=2)]
