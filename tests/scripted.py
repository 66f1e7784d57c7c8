"""The tests' one fake backend, registered as the kind `scripted` the way the real backends
are: `make_assessor("scripted:NAME")` plays the script stored under NAME in SCRIPTS."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nuggetizer.assessors import Completion, register_backend
from nuggetizer.assessors.base import Request

Outcome = str | Completion | Exception
Script = list[Outcome] | Callable[[Request], Outcome]
SCRIPTS: dict[str, Script] = {}


class ScriptedBackend:
    """Plays a script: each call pops the next outcome, or asks the script function of the
    request (a text answers, a Completion is returned as it is, an exception is raised). It
    records every request and the most calls it held at once."""

    def __init__(self, script: Script, *, model: str = "scripted-model",
                 max_concurrency: int = 4, delay: float = 0.0) -> None:
        self.spec = f"scripted:{model}"
        self.model = model
        self.endpoint = "scripted://endpoint"
        self.max_concurrency = max_concurrency
        self.script = script
        self.delay = delay
        self.requests: list[Request] = []
        self.active = 0
        self.peak = 0
        self.closed = False

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            if self.delay:  # without one, a call completes at once (as a cached one would)
                await asyncio.sleep(self.delay)
            outcome = self.script(request) if callable(self.script) else self.script.pop(0)
        finally:
            self.active -= 1
        if isinstance(outcome, Exception):
            raise outcome
        if isinstance(outcome, Completion):
            return outcome
        return Completion(text=outcome, model=self.model, prompt_tokens=3, completion_tokens=2,
                          finish_reason="stop")

    async def aclose(self) -> None:
        self.closed = True


def by_prompt(answer: Callable[[str], Outcome]) -> Callable[[Request], Outcome]:
    """A script that answers from the last message's text alone."""
    return lambda request: answer(request.messages[-1][1])


def _make(model: str, **options: Any) -> ScriptedBackend:
    return ScriptedBackend(SCRIPTS[model], model=model)


register_backend("scripted", _make)
