"""`score --method battles` on an all-pairs journal at TREC RAG 2026 scale: 83 runs x 119
narratives, 404,957 battles judged in both orders, written as the battles step writes them
(narrative, both orders, result, style, provenance on every line).

    .venv/bin/python benchmarks/battles_score.py [--runs 83] [--topics 119] [--rounds 200]
        [--keep DIR]

Prints the journal's size, then the wall time and peak RSS of `nuggetizer score --method
battles DIR -o board.tsv --per-topic pt.tsv` run as a child process (its imports included),
and the lines it prints.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine  # noqa: E402

PROVENANCE = {"model": "synthetic", "templates": {"battle_judge": "0" * 64},
              "config": {"method": "battles", "both_orders": True},
              "versions": {"nuggetizer": "bench"}, "created": "2026-01-01T00:00:00+00:00"}


def write_journal(path: Path, runs: int, topics: int, seed: int) -> int:
    """Every pair on every topic, Bradley-Terry verdicts with a position bias; returns lines."""
    rng = np.random.default_rng(seed)
    names = [f"run{k:03d}" for k in range(runs)]
    theta = rng.normal(0, 1, runs)
    words = rng.integers(80, 400, (topics, runs))
    lines = 0
    with path.open("w", encoding="utf-8") as f:
        for t in range(topics):
            qid = f"2026-{t:05d}"
            narrative = f"narrative {t}: " + "what the user needs to know " * 8
            for a in range(runs):
                for b in range(a + 1, runs):
                    verdicts = []
                    for first, sign in ((names[a], 1), (names[b], -1)):
                        p = 1 / (1 + np.exp(-(sign * (theta[a] - theta[b]) + 0.3)))
                        u = rng.random()
                        verdicts.append({"first": first, "verdict": "A" if u < p * 0.9
                                         else "B" if u < 0.9 else "tie"})
                    one = {"A": "a", "B": "b", "tie": "tie"}[verdicts[0]["verdict"]]
                    two = {"A": "b", "B": "a", "tie": "tie"}[verdicts[1]["verdict"]]
                    result = one if one == two else "tie"
                    record = {"qid": qid, "run_a": names[a], "run_b": names[b],
                              "narrative": narrative, "orders": verdicts, "result": result,
                              "flipped": one != two, "unjudged": 0,
                              "style": {side: {"words": int(words[t, k]), "headers": 0,
                                               "list_items": int(k % 3), "bold": 0,
                                               "citations": 3}
                                        for side, k in (("a", a), ("b", b))},
                              "provenance": PROVENANCE}
                    f.write(json.dumps(record) + "\n")
                    lines += 1
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=83)
    parser.add_argument("--topics", type=int, default=119)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None,
                        help="folder to write the journal to (reused when it holds one)")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "battles"
        folder.mkdir(parents=True, exist_ok=True)
        journal = folder / "battles.jsonl"
        if not journal.is_file():
            start = time.perf_counter()
            lines = write_journal(journal, args.runs, args.topics, seed=0)
            print(f"journal: {lines:,} battles written in {time.perf_counter() - start:.0f} s")
        size = journal.stat().st_size
        print(f"journal: {journal} ({size / 2**20:.0f} MiB)")
        nuggetizer = Path(sys.executable).parent / "nuggetizer"
        command = [str(nuggetizer), "score", "--method", "battles", str(folder), "-o",
                   str(Path(tmp) / "board.tsv"), "--per-topic", str(Path(tmp) / "pt.tsv"),
                   "--set", f"rounds={args.rounds}"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if done.returncode:
            raise SystemExit(f"score failed: {done.stderr.strip()}")
        print(f"score --method battles ({args.rounds} bootstrap rounds): {seconds:.1f} s, "
              f"peak RSS {peak:.0f} MiB")
        print(done.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
