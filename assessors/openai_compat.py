"""`openai:<model>`: any OpenAI-compatible chat server (OpenAI, Azure, vLLM, llama.cpp, Ollama).

The client never retries (max_retries=0): the Assessor does, so every retry is counted and
classified in one place. Structured output is chosen by an explicit option, never by the model
name:

- "json_schema": OpenAI's `response_format={"type": "json_schema", ...}`; a schema whose top
  level is not an object is wrapped as {"items": schema} (the tolerant parsers unwrap it);
- "json_object": llama.cpp's server, `{"type": "json_object", "schema": schema}` (it answers
  HTTP 500 to json_schema);
- "none": plain text; the prompt alone asks for the format.

Several base URLs (replicas of one model, e.g. vLLM servers) are shared by load: each request
goes to the endpoint with the fewest requests in flight, and an endpoint that stops answering
rests while the others carry on.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nuggetizer.errors import ConfigError

from .base import Completion, PermanentError, Request, TransientError
from .lean_http import LeanClient, usable_for

__all__ = [
    "STRUCTURED_MODES",
    "OpenAIBackend",
    "base_urls",
    "response_format",
    "retry_after_seconds",
]

STRUCTURED_MODES = ("json_schema", "json_object", "none")
DEFAULT_MAX_CONCURRENCY = 16
LEAN_ENV = "NUGGETIZER_LEAN_HTTP"  # "0": send through the openai SDK even to http:// servers


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


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def classify(exc: Exception) -> Exception:
    """Map an openai exception onto TransientError / PermanentError (others pass through)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return TransientError(f"request timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return TransientError(f"connection failed: {exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        headers = getattr(exc.response, "headers", None)
        message = f"HTTP {status}: {exc.message}"
        if status in (408, 429) or status >= 500:
            return TransientError(message, retry_after=retry_after_seconds(headers))
        return PermanentError(message)
    if isinstance(exc, openai.APIResponseValidationError):
        return PermanentError(f"unexpected response: {exc}")
    return exc


def _get(obj: Any, name: str) -> Any:
    """`obj[name]` for a dict (the lean path), `obj.name` for an SDK object."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


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


def base_urls(base_url: str | Sequence[str] | None) -> list[str | None]:
    """The endpoints to use: the given URL(s), else $OPENAI_BASE_URL (comma- or space-separated
    for several), else [None] (the client's default, api.openai.com)."""
    if base_url is None or (not isinstance(base_url, str) and not base_url):
        base_url = os.environ.get("OPENAI_BASE_URL") or None
    if base_url is None:
        return [None]
    items = [base_url] if isinstance(base_url, str) else list(base_url)
    urls = [u for item in items for u in item.replace(",", " ").split() if u]
    return list(dict.fromkeys(urls)) or [None]


@dataclass
class _Lane:
    """One HTTP client (connection pool) of an endpoint, and the requests it has in flight."""

    client: Any
    lean: bool = False
    in_flight: int = 0


@dataclass
class _Endpoint:
    """One server of the model: its lanes, and when it may be used again after failures."""

    url: str
    lanes: list[_Lane]
    failures: int = 0
    resting_until: float = 0.0
    sent: int = 0
    sdk: Any = None  # the SDK client, kept (and closed) when the lanes use the lean client

    @property
    def in_flight(self) -> int:
        return sum(lane.in_flight for lane in self.lanes)


class OpenAIBackend:
    """Chat completions at one or more endpoints of one model, shared by load.

    Requests go to the endpoint with the fewest in flight; an endpoint whose connection failed
    or timed out rests for a while (doubling up to MAX_REST seconds) unless every endpoint is
    resting. Each endpoint's connections are split over lanes of LANE_SIZE (one HTTP client
    each), because finding a free connection in one large pool costs time proportional to its
    size on every request. Requests are sent as plain JSON through the SDK's low-level `post`,
    skipping its per-call type transformation of the messages, which costs milliseconds.
    """

    LANE_SIZE = 8
    MAX_REST = 30.0

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
    ) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise ConfigError("the openai package is missing: pip install openai") from exc
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
            api_key = "EMPTY"  # local servers ignore the key, the client insists on one
        if api_key is None:
            raise ConfigError(
                f"no API key for openai:{model}: set OPENAI_API_KEY, or give a base URL "
                "(OPENAI_BASE_URL / --base-url) for a local server"
            )
        self.spec = f"openai:{model}"
        self.model = model
        self.structured = mode
        self.max_concurrency = max_concurrency or DEFAULT_MAX_CONCURRENCY * len(urls)
        self.options = {"structured": mode}
        per_endpoint = -(-self.max_concurrency // len(urls))
        lanes = 1 if http_client is not None else max(1, -(-per_endpoint // self.LANE_SIZE))
        self._endpoints: list[_Endpoint] = []
        for url in urls:
            sdk = openai.AsyncOpenAI(api_key=api_key, base_url=url, max_retries=0,
                                     timeout=timeout, http_client=http_client)
            if http_client is None and usable_for(url) and os.environ.get(LEAN_ENV) != "0":
                lean = LeanClient(str(sdk.base_url), api_key=api_key, timeout=timeout)
                endpoint = _Endpoint(str(sdk.base_url), [_Lane(lean, lean=True)])
                endpoint.sdk = sdk
            else:
                clients = [sdk] + [
                    openai.AsyncOpenAI(api_key=api_key, base_url=url, max_retries=0,
                                       timeout=timeout, http_client=http_client)
                    for _ in range(lanes - 1)
                ]
                endpoint = _Endpoint(str(sdk.base_url), [_Lane(c) for c in clients])
            self._endpoints.append(endpoint)
        self._client = self._endpoints[0].sdk or self._endpoints[0].lanes[0].client
        self.endpoint = ", ".join(e.url for e in self._endpoints)

    @property
    def endpoints(self) -> list[str]:
        """The base URLs in use."""
        return [e.url for e in self._endpoints]

    def sent(self) -> dict[str, int]:
        """Requests sent so far, per endpoint."""
        return {e.url: e.sent for e in self._endpoints}

    def request_args(self, request: Request) -> dict[str, Any]:
        """The JSON body of `chat.completions.create` for `request`."""
        args: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": role, "content": content} for role, content in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
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

    def _hint(self, request: Request, status: int | None) -> str:
        if status == 500 and request.schema is not None and self.structured != "none":
            other = "json_object" if self.structured == "json_schema" else "json_schema"
            return (f"; if every request fails with HTTP 500, the server may not support "
                    f"--structured {self.structured} (llama.cpp's server takes only "
                    f"json_object): try --structured {other}, or --structured none")
        return ""

    async def complete(self, request: Request) -> Completion:
        """One chat completion; errors raised as TransientError or PermanentError."""
        endpoint, lane = self._pick()
        endpoint.sent += 1
        lane.in_flight += 1
        try:
            if lane.lean:
                data: Any = await lane.client.post("/chat/completions", self.request_args(request))
            else:
                data = await self._post_sdk(lane.client, request)
        except (TransientError, PermanentError) as exc:
            if getattr(exc, "unreachable", False):  # connection failed or timed out: rest
                endpoint.failures += 1
                rest = min(self.MAX_REST, 0.5 * 2 ** (endpoint.failures - 1))
                endpoint.resting_until = time.monotonic() + rest
            message = f"{endpoint.url}: {exc}"
            error: TransientError | PermanentError
            status = getattr(exc, "status", None)
            if status == 500 and "response_format" in str(exc):
                # llama.cpp's server validates the request and answers 500, not 400: the same
                # request would fail every time, so say why at once instead of retrying
                raise PermanentError(message + self._hint(request, status)) from exc
            if isinstance(exc, TransientError):
                error = TransientError(message, retry_after=exc.retry_after)
            else:
                error = PermanentError(message)
            error.hint = self._hint(request, status)  # type: ignore[attr-defined]
            raise error from exc
        finally:
            lane.in_flight -= 1
        endpoint.failures = 0
        return self._completion(data, request)

    async def _post_sdk(self, client: Any, request: Request) -> Any:
        """POST through the SDK's low-level client; its errors classified."""
        import openai

        try:
            return await client.post(
                "/chat/completions", body=self.request_args(request), cast_to=str
            )
        except Exception as exc:  # noqa: BLE001 - classified below, unknown ones re-raised
            mapped = classify(exc)
            if mapped is exc:
                raise
            if isinstance(exc, openai.APIConnectionError):  # incl. timeouts
                mapped.unreachable = True  # type: ignore[attr-defined]
            mapped.status = getattr(exc, "status_code", None)  # type: ignore[attr-defined]
            raise mapped from exc

    def _completion(self, data: Any, request: Request) -> Completion:
        try:
            if isinstance(data, str):
                data = json.loads(data)
            choice = data["choices"][0]
            message = choice.get("message") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise TransientError(
                f"the server answered something that is not a chat completion: {str(data)[:200]!r}"
            ) from None
        usage = data.get("usage") or {}
        return Completion(
            text=message.get("content") or "",
            model=data.get("model") or self.model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=choice.get("finish_reason"),
            first_token_logprobs=first_token_logprobs(choice) if request.top_logprobs else None,
        )

    async def aclose(self) -> None:
        for endpoint in self._endpoints:
            for lane in endpoint.lanes:
                await lane.client.close()
            if endpoint.sdk is not None:
                await endpoint.sdk.close()

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend({self.model!r}, endpoint={self.endpoint!r}, "
            f"structured={self.structured!r})"
        )
