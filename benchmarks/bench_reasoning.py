"""`assign` against a reasoning model and a plain one, side by side: the three TREC RAG 2024
baseline runs against nuggets.mistral.jsonl (read leniently, as bench_assign.py reads it), on
the emulating server at a fixed latency, once with the plain persona and once with each
format of the reasoning persona (benchmarks/emulator_reasoning.py).

    .venv/bin/python benchmarks/bench_reasoning.py [--latency 0.05] [--concurrency 64]
        [--reasoning-tokens 256]

For each persona: requests the server got (of which HTTP 400s on an unsupported parameter),
calls answered, token budgets raised, unjudged items, reasoning tokens, wall time; then a
rerun on the same cache (calls it still made). A last reasoning row uses --reasoning-tokens
large enough that the first budget does not fit (every call raised once or more).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RAG24, emulator, machine  # noqa: E402

from nuggetizer.assessors import make_assessor  # noqa: E402
from nuggetizer.cache import Cache  # noqa: E402
from nuggetizer.flow.inputs import answer_targets  # noqa: E402
from nuggetizer.flow.steps import judge_targets  # noqa: E402
from nuggetizer.formats.answers import read_runs  # noqa: E402
from nuggetizer.formats.nuggets import read_nuggets  # noqa: E402
from nuggetizer.methods.nuggets import NuggetConfig, NuggetsMethod  # noqa: E402


def assign_once(url: str, runs: dict, keys: dict, out: Path, cache: Path, concurrency: int
                ) -> tuple[object, object, float]:
    """One assign of every answer: (summary, stats, wall seconds)."""
    assessor = make_assessor("openai:emulated", base_url=url, concurrency=concurrency,
                             cache=Cache(cache))

    async def go() -> tuple[object, float]:
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
    parser.add_argument("--large-reasoning-tokens", type=int, default=1000,
                        help="the last row: thinking that does not fit the first budget")
    args = parser.parse_args()
    print(machine())
    runs = read_runs(sorted((RAG24 / "runs").glob("*.jsonl")))
    keys = read_nuggets(RAG24 / "nuggets.mistral.jsonl", lenient=True)
    answers = sum(len(a) for a in runs.values())
    print(f"input: {len(runs)} runs, {answers} answers, {len(keys)} topics with nuggets; "
          f"latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}")
    personas = [("plain", []),
                *[(f"reasoning/{fmt}", ["--persona", "reasoning", "--reasoning-format", fmt,
                                        "--reasoning-tokens", str(args.reasoning_tokens)])
                  for fmt in ("none", "reasoning_content", "think")],
                (f"reasoning/think {args.large_reasoning_tokens}",
                 ["--persona", "reasoning", "--reasoning-format", "think",
                  "--reasoning-tokens", str(args.large_reasoning_tokens)])]
    print(f"{'persona':<24} {'requests':>8} {'400s':>5} {'calls':>6} {'raised':>6} "
          f"{'unjudged':>8} {'reasoning tok':>13} {'completion tok':>14} {'wall s':>7} "
          f"{'rerun calls':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n, (name, extra) in enumerate(personas):
            log = work / f"requests-{n}.jsonl"
            cache = work / f"cache-{n}.sqlite"
            with emulator(log, "--latency", str(args.latency), *extra) as url:
                summary, stats, wall = assign_once(url, runs, keys, work / f"out-{n}", cache,
                                                   args.concurrency)
                _, again, _ = assign_once(url, runs, keys, work / f"again-{n}", cache,
                                          args.concurrency)
            requests = [json.loads(x) for x in log.read_text().splitlines()]
            refused = sum(1 for r in requests if r["outcome"] == "unsupported")
            print(f"{name:<24} {len(requests) - again.calls:>8} {refused:>5} "
                  f"{stats.calls:>6} {stats.budget_raises:>6} {summary.unjudged:>8} "
                  f"{stats.reasoning_tokens:>13} {stats.completion_tokens:>14} {wall:>7.2f} "
                  f"{again.calls:>11}", flush=True)


if __name__ == "__main__":
    main()
