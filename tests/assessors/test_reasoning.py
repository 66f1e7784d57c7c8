"""Reasoning models over an OpenAI-compatible server, against the emulator's reasoning persona
(benchmarks/emulator_reasoning.py): the 400s on `max_tokens` and `temperature` are learned
from once per run and remembered in the cache, the thinking never reaches the label parser, an
answer left empty by thinking gets a larger budget (up to a cap), and the reasoning tokens are
counted apart in the summary and the usage files."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import emulator, small_track

from nuggetizer.assessors import AdaptError, Decision, classify_status, split_reasoning
from nuggetizer.assessors.protocol import RefusedError
from nuggetizer.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tracks" / "sample"
MAX_TOKENS_400 = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
               "'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}
TEMPERATURE_400 = {"error": {
    "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the "
               "default (1) value is supported.",
    "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}
CONTEXT_400 = {"error": {"message": "This model's maximum context length is 8192 tokens.",
                         "type": "invalid_request_error", "param": "messages",
                         "code": "context_length_exceeded"}}


def body(value: object) -> bytes:
    return json.dumps(value).encode()


@pytest.mark.parametrize(("answer", "param"), [
    (MAX_TOKENS_400, "max_tokens"),
    (TEMPERATURE_400, "temperature"),
    # a proxy that keeps only OpenAI's message, with a code of its own
    ({"error": {"message": MAX_TOKENS_400["error"]["message"],
                "code": "invalid_request_body"}}, "max_tokens"),
])
def test_an_unsupported_parameter_is_adapted_to(answer: dict, param: str) -> None:
    verdict = classify_status(400, {}, body(answer))
    assert verdict.decision is Decision.ADAPT and verdict.param == param
    error = verdict.error("http://server/v1")
    assert isinstance(error, AdaptError) and error.param == param
    assert isinstance(error, RefusedError)  # not adapted to: a refusal of the item


@pytest.mark.parametrize("answer", [
    CONTEXT_400,
    {"error": {"message": "Unsupported parameter: 'logprobs' is not supported with this model.",
               "type": "invalid_request_error", "param": "logprobs",
               "code": "unsupported_parameter"}},
    {"error": {"message": "Invalid value for 'temperature'", "param": "temperature",
               "code": "invalid_value"}},
])
def test_other_400s_are_still_item_failures(answer: dict) -> None:
    verdict = classify_status(400, {}, body(answer))
    assert verdict.decision is Decision.ITEM_FAILURE
    assert not isinstance(verdict.error(), AdaptError)
    # the same body with another status is not adapted to
    assert classify_status(422, {}, body(MAX_TOKENS_400)).decision is Decision.ITEM_FAILURE


def test_reasoning_is_split_from_the_answer() -> None:
    assert split_reasoning({"content": '["a"]'}) == ('["a"]', None)
    assert split_reasoning({"content": '["a"]', "reasoning_content": "hmm"}) == ('["a"]', "hmm")
    assert split_reasoning({"content": '["a"]', "reasoning": "hmm"}) == ('["a"]', "hmm")
    assert split_reasoning({"content": '<think>\nhmm\n</think>\n\n["a"]'}) == ('["a"]', "hmm")
    assert split_reasoning({"content": "<think>cut off while thin"}) == ("", "cut off while thin")
    assert split_reasoning({"content": None, "reasoning_content": "hmm"}) == ("", "hmm")


def invoke(*args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def summary(output: str, step: str) -> str:
    """The summary line of `step` (`assign --method nuggets: ...`, `relevance: ...`)."""
    return next(line for line in output.splitlines()
                if line.startswith(step) and " unjudged" in line)


def assign(track: tuple[list[Path], Path], url: str, out: Path, cache: Path, *extra: object
           ) -> str:
    runs = [x for r in track[0] for x in ("--run", r)]
    return invoke("assign", *runs, "--nuggets", track[1], "-o", out, "--assessor",
                  "openai:emulated", "--base-url", url, "--cache", cache, *extra)


def answered(server) -> list[dict]:
    return [r for r in server.requests() if r["status"] == 200]


def refused_params(server) -> list[str]:
    return [r["param"] for r in server.requests() if r["outcome"] == "unsupported"]


def unjudged_reasons(folder: Path) -> list[str]:
    return [n.get("raw") for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text().splitlines()
            for n in json.loads(line)["nuggets"] if n["assignment"] == "unjudged"]


@pytest.mark.parametrize("fmt", ["none", "reasoning_content", "think"])
def test_assign_learns_once_judges_everything_and_replays(tmp_path: Path, fmt: str) -> None:
    track = small_track(tmp_path, runs=2, topics=3)
    cache = tmp_path / "cache.sqlite"
    with emulator(tmp_path, "--persona", "reasoning", "--reasoning-format", fmt,
                  "--reasoning-tokens", "40") as server:
        output = assign(track, server.url, tmp_path / "out", cache)
        line = summary(output, "assign")
        calls = answered(server)
        # one 400 per adaptation, not one per call: the first request probes alone
        assert refused_params(server) == ["max_tokens", "temperature"]
        assert "0 unjudged" in line and f"{len(calls)} calls" in line
        assert "2 request parameters adapted" in line and "refused" not in line
        reasoning = sum(r["reasoning_tokens"] for r in calls)
        assert reasoning == 40 * len(calls)
        assert f"(of which {reasoning} reasoning)" in line
        usage = json.loads((tmp_path / "out" / "usage.json").read_text())["usage"]
        assert usage["reasoning_tokens"] == reasoning
        assert usage["completion_tokens"] == sum(r["completion_tokens"] for r in calls)
        record = json.loads(next((tmp_path / "out").glob("*.jsonl")).read_text().splitlines()[0])
        made = record["provenance"]
        assert made["temperature"] == "default"  # what was sent: no temperature
        assert made["options"]["token_field"] == "max_completion_tokens"
        assert not unjudged_reasons(tmp_path / "out")

        # a rerun knows what the server takes (kept in the cache): it replays, calls nothing
        again = summary(assign(track, server.url, tmp_path / "again", cache), "assign")
        assert len(server.requests()) == len(calls) + 2
        assert "0 calls" in again and f"{len(calls)} cache hits" in again
        assert "replayed from the cache: " in again and "0 unjudged" in again
    assert (tmp_path / "again" / "usage.json").exists()
    first = {p.name: [json.loads(x)["nuggets"] for x in p.read_text().splitlines()]
             for p in (tmp_path / "out").glob("*.jsonl")}
    assert first == {p.name: [json.loads(x)["nuggets"] for x in p.read_text().splitlines()]
                     for p in (tmp_path / "again").glob("*.jsonl")}


def test_explicit_options_send_adapted_from_the_first_request(tmp_path: Path) -> None:
    track = small_track(tmp_path, runs=1, topics=2)
    with emulator(tmp_path, "--persona", "reasoning") as server:
        output = assign(track, server.url, tmp_path / "out", tmp_path / "c.sqlite",
                        "--token-field", "max_completion_tokens", "--reasoning-effort", "low")
        assert refused_params(server) == ["temperature"]  # only what was not said
        assert "0 unjudged" in summary(output, "assign")
    made = json.loads(next((tmp_path / "out").glob("*.jsonl")).read_text().splitlines()[0])
    assert made["provenance"]["options"]["reasoning_effort"] == "low"


def test_an_answer_empty_from_thinking_gets_a_larger_budget(tmp_path: Path) -> None:
    """Assignment asks for 16 x nuggets + 32 tokens; with no allowance for thinking
    (--reasoning-tokens 0), 600 tokens of thinking do not fit: the budget is doubled until
    they do, each raise counted, not a re-ask; at the cap the item is unjudged, saying why."""
    track = small_track(tmp_path, runs=1, topics=2)
    with emulator(tmp_path, "--persona", "reasoning", "--reasoning-format", "think",
                  "--reasoning-tokens", "600") as server:
        output = assign(track, server.url, tmp_path / "out", tmp_path / "c.sqlite",
                        "--reasoning-tokens", "0")
        line = summary(output, "assign")
        cut = [r for r in answered(server) if r["finish_reason"] == "length"]
        assert cut and "0 unjudged" in line
        assert f"{len(cut)} token budgets raised (reasoning)" in line
        assert not unjudged_reasons(tmp_path / "out")

        capped = assign(track, server.url, tmp_path / "capped", tmp_path / "d.sqlite",
                        "--reasoning-tokens", "0", "--max-tokens-cap", "300")
        reasons = unjudged_reasons(tmp_path / "capped")
        assert reasons and set(reasons) == {"token budget exhausted by reasoning at 300 tokens"}
        assert f"{len(reasons)} unjudged" in summary(capped, "assign")


def test_a_model_known_to_reason_gets_an_allowance_for_thinking(tmp_path: Path) -> None:
    """Once the server said it takes only max_completion_tokens, every budget carries twice
    the expected reasoning tokens (medium: 2048): 600 tokens of thinking fit at once; the dry
    run of a rerun assumes them, and says so."""
    track = small_track(tmp_path, runs=1, topics=2)
    cache = tmp_path / "c.sqlite"
    with emulator(tmp_path, "--persona", "reasoning", "--reasoning-tokens", "600") as server:
        output = assign(track, server.url, tmp_path / "out", cache)
        assert "budgets raised" not in output and "0 unjudged" in summary(output, "assign")
        assert not [r for r in answered(server) if r["finish_reason"] == "length"]
        dry = invoke("assign", "--run", track[0][0], "--nuggets", track[1], "-o",
                     tmp_path / "dry", "--assessor", "openai:emulated", "--base-url",
                     server.url, "--cache", tmp_path / "empty.sqlite", "--dry-run",
                     "--reasoning-effort", "low")
        assert "(512 per call, an assumption: --reasoning-tokens)" in dry
    made = json.loads(next((tmp_path / "out").glob("*.jsonl")).read_text().splitlines()[0])
    assert made["provenance"]["options"]["reasoning_allowance"] == 4096


def test_nuggetize_and_relevance_against_a_reasoning_model(tmp_path: Path) -> None:
    runs = [x for r in sorted((ROOT / "runs" / "sample").glob("*.jsonl")) for x in ("--run", r)]
    with emulator(tmp_path, "--persona", "reasoning", "--reasoning-format",
                  "reasoning_content", "--reasoning-tokens", "50") as server:
        common = ["--assessor", "openai:emulated", "--base-url", server.url, "--cache",
                  tmp_path / "c.sqlite"]
        made = invoke("nuggetize", "--topics", SAMPLE / "topics.tsv", "--qrels",
                      ROOT / "qrels" / "sample.qrels", "--corpus", SAMPLE / "corpus.jsonl",
                      "-o", tmp_path / "key.jsonl", *common)
        line = summary(made, "nuggetize")
        assert "0 unjudged" in line and re.search(r"of which \d+ reasoning", line)
        graded = invoke("relevance", "--topics", SAMPLE / "topics.tsv", "--corpus",
                        SAMPLE / "corpus.jsonl", *runs, "-o", tmp_path / "pool.qrels", *common)
        line = summary(graded, "relevance")
        assert "0 unjudged" in line and re.search(r"of which \d+ reasoning", line)
        # the nuggetize run taught the cache; relevance sent adapted from the start
        assert refused_params(server) == ["max_tokens", "temperature"]
    judgments = [json.loads(x) for x in
                 (tmp_path / "pool.qrels.judgments.jsonl").read_text().splitlines()]
    assert judgments and all(j["grade"] is not None for j in judgments)
    assert all(j["reasoning"].startswith("The passage") for j in judgments)
    usage = json.loads((tmp_path / "key.jsonl.usage.json").read_text())["usage"]
    assert usage["reasoning_tokens"] == 50 * usage["calls"]


def test_batch_api_learns_what_a_reasoning_model_takes(tmp_path: Path) -> None:
    """Batched: the lines refused for `max_tokens`, then for `temperature`, teach the backend;
    the next rounds send them adapted; nothing goes live, nothing is left unjudged."""
    track = small_track(tmp_path, runs=1, topics=2)
    with emulator(tmp_path, "--persona", "reasoning", "--reasoning-tokens", "30") as server:
        output = assign(track, server.url, tmp_path / "out", tmp_path / "c.sqlite",
                        "--batch-api", "--batch-poll", "0.1")
        assert not [r for r in server.requests() if r.get("via") == "live"]
        assert sorted(set(refused_params(server))) == ["max_tokens", "temperature"]
        line = summary(output, "assign")
        assert "0 unjudged" in line and "0 calls" in line
    assert not unjudged_reasons(tmp_path / "out")
    made = json.loads(next((tmp_path / "out").glob("*.jsonl")).read_text().splitlines()[0])
    assert made["provenance"]["temperature"] == "default"


def test_the_persona_answers_openais_bodies_and_is_set_at_run_time(tmp_path: Path) -> None:
    def post(url: str, request: dict) -> tuple[int, dict]:
        sent = urllib.request.Request(url + "/chat/completions", data=body(request),
                                      method="POST")
        try:
            with urllib.request.urlopen(sent, timeout=5) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    messages = [{"role": "user", "content": "hello"}]
    with emulator(tmp_path) as server:
        assert post(server.url, {"messages": messages, "max_tokens": 9})[0] == 200
        server.control(persona="reasoning", reasoning_tokens=7,
                       reasoning_format="reasoning_content")
        assert post(server.url, {"messages": messages, "max_tokens": 9,
                                 "temperature": 0}) == (400, MAX_TOKENS_400)
        assert post(server.url, {"messages": messages, "max_completion_tokens": 9,
                                 "temperature": 0}) == (400, TEMPERATURE_400)
        status, answer = post(server.url, {"messages": messages, "max_completion_tokens": 99,
                                           "temperature": 1})
        assert status == 200 and answer["usage"]["completion_tokens_details"] == {
            "reasoning_tokens": 7}
        assert answer["choices"][0]["message"]["reasoning_content"]
        status, answer = post(server.url, {"messages": messages, "max_completion_tokens": 5})
        assert answer["choices"][0] == {"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": "", "reasoning_content": "The passage and the "}}


def test_the_reports_usage_table_shows_reasoning_tokens_only_when_spent() -> None:
    from nuggetizer.report import usage_fields
    from nuggetizer.report.html import _usage_rows

    def table(usage: dict) -> list[list[str]]:
        return _usage_rows(usage, usage_fields(usage))

    plain = table({"assign": {"calls": 2, "completion_tokens": 50}})
    assert len(plain[0]) == 8  # step, six counters, cost: as it always was
    rows = table({"assign": {"calls": 2, "completion_tokens": 50, "reasoning_tokens": 40},
                  "nuggetize": {"calls": 1, "completion_tokens": 9}})
    assert rows[-1] == ["total", "3", "0", "0", "59", "0", "0", "40", "not recorded"]


def test_a_plain_models_cache_keys_are_what_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    """Existing caches replay: a request to a model not known to reason is keyed as before;
    one whose server takes no temperature is keyed with what was sent."""
    from nuggetizer.assessors import make_assessor
    from nuggetizer.assessors.protocol import Request
    from nuggetizer.cache import cache_key

    for variable in ("NUGGETIZER_TOKEN_FIELD", "NUGGETIZER_REASONING_EFFORT",
                     "NUGGETIZER_REASONING_TOKENS"):
        monkeypatch.delenv(variable, raising=False)
    request = Request(messages=(("user", "hi"),), max_tokens=32)
    assessor = make_assessor("openai:m", base_url="http://127.0.0.1:9/v1", cache=None)
    before = {"format": 1, "model": "m", "messages": [["user", "hi"]], "schema": None,
              "max_tokens": 32, "temperature": 0.0, "seed": None, "top_logprobs": 0,
              "options": {"structured": "json_schema"}}
    assert assessor.cache_key(request) == cache_key(before)
    assert assessor.backend.request_args(request)["max_tokens"] == 32
    assert assessor.backend.adapt("max_tokens") and assessor.backend.adapt("temperature")
    assert not assessor.backend.adapt("temperature")  # nothing left to change
    sent = assessor.backend.request_args(request)
    assert "temperature" not in sent and "max_tokens" not in sent
    assert sent["max_completion_tokens"] == 32 + 2 * 2048  # the allowance for thinking
    assert assessor.cache_key(request) == cache_key({
        **before, "temperature": "default", "options": {
            "structured": "json_schema", "token_field": "max_completion_tokens",
            "temperature": "default", "reasoning_allowance": 4096}})
