"""The one retry policy of every call to a server (chat completions, the Batch API's files and
batches): TransientErrors retried with backoff within both a number of attempts and a time
budget, each retry counted and logged; a PermanentError stops at once. The Assessor (base.py)
is a RetryPolicy."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
)
from tenacity.stop import stop_base

from nuggetizer.errors import AssessorError

from .protocol import PermanentError, RefusedError, TransientError

T = TypeVar("T")
log = logging.getLogger("nuggetizer.assessors.base")


def backoff(attempt: int, initial: float, maximum: float, retry_after: float | None) -> float:
    """Seconds to wait before retry `attempt` (1-based): full jitter over an exponential
    window, initial * 2**(attempt-1) capped at `maximum`, and at least the server's Retry-After.
    """
    delay = random.uniform(0.0, min(maximum, initial * 2 ** (attempt - 1)))
    if retry_after is not None:
        delay = max(delay, float(retry_after))
    return delay


class RetryPolicy:
    """`retried(call)`, for a class that has these attributes (the Assessor)."""

    spec: str
    stats: Any  # base.Stats: its `retries` counts every retry
    max_retries: int
    retry_budget: float | None
    retry_wait: float
    retry_max_wait: float

    @property
    def endpoint(self) -> str:
        raise NotImplementedError

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

    async def retried(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, its TransientErrors retried (tenacity) with backoff, within both
        `max_retries` and `retry_budget` seconds (so a server that keeps failing is given up on
        in bounded time), then an AssessorError that says what was tried; a PermanentError is
        an AssessorError at once; a RefusedError is raised as it is. The one retry policy of
        every call to the server (chat completions, and the Batch API's files and batches)."""
        stop: stop_base = stop_after_attempt(self.max_retries + 1)
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
                    return await call()
        except RefusedError:  # a PermanentError about this request only: the caller's to count
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
