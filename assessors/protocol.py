"""The backend protocol: what a backend is given (Request), what it returns (Completion), and
what it raises (BackendError and its kinds, which the Assessor acts on)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "AdaptError",
    "PermanentError",
    "RefusedError",
    "Request",
    "ToolCall",
    "ToolTurn",
    "TransientError",
]


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model asked for (OpenAI's tools API): its id, the function's name and its
    arguments as the model wrote them (JSON text, not yet checked)."""

    id: str
    name: str
    arguments: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolCall:
        return cls(str(data.get("id") or ""), str(data.get("name") or ""),
                   str(data.get("arguments") or ""))


@dataclass(frozen=True)
class ToolTurn:
    """One round of a conversation with tools, after the Request's messages: what the model
    said and which tools it called, then what each call returned (in the calls' order)."""

    text: str
    calls: tuple[ToolCall, ...]
    results: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "calls": [c.to_json() for c in self.calls],
                "results": list(self.results)}


@dataclass(frozen=True)
class Request:
    """One chat call. `schema` (may be a top-level array) constrains the output when given.
    With `tools` (OpenAI's tool definitions, `{"type": "function", "function": {...}}`) the
    model may call them; `turns` are the rounds of calls and results so far, sent after the
    messages; `tool_choice` "none" asks for an answer without a call."""

    messages: tuple[tuple[str, str], ...]
    schema: dict[str, Any] | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    seed: int | None = None
    top_logprobs: int = 0  # > 0: return the first generated token's top alternatives
    tools: tuple[dict[str, Any], ...] = ()
    turns: tuple[ToolTurn, ...] = ()
    tool_choice: str | None = None


@dataclass
class Completion:
    """What a backend returned (or the cache replayed: cached=True). `text` is the answer
    alone: a reasoning model's thinking (a `reasoning_content` field, or a `<think>` block)
    is split off into `reasoning`, and `reasoning_tokens` (part of `completion_tokens`, as
    the servers count them) says how many tokens it spent thinking. `tool_calls`: the tools
    the model called instead of (or besides) answering, as ToolCall.to_json() gives them."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    first_token_logprobs: dict[str, float] | None = None
    reasoning: str | None = None
    reasoning_tokens: int = 0
    tool_calls: list[dict[str, str]] | None = None
    cached: bool = False

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The tool calls asked for, as ToolCall values."""
        return tuple(ToolCall.from_json(c) for c in self.tool_calls or ())

    def to_json(self) -> dict[str, Any]:
        """The stored form (without `cached`): what dataclasses.asdict gives, built directly
        (asdict deep-copies value by value, a noticeable cost on every call)."""
        data = {name: getattr(self, name) for name in _STORED_FIELDS}
        if data["tool_calls"] is None:  # stored as before tools existed
            del data["tool_calls"]
        else:
            data["tool_calls"] = [dict(c) for c in data["tool_calls"]]
        if data["first_token_logprobs"] is not None:
            data["first_token_logprobs"] = dict(data["first_token_logprobs"])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, cached: bool = False) -> Completion:
        """Rebuild from `to_json()` output, ignoring unknown keys."""
        names = {f.name for f in dataclasses.fields(cls)} - {"cached"}
        return cls(**{k: v for k, v in data.items() if k in names}, cached=cached)


_STORED_FIELDS = tuple(f.name for f in dataclasses.fields(Completion) if f.name != "cached")


class BackendError(Exception):
    """A request that failed. `status`: the HTTP status, if any; `retry_after`: seconds the
    server asked to wait; `endpoint`: where it was sent; `hint`: what may fix it (added to the
    final message); `unreachable`: the endpoint did not answer at all (it rests a while)."""

    def __init__(self, message: str, *, status: int | None = None,
                 retry_after: float | None = None, endpoint: str | None = None,
                 hint: str = "", unreachable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.endpoint = endpoint
        self.hint = hint
        self.unreachable = unreachable


class TransientError(BackendError):
    """Worth retrying: 408, 429, 5xx, timeouts, dropped connections, malformed answers."""


class PermanentError(BackendError):
    """Not worth retrying, and the run cannot go on: authentication, an unknown model, a
    server that rejects a setting every request carries."""


class RefusedError(PermanentError):
    """Not worth retrying, about this request only: the server refused its content (a 4xx
    such as 400 "maximum context length exceeded", 413, 422). The item is left unjudged with
    the server's reason; the run goes on."""


class AdaptError(RefusedError):
    """The server rejected a request parameter a backend can change (HTTP 400 naming `param`,
    e.g. `max_tokens` on a reasoning model that takes `max_completion_tokens`): the backend
    adapts its requests and sends again. One it cannot adapt to is a refusal of the item."""

    def __init__(self, message: str, *, param: str, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.param = param


@runtime_checkable
class Backend(Protocol):
    """An LLM reachable one request at a time.

    Optional attributes the Assessor reads when present: `endpoint` (str, where the model is
    reached, named in error messages, never in cache keys) and `options` (dict of backend
    settings that change the output, e.g. the structured-output mode; part of cache keys).
    """

    spec: str
    model: str
    max_concurrency: int

    async def complete(self, request: Request) -> Completion: ...

    async def aclose(self) -> None: ...
