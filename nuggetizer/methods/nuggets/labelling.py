"""What nugget creation and its labelling steps share: a batch of labels asked for at once, and
an answer that never parsed (kept with the output, counted in the summary)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from nuggetizer.assessors.base import Assessor
from nuggetizer.parsing import labels_schema, parse_labels
from nuggetizer.templates import Prompt

T = TypeVar("T")


def chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class Unparsed:
    """An LLM answer that never parsed: kept with the output, counted in the summary."""

    step: str
    batch: int
    raw: str
    error: str
    reasoning: str | None = None  # a reasoning model's thinking before `raw`

    def record(self) -> dict:
        """JSON form stored beside the result."""
        record = {"step": self.step, "batch": self.batch, "error": self.error, "raw": self.raw}
        if self.reasoning:
            record["reasoning"] = self.reasoning
        return record



async def label_batches(
    assessor: Assessor,
    prompt: Prompt,
    variables: dict,
    nuggets: Sequence[str],
    allowed: Sequence[str],
    batch_size: int,
    reasks: int,
) -> list[tuple[list[str] | None, str, str]]:
    """Ask for one label per nugget, `batch_size` nuggets a call, batches concurrently."""

    async def one(batch: Sequence[str]) -> tuple[list[str] | None, str, str]:
        parsed = await assessor.ask(
            prompt.render(nuggets=list(batch), **variables),
            lambda text: parse_labels(text, allowed, len(batch)),
            schema=labels_schema(list(allowed), len(batch)),
            max_tokens=16 * len(batch) + 32,
            reasks=reasks,
        )
        return parsed.value, parsed.raw, parsed.error or ""

    return await asyncio.gather(*(one(b) for b in chunks(nuggets, batch_size)))
