"""Several assessors judging as one: an Ensemble is asked exactly as an Assessor is (the methods
do not know the difference), asks every member (each `samples` times), and returns the
aggregate of their parsed answers (assessors/aggregation.py) as one Parsed.

- Sample 0 of a member is its ordinary request (seed None: the cache key of a single-assessor
  run, so existing caches replay); sample k > 0 asks with seed k (a key of its own).
- Only answers from a closed menu are voted on (labels, grades, yes/no: `closed_answer` of the
  call's schema). Free text (nugget creation, CRUX questions, KPR key points) and raw
  completions (`complete`: UDCG's log-probabilities) come from the first member's sample 0
  alone: texts cannot be voted on, and the keys built from them stay one model's wording.
- A member whose answer never parsed, or was refused, is missing: the aggregate is over the
  members that answered (the missing counted). When none answered the value is None and the
  item is unjudged, as for a single assessor.
- Every aggregated call is noted, with each vote (member, sample, parsed value, raw answer),
  in the VOTES list of the unit being judged (run/votes.py puts it into the unit's record).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from .aggregation import AGGREGATE_DEFAULTS, AGGREGATES, closed_answer, combine
from .base import DEFAULT_REASKS, REFUSAL_REASONS_KEPT, Assessor, Parsed, Stats, close_now
from .protocol import Completion, Request

T = TypeVar("T")
# The calls an ensemble aggregated for the unit being judged (set per unit by the flow).
VOTES: ContextVar[list[dict[str, Any]] | None] = ContextVar("nuggetizer_votes", default=None)


class Ensemble:
    """Assessor-like: `ask`, `complete`, `stats`, `provenance`, `aclose` (module doc)."""

    prices: Any = None
    closer: Callable[[Any], None] | None = None  # closes it from sync code (base.close_now)

    def __init__(self, members: Sequence[Assessor], *, samples: int = 1,
                 aggregate: str | None = None) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one assessor")
        if samples < 1:
            raise ValueError(f"samples must be at least 1, got {samples}")
        if aggregate is not None and aggregate not in AGGREGATES:
            raise ValueError(f"unknown aggregation {aggregate!r}")
        self.members = list(members)
        self.samples = samples
        self.aggregate = aggregate
        self.rules = {kind: aggregate or rule for kind, rule in AGGREGATE_DEFAULTS.items()}
        self.voters = [(m, s) for m in self.members for s in range(samples)]
        self.lead = self.members[0]
        self.spec = "ensemble:" + "+".join(m.spec for m in self.members)
        self.model = "+".join(dict.fromkeys(m.model for m in self.members))
        self.cache = self.lead.cache
        self.temperature = self.lead.temperature
        self.max_tokens = self.lead.max_tokens

    @property
    def concurrency(self) -> int:
        return max(m.concurrency for m in self.members)

    @property
    def stats(self) -> Stats:
        """Every member's counters added up (a fresh Stats each time)."""
        total = Stats()
        for member in self.members:
            for f in dataclasses.fields(Stats):
                if f.name != "refusal_reasons":
                    setattr(total, f.name, getattr(total, f.name) + getattr(member.stats, f.name))
            total.refusal_reasons += member.stats.refusal_reasons
        total.refusal_reasons = total.refusal_reasons[:REFUSAL_REASONS_KEPT]
        return total

    @property
    def in_flight(self) -> int:
        """Calls sent and not yet answered, over every member."""
        return sum(m.in_flight for m in self.members)

    @property
    def stopping(self) -> bool:
        return any(m.stopping for m in self.members)

    def stop_new_calls(self) -> None:
        """Ctrl-C: no member sends a new call; those in flight finish (Assessor's)."""
        for member in self.members:
            member.stop_new_calls()

    async def drained(self) -> None:
        """Once stopped: every member's calls under way have settled."""
        for member in self.members:
            await member.drained()

    async def complete(self, request: Request) -> Completion:
        """A raw completion: the first member's (not voted on)."""
        return await self.lead.complete(request)

    async def ask(self, messages: Sequence[tuple[str, str]], parse: Callable[[str], T], *,
                  schema: dict[str, Any] | None = None, max_tokens: int = 512,
                  reasks: int = DEFAULT_REASKS) -> Parsed[T]:
        """Every voter's answer, parsed, aggregated (module doc); free text: the lead's."""
        if not closed_answer(schema):
            return await self.lead.ask(messages, parse, schema=schema, max_tokens=max_tokens,
                                       reasks=reasks)
        noted = VOTES.get()
        entry: dict[str, Any] = {}
        if noted is not None:
            noted.append(entry)  # before any wait: calls are noted in the order they start
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(member.ask(
                messages, parse, schema=schema, max_tokens=max_tokens, reasks=reasks,
                seed=sample or None)) for member, sample in self.voters]
        answers = [t.result() for t in tasks]
        votes = [{"assessor": m.spec, "sample": s, "value": p.value, "raw": p.raw}
                 | ({"error": p.error} if p.error else {})
                 for (m, s), p in zip(self.voters, answers)]
        given = [p for p in answers if p.value is not None]
        attempts = sum(p.attempts for p in answers)
        if not given:
            reasons = "; ".join(f"{v['assessor']}#{v['sample']}: {v.get('error')}"
                                for v in votes)
            entry.update(value=None, disagreement=[], missing=len(votes), votes=votes)
            return Parsed(value=None, raw=answers[0].raw, attempts=attempts,
                          error=f"no member of the ensemble answered ({reasons})")
        value, disagree = combine([p.value for p in given], self.rules)
        entry.update(value=value, disagreement=disagree, missing=len(answers) - len(given),
                     votes=votes)
        return Parsed(value=value, raw=given[0].raw, attempts=attempts, error=None)

    def provenance(self) -> dict[str, Any]:
        """The ensemble as provenance records it: its members, samples and rules."""
        return {
            "assessor": self.spec,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "ensemble": {
                "members": [m.provenance() for m in self.members],
                "samples": self.samples,
                "aggregate": dict(self.rules),
                "ties": "lower credit",
                "free_text": f"{self.lead.spec} (sample 0)",
            },
        }

    async def aclose(self) -> None:
        for member in self.members:
            await member.aclose()

    async def __aenter__(self) -> Ensemble:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Ensemble:
        return self

    def __exit__(self, *exc: object) -> None:
        close_now(self)

    def __repr__(self) -> str:
        return f"Ensemble({[m.spec for m in self.members]!r}, samples={self.samples})"
