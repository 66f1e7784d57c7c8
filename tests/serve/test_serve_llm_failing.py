"""An LLM that fails, behind the server: castorini's routes answer as castorini's servers do
(their documented forms, below), our own routes 502 or 503 naming the LLM's error; never an
exception group's summary, never a traceback.

castorini's forms, read from their source (nuggetizer 0.0.6, umbrela 0.0.7):
- an assignment whose LLM call failed is kept, its nuggets marked `"assignment": "failed"`
  (src/nuggetizer/models/nuggetizer.py, `_failed_assigned_nuggets`), and the envelope is a 200;
- a request that could not be run is a `castorini.cli.v1` envelope with `"status":
  "runtime_error"`, `"exit_code": 6` and one error `{"code": "runtime_error", "message",
  "details", "retryable"}` (src/nuggetizer/api/runtime.py and src/umbrela/api/runtime.py,
  `runtime_error_response`; they answer it with HTTP 500, we with 502 or 503, which say more).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from emulated import Server, emulator
from served import Served, serve

ENVELOPE = {"schema_version", "repo", "command", "mode", "status", "exit_code", "inputs",
            "resolved", "artifacts", "validation", "metrics", "warnings", "errors"}
CASTORINI_ERROR = {"code", "message", "details", "retryable"}  # runtime_error_response's
FAST_GIVE_UP = {"NUGGETIZER_MAX_RETRIES": "1", "NUGGETIZER_RETRY_WAIT": "0.01",
                "NUGGETIZER_RETRY_MAX_WAIT": "0.02", "NUGGETIZER_TIMEOUT": "1"}
CASTORINI = [
    ("/v1/assign", "nuggetizer", "assign", {
        "query": "What is Python used for?", "context": "Python is used for web development.",
        "nuggets": [{"text": "Python is used for web development", "importance": "vital"}]}),
    ("/v1/create", "nuggetizer", "create", {
        "query": "What is Python used for?", "candidates": ["Python is used for the web."]}),
    ("/v1/judge", "umbrela", "judge", {
        "query": "What is Python used for?", "candidates": ["Python is used for the web."]}),
]
OURS = ("/v1/judgments", {
    "method": "nuggets",
    "keys": [{"qid": "1", "query": "What is Python used for?",
              "nuggets": [{"text": "Python is used for the web", "importance": "vital"}]}],
    "answers": [{"run_id": "r", "topic_id": "1", "topic": "What is Python used for?",
                 "references": [], "answer": [{"text": "It is used for the web.",
                                               "citations": []}]}]})


@pytest.fixture(scope="module", params=["500", "timeout"])
def failing(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Served, Server, str]]:
    """A server whose LLM answers HTTP 500 to every call, or never answers in time."""
    tmp = tmp_path_factory.mktemp(f"failing-{request.param}")
    with emulator(tmp, "--fault-rate", "1", "--fault-mix", request.param, "--hang", "5") as llm, \
            serve(tmp, "--assessor", "openai:emulated", "--base-url", llm.url, "--api-key", "x",
                  "--no-cache", env=FAST_GIVE_UP) as served:
        yield served, llm, request.param


def said_the_cause(text: str, fault: str) -> bool:
    return ("HTTP 500" in text) if fault == "500" else ("timed out" in text)


@pytest.mark.parametrize(("path", "repo", "command", "payload"), CASTORINI)
def test_castorini_routes_answer_a_failing_llm_in_their_runtime_error_form(
        failing: tuple[Served, Server, str], path: str, repo: str, command: str,
        payload: dict) -> None:
    served, _, fault = failing
    status, body = served.post(path, payload)
    assert status == (502 if fault == "500" else 503), body  # nothing could be judged
    assert ENVELOPE <= body.keys()
    assert (body["schema_version"], body["repo"], body["command"], body["status"],
            body["exit_code"]) == ("castorini.cli.v1", repo, command, "runtime_error", 6)
    [error] = body["errors"]
    assert set(error) == CASTORINI_ERROR and error["code"] == "runtime_error"
    assert error["retryable"] is True  # a server error or a timeout may pass
    assert said_the_cause(error["message"], fault), error
    assert body["error"]["code"] == "llm_error" and body["error"]["retryable"] is True
    assert "ExceptionGroup" not in json.dumps(body) and "Traceback" not in json.dumps(body)


def test_our_routes_answer_502_or_503_naming_the_llm_error(
        failing: tuple[Served, Server, str]) -> None:
    served, _, fault = failing
    status, body = served.post(*OURS)
    assert status == (502 if fault == "500" else 503), body
    assert body["error"]["code"] == "llm_error" and body["error"]["retryable"] is True
    assert said_the_cause(body["error"]["message"], fault)
    assert body["error"]["message"].startswith("the LLM failed: openai:emulated")
    assert "ExceptionGroup" not in json.dumps(body)


def test_a_refused_credential_is_502_and_not_retryable(tmp_path: Path) -> None:
    """The LLM refuses the server's key (HTTP 401): nothing a retry changes."""
    with emulator(tmp_path, "--api-key", "right") as llm, serve(
            tmp_path, "--assessor", "openai:emulated", "--base-url", llm.url, "--api-key",
            "wrong", "--no-cache", env=FAST_GIVE_UP) as served:
        status, body = served.post(*CASTORINI[0][::3])
    assert status == 502, body
    assert body["errors"][0]["retryable"] is False and "401" in body["errors"][0]["message"]


BATCH = {"nugget_record": {"qid": "q1", "query": "What is Python used for?", "nuggets": [
    {"text": "Python is used for web development", "importance": "vital"},
    {"text": "Python automates tasks", "importance": "okay"}]},
    "answer_records": [
        {"run_id": f"run-{n}", "topic_id": "q1", "topic": "What is Python used for?",
         "response_length": 6, "answer": [{"text": text}]}
        for n, text in enumerate(["Python is used for web development.",
                                  "Python FAILS-HERE scripts automate tasks.",
                                  "Python is used for science.",
                                  "Python is REFUSED-HERE popular."])]}


def test_an_llm_failing_midway_marks_the_rest_failed_in_a_200(tmp_path: Path) -> None:
    """One call at a time: the first answer is judged, the second's call fails every time
    (HTTP 500, no retry left): the LLM is given up on, and its answer and those after it are
    failed with the cause, retryable, in a 200 (castorini's `failed` assignments)."""
    with emulator(tmp_path, "--fail", "FAILS-HERE") as llm, serve(
            tmp_path, "--assessor", "openai:emulated", "--base-url", llm.url, "--api-key", "x",
            "--no-cache", "--concurrency", "1",
            env={**FAST_GIVE_UP, "NUGGETIZER_MAX_RETRIES": "0"}) as served:
        status, body = served.post("/v1/assign", BATCH)
    assert status == 200, body
    assert body["status"] == "success" and body["errors"] == []
    records = body["artifacts"][0]["data"]
    assert [r["run_id"] for r in records] == ["run-0", "run-1", "run-2", "run-3"]
    first = records[0]["nuggets"]
    assert all(n["assignment"] in ("support", "partial_support", "not_support") for n in first)
    for record in records[1:]:
        for nugget in record["nuggets"]:
            assert nugget["assignment"] == "failed" and nugget["retryable"] is True, nugget
            assert "HTTP 500" in nugget["error"] and nugget["importance"] in ("vital", "okay")
    assert body["metrics"]["failed_count"] == 6
    assert body["warnings"] == [f"6 nuggets failed: {records[1]['nuggets'][0]['error']}"]


def test_a_refused_window_is_a_failed_item_beside_judged_ones(tmp_path: Path) -> None:
    """The LLM refuses one answer's request (HTTP 400, its content): that answer's nuggets
    are failed with the LLM's reason, not retryable; the others are judged."""
    with emulator(tmp_path, "--refuse", "REFUSED-HERE") as llm, serve(
            tmp_path, "--assessor", "openai:emulated", "--base-url", llm.url, "--api-key", "x",
            "--no-cache", env=FAST_GIVE_UP) as served:
        status, body = served.post("/v1/assign", {
            **BATCH, "answer_records": [BATCH["answer_records"][i] for i in (0, 3)]})
    assert status == 200, body
    judged, refused = body["artifacts"][0]["data"]
    assert all(n["assignment"] != "failed" for n in judged["nuggets"])
    assert [n["assignment"] for n in refused["nuggets"]] == ["failed", "failed"]
    assert all(n["retryable"] is False and "maximum context length" in n["error"]
               for n in refused["nuggets"]), refused
    assert body["metrics"]["failed_count"] == 2


def test_an_exception_group_never_reaches_the_client() -> None:
    """Whatever a route's task group raises: the toolkit's error inside it as the client's
    (an LLM that failed: 502), or its first failure by type and message, never the group's
    summary (the server's handler of the unexpected, called as FastAPI calls it)."""
    import asyncio

    from fastapi import FastAPI
    from starlette.requests import Request

    from nuggetizer.assessors.protocol import TransientError
    from nuggetizer.errors import AssessorError
    from nuggetizer.serve import errors

    app = FastAPI()
    errors.install(app)
    handler = app.exception_handlers[Exception]
    request = Request({"type": "http", "method": "POST", "path": "/v1/keys", "headers": []})

    def answer(exc: Exception) -> tuple[int, dict]:
        response = asyncio.run(handler(request, exc))  # type: ignore[arg-type]
        return response.status_code, json.loads(bytes(response.body))

    failed = AssessorError("openai:m gave up: HTTP 500: down")
    failed.__cause__ = TransientError("HTTP 500: down", status=500)
    assert answer(ExceptionGroup("unhandled errors in a TaskGroup", [failed])) == (502, {
        "error": {"code": "llm_error", "message": "the LLM failed: openai:m gave up: HTTP 500: "
                  "down", "retryable": True}})
    bug = ExceptionGroup("unhandled errors in a TaskGroup", [
        ExceptionGroup("inner", [KeyError("gone")])])
    assert answer(bug) == (500, {"error": {"code": "internal_error",
                                           "message": "KeyError: 'gone'"}})
