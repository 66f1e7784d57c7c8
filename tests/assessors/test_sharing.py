"""`Assessor.sharing` (a server's requests and jobs): copies share the cache, the concurrency
limit and the calls in flight, so the same call asked at once by several is sent once, while
each copy counts its own usage and is stopped on its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

from emulated import emulator

from nuggetizer.assessors import make_assessor
from nuggetizer.assessors.protocol import Request
from nuggetizer.cache import Cache


def test_copies_send_the_same_call_once(tmp_path: Path) -> None:
    with emulator(tmp_path, "--latency", "0.3") as llm:
        base = make_assessor("openai:emulated", base_url=[llm.url], api_key="x",
                             concurrency=4, cache=Cache(tmp_path / "cache.sqlite"))
        same = Request(messages=(("user", "Say something about Python."),), max_tokens=16)
        other = Request(messages=(("user", "Say something about Rust."),), max_tokens=16)

        async def go() -> list:
            copies = [base.sharing() for _ in range(5)]
            assert all(c._semaphore() is base._semaphore() for c in copies)
            done = await asyncio.gather(*(c.complete(same) for c in copies[:4]),
                                        copies[4].complete(other))
            await base.aclose()
            return [copies, done]

        copies, done = asyncio.run(go())
        assert llm.stats()["requests"] == 2  # one per distinct call
    assert len({c.text for c in done[:4]}) == 1
    assert sum(c.stats.calls for c in copies) == 2
    assert sum(c.stats.cache_hits for c in copies[:4]) == 3  # waited, then read the cache
    assert base.stats.calls == 0  # each copy counts its own


def test_a_copy_stops_alone(tmp_path: Path) -> None:
    base = make_assessor("mock", cache=None)

    async def go() -> tuple[bool, bool]:
        one, two = base.sharing(), base.sharing()
        one.stop_new_calls()
        return one.stopping, two.stopping or base.stopping

    assert asyncio.run(go()) == (True, False)
