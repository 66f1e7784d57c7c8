"""Scoring at track scale: 150 runs x 301 topics x 20 nuggets of synthetic assessments.

    .venv/bin/python benchmarks/bench_score.py [--runs 150] [--topics 301] [--nuggets 20]
        [--repeat 3] [--checkout PATH ...]

Writes the assessment files (real queries, answers and nugget texts from the TREC RAG 2024
data, random labels, a provenance block per line, as `nuggetizer assign` writes them) to a
temporary folder, then scores them in fresh processes exactly as `nuggetizer score FOLDER
--nuggets KEY -o leaderboard.tsv --per-topic per_topic.tsv` does, and prints the median time
and peak memory (max RSS) of those processes, and beside them the parse floor: the CPU time of
a bare parse of the same files (every line decoded by orjson, nothing else). With `--checkout`
(repeatable: each a checkout with its own .venv, e.g. a `git worktree` of main, or a Python
whose installed nuggetizer to time), the targets score the same files in alternating runs and
their outputs are compared byte for byte (the sidecars' dates aside). Runs against any install
(`/some/venv/bin/python benchmarks/bench_score.py` times that venv's nuggetizer).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RAG24  # noqa: E402
from sidebyside import alternate, arguments, compare  # noqa: E402

from nuggetizer.formats.writing import write_jsonl_atomic  # noqa: E402
from nuggetizer.methods.nuggets.steps import PROMPTS, NuggetConfig  # noqa: E402
from nuggetizer.run.provenance import provenance  # noqa: E402


def synthesize(folder: Path, runs: int, topics: int, per_topic: int, seed: int,
               name: str = "run{:03d}") -> Path:
    """Write `runs` assessment files and the answer key; returns the key's path. Run `r` is
    called `name.format(r)`."""
    rng = random.Random(seed)
    queries = dict(line.split("\t", 1) for line in
                   (RAG24 / "topics.rag24.test.tsv").read_text().splitlines() if line)
    qids = list(queries)[:topics]
    answers = []
    for path in sorted((RAG24 / "runs").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            answer = json.loads(line)["answer"]
            answers.append(" ".join(s["text"].strip() for s in answer))
    texts = [n["text"] for line in (RAG24 / "nuggets.mistral.jsonl").read_text().splitlines()
             for n in json.loads(line)["nuggets"]]
    keys = {}
    for qid in qids:
        keys[qid] = [{"text": rng.choice(texts), "importance": rng.choice(("vital", "okay"))}
                     for _ in range(per_topic)]
    key_path = folder / "nuggets.jsonl"
    write_jsonl_atomic(key_path, ({"qid": q, "query": queries[q].strip(), "nuggets": keys[q]}
                                  for q in qids))
    stamp = provenance({"assessor": "openai:synthetic", "model": "synthetic",
                        "temperature": 0.0, "max_tokens": None}, PROMPTS,
                       config=NuggetConfig().__dict__, track="bench")
    labels = ("support", "partial_support", "not_support")
    out = folder / "assessments"
    for r in range(runs):
        run_id = name.format(r)

        def records(run_id: str = run_id):
            for qid in qids:
                text = rng.choice(answers)
                yield {"run_id": run_id, "qid": qid, "query": queries[qid].strip(),
                       "answer_text": text, "length": len(text.split()),
                       "nuggets": [{**n, "assignment": rng.choice(labels)} for n in keys[qid]],
                       "provenance": stamp}

        write_jsonl_atomic(out / f"{run_id}.jsonl", records())
    return key_path


def prepare(folder: Path, args: argparse.Namespace, name: str = "run{:03d}") -> Path:
    """`synthesize` as the options say, and a line saying what was written; the key's path."""
    key = synthesize(folder, args.runs, args.topics, args.nuggets, args.seed, name=name)
    files = sorted((folder / "assessments").glob("*.jsonl"))
    size = sum(f.stat().st_size for f in files) / 2**20
    print(f"input: {args.runs} runs x {args.topics} topics x {args.nuggets} nuggets = "
          f"{args.runs * args.topics * args.nuggets:,} assessed nuggets in {len(files)} files, "
          f"{size:.0f} MiB")
    return key


def main() -> None:
    args = arguments(__doc__, topics=301)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        key = prepare(folder, args)

        def command(out: Path) -> list[str]:
            return ["score", str(folder / "assessments"), "--nuggets", str(key),
                    "-o", str(out / "leaderboard.tsv"), "--per-topic", str(out / "per_topic.tsv")]

        timings = alternate(args.checkouts, args.repeat, folder / "out", command,
                            floor=[folder / "assessments", key])
        for t in timings:
            print(t.line("score"))
            print(t.floor_line("score", [f for u in timings for f in u.floors]))
        for line in compare(folder / "out", len(args.checkouts)):
            print(line)
        rows = len((folder / "out" / "checkout0" / "round0" / "per_topic.tsv").read_text()
                   .splitlines()) - 1
        print(f"{rows:,} per-topic rows written")


if __name__ == "__main__":
    main()
