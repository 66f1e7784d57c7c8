"""The sample track end to end on the embedded model (SmolLM2-135M via llama.cpp, in-process):
time per step and tokens per second, from an empty cache.

    .venv/bin/python benchmarks/bench_sample.py

The same work as `nuggetizer evaluate --track sample`, timed step by step.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

from nuggetizer.assessors import make_assessor  # noqa: E402
from nuggetizer.cache import Cache  # noqa: E402
from nuggetizer.formats.answers import read_runs  # noqa: E402
from nuggetizer.formats.nuggets import read_nuggets  # noqa: E402
from nuggetizer.formats.track_inputs import Demand, Wanted, read_track_inputs  # noqa: E402
from nuggetizer.interface.registry import make_method  # noqa: E402
from nuggetizer.plan.inputs import answer_targets, key_inputs  # noqa: E402
from nuggetizer.plan.track import load_track  # noqa: E402
from nuggetizer.run.steps import build_keys, judge_targets  # noqa: E402
from nuggetizer.scoring.engine import score_paths  # noqa: E402


def main() -> None:
    print(machine())
    track = load_track("sample")
    method = make_method("nuggets", track.settings())
    read = read_track_inputs(Wanted(topics=track.topics, qrels=track.qrels, corpus=track.corpus,
                                    passages=Demand(judged=method.config.min_grade)))
    inputs, skipped = key_inputs(read.topics or {}, read, method.config.min_grade,
                                 skip_without_documents=True)
    targets = answer_targets(read_runs(track.runs))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        started = time.perf_counter()
        assessor = make_assessor("local", cache=Cache(out / "cache.sqlite"))
        print(f"assessor created in {time.perf_counter() - started:.1f} s (the model loads on "
              "its first call, inside the first step)")
        steps: list[tuple[str, float, int, int, int]] = []

        async def work() -> None:
            for name, step in (
                ("nuggetize", lambda: build_keys(method, inputs, assessor,
                                                 out / "nuggets.jsonl", track.name, skipped)),
                ("assign", lambda: judge_targets(method, read_nuggets(out / "nuggets.jsonl"),
                                                 targets, assessor, out / "assessments",
                                                 track.name)),
            ):
                before = (assessor.stats.calls, assessor.stats.prompt_tokens,
                          assessor.stats.completion_tokens)
                began = time.perf_counter()
                await step()
                steps.append((name, time.perf_counter() - began,
                              assessor.stats.calls - before[0],
                              assessor.stats.prompt_tokens - before[1],
                              assessor.stats.completion_tokens - before[2]))
            await assessor.aclose()

        asyncio.run(work())
        began = time.perf_counter()
        table = score_paths(method, [out / "assessments"], read_nuggets(out / "nuggets.jsonl"))
        scoring = time.perf_counter() - began
        total = time.perf_counter() - started
    print(f"{'step':<10} {'s':>7} {'calls':>6} {'prompt tok':>10} {'compl tok':>9} "
          f"{'prompt tok/s':>12} {'compl tok/s':>11}")
    for name, wall, calls, prompt, completion in steps:
        print(f"{name:<10} {wall:>7.1f} {calls:>6} {prompt:>10} {completion:>9} "
              f"{prompt / wall:>12.0f} {completion / wall:>11.1f}")
    print(f"{'score':<10} {scoring:>7.2f}")
    stats = assessor.stats
    print(f"total: {total:.1f} s (model load included), {stats.calls} calls, "
          f"{stats.reasks} re-asks, {len(table.means)} runs scored on {len(table.topics)} topics")


if __name__ == "__main__":
    main()
