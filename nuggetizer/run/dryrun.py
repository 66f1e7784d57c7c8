"""`--dry-run`: render every prompt a step would send, count it, call nothing.

A stand-in of the step's assessor (Assessor.stand_in: its calls answered by a DryCounter), with
the same model and settings (so the same cache keys): a call the cache holds is replayed (free,
counted apart); any other is counted (its prompt tokens by the chosen tokenizer, its completion
estimated) and answered with a refusal, which leaves its item unjudged without re-asks and
without touching the cache. The step writes into a temporary folder that is thrown away.

What this can count:
  * assign (a key that exists): every call exactly (calls and prompts), as long as the real
    answers parse at once; a re-ask after an unreadable answer is an extra call it cannot see.
  * nuggetize: nugget creation is iterative (each window's prompt holds the nuggets so far): the
    first window of every topic is exact; the later windows are rendered with the list the
    dry run has (empty), a lower bound on their prompt tokens (each real one carries up to
    --max-nuggets nuggets more). Importance calls depend on the created nuggets: they are
    not rendered, only estimated as calls (ceil(max_nuggets / label_batch) per topic, an
    upper bound), without tokens.
  * evaluate: the steps above; assignment against keys still to be built cannot be rendered:
    it is counted only when the key file already exists (the track's `key`, or an earlier
    run's).
Completion tokens are estimated: `max` is the sum of the requests' max_tokens (an upper
bound); `expected` is --completion-ratio x prompt tokens per call, capped at max_tokens.
A model known to reason (--reasoning-effort or --reasoning-tokens given, or its server known,
from the cache, to take only max_completion_tokens) also thinks before it answers, billed as
completion tokens: `expected` and `max` then add the reasoning tokens a call is expected to
spend (--reasoning-tokens, else by the reasoning effort: assessors/reasoning.py), said as an
assumption.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.ensemble import Ensemble
from nuggetizer.assessors.protocol import Completion, RefusedError, Request
from nuggetizer.run.tokens import Tokenizer, make_tokenizer

DEFAULT_COMPLETION_RATIO = 0.05  # expected completion tokens per prompt token (label lists)


@dataclass
class Ledger:
    """What a dry run counted."""

    calls: int = 0
    prompt_tokens: int = 0
    max_completion_tokens: int = 0
    expected_completion_tokens: int = 0
    cache_hits: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    expected_reasoning_tokens: int = 0  # part of expected_completion_tokens (an assumption)
    estimated_calls: int = 0  # calls that could not be rendered (e.g. importance)

    def minus(self, other: Ledger) -> Ledger:
        return Ledger(**{f.name: getattr(self, f.name) - getattr(other, f.name)
                         for f in dataclasses.fields(self)})

    def plus(self, other: Ledger) -> Ledger:
        return Ledger(**{f.name: getattr(self, f.name) + getattr(other, f.name)
                         for f in dataclasses.fields(self)})


class DryRefusal(RefusedError):
    """The dry run's answer to a call it counted."""


class DryCounter:
    """A dry run's sender (see the module's doc): a call the cache holds is replayed (counted
    in the stand-in's stats); any other is counted here and refused."""

    def __init__(self, tokenizer: Tokenizer, completion_ratio: float = DEFAULT_COMPLETION_RATIO,
                 reasoning_tokens: int = 0, allowance: int = 0) -> None:
        self.tokenizer = tokenizer
        self.completion_ratio = completion_ratio
        self.reasoning_tokens = reasoning_tokens
        self.allowance = allowance  # reasoning tokens sent on top of each request's budget
        self.ledger = Ledger()

    async def complete(self, assessor: Assessor, request: Request) -> Completion:
        key = assessor.cache_key(request) if assessor.cache is not None else None
        replayed = assessor.replay(key)
        if replayed is not None:
            return replayed
        prompt = self.tokenizer.count(request.messages)
        self.ledger.calls += 1
        self.ledger.prompt_tokens += prompt
        self.ledger.max_completion_tokens += request.max_tokens + self.allowance
        self.ledger.expected_completion_tokens += self.reasoning_tokens + min(
            request.max_tokens, math.ceil(prompt * self.completion_ratio))
        self.ledger.expected_reasoning_tokens += self.reasoning_tokens
        raise DryRefusal("dry run: not sent")


DEFAULT_BATCH_DISCOUNT = 0.5  # OpenAI's Batch API: half the price of a live call


@dataclass
class Prices:
    """US dollars (or any currency) per million tokens: a live call's, and a batch answer's
    (`batch_input`/`batch_output` when given, else the live price less `batch_discount`, the
    share taken off). `batch`: these are the batch prices (a dry run of a --batch-api step)."""

    input: float | None = None
    output: float | None = None
    batch_input: float | None = None
    batch_output: float | None = None
    batch_discount: float = DEFAULT_BATCH_DISCOUNT
    batch: bool = False

    @property
    def known(self) -> bool:
        """Whether any price was given."""
        return any(p is not None for p in (self.input, self.output, self.batch_input,
                                           self.batch_output))

    def _batch_price(self, given: float | None, live: float | None) -> float:
        if given is not None:
            return given
        return (live or 0.0) * (1.0 - self.batch_discount)

    def batched(self) -> Prices:
        """The batch prices as the prices of every call (a dry run of a --batch-api step)."""
        return Prices(self._batch_price(self.batch_input, self.input),
                      self._batch_price(self.batch_output, self.output),
                      batch_discount=self.batch_discount, batch=True) if self.known else self

    def spent(self, tokens: dict[str, int]) -> float | None:
        """The cost of the tokens a step spent (its usage counters: the live calls' tokens at
        the live prices, the batch answers' at the batch prices), None without prices."""
        if not self.known:
            return None
        live = (tokens.get("prompt_tokens", 0) * (self.input or 0.0)
                + tokens.get("completion_tokens", 0) * (self.output or 0.0))
        batch = (tokens.get("batch_prompt_tokens", 0)
                 * self._batch_price(self.batch_input, self.input)
                 + tokens.get("batch_completion_tokens", 0)
                 * self._batch_price(self.batch_output, self.output))
        return (live + batch) / 1e6

    def recorded(self, batch: bool = False) -> dict[str, float | None] | None:
        """The prices as provenance records them (per million tokens), with the batch prices
        when batch answers were priced (`batch`); None without any price."""
        if not self.known:
            return None
        prices = {"input_per_million": self.input, "output_per_million": self.output}
        if batch:
            prices["batch_input_per_million"] = self._batch_price(self.batch_input, self.input)
            prices["batch_output_per_million"] = self._batch_price(self.batch_output,
                                                                   self.output)
        return prices

    def cost(self, ledger: Ledger) -> tuple[float, float] | None:
        """(expected, at most) of the calls to make, None without prices."""
        if self.input is None and self.output is None:
            return None
        pin, pout = (self.input or 0.0) / 1e6, (self.output or 0.0) / 1e6
        return (ledger.prompt_tokens * pin + ledger.expected_completion_tokens * pout,
                ledger.prompt_tokens * pin + ledger.max_completion_tokens * pout)


# where the money comes from, said when a dry run was given no prices
NO_PRICES = ("no cost without prices: --price-in and --price-out (per million tokens), or a "
             "track's [prices] table")


def report_lines(step: str, ledger: Ledger, tokenizer: Tokenizer, prices: Prices,
                 note: str = "") -> list[str]:
    """What the dry run of one step found, for stderr."""
    kind = "estimated" if tokenizer.estimate else "counted"
    line = (f"dry run {step}: {ledger.calls} calls to make, {ledger.prompt_tokens} prompt "
            f"tokens ({kind}, {tokenizer.name}), completion tokens about "
            f"{ledger.expected_completion_tokens} (at most {ledger.max_completion_tokens}); "
            f"{ledger.cache_hits} calls the cache holds (free: {ledger.cached_prompt_tokens} + "
            f"{ledger.cached_completion_tokens} tokens spent earlier)")
    if ledger.expected_reasoning_tokens:
        line += (f"; the completion tokens assume {ledger.expected_reasoning_tokens} "
                 f"reasoning tokens ({ledger.expected_reasoning_tokens // max(1, ledger.calls)}"
                 " per call, an assumption: --reasoning-tokens)")
    if ledger.estimated_calls:
        line += f"; about {ledger.estimated_calls} more calls not rendered"
    cost = prices.cost(ledger)
    if cost is not None:
        at = " at batch prices" if prices.batch else ""
        line += f"; cost about {cost[0]:.4f} (at most {cost[1]:.4f}){at}"
    elif ledger.calls or ledger.estimated_calls:
        line += f"; {NO_PRICES}"
    lines = [line]
    if note:
        lines.append(f"dry run {step}: {note}")
    return lines


@dataclass
class DryRun:
    """The assessor a dry run's steps call (a stand-in of the real one, or an ensemble of
    stand-ins of its members, asked as the ensemble asks them), and what it counted."""

    assessor: Any
    tokenizer: Tokenizer
    counters: list[tuple[Assessor, DryCounter]]

    def counted(self) -> Ledger:
        """What it counted so far: the calls to make, and the cache's replays (the
        stand-ins' stats; the real assessor's are untouched)."""
        total = Ledger()
        for stand_in, counter in self.counters:
            total = total.plus(dataclasses.replace(
                counter.ledger, cache_hits=stand_in.stats.cache_hits,
                cached_prompt_tokens=stand_in.stats.cached_prompt_tokens,
                cached_completion_tokens=stand_in.stats.cached_completion_tokens))
        return total


def _counted(real: Assessor, tokenizer: Tokenizer, ratio: float
             ) -> tuple[Assessor, DryCounter]:
    counter = DryCounter(tokenizer, ratio, expected_reasoning(real),
                         int(real.options.get("reasoning_allowance") or 0))
    return real.stand_in(counter), counter


def dry_assessor(real: Any, options: dict[str, Any]) -> DryRun:
    """The dry run of the real assessor (or ensemble) the command's dry-run options
    describe."""
    tokenizer = make_tokenizer(options.get("tokenizer") or "auto")
    ratio = options.get("completion_ratio") or DEFAULT_COMPLETION_RATIO
    if isinstance(real, Ensemble):
        counters = [_counted(m, tokenizer, ratio) for m in real.members]
        ensemble = Ensemble([a for a, _ in counters], samples=real.samples,
                            aggregate=real.aggregate)
        ensemble.prices = real.prices
        return DryRun(ensemble, tokenizer, counters)
    stand_in, counter = _counted(real, tokenizer, ratio)
    return DryRun(stand_in, tokenizer, [(stand_in, counter)])


def expected_reasoning(real: Assessor) -> int:
    """Reasoning tokens a call is assumed to spend: what the backend expects of a model known
    to reason (one whose budgets carry a reasoning allowance), else none."""
    real.recall()
    if not real.options.get("reasoning_allowance"):
        return 0
    return int(getattr(real.backend, "expected_reasoning", 0))
