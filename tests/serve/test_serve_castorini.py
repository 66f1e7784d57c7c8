"""castorini's documented payloads (nuggetizer 0.0.6 README and docs/cli-for-agents.md, umbrela
README) answered by our server, started as a real process, in their envelope's shape; and the
documented serve-to-serve pipe (umbrela judge | nuggetizer create) through ours alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Served, serve

ENVELOPE = {"schema_version", "repo", "command", "mode", "status", "exit_code", "inputs",
            "resolved", "artifacts", "validation", "metrics", "warnings", "errors"}
ANSWER_RECORD = {"topic_id": "q1", "topic": "What is Python used for?", "response_length": 10,
                 "answer": [{"text": "Python is used for web development."}]}
NUGGET_RECORD = {"query": "What is Python used for?", "qid": "q1",
                 "nuggets": [{"text": "Python is used for web development.",
                              "importance": "vital"}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("castorini"), "--assessor", "mock") as served:
        yield served


def ok(served: Served, path: str, payload: dict, repo: str, command: str) -> dict:
    status, body = served.post(path, payload)
    assert status == 200, body
    assert ENVELOPE <= body.keys()
    assert (body["schema_version"], body["repo"], body["command"], body["status"],
            body["exit_code"]) == ("castorini.cli.v1", repo, command, "success", 0)
    assert body["errors"] == [] and body["validation"]["valid"] is True
    assert body["provenance"]["model"] == "mock" and body["provenance"]["templates"]
    assert body["provenance"]["versions"]["nuggetizer"]
    assert {"calls", "cache_hits", "prompt_tokens"} <= body["usage"].keys()
    return body


def data(body: dict, name: str) -> object:
    [artifact] = body["artifacts"]
    assert artifact["name"] == name and artifact["kind"] == "data"
    return artifact["data"]


def test_create_direct_and_anserini(server: Served) -> None:
    body = ok(server, "/v1/create", {"query": "q", "candidates": ["p"]}, "nuggetizer",
              "create")
    made = data(body, "create-result")
    assert made["query"] == "q" and made["nuggets"]
    assert all(set(n) == {"text", "importance"} for n in made["nuggets"])
    assert body["metrics"]["nugget_count"] == len(made["nuggets"])
    assert body["resolved"]["model"] == "mock" and body["resolved"]["min_judgment"] == 2
    anserini = {"query": {"qid": "", "text": "what is python commonly used for"},
                "candidates": [{"docid": "7067032", "score": 17.5, "rank": 1,
                                "doc": "Python is used for web development."},
                               {"docid": "7067033", "score": 16.0, "rank": 2,
                                "doc": {"contents": "Python scripts automate tasks."}}]}
    body = ok(server, "/v1/create", anserini, "nuggetizer", "create")
    assert data(body, "create-result")["query"] == "what is python commonly used for"
    assert body["metrics"]["candidates_kept"] == 2


def test_judge_then_create_pipe_and_min_judgment(server: Served) -> None:
    """umbrela judge | nuggetizer create, as castorini's docs pipe them, with their override."""
    judged = ok(server, "/v1/judge", {"query": "what is python used for", "candidates": [
        "Python is difficult to learn.", "Python is used for web development."]},
        "umbrela", "judge")
    judgments = data(judged, "judgments")
    assert [set(j) for j in judgments] == [{"query", "passage", "judgment"}] * 2
    assert all(j["judgment"] in (0, 1, 2, 3) for j in judgments)
    assert judged["resolved"]["model"] == "mock"
    passing = sum(j["judgment"] >= 2 for j in judgments)
    piped = ok(server, "/v1/create", judged, "nuggetizer", "create")  # the envelope, as is
    assert piped["metrics"]["candidates_kept"] == passing
    lowered = ok(server, "/v1/create", {**judged, "overrides": {"min_judgment": 0}},
                 "nuggetizer", "create")
    assert lowered["metrics"]["candidates_kept"] == 2
    assert lowered["resolved"]["min_judgment"] == 0
    direct = ok(server, "/v1/create", {"judgments": judgments, "overrides": {"min_judgment": 0}},
                "nuggetizer", "create")
    assert data(direct, "create-result") == data(lowered, "create-result")


def test_assign_forms(server: Served) -> None:
    direct = ok(server, "/v1/assign", {"query": "What is Python used for?",
                                       "context": "Python is used for web development.",
                                       "nuggets": NUGGET_RECORD["nuggets"]},
                "nuggetizer", "assign")
    made = data(direct, "assign-result")
    assert made["query"] == "What is Python used for?"
    [nugget] = made["nuggets"]
    assert set(nugget) == {"text", "importance", "assignment"}
    assert nugget["assignment"] in ("support", "partial_support", "not_support")
    joined = ok(server, "/v1/assign", {"answer_record": ANSWER_RECORD,
                                       "nugget_record": NUGGET_RECORD}, "nuggetizer", "assign")
    assert data(joined, "assign-result") == made  # the same answer: the same judgment
    assert joined["usage"]["calls"] == 0  # and from the cache
    second = {"topic_id": "q1", "topic": "What is Python used for?", "response_length": 8,
              "answer": [{"text": "Python is also used for automation."}]}
    batch = ok(server, "/v1/assign", {"answer_records": [{"run_id": "demo-run", **ANSWER_RECORD},
                                                         second],
                                      "nugget_record": NUGGET_RECORD}, "nuggetizer", "assign")
    rows = data(batch, "assign-result")
    assert isinstance(rows, list) and len(rows) == 2
    assert [r["run_id"] for r in rows] == ["demo-run", "direct-assign"]
    assert set(rows[0]) == {"query", "qid", "answer_text", "response_length", "run_id",
                            "nuggets", "length"}  # castorini's, and L (counted here)
    assert rows[0]["nuggets"] == made["nuggets"] and batch["metrics"] == {"record_count": 2}
    envelopes = {"answer_envelope": {"schema_version": "castorini.cli.v1", "artifacts": [
                     {"name": "generation-results", "value": [ANSWER_RECORD]}]},
                 "nugget_envelope": {"schema_version": "castorini.cli.v1", "artifacts": [
                     {"name": "create-result", "data": NUGGET_RECORD}]}}
    wrapped = ok(server, "/v1/assign", envelopes, "nuggetizer", "assign")
    assert data(wrapped, "assign-result") == made


def test_refusals_in_their_envelope(server: Served) -> None:
    status, body = server.post("/v1/create", {"query": "q", "candidates": ["p"],
                                              "overrides": {"temperature": 1}})
    assert status == 400
    assert ENVELOPE <= body.keys() and body["status"] == "validation_error"
    assert body["exit_code"] == 5 and "unsupported nuggetizer override field(s): temperature" \
        in body["errors"][0]["message"]
    assert body["error"]["message"] == body["errors"][0]["message"]
    status, body = server.post("/v1/assign", {"query": "q"})
    assert status == 400 and "assign takes" in body["error"]["message"]
    status, body = server.post("/v1/judge", {"query": "q", "candidates": []})
    assert status == 400 and body["repo"] == "umbrela"
    assert "candidates" in body["error"]["message"]


def test_unknown_model_override_is_kept_apart(server: Served, tmp_path: Path) -> None:
    """A per-request model: a mock server answers it with its own mock (echoed)."""
    body = ok(server, "/v1/assign", {"query": "q", "context": "c", "nuggets": ["n"],
                                     "overrides": {"model": "other"}}, "nuggetizer", "assign")
    assert body["resolved"]["model"] == "mock"


def test_real_nuggets_with_off_menu_importance_are_judged_when_lenient(tmp_path: Path) -> None:
    """TREC RAG 2024's nuggets.mistral.jsonl labels two nuggets of topic 2024-44329
    "not_relevant": refused (400, naming the label) unless the request (or the server, with
    `serve --lenient`) asks for `lenient`, which judges every nugget, their importance
    unjudged for scoring and echoed as given (castorini's server takes any label)."""
    import json

    from shared_data import RAG24

    nuggets = next(r for r in map(json.loads, (RAG24 / "nuggets.mistral.jsonl").open())
                   if r["qid"] == "2024-44329")
    run = sorted((RAG24 / "runs").glob("*.jsonl"))[0]
    answer = next(r for r in map(json.loads, run.open()) if r["topic_id"] == "2024-44329")
    payload = {"answer_records": [answer], "nugget_record": nuggets}
    off_menu = sum(n["importance"] not in ("vital", "okay") for n in nuggets["nuggets"])
    assert off_menu == 2
    with serve(tmp_path, "--assessor", "mock") as strict, \
            serve(tmp_path, "--assessor", "mock", "--lenient", name="lenient") as lenient:
        status, body = strict.post("/v1/assign", payload)
        assert status == 400 and "not_relevant" in body["errors"][0]["message"], body
        for served, asked in ((strict, {**payload, "lenient": True}), (lenient, payload),
                              (strict, {**payload, "overrides": {"lenient": True}})):
            status, body = served.post("/v1/assign", asked)
            assert status == 200, body
            [record] = data(body, "assign-result")
            assert len(record["nuggets"]) == len(nuggets["nuggets"])
            assert [n["importance"] for n in record["nuggets"]] == [
                n["importance"] for n in nuggets["nuggets"]]
            assert all(n["assignment"] in ("support", "partial_support", "not_support")
                       for n in record["nuggets"])
            assert body["resolved"]["lenient"] is True
        status, body = lenient.post("/v1/assign", {**payload, "lenient": False})
        assert status == 400  # the request's own choice wins


def test_the_batch_output_scores_with_the_l_validate_gives(server: Served, tmp_path: Path
                                                          ) -> None:
    """An answer whose 400-word cut falls after a Markdown heading object: castorini's
    output joins the objects into one text, whose sentences differ from the objects; the L it
    carries is the objects' (as `validate` counts it), which `score` takes."""
    import json

    from click.testing import CliRunner

    from nuggetizer.cli import cli

    texts = [" ".join(["alpha"] * 60) + "." for _ in range(6)] + [
        "## Sources", " ".join(["alpha"] * 40) + "."]
    answer = {"run_id": "heading-run", "topic_id": "q1", "topic": "What is Python used for?",
              "references": [], "response_length": 402,
              "answer": [{"text": t, "citations": []} for t in texts]}
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(answer) + "\n")
    batch = ok(server, "/v1/assign", {"answer_records": [answer],
                                      "nugget_record": NUGGET_RECORD}, "nuggetizer", "assign")
    [row] = data(batch, "assign-result")
    assert row["length"] == 362 and row["response_length"] == 402
    judged = tmp_path / "judged.jsonl"
    judged.write_text(json.dumps(row) + "\n")
    scored = CliRunner().invoke(cli, ["score", str(judged)])
    assert scored.exit_code == 0, scored.output
    assert next(x for x in scored.stdout.splitlines()
                if x.startswith("heading-run")).split()[-1] == "362.0000"
    validated = CliRunner().invoke(cli, ["validate", str(run)])
    assert validated.stdout.splitlines()[-1].split()[6] == "362.0"  # mean_L
    row.pop("length")  # castorini's own output: L from the joined text, 2 words less
    judged.write_text(json.dumps(row) + "\n")
    scored = CliRunner().invoke(cli, ["score", str(judged)])
    assert next(x for x in scored.stdout.splitlines()
                if x.startswith("heading-run")).split()[-1] == "360.0000"
