"""`--dry-run` against the real run it predicts: the three TREC RAG 2024 baseline runs assigned
against nuggets.mistral.jsonl (--lenient), at the emulating server.

    .venv/bin/python benchmarks/bench_dry_run.py [--topics 20] [--tokenizer chars]

Runs through the command line, as an organizer would: `assign --dry-run` (the emulator must see
no request), then the same `assign` for real, then a second dry run (everything in the cache).
Prints the calls, prompt and completion tokens predicted and counted at the emulator. The
emulator counts prompt tokens as characters / 4, so `--tokenizer chars` predicts its counts
exactly; a real tokenizer (`gguf`, `tiktoken`) predicts the model's instead.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RAG24, emulator, machine  # noqa: E402

DRY = re.compile(r"dry run assign[^:]*: (?P<calls>\d+) calls to make, (?P<prompt>\d+) prompt "
                 r"tokens .*?about (?P<expected>\d+) \(at most (?P<most>\d+)\); (?P<hits>\d+) "
                 r"calls the cache holds")


def assign(url: str, out: Path, cache: Path, topics: list[str], *extra: str) -> str:
    """Run `nuggetizer assign` on the baselines; its stderr (exit status checked)."""
    runs = sorted((RAG24 / "runs").glob("*.jsonl"))
    command = [sys.executable, "-P", "-m", "nuggetizer", "assign",
               *[x for r in runs for x in ("--run", str(r))],
               "--nuggets", str(RAG24 / "nuggets.mistral.jsonl"), "--lenient", "-o", str(out),
               "--assessor", "openai:emulated", "--base-url", url, "--cache", str(cache),
               *[x for t in topics for x in ("--only-topics", t)], *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"assign failed ({done.returncode}):\n{done.stderr}")
    return done.stderr


def logged(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()] \
        if log.exists() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=20,
                        help="the first N topics of the key (0: all 301)")
    parser.add_argument("--tokenizer", default="chars")
    args = parser.parse_args()
    print(machine())
    qids = [str(json.loads(x)["qid"]) for x in
            (RAG24 / "nuggets.mistral.jsonl").read_text().splitlines()]
    topics = qids[:args.topics] if args.topics else []
    print(f"input: 3 baseline runs, {len(topics) or len(qids)} topics, nuggets.mistral.jsonl, "
          f"tokenizer {args.tokenizer}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        log = work / "emulator.log.jsonl"
        with emulator(log) as url:
            started = time.monotonic()
            dry = assign(url, work / "dry", work / "cache.sqlite", topics, "--dry-run",
                         "--tokenizer", args.tokenizer)
            dry_s = time.monotonic() - started
            sent_by_dry = len(logged(log))
            started = time.monotonic()
            assign(url, work / "real", work / "cache.sqlite", topics)
            real_s = time.monotonic() - started
            sent = [r for r in logged(log) if r.get("outcome") == "ok"]
            again = assign(url, work / "again", work / "cache.sqlite", topics, "--dry-run",
                           "--tokenizer", args.tokenizer)
        predicted = DRY.search(dry)
        replayed = DRY.search(again)
        if predicted is None or replayed is None:
            raise SystemExit(f"no dry-run line in:\n{dry}\n{again}")
    prompt = sum(r["prompt_tokens"] for r in sent)
    completion = sum(r["completion_tokens"] for r in sent)
    print(f"{'':10} {'calls':>7} {'prompt tok':>11} {'completion tok':>24}")
    print(f"{'predicted':10} {predicted['calls']:>7} {predicted['prompt']:>11} "
          f"{'about ' + predicted['expected'] + ' (max ' + predicted['most'] + ')':>24}")
    print(f"{'counted':10} {len(sent):>7} {prompt:>11} {completion:>24}")
    print(f"requests the dry run sent: {sent_by_dry}; a second dry run: "
          f"{replayed['calls']} calls to make, {replayed['hits']} in the cache")
    print(f"dry run {dry_s:.1f} s, real run {real_s:.1f} s")


if __name__ == "__main__":
    main()
