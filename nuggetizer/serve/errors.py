"""Every error as JSON `{"error": {"code", "message"}}` with a 4xx or 5xx status, never a
traceback: the toolkit's own errors (a bad input, a bad setting: 422; an LLM that failed: 502
or 503 with `retryable`), FastAPI's validation (malformed JSON, wrong types: 422), unknown
routes (404), and anything else (500, its type and message only, never an exception group's
summary)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from nuggetizer.assessors.protocol import BackendError, TransientError
from nuggetizer.errors import (
    AssessorError,
    ConfigError,
    InputError,
    NuggetizerError,
    first_error,
)

log = logging.getLogger("nuggetizer.serve")


class ApiError(Exception):
    """An error the client can act on: `status`, a stable `code` and a one-line message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def body(code: str, message: str, **more: Any) -> dict[str, Any]:
    """The JSON body of an error."""
    return {"error": {"code": code, "message": message, **more}}


class LlmError(ApiError):
    """The LLM failed the request after the retries allowed: 503 when it could not be reached
    or was busy (a timeout, a refused connection, 429, 503: worth trying again later), else
    502 (it answered errors, or refused every request); `retryable` says whether a later try
    may succeed."""

    def __init__(self, status: int, message: str, retryable: bool) -> None:
        super().__init__(status, "llm_error", message)
        self.retryable = retryable


def llm_error(exc: AssessorError) -> LlmError:
    """The client's form of an LLM that failed (see LlmError)."""
    cause = exc.__cause__
    busy = isinstance(cause, BackendError) and (cause.unreachable or cause.status in (429, 503))
    retryable = isinstance(cause, TransientError)
    return LlmError(503 if busy else 502, f"the LLM failed: {exc_text(exc)}", retryable)


def from_toolkit(exc: NuggetizerError) -> ApiError:
    """A toolkit error as the client's: a bad input or setting is 422, an LLM that failed 502
    or 503 (LlmError), anything else 500."""
    if isinstance(exc, InputError | ConfigError):
        return ApiError(422, "invalid_input", exc_text(exc))
    if isinstance(exc, AssessorError):
        return llm_error(exc)
    return ApiError(500, "failed", exc_text(exc))


def error_body(error: ApiError) -> dict[str, Any]:
    """The JSON body of `error` (an LlmError says whether to try again)."""
    if isinstance(error, LlmError):
        return body(error.code, error.message, retryable=error.retryable)
    return body(error.code, error.message)


def exc_text(exc: BaseException) -> str:
    """An error's one line (an InputError names the request's field, not a scratch file)."""
    if isinstance(exc, InputError):
        return exc.message
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def validation_message(exc: RequestValidationError) -> str:
    """The first problem FastAPI found, as `field: what`."""
    errors = exc.errors()
    if not errors:
        return "invalid request"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    if first.get("type") == "json_invalid":
        return f"malformed JSON: {first.get('ctx', {}).get('error', first.get('msg'))}"
    return f"{where}: {first.get('msg', 'invalid')}"


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into JSON."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=exc.status)

    @app.exception_handler(NuggetizerError)
    async def toolkit_error(request: Request, exc: NuggetizerError) -> JSONResponse:
        error = from_toolkit(exc)
        return JSONResponse(error_body(error), status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(body("invalid_request", validation_message(exc)), status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(body(code, str(exc.detail)), status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        inner = first_error(exc)  # a step's TaskGroup: the toolkit's error inside it
        if inner is not None:
            error = from_toolkit(inner)
            return JSONResponse(error_body(error), status_code=error.status)
        log.error("%s %s failed: %s: %s", request.method, request.url.path,
                  type(exc).__name__, exc)
        shown: BaseException = exc
        while isinstance(shown, BaseExceptionGroup) and shown.exceptions:
            shown = shown.exceptions[0]  # what failed, never the group's summary
        return JSONResponse(body("internal_error",
                                 f"{type(shown).__name__}: {exc_text(shown)}"),
                            status_code=500)

