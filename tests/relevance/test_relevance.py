"""Relevance assessment (UMBRELA): the published prompt, the grade parser, the pool, and the
`relevance` command end to end on the sample track (scripted backend, emulator, a kill and a
resume, fill-the-holes, and the embedded model)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import emulator, kill_after
from scripted import SCRIPTS, by_prompt
from shared_data import METHODS_MD as METHODS

from nuggetizer.cli import cli
from nuggetizer.formats import read_runs, read_topics
from nuggetizer.parsing import ParseFailure
from nuggetizer.relevance import GRADE_SCHEMA, PROMPT, build_pool, parse_grade
from nuggetizer.templates import load_prompt

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
TOPICS = SAMPLE / "topics.tsv"
CORPUS = SAMPLE / "corpus.jsonl"
QRELS = REPO / "qrels" / "sample.qrels"
RUNS = sorted((REPO / "runs" / "sample").glob("*.jsonl"))
POOLED = 26  # the references of the three sample runs, de-duplicated per topic
FAST = {"NUGGETIZER_RETRY_WAIT": "0.01", "NUGGETIZER_RETRY_MAX_WAIT": "0.05",
        "NUGGETIZER_PROGRESS_INTERVAL": "0", "NUGGETIZER_TIMEOUT": "60"}


def published_prompt() -> str:
    """The prompt as METHODS.md section 5 prints it (read at test time)."""
    section = METHODS.read_text(encoding="utf-8").split("## 5. Relevance assessment", 1)[1]
    section = section.split("\n## ", 1)[0]
    return section.split("```\n", 2)[1].split("```", 1)[0].rstrip("\n")


def test_the_template_renders_the_published_prompt_exactly() -> None:
    query, passage = "how do volcanoes form", "Magma rises through the crust."
    ((role, text),) = load_prompt(PROMPT).render(query=query, passage=passage)
    assert role == "user"  # no system message, as published
    expected = published_prompt().replace("{query}", query).replace("{passage}", passage)
    assert text == expected
    assert "##final score: score" in text


@pytest.mark.parametrize(("answer", "grade"), [
    ("##final score: 2", 2),
    ("##Final Score: 3", 3),
    ("## final score:2", 2),
    ("final score: 3", 3),
    ("##FINAL SCORE: 0.", 0),
    ("##final score: 1 because the passage is related", 1),
    ("M: 2\nT: 1\n##final score: 2\n", 2),
    ("##final score: **3**", 3),
    ('{"answer": "##final score: 1"}', 1),
    ('{"final_score": 2}', 2),
    ("##final score: score\n##final score: 1", 1),  # the format echoed, then the grade
    ("O = 2 ##final score: 2!", 2),
])
def test_the_parser_reads_the_final_score_and_its_variants(answer: str, grade: int) -> None:
    assert parse_grade(answer) == grade


@pytest.mark.parametrize("answer", [
    "", "[]", "2", "The passage is relevant.", "##final score: 4", "##final score: -1",
    "##final score: 2.5", "##final score: two", "score: 2",
])
def test_anything_else_is_unreadable(answer: str) -> None:
    with pytest.raises(ParseFailure):
        parse_grade(answer)


def test_the_schema_only_allows_the_published_format() -> None:
    choices = GRADE_SCHEMA["properties"]["answer"]["enum"]
    assert [parse_grade(c) for c in choices] == [0, 1, 2, 3]


def test_the_pool_is_the_references_deduplicated_per_topic() -> None:
    topics, runs = read_topics(TOPICS), read_runs(RUNS)
    pool = build_pool(topics, runs)
    assert pool.size == POOLED and list(pool.docids) == list(topics)
    for qid, docs in pool.docids.items():
        expected = [d for a in runs.values() if qid in a for d in a[qid].references]
        assert docs == list(dict.fromkeys(expected))
    cited = build_pool(topics, runs, cited_only=True)
    assert all(set(cited.docids[q]) <= set(pool.docids[q]) for q in topics)
    only = build_pool({"sample-1": topics["sample-1"]}, runs)
    assert only.size == 7 and sum(only.outside.values()) == POOLED - 7


def relevance(*args: str | Path, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nuggetizer", "relevance", "--topics", str(TOPICS),
               *[x for r in RUNS for x in ("--run", str(r))], "--corpus", str(CORPUS),
               *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=REPO,
                            env={**os.environ, **FAST, **(env or {})})
    assert "Traceback" not in result.stderr, result.stderr
    return result


def judgments(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def qrels_rows(path: Path) -> list[tuple[str, str, str, int]]:
    rows = []
    for line in path.read_text().splitlines():
        qid, it, docid, grade = line.split(" ")
        rows.append((qid, it, docid, int(grade)))
    return rows


def scripted_grade(prompt: str) -> str:
    """A grade from the passage's hash, written the way a capable model writes it; the
    passages that speak of antibiotics or mRNA get prose without a grade."""
    passage = prompt.split("\nPassage: ", 1)[1].split("\n", 1)[0]
    if "Antibiotics" in passage or "mRNA vaccines" in passage:
        return "This passage is quite relevant."
    grade = hashlib.sha256(passage.encode()).digest()[0] % 4
    return f"M: 2, T: 1\n##Final Score: {grade}."


def test_scripted_grades_become_qrels_and_unreadable_ones_stay_unjudged(tmp_path: Path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    SCRIPTS["umbrela"] = lambda request: scripted_grade(request.messages[0][1])  # re-asks too
    out = tmp_path / "llm.qrels"
    args = ["relevance", "--topics", str(TOPICS), *[x for r in RUNS for x in ("--run", str(r))],
            "--corpus", str(CORPUS), "-o", str(out), "--assessor", "scripted:umbrela",
            "--no-cache", "--reasks", "1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    records = judgments(tmp_path / "llm.qrels.judgments.jsonl")
    assert len(records) == POOLED
    unjudged = [r for r in records if r["grade"] is None]
    graded = [r for r in records if r["grade"] is not None]
    assert unjudged, "the script leaves some passages without a grade"
    for record in unjudged:
        assert record["attempts"] == 2 and "final score" in record["error"]
        assert record["raw"] == "This passage is quite relevant."
        assert f"unjudged: {record['qid']} {record['docid']}" in result.stderr
    rows = qrels_rows(out)
    assert [(q, d, g) for q, _, d, g in rows] == [(r["qid"], r["docid"], r["grade"])
                                                   for r in graded]
    read = list(ir_measures.read_trec_qrels(str(out)))
    assert len(read) == len(graded) and {q.relevance for q in read} <= {0, 1, 2, 3}
    sidecar = json.loads((tmp_path / "llm.qrels.provenance.json").read_text())
    assert str(TOPICS) in [i["path"] for i in sidecar["inputs"]]
    assert records[0]["provenance"]["templates"][PROMPT] == load_prompt(PROMPT).sha256
    assert f"relevance: {POOLED} pairs" in result.stderr
    assert f"{len(unjudged)} unjudged" in result.stderr


def test_emulator_end_to_end_resume_and_fill(tmp_path: Path) -> None:
    """The emulator answers UMBRELA's prompt with prose without a grade (--poison): every pair
    ends unjudged (with its reason), none is written as grade 0; a rerun replays from the
    cache; --fill grades the holes only."""
    out, cache = tmp_path / "qrels.txt", tmp_path / "cache.sqlite"
    with emulator(tmp_path, "--poison", "##final score") as server:
        common = ("--assessor", "openai:emulated", "--base-url", server.url, "--cache", cache,
                  "--reasks", "0")
        first = relevance("-o", out, *common)
        assert first.returncode == 0, first.stderr
        assert len(server.requests()) == POOLED  # one call per pair
        records = judgments(tmp_path / "qrels.txt.judgments.jsonl")
        assert [(r["qid"], r["docid"]) for r in records] == [
            (q, d) for q, ds in build_pool(read_topics(TOPICS), read_runs(RUNS)).docids.items()
            for d in ds]
        assert all(r["grade"] is None and r["raw"] and r["error"] for r in records)
        assert out.read_text() == ""  # unjudged pairs are not grade 0
        assert (tmp_path / "qrels.txt.provenance.json").is_file()
        assert f"relevance: {POOLED} pairs, {POOLED} calls, 0 cache hits, {POOLED} unjudged" \
            in first.stderr
        assert "... and 16 more" in first.stderr

        again = relevance("-o", out, *common)
        assert again.returncode == 0, again.stderr
        assert len(server.requests()) == POOLED  # nothing re-sent
        assert f"0 calls, {POOLED} cache hits" in again.stderr
        assert [{k: v for k, v in r.items() if k != "provenance"}
                for r in judgments(tmp_path / "qrels.txt.judgments.jsonl")] == [
            {k: v for k, v in r.items() if k != "provenance"} for r in records]

        half = tmp_path / "half.qrels"  # the judgments of sample-1 and sample-2
        half.write_text("".join(QRELS.read_text().splitlines(True)[:16]))
        filled = tmp_path / "filled.qrels"
        before = len(server.requests())
        done = relevance("-o", filled, "--fill", half, "--assessor", "openai:emulated",
                         "--base-url", server.url, "--no-cache", "--reasks", "0")
        assert done.returncode == 0, done.stderr
        asked = server.requests()[before:]
    holes = [r for r in records if r["qid"] in ("sample-3", "sample-4")]
    assert len(asked) == len(holes) == 13
    assert filled.read_text() == half.read_text()  # the kept rows; the holes stay unjudged
    assert len(judgments(tmp_path / "filled.qrels.judgments.jsonl")) == 13
    assert "16 qrels kept from --fill" in done.stderr


def test_a_killed_relevance_step_resends_no_completed_unit(tmp_path: Path) -> None:
    out = tmp_path / "qrels.txt"
    partial = tmp_path / "qrels.txt.judgments.jsonl.partial"
    common = ("-o", out, "--assessor", "openai:emulated", "--no-cache", "--reasks", "0",
              "--concurrency", "2")
    with emulator(tmp_path, "--latency", "0.01", name="first") as server:
        command = [sys.executable, "-m", "nuggetizer", "relevance", "--topics", str(TOPICS),
                   *[x for r in RUNS for x in ("--run", str(r))], "--corpus", str(CORPUS),
                   *map(str, common), "--base-url", server.url]
        first = kill_after(server, command, 9, env={**os.environ, **FAST}, cwd=REPO)
    assert len(first) == 9 and not out.exists() and partial.is_file()
    journalled = judgments(partial)
    assert len(journalled) == 9
    with emulator(tmp_path, "--latency", "0.01", name="second") as server:
        done = relevance(*common, "--base-url", server.url)
        second = server.requests()
    assert done.returncode == 0, done.stderr
    assert "resuming: 9 of 26 pairs already done" in done.stderr
    assert {r["digest"] for r in first}.isdisjoint(r["digest"] for r in second)
    assert len(first) + len(second) == POOLED
    assert len(judgments(tmp_path / "qrels.txt.judgments.jsonl")) == POOLED
    assert not partial.exists()


def test_relevance_needs_something_to_pool_and_the_corpus(tmp_path: Path) -> None:
    bare = CliRunner().invoke(cli, ["relevance", "--topics", str(TOPICS), "-o",
                                    str(tmp_path / "q")])
    assert bare.exit_code == 2 and "nothing to pool" in bare.output
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(CORPUS.read_text().splitlines(True)[:3]))
    SCRIPTS["umbrela-missing"] = by_prompt(lambda p: "##final score: 1")
    args = ["relevance", "--topics", str(TOPICS), "--run", str(RUNS[0]), "--corpus",
            str(corpus), "-o", str(tmp_path / "q"), "--assessor", "scripted:umbrela-missing",
            "--no-cache"]
    missing = CliRunner().invoke(cli, args)
    assert missing.exit_code == 2 and "pooled passages are not in the corpus" in missing.output
    allowed = CliRunner().invoke(cli, [*args, "--allow-missing"])
    assert allowed.exit_code == 0, allowed.output
    records = judgments(tmp_path / "q.judgments.jsonl")
    assert {r["error"] for r in records if r["grade"] is None} == {"passage not in the corpus"}
    assert len(qrels_rows(tmp_path / "q")) == sum(r["grade"] == 1 for r in records) > 0


@pytest.mark.slow
def test_the_embedded_model_grades_the_sample_pool(gguf_path: Path, tmp_path: Path) -> None:
    """SmolLM2-135M through the CLI: qrels that ir_measures reads, and their agreement with the
    sample's own qrels (reported, never asserted on: the model is tiny)."""
    ir_measures = pytest.importorskip("ir_measures")
    out = tmp_path / "smol.qrels"
    started = time.monotonic()
    made = relevance("-o", out, "--assessor", "local", "--cache", tmp_path / "cache.sqlite")
    seconds = time.monotonic() - started
    assert made.returncode == 0, made.stderr
    summary = re.search(r"relevance: 26 pairs, (\d+) calls, .*", made.stderr)
    assert summary, made.stderr
    records = judgments(tmp_path / "smol.qrels.judgments.jsonl")
    graded = [r for r in records if r["grade"] is not None]
    assert len(records) == POOLED
    read = list(ir_measures.read_trec_qrels(str(out)))
    assert len(read) == len(graded)
    agreement = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "qrels-agreement", str(QRELS), str(out), "--json",
         str(tmp_path / "agreement.json")], capture_output=True, text=True, timeout=120)
    if graded:
        assert agreement.returncode == 0, agreement.stderr
        report = json.loads((tmp_path / "agreement.json").read_text())
        assert report["pairs"] == len(graded)
        print(f"\nembedded model: {summary.group(0)}; {seconds:.1f} s wall")
        print(f"kappa {report['measures']['kappa']}, alpha {report['measures']['alpha_ordinal']}")
        print(agreement.stdout)


def test_retrieval_runs_add_their_top_depth_after_the_answers(tmp_path: Path) -> None:
    from nuggetizer.formats import read_trec_run

    run = tmp_path / "bm25.run"
    run.write_text("sample-1 Q0 sample-doc-1-6 1 9.0 bm25\nsample-1 Q0 sample-doc-1-1 2 8.0 bm25\n"
                   "sample-1 Q0 sample-doc-1-8 3 7.0 bm25\nnot-a-topic Q0 x 1 1.0 bm25\n")
    topics, runs = read_topics(TOPICS), read_runs(RUNS)
    pool = build_pool(topics, runs, [read_trec_run(run)], depth=2)
    answers = build_pool(topics, runs)
    assert pool.docids["sample-1"] == [*answers.docids["sample-1"], "sample-doc-1-6"]
    assert pool.size == POOLED + 1 and pool.outside == {"not-a-topic": 1}
    only = build_pool(topics, None, [read_trec_run(run)], depth=3)
    assert only.docids["sample-1"] == ["sample-doc-1-6", "sample-doc-1-1", "sample-doc-1-8"]
