"""`openai:<model>`: any OpenAI-compatible chat server (OpenAI, Azure, vLLM, llama.cpp, Ollama).

Requests go out as plain JSON over aiohttp (transport.py); every outcome is classified in one
place (outcomes.py), and the Assessor does the retrying, so every retry is counted. Structured
output is chosen by an explicit option, never by the model name:

- "json_schema": OpenAI's `response_format={"type": "json_schema", ...}`; a schema whose top
  level is not an object is wrapped as {"items": schema} (the tolerant parsers unwrap it);
- "json_object": llama.cpp's server, `{"type": "json_object", "schema": schema}` (it answers
  HTTP 500 to json_schema);
- "none": plain text; the prompt alone asks for the format.

Reasoning models: the token budget's field, the temperature and the reasoning effort are
shaped to what the server takes, learned from its HTTP 400s (shaped.py); a reasoning model's
thinking is split from its answer (reasoning.py).

Several base URLs (replicas of one model, e.g. vLLM servers) are shared by load: each request
goes to the endpoint with the fewest requests in flight, and an endpoint that stops answering
rests while the others carry on.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nuggetizer.errors import ConfigError

from .outcomes import retry_after_seconds
from .protocol import BackendError, Completion, Request, ToolTurn, TransientError
from .reasoning import split_reasoning
from .shaped import ShapedRequests
from .transport import JsonClient

__all__ = [
    "STRUCTURED_MODES",
    "OpenAIBackend",
    "base_urls",
    "parse_completion",
    "response_format",
    "retry_after_seconds",
]

STRUCTURED_MODES = ("json_schema", "json_object", "none")
DEFAULT_MAX_CONCURRENCY = 16
DEFAULT_BASE_URL = "https://api.openai.com/v1"


_UNSUPPORTED_STRICT = frozenset({"minLength", "maxLength"})


def _strict_subset(node: Any) -> Any:
    """`node` without the keywords OpenAI's strict mode rejects (the parsers check them)."""
    if isinstance(node, dict):
        return {k: _strict_subset(v) for k, v in node.items() if k not in _UNSUPPORTED_STRICT}
    if isinstance(node, list):
        return [_strict_subset(v) for v in node]
    return node


def wrap_for_openai(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's json_schema needs an object at the top level: wrap anything else in `items`."""
    schema = _strict_subset(schema)
    if schema.get("type") == "object":
        return schema
    return {
        "type": "object",
        "properties": {"items": schema},
        "required": ["items"],
        "additionalProperties": False,
    }


def response_format(schema: dict[str, Any] | None, mode: str) -> dict[str, Any] | None:
    """The `response_format` request field for `schema` under structured-output `mode`."""
    if schema is None or mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": wrap_for_openai(schema), "strict": True},
        }
    raise ConfigError(f"unknown structured-output mode {mode!r}; use one of {STRUCTURED_MODES}")


def _get(obj: Any, name: str) -> Any:
    """`obj[name]` for a dict, else None."""
    return obj.get(name) if isinstance(obj, dict) else None


def first_token_logprobs(choice: Any) -> dict[str, float] | None:
    """token -> logprob for the first generated token's alternatives, when the server sent them."""
    logprobs = _get(choice, "logprobs")
    content = _get(logprobs, "content") if logprobs is not None else None
    if not content:
        return None
    first = content[0]
    alternatives = _get(first, "top_logprobs") or []
    table = {_get(alt, "token"): float(_get(alt, "logprob")) for alt in alternatives}
    table.setdefault(_get(first, "token"), float(_get(first, "logprob")))
    return table


def parse_completion(data: dict[str, Any], model: str, top_logprobs: int = 0) -> Completion:
    """The Completion of a chat completion's JSON body (a live answer or a batch output line's
    `response.body`); TransientError when it is not one."""
    try:
        choice = data["choices"][0]
        text, reasoning = split_reasoning(choice.get("message") or {})
        usage = data.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        calls = (choice.get("message") or {}).get("tool_calls") or None
        return Completion(
            text=text,
            model=data.get("model") or model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=choice.get("finish_reason"),
            first_token_logprobs=first_token_logprobs(choice) if top_logprobs else None,
            reasoning=reasoning,
            reasoning_tokens=int(details.get("reasoning_tokens") or 0),
            tool_calls=[{"id": str(c["id"]), "name": str(c["function"]["name"]),
                         "arguments": str(c["function"].get("arguments") or "")}
                        for c in calls] if calls else None,
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise TransientError(
            f"the server answered something that is not a chat completion: "
            f"{json.dumps(data)[:200]!r}"
        ) from None


def tool_messages(turn: ToolTurn) -> list[dict[str, Any]]:
    """One round of tool calls as OpenAI's chat messages: the assistant's message with its
    `tool_calls`, then one `tool` message per call with what it returned."""
    calls = [{"id": c.id, "type": "function",
              "function": {"name": c.name, "arguments": c.arguments}} for c in turn.calls]
    return [{"role": "assistant", "content": turn.text or None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": c.id, "content": result}
              for c, result in zip(turn.calls, turn.results, strict=True))]


def base_urls(base_url: str | Sequence[str] | None) -> list[str | None]:
    """The endpoints to use: the given URL(s), else $OPENAI_BASE_URL (comma- or space-separated
    for several), else [None] (OpenAI's own API, DEFAULT_BASE_URL)."""
    if base_url is None or (not isinstance(base_url, str) and not base_url):
        base_url = os.environ.get("OPENAI_BASE_URL") or None
    if base_url is None:
        return [None]
    items = [base_url] if isinstance(base_url, str) else list(base_url)
    urls = [u for item in items for u in item.replace(",", " ").split() if u]
    return list(dict.fromkeys(urls)) or [None]


@dataclass
class _Lane:
    """One connection pool of an endpoint, and the requests it has in flight."""

    client: JsonClient
    in_flight: int = 0


@dataclass
class _Endpoint:
    """One server of the model: its lanes, and when it may be used again after failures."""

    url: str
    lanes: list[_Lane]
    failures: int = 0
    resting_until: float = 0.0
    sent: int = 0

    @property
    def in_flight(self) -> int:
        return sum(lane.in_flight for lane in self.lanes)


def _identity_headers() -> dict[str, str]:
    """OpenAI's organization and project headers, from the environment as the SDK reads them."""
    headers = {}
    for variable, header in (("OPENAI_ORG_ID", "OpenAI-Organization"),
                             ("OPENAI_PROJECT_ID", "OpenAI-Project")):
        if os.environ.get(variable):
            headers[header] = os.environ[variable]
    return headers


class OpenAIBackend(ShapedRequests):
    """Chat completions at one or more endpoints of one model, shared by load.

    Requests go to the endpoint with the fewest in flight; an endpoint whose connection failed
    or timed out rests for a while (doubling up to MAX_REST seconds) unless every endpoint is
    resting. Each endpoint's connections are split over lanes of LANE_SIZE (one connection
    pool each), because finding a free connection in one large pool costs time proportional to
    its size on every request. `http_client`: one httpx(2).AsyncClient to send everything
    through instead (one lane per endpoint), e.g. for its own TLS or transport settings.
    """

    LANE_SIZE = 8
    MAX_REST = 30.0
    calls_tools = True  # sends a Request's tools (OpenAI's tools API)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str] | None = None,
        api_key: str | None = None,
        structured: str | None = None,
        timeout: float = 120.0,
        max_concurrency: int | None = None,
        http_client: Any = None,
        token_field: str | None = None,
        reasoning_effort: str | None = None,
        reasoning_tokens: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError("openai backend needs a model: use openai:<model>")
        mode = structured or os.environ.get("NUGGETIZER_STRUCTURED") or "json_schema"
        if mode not in STRUCTURED_MODES:
            raise ConfigError(
                f"unknown structured-output mode {mode!r}; use one of {', '.join(STRUCTURED_MODES)}"
            )
        urls = base_urls(base_url)
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and urls != [None]:
            api_key = "EMPTY"  # local servers ignore the key; some proxies insist on one
        self.spec = f"openai:{model}"
        self.model = model
        self._api_key = api_key  # None: asked for at the first call (a dry run needs none)
        self.structured = mode
        self.max_concurrency = max_concurrency or DEFAULT_MAX_CONCURRENCY * len(urls)
        self.shape_requests(token_field, reasoning_effort, reasoning_tokens)
        per_endpoint = -(-self.max_concurrency // len(urls))
        lanes = 1 if http_client is not None else max(1, -(-per_endpoint // self.LANE_SIZE))
        headers = _identity_headers()
        self._endpoints: list[_Endpoint] = []
        for url in urls:
            url = (url or DEFAULT_BASE_URL).rstrip("/")
            clients = [JsonClient(url, api_key=api_key, timeout=timeout,
                                  connections=self.LANE_SIZE, headers=headers,
                                  client=http_client)
                       for _ in range(lanes)]
            self._endpoints.append(_Endpoint(url, [_Lane(c) for c in clients]))
        self._client = self._endpoints[0].lanes[0].client
        self.endpoint = ", ".join(e.url for e in self._endpoints)

    @property
    def api_key(self) -> str:
        """The key every call sends (the Batch API client, batch_api.py, reaches the same
        server with it); ConfigError when there is none, raised by the first call, so that
        building the assessor, a dry run and `doctor --no-call` need no key."""
        if self._api_key is None:
            raise self._no_key()
        return self._api_key

    def _no_key(self) -> ConfigError:
        return ConfigError(f"no API key for {self.spec}: set OPENAI_API_KEY, or give a base URL "
                           "(OPENAI_BASE_URL / --base-url) for a local server; a --dry-run "
                           "needs none")

    @property
    def endpoints(self) -> list[str]:
        """The base URLs in use."""
        return [e.url for e in self._endpoints]

    def sent(self) -> dict[str, int]:
        """Requests sent so far, per endpoint."""
        return {e.url: e.sent for e in self._endpoints}

    def request_args(self, request: Request) -> dict[str, Any]:
        """The JSON body of a chat completion request for `request` (as adapted)."""
        args: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages]
            + [message for turn in request.turns for message in tool_messages(turn)],
            **self.sampling_args(request),
        }
        if request.tools:
            args["tools"] = list(request.tools)
            if request.tool_choice is not None:
                args["tool_choice"] = request.tool_choice
        if request.seed is not None:
            args["seed"] = request.seed
        if request.top_logprobs > 0:
            args["logprobs"] = True
            args["top_logprobs"] = request.top_logprobs
        fmt = response_format(request.schema, self.structured)
        if fmt is not None:
            args["response_format"] = fmt
        return args

    def _pick(self) -> tuple[_Endpoint, _Lane]:
        now = time.monotonic()
        awake = [e for e in self._endpoints if e.resting_until <= now] or self._endpoints
        endpoint = min(awake, key=lambda e: (e.in_flight, e.sent))
        return endpoint, min(endpoint.lanes, key=lambda lane: lane.in_flight)

    async def _send(self, request: Request) -> Completion:
        """One attempt at a chat completion."""
        if self._api_key is None:
            raise self._no_key()
        endpoint, lane = self._pick()
        endpoint.sent += 1
        lane.in_flight += 1
        body = self.request_args(request)
        try:
            data = await lane.client.post("/chat/completions", body, structured=(
                self.structured if "response_format" in body else None))
        except BackendError as exc:
            if exc.unreachable:  # connection failed or timed out: rest
                endpoint.failures += 1
                rest = min(self.MAX_REST, 0.5 * 2 ** (endpoint.failures - 1))
                endpoint.resting_until = time.monotonic() + rest
            raise
        finally:
            lane.in_flight -= 1
        endpoint.failures = 0
        return self._completion(data, request)

    def _completion(self, data: dict[str, Any], request: Request) -> Completion:
        return parse_completion(data, self.model, request.top_logprobs)

    async def aclose(self) -> None:
        for endpoint in self._endpoints:
            for lane in endpoint.lanes:
                await lane.client.close()

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend({self.model!r}, endpoint={self.endpoint!r}, "
            f"structured={self.structured!r})"
        )
