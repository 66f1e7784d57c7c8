"""The Assessor wrapper that every LLM call goes through.

A backend (assessors/protocol.py) does one thing: turn a Request into a Completion, raising
TransientError (worth retrying), RefusedError (this request's content refused: its item is left
unjudged, the run goes on) or PermanentError (the run cannot go on). The Assessor owns
everything else, in this order:

    cache lookup -> classified retries (bounded in time) -> concurrency limit -> backend

(the limit is held for each attempt, not while backing off between attempts, so a retry's
wait never idles a slot that another call could use)

and, in `ask()`, the parse / re-ask loop. Defaults: `complete(request)` sends the Request as it
is; `ask()` builds the Request from the Assessor's temperature and, when the Assessor was given
one, its max_tokens (which then overrides the per-call value, so a user's --max-tokens wins).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
)

from nuggetizer.cache import cache_key
from nuggetizer.errors import AssessorError
from nuggetizer.parsing import ParseFailure

from .protocol import (
    Backend,
    BackendError,
    Completion,
    PermanentError,
    RefusedError,
    Request,
    TransientError,
)

if TYPE_CHECKING:
    from nuggetizer.cache import Cache

__all__ = [
    "Assessor",
    "Backend",
    "BackendError",
    "Completion",
    "ParseFailure",
    "Parsed",
    "PermanentError",
    "RefusedError",
    "Request",
    "Stats",
    "TransientError",
]

T = TypeVar("T")
log = logging.getLogger(__name__)
CACHE_FORMAT = 1  # bump to invalidate every stored call when the key or value shape changes


@dataclass
class Parsed(Generic[T]):
    """Outcome of `Assessor.ask`: value is None when every attempt failed to parse."""

    value: T | None
    raw: str
    attempts: int
    error: str | None


@dataclass
class Stats:
    """Counters, updated by the Assessor. `refused`: requests the server refused for their
    content (each left an item unjudged); `refusal_reasons`: the first few distinct reasons.
    `prompt_tokens`/`completion_tokens`: the usage the server reported for the calls made;
    `cached_*`: the usage stored with the calls the cache replayed (spent earlier, free now)."""

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
    refusal_reasons: list[str] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        """The counters."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "refusal_reasons"}


def correction_message(reason: str) -> str:
    """The user turn sent after an unparseable answer."""
    return (
        f"Your answer could not be used: {reason}. "
        "Answer again with only the required format."
    )


def backoff(attempt: int, initial: float, maximum: float, retry_after: float | None) -> float:
    """Seconds to wait before retry `attempt` (1-based): full jitter over an exponential
    window, initial * 2**(attempt-1) capped at `maximum`, and at least the server's Retry-After.
    """
    delay = random.uniform(0.0, min(maximum, initial * 2 ** (attempt - 1)))
    if retry_after is not None:
        delay = max(delay, float(retry_after))
    return delay


# Refusals with no answer received at all before the run stops: a server that refuses the first
# requests of a run, every one, is misconfigured (wrong structured mode, no log-probs, ...),
# and the items are not to blame.
REFUSALS_BEFORE_STOP = 8
REFUSAL_REASONS_KEPT = 3

# Re-asks after an unparseable answer: enough that a 20% garbage rate loses nothing in
# practice (0.2**5 per call), still bounded (benchmarks/README.md has the measurements).
DEFAULT_REASKS = 4


class Assessor:
    """Owns, in this order: cache lookup -> classified retries -> concurrency limit -> backend."""

    prices: Any = None  # what its tokens cost (flow/dryrun.Prices), set by the command line

    def __init__(
        self,
        backend: Backend,
        cache: Cache | None,
        *,
        concurrency: int | None = None,
        max_retries: int = 6,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        retry_wait: float = 1.0,
        retry_max_wait: float = 60.0,
        retry_budget: float | None = 600.0,
    ) -> None:
        limit = backend.max_concurrency if concurrency is None else min(
            concurrency, backend.max_concurrency
        )
        if limit < 1:
            raise ValueError(f"concurrency must be at least 1, got {limit}")
        self.backend = backend
        self.cache = cache
        self.spec = backend.spec
        self.model = backend.model
        self.concurrency = limit
        self.max_retries = max_retries
        self.retry_budget = retry_budget
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stats = Stats()
        self.retry_wait = retry_wait
        self.retry_max_wait = retry_max_wait
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None

    @property
    def endpoint(self) -> str:
        return str(getattr(self.backend, "endpoint", None) or self.spec)

    @property
    def options(self) -> dict[str, Any]:
        return dict(getattr(self.backend, "options", None) or {})

    def cache_key(self, request: Request) -> str:
        """Key of `request`: what decides the output, never where the model is reached."""
        return cache_key(
            {
                "format": CACHE_FORMAT,
                "model": self.model,
                "messages": [list(m) for m in request.messages],
                "schema": request.schema,
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
                "seed": request.seed,
                "top_logprobs": request.top_logprobs,
                "options": self.options,
            }
        )

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem = asyncio.Semaphore(self.concurrency)
            self._sem_loop = loop
        return self._sem

    def replay(self, key: str | None) -> Completion | None:
        """The completion the cache holds under `key` (counted as a hit), else None."""
        if key is None or self.cache is None:
            return None
        hit = self.cache.get(key)
        if hit is None:
            return None
        self.stats.cache_hits += 1
        replayed = Completion.from_json(hit, cached=True)
        self.stats.cached_prompt_tokens += replayed.prompt_tokens
        self.stats.cached_completion_tokens += replayed.completion_tokens
        return replayed

    async def complete(self, request: Request) -> Completion:
        """The completion of `request`: from the cache, else from the backend (then stored)."""
        key = self.cache_key(request) if self.cache is not None else None
        replayed = self.replay(key)
        if replayed is not None:
            return replayed
        completion = await self._call_with_retries(request)
        try:
            if self._sem is not None and self._sem.locked():
                # a call was waiting for this one's concurrency slot: let it send its request
                # before this one's bookkeeping (cache write, then the caller's parsing) runs,
                # so the server gets it sooner (stored even if cancelled meanwhile)
                await asyncio.sleep(0)
        finally:
            self.stats.calls += 1
            self.stats.prompt_tokens += completion.prompt_tokens
            self.stats.completion_tokens += completion.completion_tokens
            if key is not None and self.cache is not None:
                self.cache.put(key, completion.to_json())
        return completion

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        after = getattr(exc, "retry_after", None)
        return backoff(state.attempt_number, self.retry_wait, self.retry_max_wait, after)

    def _before_sleep(self, state: RetryCallState) -> None:
        self.stats.retries += 1
        exc = state.outcome.exception() if state.outcome is not None else None
        log.warning(
            "%s: transient failure (attempt %d of %d), retrying in %.1f s: %s",
            self.endpoint, state.attempt_number, self.max_retries + 1,
            state.upcoming_sleep, exc,
        )

    async def _call_with_retries(self, request: Request) -> Completion:
        """The backend's completion; TransientErrors retried (tenacity) with backoff, within
        both `max_retries` and `retry_budget` seconds (so a server that keeps failing is given
        up on in bounded time), then an AssessorError that says what was tried."""
        stop = stop_after_attempt(self.max_retries + 1)
        if self.retry_budget is not None:
            stop = stop | stop_before_delay(self.retry_budget)
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientError),
            stop=stop,
            wait=self._wait,
            before_sleep=self._before_sleep,
            reraise=True,
        )
        started = time.monotonic()
        try:
            async for attempt in retrying:
                with attempt:
                    async with self._semaphore():  # held per attempt, not while backing off
                        return await self.backend.complete(request)
        except RefusedError as exc:
            self._count_refusal(exc)
            raise
        except PermanentError as exc:
            raise AssessorError(
                f"{self.spec} at {self.endpoint} refused the request: {exc}{exc.hint}"
            ) from exc
        except TransientError as exc:
            attempts = retrying.statistics.get("attempt_number", 1)
            raise AssessorError(
                f"{self.spec} at {self.endpoint}: gave up after {attempts} attempts in "
                f"{time.monotonic() - started:.0f} s (limits: {self.max_retries + 1} attempts, "
                f"{self.retry_budget} s; $NUGGETIZER_MAX_RETRIES, $NUGGETIZER_RETRY_BUDGET); "
                f"last error: {exc}{exc.hint}"
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _count_refusal(self, exc: RefusedError) -> None:
        """Count a refusal and keep its reason; AssessorError when every request of the run so
        far has been refused (a misconfigured server, not bad items)."""
        stats = self.stats
        stats.refused += 1
        reason = str(exc)
        if len(stats.refusal_reasons) < REFUSAL_REASONS_KEPT and reason not in \
                stats.refusal_reasons:
            stats.refusal_reasons.append(reason)
        log.warning("%s refused a request, its item is left unjudged: %s", self.spec, reason)
        if stats.refused >= REFUSALS_BEFORE_STOP and stats.calls + stats.cache_hits == 0:
            raise AssessorError(
                f"{self.spec} at {self.endpoint}: every request is being refused "
                f"({stats.refused} of {stats.refused}, none answered), so the server or its "
                f"settings are wrong rather than the items; first refusal: "
                f"{stats.refusal_reasons[0]}"
            ) from exc

    async def ask(
        self,
        messages: Sequence[tuple[str, str]],
        parse: Callable[[str], T],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 512,
        reasks: int = DEFAULT_REASKS,
        seed: int | None = None,
    ) -> Parsed[T]:
        """Ask, parse, and re-ask with a correction (up to `reasks` times) until it parses.

        Every attempt is an ordinary cached call, so a rerun replays without the backend.
        After the last failure the value is None and `error` says why; nothing is invented.
        A request the server refuses for its content (RefusedError) is not re-asked: the value
        is None and both `error` and `raw` give the server's reason (the methods keep `raw`
        in their records); it is never cached, so a rerun asks again.
        `seed` goes into every Request (and so into the cache key): an ensemble's repeated
        samples of one assessor ask with seeds 1, 2, ... (sample 0 with None, today's key).
        """
        conversation = tuple((str(role), str(content)) for role, content in messages)
        tokens = self.max_tokens if self.max_tokens is not None else max_tokens
        raw, reason = "", "no attempt made"
        for attempt in range(reasks + 1):
            request = Request(
                messages=conversation,
                schema=schema,
                max_tokens=tokens,
                temperature=self.temperature,
                seed=seed,
            )
            try:
                completion = await self.complete(request)
            except RefusedError as exc:  # counted by complete(); no re-ask: it would be longer
                reason = f"refused by the server: {exc}"
                return Parsed(value=None, raw=reason, attempts=attempt + 1, error=reason)
            raw = completion.text
            try:
                value = parse(raw)
            except ParseFailure as exc:
                reason = str(exc) or "the answer did not have the required format"
                if completion.finish_reason == "length":
                    reason += f" (the answer was cut off at {tokens} tokens)"
            else:
                return Parsed(value=value, raw=raw, attempts=attempt + 1, error=None)
            if attempt < reasks:
                self.stats.reasks += 1
                conversation += (("assistant", raw), ("user", correction_message(reason)))
        self.stats.unparsed += 1
        return Parsed(value=None, raw=raw, attempts=reasks + 1, error=reason)

    def provenance(self) -> dict[str, Any]:
        """What to record next to every output made with this assessor."""
        record: dict[str, Any] = {
            "assessor": self.spec,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.options:
            record["options"] = self.options
        return record

    async def aclose(self) -> None:
        """Close the backend (the cache belongs to the caller)."""
        await self.backend.aclose()

    async def __aenter__(self) -> Assessor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"Assessor({self.spec!r}, model={self.model!r}, concurrency={self.concurrency})"
