"""The OpenAI Batch API through the openai SDK: upload a JSONL file of chat requests, create
a batch, poll it, download its output and error files.

Off the hot path (a few calls per batch), so the SDK's convenience costs nothing here; its own
retries are off (max_retries=0): every call goes through the Assessor's one retry policy
(`Assessor.retried`), and every failure through the one classifier (outcomes.py), as a chat
completion's would. A request line is `{"custom_id", "method": "POST", "url":
"/v1/chat/completions", "body"}`, the body exactly what a live call sends
(OpenAIBackend.request_args). An output line is `{"id", "custom_id", "response":
{"status_code", "body"}, "error"}`: the format of OpenAI's output and error files, and of
vLLM's `python -m vllm.entrypoints.openai.run_batch`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

import openai

from nuggetizer.errors import AssessorError

from .outcomes import classify_status, classify_transport, error_message
from .protocol import RefusedError, Request

__all__ = ["TERMINAL", "BatchClient", "BatchError", "LineResult", "read_results",
           "request_line"]

T = TypeVar("T")
Retried = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]
CHAT_URL: Final = "/v1/chat/completions"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
TIMEOUT = 300.0  # seconds per call of the Batch API (an upload or a download can be large)


class BatchError(AssessorError):
    """The Batch API refused a call (authentication, a bad file, ...) or kept failing."""



@runtime_checkable
class BatchBackend(Protocol):
    """What the Batch API needs of a backend (the openai: one is): the server it reaches and
    its key, a request's chat completion body, and the adaptation a refused parameter asks."""

    api_key: str

    @property
    def endpoints(self) -> list[str]: ...

    def request_args(self, request: Request) -> dict[str, Any]: ...

    def adapt(self, param: str) -> bool: ...

@dataclass(frozen=True)
class LineResult:
    """One request's outcome in a batch: the chat completion body, or why there is none."""

    body: dict[str, Any] | None
    error: str | None


def request_line(custom_id: str, body: dict[str, Any]) -> str:
    """One line of a batch request file."""
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": CHAT_URL,
                       "body": body}, ensure_ascii=False, sort_keys=True)


def read_results(text: str) -> dict[str, LineResult]:
    """custom_id -> outcome of every line of an output or error file (OpenAI's or vLLM's)."""
    results: dict[str, LineResult] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        response = record.get("response") or {}
        body = response.get("body")
        status = response.get("status_code")
        error = record.get("error")
        if status == 200 and isinstance(body, dict) and not error:
            results[str(record["custom_id"])] = LineResult(body, None)
            continue
        if isinstance(error, dict):
            reason = str(error.get("message") or error.get("code") or error)
        elif error:
            reason = str(error)
        else:
            reason = f"HTTP {status}: {error_message(json.dumps(body))}"
        results[str(record["custom_id"])] = LineResult(None, reason[:300])
    return results


class BatchClient:
    """The files and batches endpoints of one OpenAI-compatible base URL (".../v1"), every
    call made through `retried` (the Assessor's retry policy: `Assessor.retried`)."""

    def __init__(self, base_url: str, api_key: str | None, retried: Retried, *,
                 timeout: float = TIMEOUT) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._retried = retried
        self._client = openai.AsyncOpenAI(base_url=self.base_url, api_key=api_key or "EMPTY",
                                          max_retries=0, timeout=timeout)

    async def upload(self, data: bytes, name: str) -> str:
        """The id of the uploaded batch input file."""
        made = await self._call(f"POST {self.base_url}/files", lambda: self._client.files.create(
            file=(name, data, "application/jsonl"), purpose="batch"))
        return str(made.id)

    async def create(self, file_id: str, metadata: dict[str, str] | None = None
                     ) -> dict[str, Any]:
        """The batch created over the uploaded file (24 h window, chat completions)."""
        batch = await self._call(f"POST {self.base_url}/batches", lambda: self._client.batches
                                 .create(input_file_id=file_id, endpoint=CHAT_URL,
                                         completion_window="24h", metadata=metadata or {}))
        return dict(batch.model_dump())

    async def find(self, file_id: str, since: int | None = None) -> dict[str, Any] | None:
        """The newest batch made from the uploaded file `file_id`, None if there is none (a
        command killed after creating a batch and before recording it): the account's batches
        page by page, newest first, down to those created before `since` (the upload's time,
        seconds since the epoch; None: every page)."""
        paging: dict[str, Any] = {"limit": 100}
        while True:
            page = await self._call(f"GET {self.base_url}/batches", functools.partial(
                self._client.batches.list, **paging))
            for batch in page.data:
                if batch.input_file_id == file_id:
                    return dict(batch.model_dump())
                if since is not None and int(batch.created_at or 0) < since:
                    return None
            if not page.data or not getattr(page, "has_more", False):
                return None
            paging["after"] = str(page.data[-1].id)

    async def get(self, batch_id: str) -> dict[str, Any]:
        """The batch as the server sees it now (status, request_counts, file ids)."""
        batch = await self._call(f"GET {self.base_url}/batches/{batch_id}",
                                 lambda: self._client.batches.retrieve(batch_id))
        return dict(batch.model_dump())

    async def content(self, file_id: str) -> str:
        """The text of an output or error file."""
        answer = await self._call(f"GET {self.base_url}/files/{file_id}/content",
                                  lambda: self._client.files.content(file_id))
        return str(answer.text)

    async def _call(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """`call()` through the retry policy, the SDK's failures classified as a chat
        completion's (429, 5xx and failed connections retried; 401/403/404 stop the run); a
        4xx about the request itself is a BatchError."""

        async def once() -> T:
            try:
                return await call()
            except openai.APIStatusError as exc:
                verdict = classify_status(exc.status_code, exc.response.headers,
                                          exc.response.content)
            except openai.APIConnectionError as exc:
                found = classify_transport(exc, timeouts=(openai.APITimeoutError,),
                                           failures=(openai.APIConnectionError,),
                                           timeout=self.timeout)
                if found is None:  # unreachable: every APIConnectionError is a failure
                    raise
                verdict = found
            raise verdict.error(what)

        try:
            return await self._retried(once)
        except RefusedError as exc:
            raise BatchError(f"{what}: {exc}") from exc

    async def close(self) -> None:
        await self._client.close()
