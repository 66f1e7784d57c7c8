"""`vllm:<model>`: every prompt of a step reaches the engine as one batch. The batching is tested
on a stand-in engine with vLLM's `LLM.chat` interface; the real engine (GPU, vllm installed)
is exercised by benchmarks/check_vllm.py on a GPU machine."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

from emulated import small_track
from flows import assign

from nuggetizer.assessors import Assessor, VLLMBackend
from nuggetizer.assessors.base import Request
from nuggetizer.formats import read_nuggets, read_runs
from nuggetizer.methods.nuggets import NuggetConfig


class FakeEngine:
    """Answers each conversation with one label per nugget; records every call's size."""

    def __init__(self, refuse: str | None = None) -> None:
        self.calls: list[int] = []
        self.refuse = refuse

    def chat(self, conversations, sampling_params, use_tqdm):  # noqa: ANN001 - vLLM's shape
        assert len(conversations) == len(sampling_params) and use_tqdm is False
        self.calls.append(len(conversations))
        if self.refuse and any(self.refuse in m["content"] for c in conversations for m in c):
            raise ValueError("prompt is longer than the model's context")
        results = []
        for params in sampling_params:
            n = params["schema"]["maxItems"] if params["schema"] else 1
            out = SimpleNamespace(text=json.dumps(["support"] * n), token_ids=[1] * n,
                                  finish_reason="stop", logprobs=None)
            results.append(SimpleNamespace(outputs=[out], prompt_token_ids=[0] * 50))
        return results


def params(request: Request) -> dict:
    return {"schema": request.schema, "max_tokens": request.max_tokens}


def test_a_step_goes_to_the_engine_as_one_batch(tmp_path: Path) -> None:
    paths, nuggets = small_track(tmp_path, runs=3, topics=6)
    runs, keys = read_runs(paths), read_nuggets(nuggets)
    engine = FakeEngine()
    backend = VLLMBackend(engine, "m", make_params=params)
    assessor = Assessor(backend, None)

    async def go():
        try:
            return await assign(runs, keys, assessor, NuggetConfig(), tmp_path / "out")
        finally:
            await assessor.aclose()

    summary = asyncio.run(go())
    assert summary.done == 18 and summary.unjudged == 0
    assert engine.calls == [assessor.stats.calls] and assessor.stats.calls > 18
    assert backend.batches == engine.calls


def test_one_refused_prompt_does_not_sink_the_batch() -> None:
    engine = FakeEngine(refuse="TOO LONG")
    backend = VLLMBackend(engine, "m", make_params=params)
    assessor = Assessor(backend, None)
    schema = {"type": "array", "minItems": 2, "maxItems": 2}
    requests = [Request(messages=(("user", f"prompt {i}" + (" TOO LONG" if i == 5 else "")),),
                        schema=schema) for i in range(8)]

    async def go():
        return await asyncio.gather(*(assessor.complete(r) for r in requests),
                                    return_exceptions=True)

    results = asyncio.run(go())
    failed = [i for i, r in enumerate(results) if isinstance(r, Exception)]
    assert failed == [5] and "refused" in str(results[5])
    assert all(json.loads(r.text) == ["support"] * 2 for i, r in enumerate(results) if i != 5)
    assert engine.calls[0] == 8 and len(engine.calls) > 2  # split in halves down to the culprit
