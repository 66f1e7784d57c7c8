"""What a step spent, kept beside its output across every invocation (`usage.json`).

One record per output (`provenance.usage_path`), rewritten atomically at the end of every
invocation of the step, when it is interrupted (Ctrl-C, an error) and every
CHECKPOINT_SECONDS while it runs, so a kill loses at most that much of the count:

    {"format": 2, "step": "assign --method nuggets",
     "usage": {every Stats counter summed over the invocations, "cost": C},
     "invocations": N,
     "history": [{"started", "ended", "finished": bool, "usage": {...this one's, "cost"},
                  "prices": {...}}, ...],
     "prices": {the latest invocation's prices},
     "inputs": {STEP: usage, ...}}  # the steps that made this step's inputs (a graded pool)

A resumed or repeated invocation (a cached rerun spends nothing) adds to what the earlier ones
spent; it never replaces it. "cost" is the sum of the invocations' costs, each at its own
prices (batch answers at batch prices); it is left out when an invocation that spent tokens
had no prices. A record of another step (another method into the same folder) is replaced.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.run.provenance import (
    read_json_object,
    usage_of_input,
    usage_path,
    usage_steps,
)

USAGE_FORMAT = 2
CHECKPOINT_SECONDS = 30.0
SPENDING = ("calls", "batch_calls", "abandoned")  # a counter > 0: the invocation spent


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def spent_anything(tokens: Mapping[str, Any]) -> bool:
    """Whether usage counters record anything paid for (a call made, a batch answer)."""
    return any(int(tokens.get(name, 0) or 0) for name in SPENDING)


def cost_of(tokens: Mapping[str, Any], prices: Any) -> float | None:
    """The cost of usage counters at `prices` (flow/dryrun.Prices): 0 when nothing was spent,
    None when something was and no price is known."""
    cost = prices.spent(tokens) if prices is not None else None
    if cost is None and not spent_anything(tokens):
        return 0.0
    return cost


def added(earlier: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """Two usage blocks summed counter by counter (every numeric counter either has; "cost"
    only when both know theirs)."""
    total: dict[str, Any] = {}
    for name in {*earlier, *more} - {"cost"}:
        a, b = earlier.get(name, 0), more.get(name, 0)
        if isinstance(a, int | float) and isinstance(b, int | float):
            total[name] = a + b
    if earlier.get("cost") is not None and more.get("cost") is not None:
        total["cost"] = float(earlier["cost"]) + float(more["cost"])
    return total


class UsageLedger:
    """The usage record of one step's output, for one invocation: what the earlier ones
    recorded (read once, at the start) plus what this one has spent so far."""

    def __init__(self, output: Path, step: str, made_from: Sequence[Path] = (), *,
                 folder: bool = False) -> None:
        self.path = usage_path(output, folder)
        self.step = step
        self.made_from = list(made_from)
        self.started = _now()
        self.last_write = time.monotonic()
        self.earlier = self._read()

    def _read(self) -> dict[str, Any] | None:
        """The record the earlier invocations left (None: none, unreadable, another step's).
        A record of the first format (no history) counts as its invocations, as one entry."""
        old = read_json_object(self.path)
        if old is None or old.get("step") != self.step or not isinstance(old.get("usage"), dict):
            return None
        if not isinstance(old.get("history"), list):
            old["history"] = [{"usage": old["usage"], "prices": old.get("prices"),
                               "invocations": int(old.get("invocations", 1))}]
        return old

    def due(self) -> bool:
        """Whether a checkpoint is due (CHECKPOINT_SECONDS since the last write)."""
        return time.monotonic() - self.last_write >= CHECKPOINT_SECONDS

    def write(self, tokens: Mapping[str, Any], prices: Any, finished: bool) -> dict[str, Any]:
        """Write the record: the earlier invocations' usage plus this one's `tokens`, priced at
        `prices`; returns it."""
        mine: dict[str, Any] = dict(tokens)
        cost = cost_of(tokens, prices)
        if cost is not None:
            mine["cost"] = cost
        entry: dict[str, Any] = {"started": self.started, "ended": _now(),
                                 "finished": finished, "usage": mine}
        recorded = prices.recorded(bool(tokens.get("batch_calls"))) if prices is not None \
            else None
        if recorded is not None:
            entry["prices"] = recorded
        earlier = self.earlier or {"usage": {}, "invocations": 0, "history": []}
        first = self.earlier is None
        total = mine if first else added(earlier["usage"], mine)
        record: dict[str, Any] = {
            "format": USAGE_FORMAT, "step": self.step, "usage": total,
            "invocations": int(earlier["invocations"]) + 1,
            "history": [*earlier["history"], entry]}
        if recorded is not None:
            record["prices"] = recorded
        inputs: dict[str, Any] = {}
        for path in self.made_from:
            found = usage_of_input(path)
            if found is not None:
                inputs.update(usage_steps(found))
        if inputs:
            record["inputs"] = inputs
        write_text_atomic(self.path, json.dumps(record, indent=2) + "\n")
        self.last_write = time.monotonic()
        return record
