"""`score --method battles` on an all-pairs journal at TREC RAG 2026 scale: 83 runs x 119
narratives, 404,957 battles judged in both orders, written as the battles step writes them
(narrative, both orders, result, style, provenance on every line).

    .venv/bin/python benchmarks/battles_score.py [--runs 83] [--topics 119] [--rounds 200]
        [--repeat 3] [--keep DIR] [--checkout PATH ...]

Prints the journal's size, then the time, CPU and peak memory of `nuggetizer score --method
battles DIR -o board.tsv --per-topic pt.tsv` in fresh processes, and beside them the parse
floor: the CPU time of a bare parse of the journal (every line decoded by orjson). As
bench_score.py: `--checkout` (repeatable) times checkouts or Pythons side by side and compares
their outputs; by default the Python running this benchmark, whatever its install.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sidebyside import alternate, arguments, compare  # noqa: E402

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


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=200, help="bootstrap rounds")
    parser.add_argument("--keep", type=Path, default=None,
                        help="folder to write the journal to (reused when it holds one)")


def main() -> None:
    args = arguments(__doc__, topics=119, runs=83, more=options)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp) / "battles"
        folder.mkdir(parents=True, exist_ok=True)
        journal = folder / "battles.jsonl"
        if not journal.is_file():
            start = time.perf_counter()
            lines = write_journal(journal, args.runs, args.topics, seed=0)
            print(f"journal: {lines:,} battles written in {time.perf_counter() - start:.0f} s")
        print(f"journal: {journal} ({journal.stat().st_size / 2**20:.0f} MiB)")

        def command(out: Path) -> list[str]:
            return ["score", "--method", "battles", str(folder), "-o", str(out / "board.tsv"),
                    "--per-topic", str(out / "pt.tsv"), "--set", f"rounds={args.rounds}"]

        what = f"score --method battles ({args.rounds} bootstrap rounds)"
        timings = alternate(args.checkouts, args.repeat, Path(tmp) / "out", command,
                            floor=[journal])
        for t in timings:
            print(t.line(what))
            print(t.floor_line(what, [f for u in timings for f in u.floors]))
        for line in compare(Path(tmp) / "out", len(args.checkouts)):
            print(line)


if __name__ == "__main__":
    main()
