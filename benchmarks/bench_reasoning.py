"""`assign` against a reasoning model and a plain one, side by side: the three TREC RAG 2024
baseline runs against nuggets.mistral.jsonl (read leniently, as bench_assign.py reads it), on
the emulating server at a fixed latency, once with the plain persona and once with each
format of the reasoning persona (benchmarks/emulator_reasoning.py).

    .venv/bin/python benchmarks/bench_reasoning.py [--latency 0.05] [--concurrency 64]
        [--reasoning-tokens 256]

For each persona: requests the server got (of which HTTP 400s on an unsupported parameter),
calls answered, token budgets raised, unjudged items, reasoning tokens, wall time; then a
rerun on the same cache (calls it still made). Two more reasoning rows: the client without an
allowance for thinking (--reasoning-tokens 0: the small label budgets are raised), and a
model thinking beyond the default allowance (every call raised once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import baseline_inputs, emulator, machine  # noqa: E402

from nuggetizer.assessors import make_assessor  # noqa: E402
from nuggetizer.cache import Cache  # noqa: E402
from nuggetizer.methods.nuggets.method import NuggetsMethod  # noqa: E402
from nuggetizer.methods.nuggets.steps import NuggetConfig  # noqa: E402
from nuggetizer.plan.inputs import answer_targets  # noqa: E402
from nuggetizer.run.steps import judge_targets  # noqa: E402


def assign_once(url: str, runs: dict, keys: dict, out: Path, cache: Path, concurrency: int,
                **options: Any) -> tuple[Any, Any, float]:
    """One assign of every answer (`options`: make_assessor's): (summary, stats, wall s)."""
    assessor = make_assessor("openai:emulated", base_url=url, concurrency=concurrency,
                             cache=Cache(cache), **options)

    async def go() -> tuple[Any, float]:
        started = time.perf_counter()
        try:
            summary = await judge_targets(NuggetsMethod(NuggetConfig()), keys,
                                          answer_targets(runs), assessor, out)
        finally:
            await assessor.aclose()
        return summary, time.perf_counter() - started

    summary, wall = asyncio.run(go())
    return summary, assessor.stats, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--reasoning-tokens", type=int, default=256)
    parser.add_argument("--large-reasoning-tokens", type=int, default=6000,
                        help="the last row: thinking beyond the default allowance (4096)")
    args = parser.parse_args()
    print(machine())
    runs, keys, described = baseline_inputs()
    print(f"{described}; latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}")
    think = ["--persona", "reasoning", "--reasoning-format", "think"]
    tokens = ["--reasoning-tokens", str(args.reasoning_tokens)]
    personas: list[tuple[str, list[str], dict[str, Any]]] = [
        ("plain", [], {}),
        *[(f"reasoning/{fmt}", ["--persona", "reasoning", "--reasoning-format", fmt, *tokens],
           {}) for fmt in ("none", "reasoning_content", "think")],
        ("think, no allowance", [*think, *tokens], {"reasoning_tokens": 0}),
        (f"think {args.large_reasoning_tokens}",
         [*think, "--reasoning-tokens", str(args.large_reasoning_tokens)], {}),
    ]
    print(f"{'persona':<26} {'requests':>8} {'400s':>5} {'calls':>6} {'raised':>6} "
          f"{'unjudged':>8} {'reasoning tok':>13} {'completion tok':>14} {'wall s':>7} "
          f"{'rerun calls':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n, (name, extra, options) in enumerate(personas):
            log = work / f"requests-{n}.jsonl"
            cache = work / f"cache-{n}.sqlite"
            with emulator(log, "--latency", str(args.latency), *extra) as url:
                summary, stats, wall = assign_once(url, runs, keys, work / f"out-{n}", cache,
                                                   args.concurrency, **options)
                _, again, _ = assign_once(url, runs, keys, work / f"again-{n}", cache,
                                          args.concurrency, **options)
            requests = [json.loads(x) for x in log.read_text().splitlines()]
            refused = sum(1 for r in requests if r["outcome"] == "unsupported")
            print(f"{name:<26} {len(requests) - again.calls:>8} {refused:>5} "
                  f"{stats.calls:>6} {stats.budget_raises:>6} {summary.unjudged:>8} "
                  f"{stats.reasoning_tokens:>13} {stats.completion_tokens:>14} {wall:>7.2f} "
                  f"{again.calls:>11}", flush=True)


if __name__ == "__main__":
    main()
