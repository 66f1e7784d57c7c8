"""Orchestration efficiency of `assign`: the three TREC RAG 2024 baseline runs against
nuggets.mistral.jsonl, on the emulating server at a fixed latency, at several concurrencies.

    .venv/bin/python benchmarks/bench_assign.py [--latency 0.1] [--concurrency 1 8 64]

For each concurrency c: LLM calls, wall time of the assign step (reading inputs excluded), the
ideal time calls x latency / c, and their ratio ideal / wall (1.0: the toolkit adds nothing).
Concurrency 1 on the full set takes minutes, so c=1 runs on a subsample of topics (printed).
Each run starts with an empty cache, so every call reaches the server. `--fault-rate 0.2`
adds a fault run: the full set at c=64 fault-free and with every fault kind at that rate,
and whether the final assessments are the same.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import baseline_inputs, emulator, machine  # noqa: E402

from nuggetizer.assessors import make_assessor  # noqa: E402
from nuggetizer.cache import Cache  # noqa: E402
from nuggetizer.methods.nuggets.method import NuggetsMethod  # noqa: E402
from nuggetizer.methods.nuggets.steps import NuggetConfig  # noqa: E402
from nuggetizer.plan.inputs import answer_targets  # noqa: E402
from nuggetizer.run.steps import judge_targets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--c1-topics", type=int, default=20,
                        help="topics for concurrency 1 (the full set takes minutes)")
    parser.add_argument("--no-cache", action="store_true", help="run without the LLM cache")
    parser.add_argument("--fault-rate", type=float, default=0.0,
                        help="also run the full set at c=64 with this share of faulty requests")
    parser.add_argument("--reasks", type=int, default=NuggetConfig().reasks,
                        help="re-asks after an unparseable answer, for the fault run")
    args = parser.parse_args()
    print(machine())
    runs, keys, described = baseline_inputs()
    print(f"{described}; latency {args.latency * 1000:.0f} ms")
    print(f"{'c':>4} {'topics':>6} {'calls':>6} {'wall s':>8} {'ideal s':>8} {'ratio':>6} "
          f"{'cpu ms/call':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with emulator(work / "requests.jsonl", "--latency", str(args.latency)) as url:
            for c in args.concurrency:
                subset = runs
                topics = len(keys)
                if c == 1 and args.c1_topics:
                    chosen = set(sorted(keys)[: args.c1_topics])
                    subset = {r: {q: a for q, a in ans.items() if q in chosen}
                              for r, ans in runs.items()}
                    topics = len(chosen)
                cache = None if args.no_cache else Cache(work / f"cache-{c}.sqlite")
                assessor = make_assessor("openai:emulated", base_url=url, concurrency=c,
                                         cache=cache)

                async def go(assessor=assessor, subset=subset, c=c) -> float:
                    started = time.perf_counter()
                    await judge_targets(NuggetsMethod(NuggetConfig()), keys, answer_targets(subset),
                                        assessor, work / f"out-{c}")
                    wall = time.perf_counter() - started
                    await assessor.aclose()
                    return wall

                cpu = time.process_time()
                wall = asyncio.run(go())
                cpu = time.process_time() - cpu
                calls = assessor.stats.calls
                ideal = calls * args.latency / c
                print(f"{c:>4} {topics:>6} {calls:>6} {wall:>8.2f} {ideal:>8.2f} "
                      f"{ideal / wall:>6.3f} {cpu / calls * 1000:>11.2f}", flush=True)
    if 1 in args.concurrency and args.c1_topics:
        print(f"(c=1 ran on the first {args.c1_topics} topics of the answer key only)")
    if args.fault_rate:
        fault_run(runs, keys, args)


def labels_of(folder: Path) -> dict:
    table = {}
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            table[(record["run_id"], record["qid"])] = [n["assignment"] for n in record["nuggets"]]
    return table


def fault_run(runs: dict, keys: dict, args: argparse.Namespace) -> None:
    """The full set at c=64, fault-free and then with every fault kind at `fault_rate`:
    retries, re-asks, lost (unjudged) items, and whether the assessments are the same."""
    os.environ.update({"NUGGETIZER_RETRY_WAIT": "0.05", "NUGGETIZER_RETRY_MAX_WAIT": "0.5",
                       "NUGGETIZER_MAX_RETRIES": "10", "NUGGETIZER_TIMEOUT": "1"})
    config = NuggetConfig(reasks=args.reasks)
    print(f"faults: {args.fault_rate:.0%} of requests, all kinds (429 with Retry-After 0.1 s, "
          f"500, timeouts at 1 s, dropped connections, truncated, off-menu, wrong count, "
          f"garbage), concurrency 64, {args.reasks} re-asks, no cache")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, extra in (("fault-free", []), ("faulty", [
                "--fault-rate", str(args.fault_rate), "--retry-after", "0.1", "--hang", "5"])):
            log = work / f"{name}.log"
            with emulator(log, "--latency", str(args.latency), "--seed", "1", *extra) as url:
                assessor = make_assessor("openai:emulated", base_url=url, concurrency=64,
                                         cache=None)

                async def go(assessor=assessor, name=name):
                    started = time.perf_counter()
                    summary = await judge_targets(NuggetsMethod(config), keys, answer_targets(runs),
                                                  assessor, work / name)
                    await assessor.aclose()
                    return summary, time.perf_counter() - started

                summary, wall = asyncio.run(go())
            outcomes = Counter(json.loads(x)["outcome"] for x in log.read_text().splitlines())
            results[name] = labels_of(work / name)
            stats = assessor.stats
            print(f"{name:>10}: {sum(outcomes.values())} requests ({dict(outcomes)}), "
                  f"{stats.retries} retries, {stats.reasks} re-asks, {stats.unparsed} calls "
                  f"never parsed, {summary.unjudged} unjudged items, {wall:.1f} s")
    same = results["faulty"] == results["fault-free"]
    differ = sum(1 for k in results["fault-free"] if results["faulty"].get(k) !=
                 results["fault-free"][k])
    print(f"assessments identical to the fault-free run: {same} "
          f"({differ} of {len(results['fault-free'])} answers differ)")


if __name__ == "__main__":
    main()
