"""A valid TREC RAG 2026 run, written here from the 2026 test narratives, read by every command
that reads runs: assign (nuggets, support), relevance (pooled from the run), export-sheets
(blind too) and report; the mock backend judges (no model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_rag26 import doc, narratives, write_run

from nuggetizer.cli import cli

TOPICS = 3


def invoke(*args: str | Path) -> Any:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    run = write_run(tmp_path / "rag_output_trec_rag_2026.jsonl",
                    lambda lines: lines.__delitem__(slice(TOPICS, None)))
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{n}\t{t}\n" for n, t in narratives()[:TOPICS]), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"docid": doc(k, j), "text": f"Passage {j} of {n}."})
                              + "\n" for k, (n, _) in enumerate(narratives()[:TOPICS])
                              for j in range(3)), encoding="utf-8")
    nuggets = tmp_path / "nuggets.jsonl"
    nuggets.write_text("".join(json.dumps({"qid": n, "query": t, "nuggets": [
        {"text": f"point one of {n}", "importance": "vital"},
        {"text": "point two", "importance": "okay"}]}) + "\n"
        for n, t in narratives()[:TOPICS]), encoding="utf-8")
    return {"run": run, "topics": topics, "corpus": corpus, "nuggets": nuggets,
            "dir": tmp_path}


def judged_topics(folder: Path) -> set[str]:
    found = set()
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            found.add(str(record.get("qid", record.get("topic_id"))))
    return found


def test_assign_nuggets_and_report_read_it(files: dict[str, Path]) -> None:
    out = files["dir"] / "assigned"
    invoke("assign", "--run", files["run"], "--nuggets", files["nuggets"], "-o", out,
           "--assessor", "mock", "--no-cache")
    assert judged_topics(out) == {n for n, _ in narratives()[:TOPICS]}
    html = files["dir"] / "html"
    invoke("report", str(out), "--nuggets", files["nuggets"], "--topics", files["topics"],
           "-o", html)
    assert "run-x" in (html / "index.html").read_text(encoding="utf-8")


def test_assign_support_reads_the_climbmix_passages(files: dict[str, Path]) -> None:
    out = files["dir"] / "support"
    invoke("assign", "--method", "support", "--run", files["run"], "--corpus", files["corpus"],
           "-o", out, "--assessor", "mock", "--no-cache")
    records = [json.loads(x) for x in (out / "run-x.jsonl").read_text().splitlines()]
    assert len(records) == TOPICS and all(r["unjudged"] == 0 for r in records)
    # the first citation of each object (the method's default), read from the ClimbMix corpus
    pairs = [(p["docid"], p["passage"]) for s in records[0]["sentences"] for p in s["pairs"]]
    assert pairs == [(doc(0, 0), "Passage 0 of rag2026-0."), (doc(0, 2), "Passage 2 of rag2026-0.")]


def test_relevance_pools_the_runs_references(files: dict[str, Path]) -> None:
    qrels = files["dir"] / "pool.qrels"
    invoke("relevance", "--topics", files["topics"], "--run", files["run"], "--corpus",
           files["corpus"], "-o", qrels, "--assessor", "mock", "--no-cache")
    pairs = {(x.split()[0], x.split()[2]) for x in qrels.read_text().splitlines()}
    assert pairs == {(n, doc(k, j)) for k, (n, _) in enumerate(narratives()[:TOPICS])
                     for j in range(3)}


@pytest.mark.parametrize("blind", [False, True])
def test_export_sheets_reads_it(files: dict[str, Path], blind: bool) -> None:
    out = files["dir"] / "sheets"
    invoke("export-sheets", "--run", files["run"], "--nuggets", files["nuggets"], "-o", out,
           *(["--blind"] if blind else []))
    sheets = sorted(out.glob("*.tsv"))
    assert len(sheets) == TOPICS
    assert "What matters most" in sheets[0].read_text(encoding="utf-8")
