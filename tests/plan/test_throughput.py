"""Throughput, small: the global concurrency limit is reached and never exceeded across runs,
topics and windows; nuggetization is sequential within a topic while topics run in parallel."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from emulated import emulator, small_track
from flows import assign, nuggetize

from nuggetizer.assessors import make_assessor
from nuggetizer.formats import read_nuggets, read_qrels, read_runs, read_topics
from nuggetizer.methods.nuggets import NuggetConfig
from nuggetizer.plan import load_track

LATENCY = 0.05


def peak_overlap(log: list[dict]) -> int:
    """Most requests the server held at once, from arrival (t0) and answer (t) times."""
    events = sorted([(r["t0"], 1) for r in log] + [(r["t"], -1) for r in log],
                    key=lambda e: (e[0], e[1]))
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def test_assign_keeps_the_server_at_the_concurrency_limit(tmp_path: Path) -> None:
    paths, nuggets = small_track(tmp_path, runs=3, topics=6)
    runs, keys = read_runs(paths), read_nuggets(nuggets)
    with emulator(tmp_path, "--latency", str(LATENCY)) as server:
        assessor = make_assessor("openai:emulated", base_url=server.url, concurrency=8,
                                 cache=None)

        async def go() -> float:
            started = time.perf_counter()
            try:
                await assign(runs, keys, assessor, NuggetConfig(), tmp_path / "out")
            finally:
                await assessor.aclose()
            return time.perf_counter() - started

        wall = asyncio.run(go())
        log = server.requests()
    calls = assessor.stats.calls
    assert len(log) == calls >= 30
    assert peak_overlap(log) == 8  # reached, never exceeded
    serial = calls * LATENCY
    assert wall < serial / 3  # far from serial (ideal: serial / 8)


def test_nuggetize_is_sequential_within_a_topic_parallel_across(tmp_path: Path) -> None:
    track = load_track("sample")
    config = NuggetConfig(window=3, max_nuggets=6, keep=5)
    topics = read_topics(track.topics)
    qrels = read_qrels(track.qrels)
    with emulator(tmp_path, "--latency", str(LATENCY)) as server:
        assessor = make_assessor("openai:emulated", base_url=server.url, concurrency=8,
                                 cache=None)

        async def go():
            try:
                return await nuggetize(topics, qrels, track.corpus, assessor, config,
                                       tmp_path / "n.jsonl")
            finally:
                await assessor.aclose()

        summary = asyncio.run(go())
        log = server.requests()
    assert summary.done == len(topics) and summary.unjudged == 0
    creates: dict[str, list[dict]] = {}
    for r in log:
        if r["kind"] == "create":
            creates.setdefault(r["query"], []).append(r)
    assert len(creates) == len(topics) and all(len(c) >= 2 for c in creates.values())
    for calls in creates.values():  # each window waits for the previous one's answer
        calls.sort(key=lambda r: r["t0"])
        assert all(a["t"] <= b["t0"] for a, b in zip(calls, calls[1:]))
    assert peak_overlap([r for r in log if r["kind"] == "create"]) >= 2  # topics overlap
