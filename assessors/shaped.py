"""What an OpenAI-compatible backend sends besides the messages, shaped to what its server
takes (openai_compat.py's OpenAIBackend holds this part).

`token_field` names the token budget (`max_tokens`, or `max_completion_tokens` as OpenAI's
reasoning models take it); `reasoning_effort` is sent when given; a model known to reason gets
an allowance for its thinking on every budget (reasoning.py). What the server refuses is
learned, not guessed from the model's name: an HTTP 400 naming `max_tokens`, `temperature` or
`reasoning_effort` (outcomes.Decision.ADAPT) changes every request from then on (`adapted`,
which the Assessor keeps in the cache for reruns: `learn`), and the request is sent again at
once. Until the server has answered once, requests go out one at a time, so it says what it
refuses once, not once per request in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .protocol import AdaptError, BackendError, Completion, Request
from .reasoning import (
    ALLOWANCE_FACTOR,
    REASONING_EFFORTS,
    TOKEN_FIELDS,
    env_choice,
    expected_reasoning,
)

__all__ = ["ShapedRequests"]


class ShapedRequests:
    """The request-shaping part of a backend (see the module's doc): `complete` sends through
    the backend's `_send(request)`, adapting and sending again on an AdaptError."""

    structured: str
    _send: Callable[[Request], Awaitable[Completion]]  # the backend's one attempt at a call

    def shape_requests(self, token_field: str | None, reasoning_effort: str | None,
                       reasoning_tokens: int | None) -> None:
        """Set up from the options (else $NUGGETIZER_TOKEN_FIELD, _REASONING_EFFORT and
        _REASONING_TOKENS)."""
        self.token_field = env_choice(token_field, "NUGGETIZER_TOKEN_FIELD",
                                      TOKEN_FIELDS) or TOKEN_FIELDS[0]
        self.reasoning_effort = env_choice(reasoning_effort, "NUGGETIZER_REASONING_EFFORT",
                                           REASONING_EFFORTS)
        self.adapted: dict[str, str] = {}  # parameter -> what was learned (see `adapt`)
        self.expected_reasoning = expected_reasoning(reasoning_tokens, self.reasoning_effort)
        self._explicit_reasoning = reasoning_tokens is not None
        self._probe: asyncio.Lock | None = None
        self._probe_loop: asyncio.AbstractEventLoop | None = None
        self._settled = False

    @property
    def options(self) -> dict[str, Any]:
        """The settings that change what is sent (part of cache keys): the structured mode,
        and, only when they are not the defaults, the token field, the reasoning effort, the
        temperature ("default": none sent) and the reasoning allowance (so the keys of a plain
        model's requests are what they always were)."""
        options: dict[str, Any] = {"structured": self.structured}
        field = self.adapted.get("max_tokens", self.token_field)
        if field != TOKEN_FIELDS[0]:
            options["token_field"] = field
        if self.reasoning_effort is not None and "reasoning_effort" not in self.adapted:
            options["reasoning_effort"] = self.reasoning_effort
        if "temperature" in self.adapted:
            options["temperature"] = "default"  # not sent: the server takes only its default
        if self.allowance:
            options["reasoning_allowance"] = self.allowance
        return options

    @property
    def allowance(self) -> int:
        """Tokens added to every budget for a model known to reason (see the module's doc):
        one given reasoning tokens or a reasoning effort (that its server took), or whose
        server takes only max_completion_tokens; else 0."""
        effort = self.reasoning_effort is not None and "reasoning_effort" not in self.adapted
        reasons = effort or self._explicit_reasoning or "max_tokens" in self.adapted
        return ALLOWANCE_FACTOR * self.expected_reasoning if reasons else 0

    def adapt(self, param: str) -> bool:
        """Change every request from now on so that the server takes `param` (a parameter
        named by an ADAPT verdict); False when there is nothing left to change."""
        if param in self.adapted:
            return False
        if param == "max_tokens" and self.token_field == "max_tokens":
            self.adapted[param] = "max_completion_tokens"
        elif param == "temperature":
            self.adapted[param] = "default"
        elif param == "reasoning_effort" and self.reasoning_effort is not None:
            self.adapted[param] = "not sent"
        else:
            return False
        return True

    def learn(self, adapted: dict[str, str]) -> None:
        """Take adaptations learned by an earlier run (kept in the cache by the Assessor)."""
        for param in adapted:
            self.adapt(param)

    def sampling_args(self, request: Request) -> dict[str, Any]:
        """The request's token budget, temperature and reasoning effort, as they are sent."""
        args: dict[str, Any] = {
            self.adapted.get("max_tokens", self.token_field): request.max_tokens + self.allowance,
        }
        if "temperature" not in self.adapted:
            args["temperature"] = request.temperature
        if self.reasoning_effort is not None and "reasoning_effort" not in self.adapted:
            args["reasoning_effort"] = self.reasoning_effort
        return args

    def _probing(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._probe is None or self._probe_loop is not loop:
            self._probe, self._probe_loop = asyncio.Lock(), loop
        return self._probe

    async def complete(self, request: Request) -> Completion:
        """One chat completion, the request adapted to what the server takes (see the module's
        doc); failures raised as classified (outcomes.py)."""
        if not self._settled:
            async with self._probing():  # one at a time until the server has answered once
                if not self._settled:
                    return await self._adapting(request)
        # settled: the calls that queued behind the first go out together, not one by one
        return await self._adapting(request)

    async def _adapting(self, request: Request) -> Completion:
        while True:
            try:
                completion = await self._send(request)
            except AdaptError as exc:
                if not self.adapt(exc.param):
                    self._settled = True
                    raise  # a refusal of this item (AdaptError is a RefusedError)
                continue
            except BackendError as exc:
                if exc.status is not None:  # the server answered: it takes such requests
                    self._settled = True
                raise
            self._settled = True
            return completion
