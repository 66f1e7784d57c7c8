"""Our routes for every method, on the emulator (the LLM as a real server) and the mock: keys,
judgments, scores, relevance on 0-3 and 0-4, battles; a request answered again from the cache
costs 0 calls (the emulator sees none); every answer carries provenance and usage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from emulated import NUGGETS, RUN_FILES, Server, emulator
from served import Served, serve


def first_lines(path: Path, n: int) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Server]]:
    tmp = tmp_path_factory.mktemp("routes")
    with emulator(tmp) as llm, serve(tmp, "--assessor", "openai:emulated", "--base-url",
                                     llm.url, "--api-key", "x", "--concurrency", "16") as served:
        yield served, llm


def keyed_answers(n: int = 2) -> tuple[list[dict], list[dict]]:
    """The first `n` topics' nuggets and two baselines' answers to them (TREC RAG 2024)."""
    keys = first_lines(NUGGETS, n)
    qids = {k["qid"] for k in keys}
    answers = [a for path in RUN_FILES[:2] for a in map(json.loads, path.read_text(
        encoding="utf-8").splitlines()) if a["topic_id"] in qids]
    return keys, answers


def test_methods_are_listed(emulated: tuple[Served, Server]) -> None:
    served, _ = emulated
    status, body = served.get("/v1/methods")
    assert status == 200
    names = [m["name"] for m in body["methods"]]
    assert {"nuggets", "support", "rubrics", "battles"} <= set(names)
    nuggets = body["methods"][names.index("nuggets")]
    assert nuggets["needs_key"] and nuggets["settings"]["window"] == 10
    assert body["relevance_scales"] == ["0-3", "0-4"]


def test_judge_then_score_and_the_cache(emulated: tuple[Served, Server]) -> None:
    served, llm = emulated
    keys, answers = keyed_answers()
    payload = {"method": "nuggets", "keys": keys, "answers": answers}
    status, first = served.post("/v1/judgments", payload)
    assert status == 200, first
    assert len(first["judgments"]) == len(answers) == 4
    assert first["usage"]["calls"] == llm.stats()["requests"] > 0
    assert first["provenance"]["model"] == "emulated"
    assert set(first["provenance"]["templates"]) >= {"nuggets_assign"}
    assert all(r["provenance"]["model"] == "emulated" for r in first["judgments"])
    before = llm.stats()["requests"]
    status, again = served.post("/v1/judgments", payload)
    assert status == 200 and again["usage"]["calls"] == 0
    assert again["usage"]["cache_hits"] == first["usage"]["calls"]
    assert llm.stats()["requests"] == before  # the emulator saw nothing
    strip = [{k: v for k, v in r.items() if k != "provenance"} for r in again["judgments"]]
    assert strip == [{k: v for k, v in r.items() if k != "provenance"}
                     for r in first["judgments"]]
    status, scored = served.post("/v1/scores", {"method": "nuggets", "keys": keys,
                                                "judgments": first["judgments"]})
    assert status == 200, scored
    assert scored["primary"] == "V_strict" and scored["usage"]["calls"] == 0
    board = {row["run_id"] for row in scored["leaderboard"]}
    assert board == {a["run_id"] for a in answers}
    assert all(0 <= row["V_strict"] <= 1 for row in scored["leaderboard"])
    assert set(scored["per_topic"][answers[0]["run_id"]]) == {k["qid"] for k in keys}


def test_keys_support_and_relevance(emulated: tuple[Served, Server]) -> None:
    served, _ = emulated
    topics = [{"qid": "t1", "query": "what is python used for", "passages": [
        {"docid": "a", "text": "Python is used for web development."},
        {"docid": "b", "text": "Python scripts automate tasks."}]}]
    status, made = served.post("/v1/keys", {"method": "nuggets", "topics": topics})
    assert status == 200, made
    [key] = made["keys"]
    assert key["qid"] == "t1" and key["nuggets"] and made["usage"]["calls"] > 0
    answer = {"run_id": "r1", "topic_id": "t1", "topic": "what is python used for",
              "references": ["a", "b"], "response_length": 9,
              "answer": [{"text": "Python builds web sites.", "citations": [0]},
                         {"text": "It automates chores.", "citations": [1]}]}
    status, support = served.post("/v1/judgments", {
        "method": "support", "answers": [answer],
        "passages": {"a": "Python is used for web development.",
                     "b": "Python scripts automate tasks."}})
    assert status == 200, support
    [record] = support["judgments"]
    assert record["run_id"] == "r1" and support["provenance"]["config"]["method"] == "support"
    for scale, extra in (("0-3", {}), ("0-4", {"sub_narratives": ["web", "automation"]})):
        status, graded = served.post("/v1/relevance", {
            "scale": scale, "topics": [{**topics[0], **extra}]})
        assert status == 200, graded
        assert graded["scale"] == scale and [g["docid"] for g in graded["grades"]] == ["a", "b"]
        top = 3 if scale == "0-3" else 4
        assert all(g["grade"] in range(top + 1) for g in graded["grades"])
    status, refused = served.post("/v1/relevance", {"scale": "0-4", "topics": topics})
    assert status == 422 and "sub-narratives" in refused["error"]["message"]


def test_rubrics_and_battles(emulated: tuple[Served, Server]) -> None:
    served, _ = emulated
    _, answers = keyed_answers(1)
    qid = answers[0]["topic_id"]
    rubric = {"qid": qid, "rubrics": [{"criterion": "Says whether a high WBC is dangerous",
                                       "weight": 1.0, "axis": "completeness"}]}
    status, graded = served.post("/v1/judgments", {"method": "rubrics", "keys": [rubric],
                                                   "answers": answers})
    assert status == 200, graded
    assert {r["run_id"] for r in graded["judgments"]} == {a["run_id"] for a in answers}
    status, fought = served.post("/v1/battles", {"answers": answers})
    assert status == 200, fought
    [battle] = fought["battles"]
    assert {battle["run_a"], battle["run_b"]} == {a["run_id"] for a in answers}
    assert fought["usage"]["calls"] >= 1


def test_every_route_on_the_mock(tmp_path: Path) -> None:
    keys, answers = keyed_answers(1)
    topics = [{"qid": "t1", "query": "q", "passages": [{"docid": "a", "text": "a passage"}]}]
    with serve(tmp_path, "--assessor", "mock") as served:
        status, body = served.post("/v1/judgments", {"keys": keys, "answers": answers})
        assert status == 200 and body["provenance"]["assessor"] == "mock"
        assert len(body["judgments"]) == 2
        status, scored = served.post("/v1/scores", {"keys": keys,
                                                    "judgments": body["judgments"]})
        assert status == 200 and len(scored["leaderboard"]) == 2
        status, made = served.post("/v1/keys", {"topics": topics})
        assert status == 200 and made["keys"][0]["nuggets"]
        status, graded = served.post("/v1/relevance", {"topics": topics})
        assert status == 200 and graded["grades"][0]["grade"] in (0, 1, 2, 3)
        status, fought = served.post("/v1/battles", {"answers": answers})
        assert status == 200 and len(fought["battles"]) == 1
        for path, payload in (("/v1/judgments", {"keys": keys, "answers": answers}),
                              ("/v1/keys", {"topics": topics}),
                              ("/v1/relevance", {"topics": topics}),
                              ("/v1/battles", {"answers": answers})):
            status, again = served.post(path, payload)
            assert status == 200 and again["usage"]["calls"] == 0, path  # the cache's
