"""The project's server (`nuggetizer serve`) as a real process on 127.0.0.1 for the tests,
and a small JSON client for it (standard library only, as a castorini client would be)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# the server needs the serve extra; the lowest-versions run (make test-min) installs none
pytest.importorskip("fastapi", reason="the serve extra (fastapi, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (fastapi, uvicorn) is not installed")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    """A running server: its base URL, process, stderr file and token."""

    url: str
    proc: subprocess.Popen
    stderr: Path
    token: str | None = None

    def call(self, method: str, path: str, payload: Any = None, *, raw: bytes | None = None,
             token: str | None = "default", timeout: float = 60) -> tuple[int, Any]:
        """(status, JSON body) of one request."""
        data = raw if raw is not None else (None if payload is None
                                            else json.dumps(payload).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("content-type", "application/json")
        given = self.token if token == "default" else token
        if given:
            request.add_header("authorization", f"Bearer {given}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def post(self, path: str, payload: Any, **kw: Any) -> tuple[int, Any]:
        return self.call("POST", path, payload, **kw)

    def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return self.call("GET", path, **kw)


def command(port: int, state: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "nuggetizer", "serve", "--port", str(port), "--state",
            str(state), *args]


@contextmanager
def serve(tmp: Path, *args: str, state: Path | None = None, token: str | None = None,
          name: str = "serve", env: dict[str, str] | None = None) -> Iterator[Served]:
    """Start `nuggetizer serve ARGS` on a free port of 127.0.0.1 (its cache under `tmp` unless
    ARGS say otherwise); stopped on exit (SIGTERM, then SIGKILL)."""
    port = free_port()
    state = state or tmp / f"{name}-state"
    extra = [] if "--cache" in args or "--no-cache" in args else [
        "--cache", str(tmp / f"{name}-cache.sqlite")]
    if token:
        extra += ["--token", token]
    err = tmp / f"{name}-{port}.stderr"
    with open(err, "wb") as sink:
        proc = subprocess.Popen(command(port, state, *args, *extra), stdout=sink, stderr=sink,
                                env={**os.environ, **(env or {})})
    served = Served(f"http://127.0.0.1:{port}", proc, err, token)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server ended: {err.read_text()}")
            try:
                if served.get("/healthz", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {err.read_text()}")
            time.sleep(0.1)
        yield served
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, kill: bool = False) -> None:
    """End the server: SIGTERM (SIGKILL with `kill`, or when it does not end in 15 s)."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
