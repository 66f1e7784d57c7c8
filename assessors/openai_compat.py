"""`openai:<model>`: any OpenAI-compatible chat server (OpenAI, Azure, vLLM, llama.cpp, Ollama).

The client never retries (max_retries=0): the Assessor does, so every retry is counted and
classified in one place. Structured output is chosen by an explicit option, never by the model
name:

- "json_schema": OpenAI's `response_format={"type": "json_schema", ...}`; a schema whose top
  level is not an object is wrapped as {"items": schema} (the tolerant parsers unwrap it);
- "json_object": llama.cpp's server, `{"type": "json_object", "schema": schema}` (it answers
  HTTP 500 to json_schema);
- "none": plain text; the prompt alone asks for the format.
"""

from __future__ import annotations

import email.utils
import os
import time
from typing import Any

from nuggetizer.errors import ConfigError

from .base import Completion, PermanentError, Request, TransientError

__all__ = ["STRUCTURED_MODES", "OpenAIBackend", "response_format", "retry_after_seconds"]

STRUCTURED_MODES = ("json_schema", "json_object", "none")
DEFAULT_MAX_CONCURRENCY = 16


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


def first_token_logprobs(choice: Any) -> dict[str, float] | None:
    """token -> logprob for the first generated token's alternatives, when the server sent them."""
    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    first = content[0]
    alternatives = getattr(first, "top_logprobs", None) or []
    table = {alt.token: float(alt.logprob) for alt in alternatives}
    table.setdefault(first.token, float(first.logprob))
    return table


class OpenAIBackend:
    """Chat completions through `openai.AsyncOpenAI` at `base_url`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        structured: str | None = None,
        timeout: float = 120.0,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
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
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is not None:
            api_key = "EMPTY"  # local servers ignore the key, the client insists on one
        if api_key is None:
            raise ConfigError(
                f"no API key for openai:{model}: set OPENAI_API_KEY, or give a base URL "
                "(OPENAI_BASE_URL / --base-url) for a local server"
            )
        self.spec = f"openai:{model}"
        self.model = model
        self.structured = mode
        self.max_concurrency = max_concurrency
        self.options = {"structured": mode}
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=http_client,
        )
        self.endpoint = str(self._client.base_url)

    def request_args(self, request: Request) -> dict[str, Any]:
        """Keyword arguments of `chat.completions.create` for `request`."""
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

    async def complete(self, request: Request) -> Completion:
        """One chat completion; errors raised as TransientError or PermanentError."""
        try:
            response = await self._client.chat.completions.create(**self.request_args(request))
        except Exception as exc:  # noqa: BLE001 - classified below, unknown ones re-raised
            mapped = classify(exc)
            if mapped is exc:
                raise
            raise mapped from exc
        if not response.choices:
            raise TransientError("the server returned no choices")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            model=response.model or self.model,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=choice.finish_reason,
            first_token_logprobs=first_token_logprobs(choice) if request.top_logprobs else None,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend({self.model!r}, endpoint={self.endpoint!r}, "
            f"structured={self.structured!r})"
        )
