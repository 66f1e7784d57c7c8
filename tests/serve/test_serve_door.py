"""One check at the door of every route (serve/door.py, the methods' declared settings): each
bad value a 422 naming its field, before any work or file; valid JSON taken whatever content
type came with it; what a request gave and got no judgment for counted, with why; no id ever
a file name as given (formats/writing.run_file_name)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Served, serve

KEY = {"qid": "1", "query": "What is Python used for?",
       "nuggets": [{"text": "Python is used for web development", "importance": "vital"}]}


def answer(**changes: object) -> dict:
    return {"run_id": "r", "topic_id": "1", "topic": "What is Python used for?",
            "references": [], "answer": [{"text": "It builds websites.", "citations": []}],
            **changes}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("door"), "--assessor", "mock") as server:
        yield server


def refused(result: tuple[int, object], field: str, says: str, status: int = 422) -> None:
    got, body = result
    assert got == status, body
    message = body["error"]["message"]  # type: ignore[index]
    assert message.startswith(field) and says in message, message
    assert "Traceback" not in json.dumps(body) and "ExceptionGroup" not in json.dumps(body)


def judgments(served: Served, **changes: object) -> tuple[int, object]:
    return served.post("/v1/judgments", {"method": "nuggets", "keys": [KEY],
                                         "answers": [answer()], **changes})


@pytest.mark.parametrize(("changes", "field", "says"), [
    ({"topic": "Python \ud800 uses"}, "answers[0].topic", "lone surrogate (U+D800)"),
    ({"run_id": "x" * 300}, "answers[0].run_id", "300 characters; an id has at most 200"),
    ({"run_id": "run\x00one"}, "answers[0].run_id", "NUL"),
    ({"run_id": "run\tone"}, "answers[0].run_id", "control character"),
    ({"topic_id": "1\n2"}, "answers[0].topic_id", "control character"),
])
def test_bad_text_and_ids_in_an_answer(served: Served, changes: dict, field: str,
                                       says: str) -> None:
    refused(judgments(served, answers=[answer(**changes)]), field, says)


def test_bad_text_anywhere_and_in_keys(served: Served) -> None:
    refused(judgments(served, keys=[{**KEY, "qid": "q" * 201}]), "keys[0].qid", "201 characters")
    nul = {**KEY, "nuggets": [{"text": "a\x00", "importance": "vital"}]}
    refused(judgments(served, keys=[nul]), "keys[0].nuggets[0].text", "NUL")
    refused(judgments(served, extra={"\udfff": 1}), "extra: a key", "lone surrogate (U+DFFF)")
    refused(served.call("POST", "/v1/judgments", raw=b'{"method": NaN}'), "malformed JSON",
            "NaN is not a JSON number")
    refused(served.call("POST", "/v1/judgments", raw=b"\xff\xfe"), "the body is not UTF-8", "")
    refused(served.call("POST", "/v1/judgments", raw=b"  "), "the body is empty", "")
    deep = "[" * 100 + "]" * 100
    refused(served.call("POST", "/v1/judgments", raw=f'{{"a": {deep}}}'.encode()), "a",
            "nests deeper than 64 levels")


@pytest.mark.parametrize(("settings", "field", "says"), [
    ("window=3", "settings", "an object of setting names and values"),
    ({"max_nuggets": -3}, "setting max_nuggets", "must be at least 1, got -3"),
    ({"window": "ten"}, "setting window", "must be an integer, got 'ten'"),
    ({"window": True}, "setting window", "must be an integer, got True"),
    ({"reasks": -1}, "setting reasks", "must be at least 0"),
])
def test_settings_of_the_wrong_type_or_range(served: Served, settings: object, field: str,
                                             says: str) -> None:
    topics = [{"qid": "1", "query": "q", "passages": [{"docid": "d", "text": "Python."}]}]
    refused(served.post("/v1/keys", {"method": "nuggets", "settings": settings,
                                     "topics": topics}), field, says)


@pytest.mark.parametrize(("overrides", "field", "says"), [
    ({"window_size": "ten"}, "overrides.window_size", "got 'ten'"),
    ({"max_nuggets": -3}, "overrides.max_nuggets", "at least 1 is required, got -3"),
    ({"max_nuggets": 2.5}, "overrides.max_nuggets", "whole number"),
])
def test_castorini_overrides_out_of_range(served: Served, overrides: dict, field: str,
                                          says: str) -> None:
    status, body = served.post("/v1/create", {"query": "q", "candidates": ["Python."],
                                              "overrides": overrides})
    assert status == 400 and body["status"] == "validation_error", body
    assert body["errors"][0]["message"].startswith(field), body
    assert says in body["errors"][0]["message"]


def test_valid_json_without_its_content_type(served: Served) -> None:
    """curl -d sends application/x-www-form-urlencoded; text/plain and none at all too."""
    payload = json.dumps({"method": "nuggets", "keys": [KEY], "answers": [answer()]}).encode()
    for kind in ("application/x-www-form-urlencoded", "text/plain", None):
        request = urllib.request.Request(served.url + "/v1/judgments", data=payload,
                                         method="POST")
        if kind is not None:
            request.add_header("content-type", kind)
        else:
            request.remove_header("Content-type")
        with urllib.request.urlopen(request, timeout=30) as got:
            assert got.status == 200
            assert len(json.loads(got.read())["judgments"]) == 1


def test_what_a_request_dropped_is_counted_with_why(served: Served) -> None:
    status, body = judgments(served, answers=[answer(), answer(topic_id="9"),
                                              answer(run_id="s", topic_id="9")])
    assert status == 200, body
    assert [(r["run_id"], r["qid"]) for r in body["judgments"]] == [("r", "1")]
    assert body["dropped"] == {"count": 2, "why": {"its topic has no key": 2}, "answers": [
        {"index": 1, "run_id": "r", "topic_id": "9", "why": "its topic has no key"},
        {"index": 2, "run_id": "s", "topic_id": "9", "why": "its topic has no key"}]}
    status, body = judgments(served)
    assert body["dropped"] == {"count": 0, "why": {}, "answers": []}


def test_a_plan_job_with_a_bad_id_is_refused_at_submission(served: Served,
                                                           tmp_path: Path) -> None:
    jobs = len(served.get("/v1/jobs")[1]["jobs"])
    refused(served.post("/v1/jobs", {"plan": {"method": "nuggets", "keys": [KEY],
                                              "answers": [answer(run_id="y" * 300)]}}),
            "plan.answers[0].run_id", "an id has at most 200")
    refused(served.post("/v1/jobs", {"plan": {"method": "nuggets", "settings": "x",
                                              "keys": [KEY], "answers": [answer()]}}),
            "plan.settings", "an object")
    assert len(served.get("/v1/jobs")[1]["jobs"]) == jobs  # no job made


def test_an_odd_run_id_within_limits_is_judged_into_a_safe_file(served: Served) -> None:
    """Ids that would be a path, a hidden file or no name at all: judged, each its own file."""
    odd = ["../../etc/passwd", ".hidden", "..", "é ü/ß", "a" * 200]
    status, body = judgments(served, answers=[answer(run_id=r) for r in odd])
    assert status == 200, body
    assert sorted(r["run_id"] for r in body["judgments"]) == sorted(odd)


def test_run_file_names_are_safe_and_distinct() -> None:
    from nuggetizer.formats.writing import run_file_name

    kept = {"baseline_rag24.test_gpt-4o_top20": "baseline_rag24.test_gpt-4o_top20.jsonl",
            "team/run-1": "team_run-1.jsonl", "my run": "my%20run.jsonl",
            ".hidden": "%2Ehidden.jsonl", "..": "%2E..jsonl", "nul\x00": "nul%00.jsonl"}
    for run_id, name in kept.items():
        assert run_file_name(run_id) == name
    long = [run_file_name("x" * 300), run_file_name("x" * 300 + "y"), run_file_name("")]
    assert len(set(long)) == 3 and all(len(n.encode()) <= 206 for n in long)
    assert all("/" not in n and not n.startswith(".") for n in [*kept.values(), *long])
