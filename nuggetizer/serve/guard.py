"""The door of the server (pure ASGI, before any route): a bearer token on every route but
`/healthz` and the OpenAPI docs when one is set, and the size limit of a request body (413,
whether the client declares its length or streams it)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from nuggetizer.serve.errors import body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz", "/docs", "/openapi.json"})  # no data behind them
# the assessors' workbench authenticates people itself (accounts, sessions, CSRF tokens): a
# browser sends no bearer token
OWN_SESSIONS = "/workbench"


def _own_sessions(path: str) -> bool:
    return path == OWN_SESSIONS or path.startswith(OWN_SESSIONS + "/")


async def _refuse(send: Send, status: int, code: str, message: str,
                  headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    payload = json.dumps(body(code, message)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode()), *headers]})
    await send({"type": "http.response.body", "body": payload})


class Guard:
    """Token and size checks around `app`."""

    def __init__(self, app: App, token: str | None, max_body: int) -> None:
        self.app, self.token, self.max_body = app, token, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        if self.token is not None and scope.get("path") not in OPEN_PATHS \
                and not _own_sessions(scope.get("path", "")):
            given = headers.get(b"authorization", b"").decode("latin-1")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                await _refuse(send, 401, "unauthorized",
                              "this server needs `Authorization: Bearer TOKEN`",
                              [(b"www-authenticate", b"Bearer")])
                return
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await _refuse(send, 413, "too_large", f"the request body is {int(declared)} bytes; "
                          f"this server takes at most {self.max_body}")
            return
        chunks: list[bytes] = []
        seen = 0
        while True:  # read the body first (at most max_body), then hand it on
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_body:
                await _refuse(send, 413, "too_large", "the request body is over the "
                              f"{self.max_body} bytes this server takes")
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        whole = b"".join(chunks)
        handed = False

        async def replay() -> Message:
            nonlocal handed
            if not handed:
                handed = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
