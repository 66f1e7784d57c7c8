"""A TREC RAG 2026 development campaign's files, written for a test: the 22 narratives and
their nuggets are the shared data's (../shared/data/trec-rag-2026-dev, read in place); the
runs (2026 format), the passages they cite and a rubric per narrative are written here, built
from those nuggets, since the development data has no runs and no ClimbMix texts (METHODS.md
section 8: build small runs and passages in the 2026 format)."""

from __future__ import annotations

import json
from pathlib import Path

from shared_data import RAG26_DEV

DEV = RAG26_DEV
TOPICS = DEV / "rag25-topics-dev.tsv"
NUGGETS = DEV / "rag25-dev-nuggets.jsonl"
RUNS = ("dev-thorough", "dev-brief", "dev-offtopic")


def narratives() -> dict[str, str]:
    """qid -> narrative, in file order."""
    found = {}
    for line in TOPICS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, text = line.split("\t", 1)
            found[qid] = text
    return found


def nuggets() -> dict[str, list[dict]]:
    """qid -> its nuggets."""
    return {o["qid"]: o["nuggets"] for o in map(json.loads, NUGGETS.read_text().splitlines())}


def _passage(qid: str, k: int) -> str:
    return f"shard_{int(qid):05d}_{k}"


def write_campaign(folder: Path) -> dict[str, Path]:
    """The runs, the corpus and the rubrics of the campaign in `folder`; their paths (runs
    as `run:<id>`)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts, keys = narratives(), nuggets()
    corpus, rubrics = [], []
    runs: dict[str, list[dict]] = {r: [] for r in RUNS}
    for qid, narrative in texts.items():
        found = keys[qid]
        for k, n in enumerate(found[:6]):
            corpus.append({"id": _passage(qid, k), "title": f"On topic {qid}",
                           "contents": f"{n['text'].capitalize()}. Sources agree on this point "
                                       "and give examples of it."})
        answers = {
            "dev-thorough": [{"text": f"## What matters for topic {qid}", "citations": []}] + [
                {"text": f"{n['text'].capitalize()}.", "citations": [k]}
                for k, n in enumerate(found[:4])],
            "dev-brief": [{"text": f"{found[0]['text'].capitalize()}; also, "
                                   f"{found[5]['text']}.", "citations": [0, 5]}],
            "dev-offtopic": [{"text": "Indoor herbs such as basil grow well on a sunny sill.",
                              "citations": [1]},
                             {"text": "Water them twice a week.", "citations": []}],
        }
        for run, answer in answers.items():
            runs[run].append({"metadata": {"team_id": "test", "narrative_id": qid,
                                           "narrative": narrative, "run_id": run,
                                           "run_desc": "written by the campaign test"},
                              "references": [_passage(qid, k) for k in range(6)],
                              "answer": answer})
        vital = [n for n in found if n["importance"] == "vital"][:3]
        rubrics.append({"qid": qid, "prompt": narrative, "rubrics": [
            {"criterion": f"The response states that {n['text']}.", "weight": 3,
             "axis": "Explicit Criteria"} for n in vital] + [
            {"criterion": "The response drifts to gardening advice.", "weight": -2,
             "axis": "Implicit Criteria"}]})
    paths = {"corpus": folder / "passages.jsonl", "rubrics": folder / "rubrics.jsonl"}
    for name, rows in (("corpus", corpus), ("rubrics", rubrics)):
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
    for run, rows in runs.items():
        paths[f"run:{run}"] = folder / f"{run}.jsonl"
        paths[f"run:{run}"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    return paths
