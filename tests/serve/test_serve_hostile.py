"""Hostile and bad requests, each a 4xx with a JSON code and message (never a traceback):
malformed JSON, wrong types, oversized bodies and lists, unknown methods and tracks, a missing
or wrong token, payloads that try a path or a template; and a server that will not start open
to the network without a token."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from emulated import Server, emulator
from served import Served, free_port, serve

TOKEN = "s3cret-token-for-tests"
MARKER = "{{ 7 * 7 }}"  # the emulator refuses a request holding it as written


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Server]]:
    tmp = tmp_path_factory.mktemp("hostile")
    with emulator(tmp, "--refuse", MARKER) as llm, serve(
            tmp, "--assessor", "openai:emulated", "--base-url", llm.url, "--api-key", "x",
            "--max-body", "20000", "--max-items", "50", token=TOKEN) as served:
        yield served, llm


def refused(result: tuple[int, object], status: int, code: str, says: str) -> None:
    got, body = result
    assert got == status, body
    assert isinstance(body, dict) and body["error"]["code"] == code, body
    assert says in body["error"]["message"], body
    assert "Traceback" not in json.dumps(body)


def test_token(guarded: tuple[Served, Server]) -> None:
    served, _ = guarded
    assert served.get("/healthz", token=None)[0] == 200  # open: castorini's health check
    refused(served.get("/v1/methods", token=None), 401, "unauthorized", "Bearer")
    refused(served.get("/v1/methods", token="wrong-token-of-some-length"), 401,
            "unauthorized", "Bearer")
    assert served.get("/v1/methods")[0] == 200
    status, api = served.get("/openapi.json", token=None)  # the docs (/docs) describe it
    assert status == 200
    assert {"/v1/create", "/v1/assign", "/v1/judge", "/v1/keys", "/v1/judgments", "/v1/scores",
            "/v1/relevance", "/v1/battles", "/v1/jobs", "/v1/jobs/{job_id}/events"} \
        <= set(api["paths"])


def test_malformed_and_wrong_types(guarded: tuple[Served, Server]) -> None:
    served, _ = guarded
    refused(served.call("POST", "/v1/judgments", raw=b'{"answers": ['), 422,
            "invalid_request", "malformed JSON")
    refused(served.post("/v1/judgments", [1, 2]), 422, "invalid_request",
            "the body must be a JSON object, not an array")
    refused(served.post("/v1/judgments", {"answers": "text"}), 422, "invalid_request",
            "answers: a non-empty list")
    refused(served.post("/v1/judgments", {"keys": [{"qid": 1}], "answers": [{"run_id": "r"}]}),
            422, "invalid_input", "keys[0]")
    refused(served.post("/v1/relevance", {"scale": "0-9", "topics": [{"qid": "q",
                                                                     "query": "q"}]}),
            422, "invalid_input", "unknown relevance scale")
    refused(served.post("/v1/battles", {"answers": [{"run_id": "r", "topic_id": "q",
                                                     "answer": []}], "seed": "x"}),
            422, "invalid_request", "seed")
    refused(served.get("/v1/nothing"), 404, "not_found", "Not Found")
    refused(served.call("DELETE", "/v1/methods"), 405, "method_not_allowed", "Not Allowed")


def test_sizes_and_counts(guarded: tuple[Served, Server]) -> None:
    served, _ = guarded
    refused(served.post("/v1/assign", {"query": "q", "context": "x" * 30000, "nuggets": []}),
            413, "too_large", "at most 20000")
    many = [{"qid": f"q{i}", "query": "q", "passages": []} for i in range(51)]
    refused(served.post("/v1/keys", {"topics": many}), 413, "too_many_items", "at most 50")
    status, body = served.post("/v1/create", {"query": "q", "candidates": ["p"] * 51})
    assert status == 413 and body["error"]["code"] == "too_many_items"
    assert body["schema_version"] == "castorini.cli.v1"  # castorini's route: their envelope


def test_unknown_method_and_track(guarded: tuple[Served, Server]) -> None:
    served, _ = guarded
    refused(served.post("/v1/judgments", {"method": "telepathy", "answers": [{}]}), 422,
            "unknown_method", "telepathy")
    refused(served.post("/v1/keys", {"method": "nuggets", "settings": {"windw": 3},
                                     "topics": [{"qid": "q", "query": "q"}]}),
            422, "invalid_settings", "windw")
    refused(served.get("/v1/jobs/nope"), 404, "unknown_job", "nope")


def test_paths_are_never_opened(guarded: tuple[Served, Server], tmp_path: Path) -> None:
    served, _ = guarded
    secret = tmp_path / "secret.toml"
    secret.write_text("name = 'x'\n")
    for track in (str(secret), "../../etc/passwd", "/etc/passwd"):
        refused(served.post("/v1/jobs", {"track": track}), 422, "unknown_track", "never a path")
    status, job = served.post("/v1/jobs", {"track": "sample", "only_topics": ["nothing"]})
    assert status == 202
    for name in ("../job.json", "..%2Fjob.json", "/etc/passwd"):
        refused(served.get(f"/v1/jobs/{job['id']}/files/{name}"), 404, "unknown_file",
                "no file")
    # a run id that looks like a path is data: its judgments come back, nothing is written
    # outside the request's folder
    key = {"qid": "q1", "query": "q", "nuggets": [{"text": "n", "importance": "vital"}]}
    answer = {"run_id": "../../escaped", "topic_id": "q1", "topic": "q",
              "answer": [{"text": "a", "citations": []}]}
    status, body = served.post("/v1/judgments", {"keys": [key], "answers": [answer]})
    assert status == 200, body
    assert body["judgments"][0]["run_id"] == "../../escaped"
    assert not list(tmp_path.parent.glob("**/escaped*"))


def test_text_is_data_not_a_template(guarded: tuple[Served, Server]) -> None:
    """Jinja in an answer or a passage reaches the LLM as written, never rendered: the
    emulator refuses the requests that hold the marker verbatim."""
    served, llm = guarded
    attack = f"{MARKER} {{% for x in range(3) %}}X{{% endfor %}} {{{{ config }}}}"
    before = llm.stats()["outcomes"].get("refused", 0)
    status, body = served.post("/v1/assign", {"query": "q", "context": attack,
                                              "nuggets": [{"text": "n"}]})
    assert status == 200, body
    status, judged = served.post("/v1/judge", {"query": "q", "candidates": [attack]})
    assert status == 200, judged
    assert judged["artifacts"][0]["data"][0]["judgment"] is None  # refused: unjudged, said
    assert "unjudged" in judged["artifacts"][0]["data"][0]
    assert llm.stats()["outcomes"].get("refused", 0) >= before + 2


def test_refuses_to_start_open_without_token(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "nuggetizer", "serve", "--assessor", "mock",
                           "--host", "0.0.0.0", "--port", str(free_port()), "--state",
                           str(tmp_path / "state")], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "give a bearer token" in done.stderr and "Traceback" not in done.stderr
