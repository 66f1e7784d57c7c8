"""Several endpoints of one model (`--base-url` given more than once) shared by load, a dead
endpoint routed around, a retry budget bounded in time with a clear message, and proxies taken
from the environment."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import assessments, emulator, run_assign, small_track

from nuggetizer.assessors import OpenAIBackend, base_urls, make_assessor
from nuggetizer.assessors.base import Request
from nuggetizer.cli import cli
from nuggetizer.errors import AssessorError


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUGGETIZER_RETRY_WAIT", "0.01")
    monkeypatch.setenv("NUGGETIZER_RETRY_MAX_WAIT", "0.05")
    monkeypatch.setenv("NUGGETIZER_TIMEOUT", "5")


def dead_url() -> str:
    """A local URL where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_base_urls_from_options_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://a/v1, http://b/v1")
    assert base_urls(None) == ["http://a/v1", "http://b/v1"]
    assert base_urls(["http://c/v1", "http://c/v1", "http://d/v1"]) == ["http://c/v1",
                                                                        "http://d/v1"]
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert base_urls(None) == [None]
    backend = OpenAIBackend("m", base_url=["http://a/v1", "http://b/v1"])
    assert backend.max_concurrency == 32 and len(backend.endpoints) == 2
    assert OpenAIBackend("m", base_url=["http://a/v1", "http://b/v1"],
                         max_concurrency=5).max_concurrency == 5


def test_two_replicas_share_the_load(tmp_path: Path) -> None:
    track = small_track(tmp_path)
    with emulator(tmp_path, "--latency", "0.02", name="one") as one:
        summary, _ = run_assign([one.url], track, tmp_path / "single")
        single = len(one.requests())
    with emulator(tmp_path, "--latency", "0.02", name="a") as a, \
            emulator(tmp_path, "--latency", "0.02", name="b") as b:
        summary, assessor = run_assign([a.url, b.url], track, tmp_path / "double")
        got_a, got_b = len(a.requests()), len(b.requests())
    assert got_a + got_b == single == assessor.stats.calls
    assert min(got_a, got_b) >= single // 3  # both carry a fair share
    assert assessments(tmp_path / "double") == assessments(tmp_path / "single")


def test_a_dead_replica_is_routed_around(tmp_path: Path) -> None:
    track = small_track(tmp_path)
    with emulator(tmp_path, "--latency", "0.01") as alive:
        summary, assessor = run_assign([dead_url(), alive.url], track, tmp_path / "out")
        answered = len(alive.requests())
    assert summary.unjudged == 0 and answered == assessor.stats.calls
    # the dead one is tried, then rests while the live one carries on: few wasted attempts
    assert 1 <= assessor.stats.retries <= 8
    assert len(assessments(tmp_path / "out")) == 10


def test_cli_takes_base_url_more_than_once(tmp_path: Path) -> None:
    runs, nuggets = small_track(tmp_path, runs=1, topics=4)
    with emulator(tmp_path, name="a") as a, emulator(tmp_path, name="b") as b:
        result = CliRunner().invoke(cli, [
            "assign", "--run", str(runs[0]), "--nuggets", str(nuggets), "-o",
            str(tmp_path / "out"), "--assessor", "openai:emulated", "--base-url", a.url,
            "--base-url", b.url, "--no-cache", "--concurrency", "4",
        ])
        assert result.exit_code == 0, result.output
        assert a.requests() and b.requests()


def test_retries_are_bounded_in_time_and_say_why(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUGGETIZER_MAX_RETRIES", "1000")
    monkeypatch.setenv("NUGGETIZER_RETRY_BUDGET", "0.5")
    with emulator(tmp_path, "--fault-rate", "1", "--fault-mix", "500") as server:
        assessor = make_assessor("openai:emulated", base_url=server.url, cache=None)
        request = Request(messages=(("user", "label each of the 2 nuggets"),),
                          schema={"type": "array", "minItems": 2, "maxItems": 2})

        async def go():
            try:
                await assessor.complete(request)
            finally:
                await assessor.aclose()

        started = time.monotonic()
        with pytest.raises(AssessorError) as error:
            asyncio.run(go())
        took = time.monotonic() - started
    message = str(error.value)
    assert took < 3.0 and "gave up after" in message and "HTTP 500" in message
    assert "--structured json_object" in message  # the likely cause, named


def test_a_proxy_from_the_environment_is_used(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY is honoured (the emulator plays the proxy: it answers absolute-form request
    targets); the base URL's host is never looked up."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY",
                 "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    track = small_track(tmp_path, runs=1, topics=2)
    with emulator(tmp_path, "--latency", "0.01") as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        monkeypatch.setenv("http_proxy", proxy.url.removesuffix("/v1"))
        summary, assessor = run_assign("http://model.invalid/v1", track, tmp_path / "out")
        answered = len(proxy.requests())
    assert summary.unjudged == 0 and answered == assessor.stats.calls > 0


@pytest.mark.slow
def test_wrong_structured_mode_on_llama_server_fails_fast_and_says_why(
        llama_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUGGETIZER_RETRY_BUDGET", "3")
    assessor = make_assessor("openai:local", base_url=llama_server, structured="json_schema",
                             cache=None)
    request = Request(messages=(("user", "Answer with a JSON list of 2 labels."),),
                      schema={"type": "array", "items": {"type": "string"},
                              "minItems": 2, "maxItems": 2}, max_tokens=16)

    async def go():
        try:
            return await assessor.complete(request)
        finally:
            await assessor.aclose()

    started = time.monotonic()
    with pytest.raises(AssessorError) as error:
        asyncio.run(go())
    message = str(error.value)
    assert time.monotonic() - started < 10  # refused at once: the same request fails every time
    assert "refused" in message and "response_format" in message
    assert "--structured json_object" in message
