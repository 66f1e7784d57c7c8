"""A small HTTP/1.1 JSON client on asyncio streams, for plain-http OpenAI-compatible servers.

The openai SDK (over httpx) spends about 2 ms of CPU per request, which caps a single process
near 500 requests a second; against local servers (vLLM replicas, llama.cpp) that overhead, not
the GPU, would set the pace. This client keeps a pool of keep-alive connections per endpoint
and costs a tenth of that. It speaks only what those servers need: POST a JSON body, read a
response with Content-Length or chunked transfer encoding, no compression, no proxies, no TLS
(https endpoints and proxied setups use the SDK). Errors map onto TransientError (connection
failures, timeouts, 408, 429, 5xx) and PermanentError (other 4xx), like the SDK path.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import urllib.request
from typing import Any

import orjson

from .base import PermanentError, TransientError

__all__ = ["LeanClient", "usable_for"]


def usable_for(url: str | None) -> bool:
    """Whether `url` is a plain-http endpoint reached without a proxy."""
    if not url:
        return False
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    return "http" not in proxies or urllib.request.proxy_bypass(parts.hostname)


def _retry_after(headers: dict[str, str]) -> float | None:
    from .openai_compat import retry_after_seconds

    return retry_after_seconds(headers)


class LeanClient:
    """POST JSON to one http:// base URL over pooled keep-alive connections."""

    def __init__(self, base_url: str, *, api_key: str | None, timeout: float) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        netloc = self.host if self.port == 80 else f"{self.host}:{self.port}"
        self._fixed = (f"Host: {netloc}\r\nContent-Type: application/json\r\n"
                       "Accept: application/json\r\nAccept-Encoding: identity\r\n"
                       "User-Agent: nuggetizer\r\n")
        if api_key:
            self._fixed += f"Authorization: Bearer {api_key}\r\n"

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while self._idle:
            reader, writer = self._idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.close()
        return await asyncio.open_connection(self.host, self.port, limit=2**20)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The decoded JSON answer of POST `path`; TransientError or PermanentError otherwise."""
        data = orjson.dumps(body)
        head = (f"POST {self.prefix}{path} HTTP/1.1\r\n{self._fixed}"
                f"Content-Length: {len(data)}\r\n\r\n").encode("latin-1")
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await self._connection()
                try:
                    writer.write(head + data)
                    status, headers, payload = await self._read(reader)
                except BaseException:
                    writer.close()
                    raise
        except TimeoutError:
            raise _unreachable(f"request timed out after {self.timeout:g} s") from None
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            raise _unreachable(f"connection failed: {exc or type(exc).__name__}") from None
        if headers.get("connection", "").lower() == "close":
            writer.close()
        else:
            self._idle.append((reader, writer))
        if status >= 400:
            message = f"HTTP {status}: {_error_message(payload)}"
            error: Exception
            if status in (408, 429) or status >= 500:
                error = TransientError(message, retry_after=_retry_after(headers))
            else:
                error = PermanentError(message)
            error.status = status  # type: ignore[attr-defined]
            raise error
        try:
            value = orjson.loads(payload)
        except ValueError:  # orjson.JSONDecodeError is a ValueError
            raise TransientError(
                f"the server answered something that is not JSON: {payload[:200]!r}"
            ) from None
        if not isinstance(value, dict):
            raise TransientError(f"the server answered a JSON {type(value).__name__}")
        return value

    async def _read(self, reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")  # no trailers expected
                    break
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
            return status, headers, b"".join(chunks)
        length = headers.get("content-length")
        if length is None:  # body until the server closes
            headers["connection"] = "close"
            return status, headers, await reader.read()
        return status, headers, await reader.readexactly(int(length))

    async def close(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()


def _unreachable(message: str) -> TransientError:
    """A TransientError marked as the endpoint not answering (so it rests for a while)."""
    error = TransientError(message)
    error.unreachable = True  # type: ignore[attr-defined]
    return error


def _error_message(payload: bytes) -> str:
    text = payload.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except ValueError:
        return text[:300]
    if isinstance(value, dict):
        error = value.get("error", value)
        if isinstance(error, dict):
            return str(error.get("message") or error)[:300]
        return str(error)[:300]
    return text[:300]
