"""The OpenAI Batch API over aiohttp: upload a JSONL file of chat requests, create a batch,
poll it, download its output and error files.

A request line is `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`,
the body exactly what a live call sends (OpenAIBackend.request_args). An output line is
`{"id", "custom_id", "response": {"status_code", "body"}, "error"}`: the format of OpenAI's
output and error files, and of vLLM's `python -m vllm.entrypoints.openai.run_batch`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from nuggetizer.errors import AssessorError

from .base import backoff
from .outcomes import error_message, retry_after_seconds
from .transport import env_proxy

__all__ = ["TERMINAL", "BatchClient", "BatchError", "LineResult", "read_results",
           "request_line"]

CHAT_URL = "/v1/chat/completions"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
ATTEMPTS = 6  # per HTTP call of the Batch API, for 429, 5xx and connections that fail


class BatchError(AssessorError):
    """The Batch API refused a call (authentication, a bad file, ...) or kept failing."""


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
    """The files and batches endpoints of one OpenAI-compatible base URL (".../v1")."""

    def __init__(self, base_url: str, api_key: str | None, *, timeout: float = 300.0,
                 retry_wait: float = 1.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry_wait = retry_wait
        headers = {"User-Agent": "nuggetizer"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._headers = headers
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._proxy, self._proxy_auth = env_proxy(self.base_url)
        self._session: aiohttp.ClientSession | None = None

    async def upload(self, data: bytes, name: str) -> str:
        """The id of the uploaded batch input file."""
        def form() -> aiohttp.FormData:
            fields = aiohttp.FormData()
            fields.add_field("purpose", "batch")
            fields.add_field("file", data, filename=name, content_type="application/jsonl")
            return fields

        answer = json.loads(await self._call("POST", "/files", form))
        return str(answer["id"])

    async def create(self, file_id: str, metadata: dict[str, str] | None = None
                     ) -> dict[str, Any]:
        """The batch created over the uploaded file (24 h window, chat completions)."""
        body = {"input_file_id": file_id, "endpoint": CHAT_URL, "completion_window": "24h",
                "metadata": metadata or {}}
        return dict(json.loads(await self._call("POST", "/batches", lambda: body)))

    async def find(self, file_id: str) -> dict[str, Any] | None:
        """The newest batch made from the uploaded file `file_id`, None if there is none (a
        command killed after creating a batch and before recording it)."""
        listed = json.loads(await self._call("GET", "/batches?limit=100"))
        return next((dict(b) for b in listed.get("data") or []
                     if b.get("input_file_id") == file_id), None)

    async def get(self, batch_id: str) -> dict[str, Any]:
        """The batch as the server sees it now (status, request_counts, file ids)."""
        return dict(json.loads(await self._call("GET", f"/batches/{batch_id}")))

    async def content(self, file_id: str) -> str:
        """The text of an output or error file."""
        return (await self._call("GET", f"/files/{file_id}/content")).decode("utf-8")

    async def _call(self, method: str, path: str, payload: Any = None) -> bytes:
        """The body answered; 429, 5xx and failed connections retried with backoff."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        url = self.base_url + path
        last = ""
        for attempt in range(1, ATTEMPTS + 1):
            data = payload() if payload is not None else None
            kwargs: dict[str, Any] = {"json": data} if isinstance(data, dict) else {"data": data}
            try:
                async with self._session.request(method, url, proxy=self._proxy,
                                                 proxy_auth=self._proxy_auth,
                                                 **kwargs) as response:
                    status, content = response.status, await response.read()
                    headers = response.headers
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                last, after = f"connection failed: {exc or type(exc).__name__}", None
            else:
                if 200 <= status < 300:
                    return content
                last = f"HTTP {status}: {error_message(content)}"
                if status != 429 and status < 500:
                    raise BatchError(f"{method} {url}: {last}")
                after = retry_after_seconds(headers)
            if attempt < ATTEMPTS:
                await asyncio.sleep(backoff(attempt, self.retry_wait, 60.0, after))
        raise BatchError(f"{method} {url}: gave up after {ATTEMPTS} attempts; last error: {last}")

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
