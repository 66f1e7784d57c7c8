"""Agentic nugget creation (`nuggetize --agentic`) at the emulator, which answers tool calls
(nuggetizer/testing/emulator_tools.py): the tools are called and their results reach the model,
a conversation is bounded in model calls and in tokens, a rerun is answered by the cache alone,
and a run killed midway resumes without asking again what was answered. Over a BM25 index of a
corpus made of the TREC RAG 2026 development nuggets, on their narratives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from emulated import Server, emulator, kill_after
from search_api import dev_corpus

from nuggetizer.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def args(server: Server, tmp: Path, topics: Path, corpus: Path, out: Path, *extra: str
         ) -> list[str]:
    return ["nuggetize", "--agentic", "--topics", str(topics), "--corpus", str(corpus),
            "--index", str(tmp / "index"), "-o", str(out), "--assessor", "openai:emulated",
            "--base-url", server.url, "--cache", str(tmp / "cache.sqlite"), *extra]


def nuggetize(*argv: str) -> Any:
    done = CliRunner().invoke(cli, list(argv))
    assert done.exit_code == 0, done.output + repr(done.exception)
    return done


def keys(path: Path) -> dict[str, dict[str, Any]]:
    return {r["qid"]: r for r in map(json.loads, path.read_text().splitlines())}


def agentic_requests(server: Server) -> list[dict[str, Any]]:
    return [r for r in server.requests() if r.get("kind") == "agentic"]


@pytest.fixture
def dev(tmp_path: Path) -> tuple[Path, Path]:
    return dev_corpus(tmp_path, topics=3)


def test_tools_are_called_their_results_reach_the_model_and_a_rerun_is_cached(
        tmp_path: Path, dev: tuple[Path, Path]) -> None:
    topics, corpus = dev
    passages = [json.loads(x)["contents"] for x in corpus.read_text().splitlines()]
    with emulator(tmp_path) as server:
        nuggetize(*args(server, tmp_path, topics, corpus, tmp_path / "key.jsonl"))
        asked = agentic_requests(server)
        # per topic: a search, a read of its first hit, then the answer (the emulator's agent)
        assert [r.get("tools") for r in asked].count(["search"]) == 3
        assert [r.get("tools") for r in asked].count(["read_document"]) == 3
        assert len(asked) == 9
        built = keys(tmp_path / "key.jsonl")
        assert list(built) == ["14", "31", "37"]
        for record in built.values():
            trace = record["agentic"]
            assert [c["name"] for c in trace["tool_calls"]] == ["search", "read_document"]
            assert trace["tool_calls"][0]["arguments"]["query"] in record["query"]
            assert trace["model_calls"] == 3 and trace["stopped"] == "answered"
            # the nuggets are the first words of the passages the tools returned
            texts = [n["text"] for n in record["nuggets"]]
            assert texts and all(any(p.startswith(t) for p in passages) for t in texts)
            assert {n["importance"] for n in record["nuggets"]} <= {"vital", "okay"}
            creation = record["provenance"]["config"]["creation"]
            assert creation["mode"] == "agentic" and creation["search"]["documents"] == 1255
            assert "nuggets_agentic_create" in record["provenance"]["templates"]
        before = len(server.requests())
        nuggetize(*args(server, tmp_path, topics, corpus, tmp_path / "again.jsonl"))
        assert len(server.requests()) == before  # every call of the rerun from the cache
    again = keys(tmp_path / "again.jsonl")
    assert {q: r["nuggets"] for q, r in again.items()} == \
        {q: r["nuggets"] for q, r in built.items()}


def test_a_conversation_is_bounded_in_model_calls_and_in_tokens(
        tmp_path: Path, dev: tuple[Path, Path]) -> None:
    topics, corpus = dev
    with emulator(tmp_path, "--tool-rounds", "100") as server:  # an agent that never stops
        nuggetize(*args(server, tmp_path, topics, corpus, tmp_path / "turns.jsonl",
                        "--max-turns", "4"))
        asked = agentic_requests(server)
        assert len(asked) == 3 * 4
        for record in keys(tmp_path / "turns.jsonl").values():
            assert record["agentic"]["model_calls"] == 4
            assert record["agentic"]["stopped"] == "turns"
            assert len(record["agentic"]["tool_calls"]) == 3
            assert record["nuggets"]  # the last call, without tools, answered the list
        nuggetize(*args(server, tmp_path, topics, corpus, tmp_path / "tokens.jsonl",
                        "--max-agent-tokens", "1500"))
        for record in keys(tmp_path / "tokens.jsonl").values():
            trace = record["agentic"]
            assert trace["stopped"] == "tokens"
            per_call = trace["tokens_per_call"]
            assert sum(per_call) == trace["prompt_tokens"] + trace["completion_tokens"]
            # the budget was reached by the calls before the last one, not before that
            assert sum(per_call[:-1]) >= 1500 > sum(per_call[:-2])
            assert 2 <= trace["model_calls"] < 8


@pytest.mark.parametrize("shown", ["none", "think", "reasoning_content"])
def test_a_reasoning_model_thinks_before_its_tool_calls(
        tmp_path: Path, dev: tuple[Path, Path], shown: str) -> None:
    """A reasoning model refuses max_tokens and temperature (400), then thinks before each
    tool call and before its answer: the requests adapted, the same conversations as a plain
    model's, every topic answered."""
    topics, corpus = dev
    with emulator(tmp_path, "--persona", "reasoning", "--reasoning-format", shown) as server:
        done = nuggetize(*args(server, tmp_path, topics, corpus, tmp_path / "key.jsonl"))
        asked = agentic_requests(server)
    assert "adapted" in done.output and [r["status"] for r in asked].count(400) == 2
    answered = [r for r in asked if r["status"] == 200]
    assert [r.get("tools") for r in answered].count(["search"]) == 3
    assert [r.get("tools") for r in answered].count(["read_document"]) == 3
    assert all(int(r["reasoning_tokens"]) > 0 for r in answered)
    for record in keys(tmp_path / "key.jsonl").values():
        trace = record["agentic"]
        assert trace["stopped"] == "answered" and trace["model_calls"] == 3
        assert [c["name"] for c in trace["tool_calls"]] == ["search", "read_document"]
        assert record["nuggets"] and "unparsed" not in record


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, "NUGGETIZER_PROGRESS_INTERVAL": "0", "NUGGETIZER_TIMEOUT": "60"}


@pytest.mark.slow
def test_a_run_killed_midway_resumes_without_asking_again(tmp_path: Path) -> None:
    topics, corpus = dev_corpus(tmp_path, topics=6)
    command = [sys.executable, "-m", "nuggetizer"]
    with emulator(tmp_path, "--latency", "0.02", name="whole") as server:
        whole = args(server, tmp_path / "whole", topics, corpus, tmp_path / "whole.jsonl",
                     "--concurrency", "2")
        (tmp_path / "whole").mkdir()
        subprocess.run(command + whole, env=environment(), check=True, cwd=ROOT,
                       capture_output=True, timeout=300)
    with emulator(tmp_path, "--latency", "0.02", name="killed") as server:
        killed = args(server, tmp_path, topics, corpus, tmp_path / "key.jsonl",
                      "--concurrency", "2")
        answered = kill_after(server, command + killed, 11, env=environment(), cwd=ROOT)
        assert len(answered) == 11
        assert not (tmp_path / "key.jsonl").exists() or \
            len((tmp_path / "key.jsonl").read_text().splitlines()) < 6
    with emulator(tmp_path, "--latency", "0.02", name="resumed") as server:
        resumed = args(server, tmp_path, topics, corpus, tmp_path / "key.jsonl",
                       "--concurrency", "2")
        subprocess.run(command + resumed, env=environment(), check=True, cwd=ROOT,
                       capture_output=True, timeout=300)
        again = {r["digest"] for r in server.requests() if r["outcome"] == "ok"}
    # what the killed run had answered is not asked again: its conversations resumed from the
    # cache, round by round
    assert not again & {r["digest"] for r in answered}
    assert {q: r["nuggets"] for q, r in keys(tmp_path / "key.jsonl").items()} == \
        {q: r["nuggets"] for q, r in keys(tmp_path / "whole.jsonl").items()}
