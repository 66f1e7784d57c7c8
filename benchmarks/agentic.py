"""Agentic nugget creation's local search and its conversations at the emulator.

    python benchmarks/agentic.py [--topics 22] [--max-turns 8] [--tool-rounds 2]

1. Assembles a corpus from what ../shared/data holds (there is no ClimbMix text there): one
   passage per nugget of the TREC RAG 2026 development nuggets (rag25-QID-NNN), one per answer
   sentence of the three TREC RAG 2024 baseline runs (rag24-RUN-QID-N), the CRUX DUC passages
   and the Cranfield abstracts of the AutoJudge spot check; builds the BM25 index of it
   (bm25s), and prints the documents, the corpus's bytes, the build time and the index's
   bytes on disk.
2. Runs `nuggetize --agentic` over that index on the 2026 development narratives at the
   emulator (its agent: a search, reads of the hits, `--tool-rounds` rounds, then the list) and
   prints the model calls and tokens per topic, from the keys' traces and the emulator's log.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RAG24, SHARED_DATA, emulator, machine

from nuggetizer.search.bm25 import Bm25Index

RAG26 = SHARED_DATA / "trec-rag-2026-dev"
BIN = Path(sys.executable).parent / "nuggetizer"


def assemble(path: Path) -> dict[str, int]:
    """Write the corpus (see the module's doc); passages per source."""
    counts: dict[str, int] = {}
    with path.open("w", encoding="utf-8") as out:
        def put(source: str, doc_id: str, text: str) -> None:
            if text.strip():
                out.write(json.dumps({"id": doc_id, "contents": text}) + "\n")
                counts[source] = counts.get(source, 0) + 1

        for line in (RAG26 / "rag25-dev-nuggets.jsonl").read_text().splitlines():
            record = json.loads(line)
            for k, nugget in enumerate(record["nuggets"]):
                put("rag26-dev nuggets", f"rag25-{record['qid']}-{k:03d}", nugget["text"])
        for run in sorted((RAG24 / "runs").glob("*.jsonl")):
            for line in run.read_text().splitlines():
                record = json.loads(line)
                for k, sentence in enumerate(record["answer"]):
                    put("rag24 baseline answer sentences",
                        f"rag24-{run.stem}-{record['topic_id']}-{k}", sentence["text"])
        for line in (SHARED_DATA / "crux-duc" / "passages.jsonl").read_text().splitlines():
            record = json.loads(line)
            put("crux-duc passages", record["id"], record["contents"])
        with gzip.open(SHARED_DATA / "autojudge-spot-check" / "corpus.jsonl.gz", "rt") as fh:
            for line in fh:
                record = json.loads(line)
                put("cranfield abstracts", f"cranfield-{record['docno']}", record["text"])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=22)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--tool-rounds", type=int, default=2)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = folder / "corpus.jsonl"
        counts = assemble(corpus)
        start = time.perf_counter()
        index = Bm25Index.open(corpus, folder / "index")
        seconds = time.perf_counter() - start
        parts = ", ".join(f"{n} {source}" for source, n in counts.items())
        print(f"corpus: {sum(counts.values())} passages ({parts}), "
              f"{corpus.stat().st_size / 2**20:.1f} MiB")
        docs = (index.folder / "docs.jsonl").stat().st_size
        print(f"BM25 index (bm25s {index.manifest['bm25s']}): built in {seconds:.2f} s, "
              f"{index.size_bytes() / 2**20:.1f} MiB on disk "
              f"({(index.size_bytes() - docs) / 2**20:.1f} MiB the index, "
              f"{docs / 2**20:.1f} MiB the documents kept beside it)")
        start = time.perf_counter()
        Bm25Index.open(corpus, folder / "index")
        print(f"opened again (sha256 of the corpus checked) in {time.perf_counter() - start:.2f} s")
        topics = folder / "topics.tsv"
        topics.write_text("\n".join((RAG26 / "rag25-topics-dev.tsv").read_text()
                                    .splitlines()[:args.topics]) + "\n")
        key = folder / "key.jsonl"
        with emulator(folder / "emulator.log.jsonl", "--tool-rounds",
                      str(args.tool_rounds)) as url:
            start = time.perf_counter()
            subprocess.run([str(BIN), "nuggetize", "--agentic", "--topics", str(topics),
                            "--corpus", str(corpus), "--index", str(folder / "index"), "-o",
                            str(key), "--assessor", "openai:emulated", "--base-url", url,
                            "--no-cache", "--max-turns", str(args.max_turns)], check=True)
            wall = time.perf_counter() - start
        log = [json.loads(x) for x in (folder / "emulator.log.jsonl").read_text().splitlines()]
        traces = [json.loads(x)["agentic"] for x in key.read_text().splitlines()]
        calls = [t["model_calls"] for t in traces]
        tokens = [t["prompt_tokens"] + t["completion_tokens"] for t in traces]
        tools = [len(t["tool_calls"]) for t in traces]
        importance = sum(1 for r in log if r.get("kind") == "importance")
        print(f"agentic creation at the emulator: {len(traces)} topics in {wall:.1f} s; per "
              f"topic {statistics.mean(calls):.1f} model calls (min {min(calls)}, max "
              f"{max(calls)}), {statistics.mean(tools):.1f} tool calls, "
              f"{statistics.mean(tokens):.0f} tokens (min {min(tokens)}, max {max(tokens)}) "
              f"in the conversation; {importance / len(traces):.1f} importance calls per topic; "
              f"{len(log)} requests in all")


if __name__ == "__main__":
    main()
