"""What to do about each outcome of an HTTP call to a chat server: the one error classifier.

    RETRY         408, 429, 5xx, timeouts, connections refused or dropped, a 200 that is not a
                  chat completion; with the server's Retry-After when it sent one. A timeout or
                  a connection that failed also rests the endpoint for a while.
    ITEM_FAILURE  a 4xx about this request's content (400, 413, 422, ...: e.g. "maximum context
                  length exceeded" on a long answer): the item is left unjudged with the
                  server's reason; the run goes on.
    ADAPT         a 400 naming a request parameter the backend can change: `max_tokens` that
                  the model does not take (OpenAI's reasoning models: `unsupported_parameter`,
                  use `max_completion_tokens`), a `temperature` other than the default
                  (`unsupported_value`), a `reasoning_effort` the model does not know: the
                  backend adapts its requests (for the rest of the run) and sends again.
    STOP          401/403 (authentication), 404 (unknown model or wrong URL), a redirect
                  (wrong URL), and llama.cpp's HTTP 500 naming `response_format` (a mode it
                  does not take: every request would fail the same way): the run stops at
                  once, saying why.

`classify_status` reads a status line, headers and body; `classify_transport` a failure to get
one. Each returns a Verdict, and `Verdict.error()` the typed exception the backends raise.
"""

from __future__ import annotations

import email.utils
import enum
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .protocol import AdaptError, BackendError, PermanentError, RefusedError, TransientError

__all__ = [
    "ADAPTABLE",
    "Decision",
    "Verdict",
    "adaptable_in",
    "adaptable_param",
    "classify_status",
    "classify_transport",
    "error_message",
    "retry_after_seconds",
    "structured_hint",
]

AUTH = frozenset({401, 403})
NOT_FOUND = 404
RETRIED_4XX = frozenset({408, 429})


class Decision(enum.Enum):
    """What the caller does with an outcome."""

    OK = "ok"
    RETRY = "retry"
    ITEM_FAILURE = "item_failure"
    ADAPT = "adapt"
    STOP = "stop"


@dataclass(frozen=True)
class Verdict:
    """One outcome, classified. `payload` is the decoded chat completion when OK; `rest` says
    the endpoint did not answer at all (it rests before it is used again)."""

    decision: Decision
    reason: str = ""
    status: int | None = None
    retry_after: float | None = None
    rest: bool = False
    hint: str = ""
    payload: dict[str, Any] | None = None
    param: str | None = None  # ADAPT: the request parameter to change

    def error(self, endpoint: str | None = None) -> BackendError:
        """The exception for a decision other than OK, naming `endpoint` when given."""
        message = f"{endpoint}: {self.reason}" if endpoint else self.reason
        fields: dict[str, Any] = {"status": self.status, "endpoint": endpoint,
                                  "hint": self.hint, "unreachable": self.rest}
        if self.decision is Decision.RETRY:
            return TransientError(message, retry_after=self.retry_after, **fields)
        if self.decision is Decision.ADAPT:
            return AdaptError(message, param=self.param or "", **fields)
        if self.decision is Decision.ITEM_FAILURE:
            return RefusedError(message, **fields)
        if self.decision is Decision.STOP:
            return PermanentError(message, **fields)
        raise ValueError("an OK outcome is not an error")


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
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


def error_message(body: bytes | str) -> str:
    """The server's own words from an error body (OpenAI's {"error": {"message"}} and the
    like), else the start of the body."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        value = json.loads(text)
    except ValueError:
        return text.strip()[:300]
    if isinstance(value, dict):
        error = value.get("error", value.get("detail", value))
        if isinstance(error, dict):
            return str(error.get("message") or error)[:300]
        return str(error)[:300]
    return text.strip()[:300]


def structured_hint(structured: str | None) -> str:
    """What to try when a server answers HTTP 500 to a request sent with `response_format`
    in mode `structured` (None: no response_format was sent, no hint)."""
    if structured is None or structured == "none":
        return ""
    other = "json_object" if structured == "json_schema" else "json_schema"
    return (f"; if every request fails with HTTP 500, the server may not support "
            f"--structured {structured} (llama.cpp's server takes only json_object): "
            f"try --structured {other}, or --structured none")


def classify_status(status: int, headers: Mapping[str, str], body: bytes, *,
                    structured: str | None = None) -> Verdict:
    """The verdict on an HTTP answer. `structured`: the response_format mode the request was
    sent with (None when it had none), for the hint on an HTTP 500."""
    if 200 <= status < 300:
        return _completion(status, body)
    reason = f"HTTP {status}: {error_message(body)}"
    if status in AUTH:
        return Verdict(Decision.STOP, reason, status)
    if status == NOT_FOUND:
        return Verdict(Decision.STOP, reason, status,
                       hint="; check the model name and the base URL")
    if status in RETRIED_4XX or status >= 500:
        hint = structured_hint(structured) if status == 500 else ""
        if status == 500 and structured is not None and "response_format" in reason:
            # llama.cpp's server validates the request and answers 500, not 400: the same
            # request would fail every time, so say why at once instead of retrying
            return Verdict(Decision.STOP, reason, status, hint=hint)
        return Verdict(Decision.RETRY, reason, status, retry_after_seconds(headers), hint=hint)
    if status == 400 and (param := adaptable_param(body)) is not None:
        return Verdict(Decision.ADAPT, reason, status, param=param)
    if 400 <= status < 500:
        return Verdict(Decision.ITEM_FAILURE, reason, status)
    if 300 <= status < 400:
        where = headers.get("location") or "elsewhere"
        return Verdict(Decision.STOP, f"HTTP {status}: the server redirects to {where}", status,
                       hint="; give the address it redirects to as the base URL")
    return Verdict(Decision.RETRY, f"HTTP {status}: unexpected status", status)


# parameters a backend can change when the server rejects them (see Decision.ADAPT)
ADAPTABLE = ("max_tokens", "temperature", "reasoning_effort")
_UNSUPPORTED_CODES = ("unsupported_parameter", "unsupported_value")
_UNSUPPORTED = re.compile(r"(?:Unsupported (?:parameter|value)|Unrecognized request argument"
                          r" supplied):?\s*'?(\w+)'?")


def adaptable_param(body: bytes | str) -> str | None:
    """The parameter an HTTP 400 body rejects, when it is one a backend can change: OpenAI's
    `{"error": {"param", "code": "unsupported_parameter" | "unsupported_value"}}`, or a proxy's
    body that only says so in its message ("Unsupported parameter: 'max_tokens' ...")."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        value = json.loads(text)
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) else None
    if not isinstance(error, dict):
        return None
    param = error.get("param")
    if error.get("code") in _UNSUPPORTED_CODES and param in ADAPTABLE:
        return str(param)
    return adaptable_in(str(error.get("message") or ""))


def adaptable_in(message: str) -> str | None:
    """The adaptable parameter a server's error message says it does not take, else None."""
    match = _UNSUPPORTED.search(message)
    return match.group(1) if match and match.group(1) in ADAPTABLE else None


def _completion(status: int, body: bytes) -> Verdict:
    try:
        value = orjson.loads(body)
    except ValueError:  # orjson.JSONDecodeError is a ValueError
        return Verdict(Decision.RETRY, "the server answered something that is not JSON: "
                       f"{body[:200]!r}", status)
    choices = value.get("choices") if isinstance(value, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        return Verdict(Decision.RETRY, "the server answered something that is not a chat "
                       f"completion: {body[:200]!r}", status)
    return Verdict(Decision.OK, status=status, payload=value)


def classify_transport(exc: BaseException, *, timeouts: tuple[type[BaseException], ...],
                       failures: tuple[type[BaseException], ...],
                       timeout: float | None = None) -> Verdict | None:
    """The verdict on a request that got no HTTP answer: `exc` is one of the client library's
    `timeouts` or `failures` (connection refused or dropped); None for anything else (a bug:
    re-raise it)."""
    if isinstance(exc, timeouts):
        after = f" after {timeout:g} s" if timeout else ""
        return Verdict(Decision.RETRY, f"request timed out{after}", rest=True)
    if isinstance(exc, failures):
        detail = str(exc) or type(exc).__name__
        return Verdict(Decision.RETRY, f"connection failed: {detail}", rest=True)
    return None
