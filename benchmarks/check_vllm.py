"""Check `vllm:<model>` on a GPU machine: assign real TREC RAG 2024 answers in-process.

    pip install -e '.[vllm]'
    python benchmarks/check_vllm.py --model Qwen/Qwen2.5-0.5B-Instruct [--topics 20] [--runs 3]

Runs `assign` on the first TOPICS topics of nuggets.mistral.jsonl for RUNS baseline runs with
`make_assessor("vllm:MODEL")`, and prints: the machine and GPU, the batch sizes the engine got
(the first should hold every first-window prompt of the step), calls, wall time, prompt and
completion tokens per second, and how many items ended unjudged. With structured outputs every
answer should parse: the script exits 1 if any item is unjudged or a batch was not formed.
The model must be on the machine (a local folder, or in the Hugging Face cache).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RAG24, machine  # noqa: E402

from nuggetizer.assessors import make_assessor  # noqa: E402
from nuggetizer.formats.answers import read_runs  # noqa: E402
from nuggetizer.formats.nuggets import read_nuggets  # noqa: E402
from nuggetizer.methods.nuggets.method import NuggetsMethod  # noqa: E402
from nuggetizer.methods.nuggets.steps import NuggetConfig  # noqa: E402
from nuggetizer.plan.inputs import answer_targets  # noqa: E402
from nuggetizer.run.steps import judge_targets  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="Hugging Face id or local folder")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=8192)
    args = parser.parse_args()
    print(machine())
    try:
        import torch

        print(f"gpu: {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else "gpu: none")
    except ImportError:
        print("gpu: torch not installed")
    keys = read_nuggets(RAG24 / "nuggets.mistral.jsonl", lenient=True)
    chosen = set(sorted(keys)[: args.topics])
    keys = {q: k for q, k in keys.items() if q in chosen}
    runs = read_runs(sorted((RAG24 / "runs").glob("*.jsonl"))[: args.runs])
    runs = {r: {q: a for q, a in answers.items() if q in chosen} for r, answers in runs.items()}
    started = time.perf_counter()
    assessor = make_assessor(f"vllm:{args.model}", n_ctx=args.n_ctx, cache=None)
    print(f"engine loaded in {time.perf_counter() - started:.1f} s")

    async def go():
        try:
            return await judge_targets(NuggetsMethod(NuggetConfig()), keys,
                                          answer_targets(runs), assessor, Path(tmp) / "out")
        finally:
            await assessor.aclose()

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        summary = asyncio.run(go())
        wall = time.perf_counter() - started
    stats = assessor.stats
    batches = getattr(assessor.backend, "batches", [])
    print(f"answers: {summary.done}, calls: {stats.calls}, batches: {batches}")
    print(f"wall: {wall:.1f} s, {stats.calls / wall:.1f} calls/s, "
          f"{stats.prompt_tokens / wall:.0f} prompt tok/s, "
          f"{stats.completion_tokens / wall:.0f} completion tok/s")
    print(f"re-asks: {stats.reasks}, unparsed calls: {stats.unparsed}, "
          f"unjudged items: {summary.unjudged}")
    ok = summary.unjudged == 0 and bool(batches) and batches[0] > 1
    print("check: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
