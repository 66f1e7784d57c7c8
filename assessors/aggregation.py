"""How an ensemble's votes on one answer become one value (pure functions).

A vote is what one member's `parse` returned: a label (str), a grade (int), a yes/no (bool),
or a list of those (one per item of a listwise call, e.g. a batch of nugget assignments).
Every value is put on an ordinal scale of credit first: grades are their own rank, False < True,
and the labels the methods use are ranked lowest credit first (LABEL_RANK; a label it does not
know ranks after the known ones, alphabetically). Then, per item:

- `majority`: the most frequent value; a tie goes to the lower-credit value (conservative:
  the item earns the credit every tied side at least gives). umbrela's EnsembleJudge takes the
  most frequent grade with ties to the lowest, so `majority` on grades is its rule.
- `median`: the lower median of the ranks (with an even number of votes, the lower middle one),
  so the aggregate is always a value some member gave.
- `mean`: the mean of the ranks rounded to the nearest rank, a half rounded down.

Labels default to `majority`, grades to `median` (AGGREGATE_DEFAULTS). An item disagrees when
the votes on it are not all equal.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

AGGREGATES = ("majority", "median", "mean")
AGGREGATE_DEFAULTS = {"labels": "majority", "grades": "median"}

# Lowest credit first, per menu: assignment, support, importance, KPR entailment, UDCG.
LABEL_MENUS: tuple[tuple[str, ...], ...] = (
    ("not_support", "partial_support", "support"),
    ("no_support", "partial_support", "full_support"),
    ("okay", "vital"),
    ("no", "neutral", "yes"),
    ("irrelevant", "relevant"),
)
LABEL_RANK: dict[str, int] = {label: rank for menu in LABEL_MENUS
                              for rank, label in enumerate(menu)}


def kind_of(value: Any) -> str:
    """`grades` for numbers (not booleans), else `labels`."""
    return "grades" if isinstance(value, int | float) and not isinstance(value, bool) \
        else "labels"


def _rank_key(value: Any) -> tuple[int, Any]:
    """Sort key of a value by credit (lowest first)."""
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, int | float):
        return (0, value)
    text = str(value)
    if text in LABEL_RANK:
        return (0, LABEL_RANK[text])
    return (1, text)  # unknown labels: after the known ones, alphabetically


def combine_scalar(votes: Sequence[Any], rule: str) -> Any:
    """One item's aggregate of its (non-empty) votes under `rule`."""
    ordered = sorted(votes, key=_rank_key)
    if rule == "majority":
        counts = Counter(votes)
        top = max(counts.values())
        return next(v for v in ordered if counts[v] == top)  # ties: the lowest credit
    if rule == "median":
        return ordered[(len(ordered) - 1) // 2]  # the lower median
    if rule == "mean":
        if all(kind_of(v) == "grades" for v in votes):
            return _round_half_down(sum(votes) / len(votes))
        scale = _scale(votes)
        return scale[_round_half_down(sum(scale.index(v) for v in votes) / len(votes))]
    raise ValueError(f"unknown aggregation {rule!r}; use one of {', '.join(AGGREGATES)}")


def _scale(votes: Sequence[Any]) -> list[Any]:
    """The ordinal scale labels lie on: the menu that holds them all, else the distinct votes
    by credit."""
    for menu in LABEL_MENUS:
        if all(isinstance(v, str) and v in menu for v in votes):
            return list(menu)
    return sorted(set(votes), key=_rank_key)


def _round_half_down(x: float) -> int:
    """The nearest integer, x.5 going down."""
    return math.ceil(x - 0.5)


def combine(votes: Sequence[Any], rules: dict[str, str]) -> tuple[Any, list[bool]]:
    """The aggregate of the votes (every one a scalar, or every one a list of the same length:
    aggregated per position) and, per item, whether the votes on it disagree. Lists of
    different lengths cannot be lined up, and records (dicts) have no order: the first vote
    is taken (every item of such lists disagreeing)."""
    first = votes[0]
    if isinstance(first, list | tuple):
        if not all(isinstance(v, list | tuple) and len(v) == len(first) for v in votes):
            return first, [True] * len(first)
        items = list(zip(*votes))
        return ([combine_scalar(item, rules[kind_of(item[0])]) for item in items],
                [len(set(map(_hashable, item))) > 1 for item in items])
    differ = [len(set(map(_hashable, votes))) > 1]
    if isinstance(first, dict):  # no rule orders records: the first vote, as for free text
        return first, differ
    return combine_scalar(votes, rules[kind_of(first)]), differ


def _hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, list | dict) else value


def closed_answer(schema: Any) -> bool:
    """Whether an answer of `schema` is chosen from a closed menu (every string an enum, or
    numbers, booleans, and arrays and objects of those): such answers can be voted on. Free
    text (a string with no enum: nuggets, questions, key points) and no schema cannot."""
    if not isinstance(schema, dict):
        return False
    if "enum" in schema:
        return True
    kind = schema.get("type")
    if kind in ("integer", "number", "boolean"):
        return True
    if kind == "array":
        return closed_answer(schema.get("items"))
    if kind == "object":
        properties = schema.get("properties") or {}
        return bool(properties) and all(closed_answer(p) for p in properties.values())
    return False
