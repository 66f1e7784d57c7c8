"""The one error classifier (assessors/outcomes.py), each class of HTTP outcome through the real
transport (httpx) against a small loopback server: what is retried (and whether the endpoint
rests), what leaves one item unjudged, what stops the run."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nuggetizer.assessors import (
    BackendError,
    Decision,
    OpenAIBackend,
    PermanentError,
    TransientError,
    classify_status,
)
from nuggetizer.assessors.base import RefusedError, Request

TIMEOUT = 0.5
COMPLETION = {"id": "c", "object": "chat.completion", "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": '["support"]'}}],
              "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
LLAMA_CPP_500 = {"error": {"code": 500, "type": "server_error", "message":
                           'response_format type must be one of "text" or "json_object", '
                           "but got: json_schema"}}
CONTEXT_400 = {"error": {"message": "This model's maximum context length is 8192 tokens.",
                         "type": "invalid_request_error", "code": "context_length_exceeded"}}

# case -> (status, headers, body) the server answers; "hang" answers nothing for 3 s
ANSWERS: dict[str, tuple[int, dict[str, str], bytes]] = {
    "ok": (200, {}, json.dumps(COMPLETION).encode()),
    "not-json": (200, {"content-type": "text/html"}, b"<html>gateway</html>"),
    "not-chat": (200, {}, b'{"object": "list", "data": []}'),
    "400": (400, {}, json.dumps(CONTEXT_400).encode()),
    "401": (401, {}, b'{"error": {"message": "Incorrect API key provided."}}'),
    "403": (403, {}, b'{"error": {"message": "forbidden"}}'),
    "404": (404, {}, b'{"error": {"message": "The model `m` does not exist"}}'),
    "408": (408, {}, b"request timeout"),
    "413": (413, {}, b"Request Entity Too Large"),
    "422": (422, {}, b'{"detail": [{"msg": "field required", "loc": ["body", "messages"]}]}'),
    "429": (429, {"retry-after": "3"}, b'{"error": {"message": "rate limited"}}'),
    "500": (500, {}, b'{"error": {"message": "internal error"}}'),
    "500-format": (500, {}, json.dumps(LLAMA_CPP_500).encode()),
    "503": (503, {"retry-after-ms": "1500"}, b'{"error": {"message": "overloaded"}}'),
}


class Handler(BaseHTTPRequestHandler):
    """Answers POST /CASE/v1/chat/completions as ANSWERS[CASE] says."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        case = self.path.strip("/").split("/")[0]
        if case == "hang":
            time.sleep(3)
            self.close_connection = True
            return
        status, headers, body = ANSWERS[case]
        self.send_response(status)
        for name, value in {"content-type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def send(base_url: str, *, schema: bool = True) -> tuple[BackendError | None, OpenAIBackend]:
    """One request through OpenAIBackend (json_schema mode): the error raised, if any."""
    backend = OpenAIBackend("m", base_url=base_url, timeout=TIMEOUT, structured="json_schema")
    request = Request(messages=(("user", "label each of the 1 nuggets"),),
                      schema={"type": "array", "minItems": 1, "maxItems": 1} if schema else None)

    async def go() -> BackendError | None:
        try:
            completion = await backend.complete(request)
        except BackendError as exc:
            return exc
        finally:
            await backend.aclose()
        assert completion.text == '["support"]' and completion.prompt_tokens == 5
        return None

    return asyncio.run(go()), backend


DECISIONS = {TransientError: Decision.RETRY, RefusedError: Decision.ITEM_FAILURE,
             PermanentError: Decision.STOP}


def decision(error: BackendError | None) -> Decision:
    return Decision.OK if error is None else DECISIONS[type(error)]


@pytest.mark.parametrize(
    ("case", "expected", "status", "retry_after", "rests", "words"),
    [
        ("ok", Decision.OK, None, None, False, ""),
        ("not-json", Decision.RETRY, 200, None, False, "not JSON"),
        ("not-chat", Decision.RETRY, 200, None, False, "not a chat completion"),
        ("400", Decision.ITEM_FAILURE, 400, None, False, "maximum context length"),
        ("401", Decision.STOP, 401, None, False, "Incorrect API key"),
        ("403", Decision.STOP, 403, None, False, "forbidden"),
        ("404", Decision.STOP, 404, None, False, "does not exist"),
        ("408", Decision.RETRY, 408, None, False, "HTTP 408"),
        ("413", Decision.ITEM_FAILURE, 413, None, False, "Too Large"),
        ("422", Decision.ITEM_FAILURE, 422, None, False, "field required"),
        ("429", Decision.RETRY, 429, 3.0, False, "rate limited"),
        ("500", Decision.RETRY, 500, None, False, "internal error"),
        ("500-format", Decision.STOP, 500, None, False, "response_format"),
        ("503", Decision.RETRY, 503, 1.5, False, "overloaded"),
        ("hang", Decision.RETRY, None, None, True, "timed out"),
        ("refused", Decision.RETRY, None, None, True, "connection failed"),
    ],
)
def test_each_outcome_maps_to_its_decision(server: str, case: str, expected: Decision,
                                           status: int | None, retry_after: float | None,
                                           rests: bool, words: str) -> None:
    url = dead_url() if case == "refused" else f"{server}/{case}/v1"
    started = time.monotonic()
    error, backend = send(url)
    assert decision(error) is expected, error
    if error is None:
        return
    assert words in str(error)
    assert error.status == status and error.retry_after == retry_after
    assert error.unreachable is rests
    assert error.endpoint == url and str(error).startswith(url)  # names where it was sent
    if case == "hang":
        assert time.monotonic() - started < TIMEOUT + 1.5
    if rests:  # an endpoint that did not answer rests; one that answered does not
        assert backend._endpoints[0].resting_until > time.monotonic()
    else:
        assert backend._endpoints[0].resting_until == 0.0
    if status == 500:  # the likely cause of a 500 to a structured request, named
        assert "--structured json_object" in error.hint


def test_the_hint_needs_a_response_format(server: str) -> None:
    """Without a schema no response_format is sent: a 500 is a plain server error."""
    error, _ = send(f"{server}/500-format/v1", schema=False)
    assert decision(error) is Decision.RETRY and error is not None and error.hint == ""


def test_unexpected_statuses() -> None:
    assert classify_status(302, {"location": "https://x/v1"}, b"").decision is Decision.STOP
    assert classify_status(418, {}, b"teapot").decision is Decision.ITEM_FAILURE
    assert classify_status(201, {}, json.dumps(COMPLETION).encode()).decision is Decision.OK
