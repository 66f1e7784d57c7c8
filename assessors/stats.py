"""What `Assessor.ask` returns (Parsed) and what the Assessor counts (Stats)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Parsed", "Stats"]

T = TypeVar("T")


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
    server may have charged them; their tokens are not known)."""

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
