"""The Assessor wrapper that every LLM call goes through.

A backend (assessors/protocol.py) does one thing: turn a Request into a Completion, raising
TransientError (worth retrying), RefusedError (this request's content refused: its item is left
unjudged, the run goes on) or PermanentError (the run cannot go on). The Assessor owns
everything else, in this order:

    cache lookup -> classified retries (bounded in time) -> concurrency limit -> backend

(the limit is held for each attempt, not while backing off between attempts, so a retry's
wait never idles a slot that another call could use)

and, in `ask()`, the parse / re-ask loop, in which an answer a reasoning model left empty at
its token budget is asked again with a larger budget (`within_budget`). What the backend
learns its server refuses (adaptations.py) is kept in the cache for later runs.
Defaults: `complete(request)` sends the Request as it is; `ask()` builds the Request from the
Assessor's temperature and, when the Assessor was given one, its max_tokens (which then
overrides the per-call value, so a user's --max-tokens wins).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from nuggetizer import names
from nuggetizer.cache import cache_key
from nuggetizer.errors import AssessorError, ConfigError
from nuggetizer.parsing import ParseFailure
from nuggetizer.testing.killpoints import kill_point

from .adaptations import Adaptations
from .protocol import (
    Backend,
    BackendError,
    Completion,
    PermanentError,
    RefusedError,
    Request,
    TransientError,
)
from .reasoning import BudgetExhausted, budget_exhausted, env_cap, raised_budget
from .retrying import RetryPolicy
from .stats import Parsed, Stats, paid, sent

if TYPE_CHECKING:
    from nuggetizer.cache import Cache

__all__ = [
    "Assessor",
    "CallsStopped",
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


def correction_message(reason: str) -> str:
    """The user turn sent after an unparseable answer."""
    return (
        f"Your answer could not be used: {reason}. "
        "Answer again with only the required format."
    )


# Refusals with no answer received at all before the run stops: a server that refuses the first
# requests of a run, every one, is misconfigured (wrong structured mode, no log-probs, ...),
# and the items are not to blame.
REFUSALS_BEFORE_STOP = 8
REFUSAL_REASONS_KEPT = 3

BUDGET_RAISES_SAID = 3  # token budgets raised that are said one by one (all are counted)

DEFAULT_REASKS = names.DEFAULT_REASKS  # re-asks after an unparseable answer


class CallsStopped(asyncio.CancelledError):
    """Raised in place of a new call once `Assessor.stop_new_calls` was called (Ctrl-C): its
    unit ends as cancelled, without cancelling the calls still in flight beside it."""


class Sender(Protocol):
    """What answers a stand-in's calls in place of the backend (a dry run counts them,
    run/dryrun.py; a batch round records them, run/batching.py): given the stand-in, whose
    cache, keys and counters it uses."""

    async def complete(self, assessor: Assessor, request: Request) -> Completion: ...


class Assessor(Adaptations, RetryPolicy):
    """Owns, in this order: cache lookup -> classified retries -> concurrency limit -> backend."""

    prices: Any = None  # what its tokens cost (flow/dryrun.Prices), set by the command line
    closer: Callable[[Any], None] | None = None  # closes it from sync code (`with`); api.py's

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
        max_tokens_cap: int | None = None,
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
        self.max_tokens_cap = env_cap(max_tokens_cap)
        self.stats = Stats()
        self.retry_wait = retry_wait
        self.retry_max_wait = retry_max_wait
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None
        self.in_flight = 0  # calls sent whose answer has not come yet
        self.under_way = 0  # calls not answered by the cache and not yet settled (counted)
        self.stopping = False  # set by stop_new_calls: no call is sent any more
        self.sender: Sender | None = None  # a stand-in's (see stand_in)
        # calls sent and not yet settled, by cache key: an identical call made meanwhile (by
        # this assessor or a sharing copy) waits for that answer instead of sending its own
        self._flying: dict[str, asyncio.Future[None]] = {}

    def stand_in(self, sender: Sender, stats: Stats | None = None) -> Assessor:
        """A copy of this assessor whose calls `sender` answers: the same backend, cache,
        model, settings and learned options (so the same cache keys and provenance), counting
        into `stats` (default: counters of its own, this one's untouched)."""
        twin = copy.copy(self)
        twin.sender = sender
        twin.stats = Stats() if stats is None else stats
        return twin

    def sharing(self) -> Assessor:
        """A copy for one piece of work among several at once (a server's request or job):
        the same backend, cache, concurrency limit and calls in flight as this one (so two
        copies never send the same call twice), counting into Stats of its own and stopped
        on its own (`stop_new_calls`). Made inside the event loop the copies run on."""
        self._semaphore()  # made now on this loop, so that every copy holds the same one
        twin = copy.copy(self)
        twin.stats = Stats()
        twin.in_flight = twin.under_way = 0
        twin.stopping = False
        return twin

    def stop_new_calls(self) -> None:
        """Send no new call (each raises CallsStopped); the calls in flight finish, so their
        answers are kept in the cache (Ctrl-C: run/interrupt.py)."""
        self.stopping = True

    async def drained(self) -> None:
        """Once stopped: wait until every call under way has settled (its answer counted and
        cached, or it was stopped), those a unit left running included (a sibling in the
        unit's gather whose neighbour was stopped)."""
        while self.under_way:
            await asyncio.sleep(0.02)

    def cache_key(self, request: Request) -> str:
        """Key of `request` as it is sent: what decides the output, never where the model is
        reached. The backend's options carry what it changes in every request (e.g. the
        token field); a temperature the server does not take is keyed as "default"."""
        self.recall()
        options = self.options
        keyed = {
            "format": CACHE_FORMAT,
            "model": self.model,
            "messages": [list(m) for m in request.messages],
            "schema": request.schema,
            "max_tokens": request.max_tokens,
            "temperature": options.get("temperature", request.temperature),
            "seed": request.seed,
            "top_logprobs": request.top_logprobs,
            "options": options,
        }
        if request.tools:  # a call with tools (the keys of calls without are what they were)
            keyed["tools"] = list(request.tools)
            keyed["turns"] = [turn.to_json() for turn in request.turns]
            keyed["tool_choice"] = request.tool_choice
        return cache_key(keyed)

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
        self.stats.cached_reasoning_tokens += replayed.reasoning_tokens
        return replayed

    async def complete(self, request: Request) -> Completion:
        """The completion of `request`: from the cache, else from the backend (then stored);
        a stand-in's, from its sender."""
        if self.sender is not None:
            return await self.sender.complete(self, request)
        key = self.cache_key(request) if self.cache is not None else None
        replayed = self.replay(key)
        if replayed is not None:
            return replayed
        if key is not None:
            while key in self._flying:  # the same call is on its way: its answer, cached
                await asyncio.shield(self._flying[key])
                replayed = self.replay(key)
                if replayed is not None:
                    return replayed
            self._flying[key] = asyncio.get_running_loop().create_future()
        try:
            return await self._send(request, key)
        finally:
            if key is not None:
                flying = self._flying.pop(key, None)
                if flying is not None and not flying.done():
                    flying.set_result(None)

    async def _send(self, request: Request, key: str | None) -> Completion:
        """The backend's completion of `request` (retried), counted, paid and cached."""
        options = self.options
        self.under_way += 1
        try:
            completion = await self._call_with_retries(request)
        except BaseException:
            self.under_way -= 1
            raise
        finally:
            if self.learned(options) and key is not None:
                key = self.cache_key(request)  # stored under what was sent
        try:
            if self._sem is not None and self._sem.locked():
                # a call was waiting for this one's concurrency slot: let it send its request
                # before this one's bookkeeping (cache write, then the caller's parsing) runs,
                # so the server gets it sooner (stored even if cancelled meanwhile)
                await asyncio.sleep(0)
        finally:
            try:  # journalled before the cache holds it: a kill cannot keep one, lose the other
                paid({"calls": 1, "prompt_tokens": completion.prompt_tokens,
                      "completion_tokens": completion.completion_tokens,
                      "reasoning_tokens": completion.reasoning_tokens})
            finally:
                self.stats.calls += 1
                self.stats.prompt_tokens += completion.prompt_tokens
                self.stats.completion_tokens += completion.completion_tokens
                self.stats.reasoning_tokens += completion.reasoning_tokens
                if key is not None and self.cache is not None:
                    self.cache.put(key, completion.to_json())
                self.under_way -= 1
        return completion

    async def _call_with_retries(self, request: Request) -> Completion:
        """The backend's completion, retried (`retried`) with the concurrency limit held per
        attempt; a refusal is counted, and raised."""

        async def attempt() -> Completion:
            async with self._semaphore():  # held per attempt, not while backing off
                if self.stopping:
                    raise CallsStopped("no new call: the command was interrupted")
                self.in_flight += 1
                sent()  # journalled before it goes out: a kill cannot hide it
                kill_point("call.sent")
                try:
                    return await self.backend.complete(request)
                except asyncio.CancelledError:
                    self.stats.abandoned += 1
                    sent("abandoned")
                    raise
                except Exception:
                    sent("unanswered")
                    raise
                finally:
                    self.in_flight -= 1

        try:
            return await self.retried(attempt)
        except RefusedError as exc:
            self.count_refusal(exc)
            raise

    def count_refusal(self, exc: RefusedError) -> None:
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
        raw, reason, reasoning = "", "no attempt made", None
        for attempt in range(reasks + 1):
            request = Request(
                messages=conversation,
                schema=schema,
                max_tokens=tokens,
                temperature=self.temperature,
                seed=seed,
            )
            try:
                completion = await self.within_budget(request)
            except RefusedError as exc:  # counted by complete(); no re-ask: it would be longer
                reason = f"refused by the server: {exc}"
                return Parsed(value=None, raw=reason, attempts=attempt + 1, error=reason)
            except BudgetExhausted as exc:
                return Parsed(value=None, raw=str(exc), attempts=attempt + 1, error=str(exc),
                              reasoning=exc.reasoning)
            raw, reasoning = completion.text, completion.reasoning
            try:
                value = parse(raw)
            except ParseFailure as exc:
                reason = str(exc) or "the answer did not have the required format"
                if completion.finish_reason == "length":
                    reason += f" (the answer was cut off at {tokens} tokens)"
            else:
                return Parsed(value=value, raw=raw, attempts=attempt + 1, error=None,
                              reasoning=reasoning)
            if attempt < reasks:
                self.stats.reasks += 1
                conversation += (("assistant", raw), ("user", correction_message(reason)))
        self.stats.unparsed += 1
        return Parsed(value=None, raw=raw, attempts=reasks + 1, error=reason,
                      reasoning=reasoning)

    async def within_budget(self, request: Request) -> Completion:
        """`complete(request)`; while the answer is empty because a reasoning model spent its
        token budget thinking, again with a larger budget (the budget sent, with the backend's
        reasoning allowance, doubled up to max_tokens_cap), each raise counted and said;
        BudgetExhausted once the cap is spent so."""
        while True:
            completion = await self.complete(request)
            if not budget_exhausted(completion.text, completion.finish_reason):
                return completion
            allowance = int(self.options.get("reasoning_allowance") or 0)
            sent = request.max_tokens + allowance
            larger = raised_budget(sent, self.max_tokens_cap)
            if larger is None:
                raise BudgetExhausted(sent, completion.reasoning)
            self.stats.budget_raises += 1
            say = log.warning if self.stats.budget_raises <= BUDGET_RAISES_SAID else log.debug
            say("%s: the answer is empty, its budget of %d tokens spent on reasoning; asking "
                "again with %d (cap %d)", self.spec, sent, larger, self.max_tokens_cap)
            request = dataclasses.replace(request, max_tokens=larger - allowance)

    def provenance(self) -> dict[str, Any]:
        """What to record next to every output made with this assessor."""
        record: dict[str, Any] = {
            "assessor": self.spec,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        self.recall()
        options = self.options
        if options:
            record["options"] = options
        if "temperature" in options:  # not sent: the model took its own default
            record["temperature"] = options["temperature"]
        return record

    async def aclose(self) -> None:
        """Close the backend (the cache belongs to the caller)."""
        await self.backend.aclose()

    async def __aenter__(self) -> Assessor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Assessor:
        return self

    def __exit__(self, *exc: object) -> None:
        """Closed however the block ends: by its `closer` (the Python API's, which closes it
        on the loop its clients live on), else on an event loop of its own."""
        close_now(self)

    def __repr__(self) -> str:
        return f"Assessor({self.spec!r}, model={self.model!r}, concurrency={self.concurrency})"


def close_now(assessor: Any) -> None:
    """Close an assessor (or ensemble) from sync code: by its `closer` when it has one, else
    on an event loop of its own; ConfigError inside a running loop (use `async with`)."""
    if assessor.closer is not None:
        assessor.closer(assessor)
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(assessor.aclose())
        return
    raise ConfigError("an assessor used in a running event loop closes with `async with`, "
                      "not `with`")
