"""Scoring at track scale: 150 runs x 301 topics x 20 nuggets of synthetic assessments.

    .venv/bin/python benchmarks/bench_score.py [--runs 150] [--topics 301] [--nuggets 20]

Writes the assessment files (real queries, answers and nugget texts from the TREC RAG 2024
data, random labels, a provenance block per line, as `nuggetizer assign` writes them) to a
temporary folder, then scores them in a fresh process exactly as `nuggetizer score FOLDER
--nuggets KEY -o leaderboard.tsv --per-topic per_topic.tsv` does, and prints the time and the
peak memory (max RSS) of that process. Target: under 2 s.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RAG24, machine  # noqa: E402

from nuggetizer.flow.provenance import provenance  # noqa: E402
from nuggetizer.formats.writing import write_jsonl_atomic  # noqa: E402
from nuggetizer.methods.nuggets import PROMPTS, NuggetConfig  # noqa: E402

SCORER = r"""
import json, resource, sys, time
from pathlib import Path
started = time.perf_counter()
from nuggetizer.cli import cli
imported = time.perf_counter()
try:
    cli(sys.argv[1:], prog_name="nuggetizer", standalone_mode=False)
finally:
    done = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"import_s": imported - started, "score_s": done - imported,
                      "max_rss_mib": rss}), file=sys.stderr)
"""


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=301)
    parser.add_argument("--nuggets", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed scoring runs (best kept)")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        key = synthesize(folder, args.runs, args.topics, args.nuggets, args.seed)
        files = sorted((folder / "assessments").glob("*.jsonl"))
        size = sum(f.stat().st_size for f in files) / 2**20
        print(f"input: {args.runs} runs x {args.topics} topics x {args.nuggets} nuggets = "
              f"{args.runs * args.topics * args.nuggets:,} assessed nuggets in {len(files)} "
              f"files, {size:.0f} MiB")
        command = [sys.executable, "-c", SCORER, "score", str(folder / "assessments"),
                   "--nuggets", str(key), "-o", str(folder / "leaderboard.tsv"),
                   "--per-topic", str(folder / "per_topic.tsv")]
        results = []
        for _ in range(args.repeat):
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            results.append(json.loads(done.stderr.strip().splitlines()[-1]))
        best = min(results, key=lambda r: r["score_s"])
        rows = len((folder / "per_topic.tsv").read_text().splitlines()) - 1
        times = ", ".join(f"{r['score_s']:.2f}" for r in results)
        print(f"score: {best['score_s']:.2f} s (best of {args.repeat}: {times}), plus "
              f"{best['import_s']:.2f} s of imports; peak memory {best['max_rss_mib']:.0f} MiB; "
              f"{rows:,} per-topic rows written; target < 5 s")


if __name__ == "__main__":
    main()
