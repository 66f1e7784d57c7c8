"""What `Assessor.ask` returns (Parsed) and what the Assessor counts (Stats)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = ["PAYER", "Parsed", "Payer", "Stats", "paid", "paid_before", "sent"]

T = TypeVar("T")


class Payer(Protocol):
    """What journals each answer paid for (run/usage.py), so a kill cannot lose its spend."""

    def paid(self, spent: Mapping[str, int], key: str | None) -> None:
        """Journal one answer's counters (`calls` or `batch_calls` and their tokens)."""
        ...

    def paid_before(self, key: str) -> bool:
        """Whether an earlier, killed invocation already journalled the batch answer `key`."""
        ...

    def sent(self, outcome: str) -> None:
        """Journal one attempt of a live call: "sent" before it goes out, then "unanswered"
        (the server answered an error: nothing to bill) or "abandoned" (cancelled while in
        flight) when no answer came; an answer is journalled by `paid`. What a killed
        invocation sent and saw no outcome of was in flight: the provider may bill it."""
        ...


# The payer of the step being run (set by flow/steps.run_journalled for its duration); its
# tasks inherit it, so an ensemble's members and a batch's replays reach it too.
PAYER: ContextVar[Payer | None] = ContextVar("nuggetizer_payer", default=None)


def paid(spent: Mapping[str, int], key: str | None = None) -> None:
    """Tell the step's payer (if any) of one answer paid for, before the answer is used."""
    payer = PAYER.get()
    if payer is not None:
        payer.paid(spent, key)


def sent(outcome: str = "sent") -> None:
    """Tell the step's payer (if any) of one attempt of a live call (`Payer.sent`)."""
    payer = PAYER.get()
    if payer is not None:
        payer.sent(outcome)


def paid_before(key: str) -> bool:
    """Whether the step's payer knows the batch answer `key` as spent by a killed invocation."""
    payer = PAYER.get()
    return payer is not None and payer.paid_before(key)


@dataclass
class Parsed(Generic[T]):
    """Outcome of `Assessor.ask`: value is None when every attempt failed to parse.
    `reasoning`: the last answer's thinking (a reasoning model's), kept for audit."""

    value: T | None
    raw: str
    attempts: int
    error: str | None
    reasoning: str | None = None

    def kept(self) -> dict[str, str]:
        """What a record keeps of the answer: `raw`, and `reasoning` when the model thought."""
        kept = {"raw": self.raw}
        if self.reasoning:
            kept["reasoning"] = self.reasoning
        return kept


@dataclass
class Stats:
    """Counters, updated by the Assessor. `refused`: requests the server refused for their
    content (each left an item unjudged); `refusal_reasons`: the first few distinct reasons.
    `prompt_tokens`/`completion_tokens`: the usage the server reported for the calls made;
    `reasoning_tokens`: the part of `completion_tokens` spent thinking (not added on top);
    `cached_*`: the usage stored with the calls the cache replayed (spent earlier, free now).
    `budget_raises`: answers a reasoning model left empty at its token budget, asked again
    with a larger one; `adaptations`: request parameters changed because the server refused
    them (e.g. max_tokens -> max_completion_tokens).
    `batch_*`: the answers of batches this command sent (--batch-api), counted when the step
    replays them (so they are among the cache hits too): spent, at the batch price.
    `abandoned`: calls sent whose answer never came because the command was stopped (the
    server may have charged them; their tokens are not known). `lost`: calls a killed
    invocation had sent and never saw answered (in flight at the kill; the provider may
    bill them): set only in a usage record, from the spend journal (run/usage.py)."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    unparsed: int = 0
    refused: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # the usage the cache replayed (spent by an earlier run)
    cached_completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_reasoning_tokens: int = 0
    budget_raises: int = 0
    adaptations: int = 0
    batch_calls: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0
    batch_reasoning_tokens: int = 0
    abandoned: int = 0
    refusal_reasons: list[str] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        """The counters."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "refusal_reasons"}
