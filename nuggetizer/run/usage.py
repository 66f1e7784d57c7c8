"""What a step spent, kept beside its output across every invocation (`usage.json`).

One record per output (`provenance.usage_path`), rewritten atomically at the end of every
invocation of the step, when it is interrupted (Ctrl-C, an error) and every
CHECKPOINT_SECONDS while it runs (an entry still "open": a checkpoint):

    {"format": 2, "step": "assign --method nuggets",
     "usage": {every Stats counter summed over the invocations, "cost": C},
     "invocations": N,
     "history": [{"id", "started", "ended", "finished": bool, "usage": {...this one's,
                  "cost"}, "prices": {...}, "open"/"killed": true}, ...],
     "prices": {the latest invocation's prices},
     "inputs": {STEP: usage, ...}}  # the steps that made this step's inputs (a graded pool)

A resumed or repeated invocation (a cached rerun spends nothing) adds to what the earlier ones
spent; it never replaces it.

A kill (SIGKILL, power) loses nothing of the count: every answer paid for is journalled, one
line in `usage.json.spend` (formats/writing.Journal), as soon as it arrives and before the
cache or the step's journal holds it (a live call's tokens; a batch answer's, with its cache
key, when the step uses it). The invocation's last write of usage.json removes that journal.
The next invocation finds the lines of a killed one there and records it as an entry of its
own ("killed": true; replacing its last checkpoint, which the lines hold and more), says so,
and carries on. An answer the server sent that never reached the process before the kill
cannot be counted by any client, so every attempt of a live call is journalled as "sent"
before it goes out (and "unanswered" or "abandoned" when it ends without an answer): the
calls a killed invocation sent and saw no outcome of are its `lost` calls ("4 calls sent,
answers lost: the provider may bill them"), and what the provider bills lies between
`calls` and `calls + lost`.

"cost" is the sum of the invocations' costs, each at its own prices (batch answers at batch
prices); it is left out when an invocation that spent tokens had no prices. A record of
another step (another method into the same folder) is replaced.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nuggetizer.assessors.stats import PAYER
from nuggetizer.errors import InputError
from nuggetizer.formats.writing import Journal, write_text_atomic
from nuggetizer.run.dryrun import Prices
from nuggetizer.run.provenance import (
    read_json_object,
    usage_of_input,
    usage_path,
    usage_steps,
)

USAGE_FORMAT = 2
CHECKPOINT_SECONDS = 30.0
CHECKPOINT_ENV = "NUGGETIZER_USAGE_CHECKPOINT"  # seconds between checkpoints, when set
SPENDING = ("calls", "batch_calls", "abandoned", "lost")  # a counter > 0: the invocation spent
PAID = ("calls", "prompt_tokens", "completion_tokens", "reasoning_tokens", "batch_calls",
        "batch_prompt_tokens", "batch_completion_tokens", "batch_reasoning_tokens", "abandoned")
ATTEMPTS = ("sent", "unanswered")  # journal lines of each live attempt (Payer.sent)


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


def _checkpoint_seconds() -> float:
    """Seconds between checkpoints: $NUGGETIZER_USAGE_CHECKPOINT, else CHECKPOINT_SECONDS."""
    try:
        return max(0.0, float(os.environ.get(CHECKPOINT_ENV, "") or CHECKPOINT_SECONDS))
    except ValueError:
        return CHECKPOINT_SECONDS


def spend_path(usage: Path) -> Path:
    """The journal of the answers paid for by the invocation under way: `usage.json.spend`."""
    return usage.with_name(usage.name + ".spend")


def _prices(fields: Any) -> Any:
    """The prices a spend journal recorded (flow/dryrun.Prices' fields), None when unknown."""
    if not isinstance(fields, dict):
        return None
    known = {f.name for f in dataclasses.fields(Prices)}
    try:
        return Prices(**{k: v for k, v in fields.items() if k in known})
    except TypeError:
        return None


def summed(usages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Usage blocks added up (`added`), {} for none."""
    total: dict[str, Any] = dict(usages[0]) if usages else {}
    for more in usages[1:]:
        total = added(total, more)
    return total


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
    recorded (read once, at the start, with the spend of any killed one folded in) plus what
    this one has spent so far. While `paying`, it journals every answer paid for (a Payer,
    assessors/stats.py)."""

    def __init__(self, output: Path, step: str, made_from: Sequence[Path] = (), *,
                 folder: bool = False, path: Path | None = None) -> None:
        self.path = path or usage_path(output, folder)
        self.step = step
        self.made_from = list(made_from)
        self.started = _now()
        self.id = f"{self.started}/{os.getpid()}/{secrets.token_hex(4)}"
        self.last_write = time.monotonic()
        self.checkpoint = _checkpoint_seconds()
        self.spend = Journal(spend_path(self.path))
        self.prices: Any = None
        self.batch_keys: set[str] = set()  # batch answers a killed invocation journalled
        self._journalling = False
        self.earlier = self._read()
        self.recovered = self._recover()  # the entries of killed invocations, now recorded

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

    def _journalled(self) -> dict[str, dict[str, Any]]:
        """Invocation id -> {"usage": what it journalled as paid, "started", "prices"}, for
        the invocations of this step that paid for anything."""
        runs: dict[str, dict[str, Any]] = {}
        try:
            lines = self.spend.load()
        except InputError as exc:
            raise InputError(exc.path, exc.line, f"{exc.message} in the spend journal of a "
                             "killed invocation: repair the line, or delete the file (its spend "
                             "is then not counted)") from None
        attempts: dict[str, dict[str, int]] = {}
        for line in lines:
            run = runs.setdefault(str(line.get("id")), {"usage": {}})
            for name in ("step", "started", "prices"):
                if name in line:
                    run[name] = line[name]
            for name in PAID:
                value = line.get(name)
                if isinstance(value, int):
                    run["usage"][name] = run["usage"].get(name, 0) + value
            for name in ATTEMPTS:
                if isinstance(line.get(name), int):
                    counted = attempts.setdefault(str(line.get("id")), {})
                    counted[name] = counted.get(name, 0) + int(line[name])
            if isinstance(line.get("key"), str):
                self.batch_keys.add(line["key"])
        for inv, counted in attempts.items():  # sent, and no outcome seen: in flight
            done = runs[inv]["usage"]
            lost = counted.get("sent", 0) - counted.get("unanswered", 0) - int(
                done.get("calls", 0)) - int(done.get("abandoned", 0))
            if lost > 0:
                done["lost"] = lost
        return {inv: run for inv, run in runs.items()
                if run.get("step") == self.step and spent_anything(run["usage"])}

    def _recover(self) -> list[dict[str, Any]]:
        """Fold in what killed invocations journalled and usage.json lacks (its entry absent,
        or a checkpoint: "open"); their entries, as now recorded."""
        runs = self._journalled()
        earlier = self.earlier or {"usage": {}, "invocations": 0, "history": []}
        entries = {e.get("id"): e for e in earlier["history"] if isinstance(e, dict)}
        recovered = []
        for inv, run in runs.items():
            entry = entries.get(inv)
            if entry is not None and not entry.get("open"):
                continue  # its last write was made: counted there
            killed = _killed_entry(inv, run, entry)
            if entry is None:
                earlier["history"].append(killed)
                earlier["invocations"] = int(earlier["invocations"]) + 1
            else:  # a checkpoint: the journal holds what it paid for, and what came after
                entry.clear()
                entry.update(killed)
            recovered.append(killed)
        if recovered:
            earlier["usage"] = summed([e.get("usage") or {} for e in earlier["history"]])
            self.earlier = earlier
        return recovered

    @contextmanager
    def paying(self, prices: Any) -> Iterator[None]:
        """Journal every answer paid for in this context (its tasks too) at `prices`."""
        self.prices = prices
        token = PAYER.set(self)
        try:
            yield
        finally:
            PAYER.reset(token)

    def paid(self, spent: Mapping[str, int], key: str | None) -> None:
        """Journal one answer paid for (a Payer's)."""
        line: dict[str, Any] = {name: value for name, value in spent.items() if value}
        if key is not None:
            line["key"] = key
        self._journal(line)

    def sent(self, outcome: str) -> None:
        """Journal one attempt of a live call: sent, or settled without an answer (a
        Payer's)."""
        self._journal({outcome: 1})

    def _journal(self, fields: Mapping[str, Any]) -> None:
        """One line of the spend journal; the invocation's first says which step, when it
        started and at what prices."""
        line: dict[str, Any] = {"id": self.id}
        if not self._journalling:
            line.update(step=self.step, started=self.started)
            if self.prices is not None and self.prices.known:
                line["prices"] = dataclasses.asdict(self.prices)
        line.update(fields)
        self.spend.append(line)
        self._journalling = True

    def paid_before(self, key: str) -> bool:
        """Whether a killed invocation already journalled the batch answer `key` as spent."""
        return key in self.batch_keys

    def due(self) -> bool:
        """Whether a checkpoint is due (CHECKPOINT_SECONDS, or $NUGGETIZER_USAGE_CHECKPOINT,
        since the last write)."""
        return time.monotonic() - self.last_write >= self.checkpoint

    def write(self, tokens: Mapping[str, Any], prices: Any, finished: bool, *,
              last: bool = True) -> dict[str, Any]:
        """Write the record: the earlier invocations' usage plus this one's `tokens`, priced at
        `prices`; returns it. `last`: the invocation's last write (else a checkpoint), after
        which its spend journal is removed."""
        mine: dict[str, Any] = dict(tokens)
        cost = cost_of(tokens, prices)
        if cost is not None:
            mine["cost"] = cost
        entry: dict[str, Any] = {"id": self.id, "started": self.started, "ended": _now(),
                                 "finished": finished, "usage": mine}
        if not last:
            entry["open"] = True
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
        if last:
            self.spend.remove()
            self._journalling = False
        return record


def usage_at(path: Path) -> dict[str, Any]:
    """The usage block of the record at `path` (a usage.json) with what killed invocations
    journalled beside it and the record lacks added, as the step's next invocation will
    record it; {} when there is neither. Nothing is written."""
    record = read_json_object(path) or {}
    step = record.get("step")
    if step is None:  # killed before its first write: the journal names the step
        lines = Journal(spend_path(path)).load()
        step = next((line["step"] for line in lines if "step" in line), None)
    if not isinstance(step, str):
        return {}
    ledger = UsageLedger(path, step, path=path)
    return dict((ledger.earlier or {}).get("usage") or {})


def usage_under(folder: Path) -> dict[str, Any]:
    """Every step's usage under `folder` (its usage.json files, killed invocations
    included: `usage_at`), added up."""
    records = {p.with_name(p.name.removesuffix(".spend")) for p in folder.rglob("*usage.json*")
               if p.name.endswith(("usage.json", "usage.json.spend"))}
    return summed([found for p in sorted(records) if (found := usage_at(p))])


def _killed_entry(inv: str, run: Mapping[str, Any], checkpoint: Mapping[str, Any] | None
                  ) -> dict[str, Any]:
    """The history entry of a killed invocation from what its spend journal holds; the other
    counters (cache hits, retries, ...) and the end from its last `checkpoint`, if any."""
    counted = dict((checkpoint or {}).get("usage") or {})
    counted.pop("cost", None)
    usage: dict[str, Any] = {**counted, **run["usage"]}
    prices = _prices(run.get("prices"))
    cost = cost_of(usage, prices)
    if cost is not None:
        usage["cost"] = cost
    entry: dict[str, Any] = {"id": inv, "started": run.get("started"),
                             "ended": (checkpoint or {}).get("ended"), "finished": False,
                             "killed": True, "usage": usage}
    recorded = prices.recorded(bool(usage.get("batch_calls"))) if prices is not None else None
    if recorded is not None:
        entry["prices"] = recorded
    return entry
