"""Load: 64 concurrent clients for 30 s ($NUGGETIZER_LOAD_SECONDS) posting castorini assign
requests built from TREC RAG 2024 answers and nuggets, many of them the same, at the emulator:
every request answered, nothing sent to the LLM twice (the server's one cache and its calls in
flight are shared by every request), and the calls the responses report adding up to what the
emulator answered."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from emulated import NUGGETS, RUN_FILES, emulator
from served import serve

CLIENTS = 64
SECONDS = float(os.environ.get("NUGGETIZER_LOAD_SECONDS", "30"))


def assign_payloads(topics: int = 40) -> list[dict[str, Any]]:
    """castorini's direct assign payloads: each baseline's answer to each of `topics` topics
    against that topic's nuggets."""
    keys = {}
    for line in NUGGETS.read_text(encoding="utf-8").splitlines()[:topics]:
        record = json.loads(line)
        keys[record["qid"]] = record
    payloads = []
    for path in RUN_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            answer = json.loads(line)
            key = keys.get(answer["topic_id"])
            if key is not None:
                payloads.append({"query": key["query"],
                                 "context": " ".join(s["text"] for s in answer["answer"]),
                                 "nuggets": key["nuggets"][:10]})
    return payloads


async def clients(url: str, payloads: list[dict[str, Any]], seconds: float
                  ) -> list[tuple[int, dict[str, Any]]]:
    results: list[tuple[int, dict[str, Any]]] = []
    stop = asyncio.get_running_loop().time() + seconds

    async def client(n: int, session: aiohttp.ClientSession) -> None:
        pick = random.Random(n)
        while asyncio.get_running_loop().time() < stop:
            payload = pick.choice(payloads)
            async with session.post(url + "/v1/assign", json=payload) as response:
                results.append((response.status, await response.json()))

    timeout = aiohttp.ClientTimeout(total=None, sock_read=120)
    async with aiohttp.ClientSession(timeout=timeout,
                                     connector=aiohttp.TCPConnector(limit=CLIENTS)) as session:
        await asyncio.gather(*(client(n, session) for n in range(CLIENTS)))
    return results


@pytest.mark.slow
def test_64_clients(tmp_path: Path) -> None:
    payloads = assign_payloads()
    with emulator(tmp_path, "--latency", "0.05") as llm, \
            serve(tmp_path, "--assessor", "openai:emulated", "--base-url", llm.url,
                  "--api-key", "x", "--concurrency", "32") as served:
        results = asyncio.run(clients(served.url, payloads, SECONDS))
        stats = llm.stats()
    print(f"{len(results)} requests in {SECONDS:g} s, {stats['requests']} LLM calls")
    assert len(results) > CLIENTS
    bad = [(status, body) for status, body in results if status != 200]
    assert not bad, bad[:3]
    assert all(body["status"] == "success" for _, body in results)
    answered = [r["digest"] for r in llm.requests() if r.get("status") == 200]
    assert len(answered) == len(set(answered))  # nothing judged twice
    calls = sum(body["usage"]["calls"] for _, body in results)
    assert calls == len(answered) == stats["requests"]
    hits = sum(body["usage"]["cache_hits"] for _, body in results)
    assert hits > 0  # the same answers came back: from the cache, at no call
