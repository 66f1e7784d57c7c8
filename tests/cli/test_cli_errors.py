"""Bad inputs: one clear line naming file and line, exit code 2, no traceback, no output file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import RAG24 as REAL

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
QRELS = REPO / "qrels" / "sample.qrels"
GOOD_RUN = REPO / "runs" / "sample" / "good.jsonl"
# An assessor that is never reached: every error below must stop the command before any call.
UNREACHABLE = ["--assessor", "openai:none", "--base-url", "http://127.0.0.1:9/v1", "--no-cache"]


def nuggetizer(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nuggetizer", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


def assert_clean_failure(result: subprocess.CompletedProcess[str], where: str, what: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: {where}"), result.stderr
    assert what in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def run_lines() -> list[dict]:
    return [json.loads(line) for line in GOOD_RUN.read_text().splitlines()]


def write_lines(path: Path, records: list[dict | str]) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    path.write_text(text)
    return path


@pytest.fixture
def nuggets(tmp_path: Path) -> Path:
    """A small valid answer key for the sample topics."""
    records = [
        {"qid": f"sample-{i}", "query": "q", "nuggets": [{"text": "n", "importance": "vital"}]}
        for i in range(1, 5)
    ]
    return write_lines(tmp_path / "nuggets.jsonl", records)


def assign_fails(tmp_path: Path, run: Path, nuggets: Path, where: str, what: str) -> None:
    out = tmp_path / "out"
    result = nuggetizer("assign", "--run", run, "--nuggets", nuggets, "-o", out, *UNREACHABLE)
    assert_clean_failure(result, where, what)
    assert not out.exists()


def test_malformed_json_line_in_a_run(tmp_path: Path, nuggets: Path) -> None:
    lines = run_lines()
    torn = '{"run_id": "sample-good", "topic'
    run = write_lines(tmp_path / "run.jsonl", [lines[0], torn, *lines[2:]])
    assign_fails(tmp_path, run, nuggets, f"{run}:2:", "JSON")


def test_missing_field_in_a_run(tmp_path: Path, nuggets: Path) -> None:
    lines = run_lines()
    del lines[2]["topic_id"]
    run = write_lines(tmp_path / "run.jsonl", lines)
    assign_fails(tmp_path, run, nuggets, f"{run}:3:", "topic_id")


def test_mistyped_field_in_a_run(tmp_path: Path, nuggets: Path) -> None:
    lines = run_lines()
    lines[1]["answer"][0]["citations"] = "0, 1"
    run = write_lines(tmp_path / "run.jsonl", lines)
    assign_fails(tmp_path, run, nuggets, f"{run}:2:", "citations")


def test_duplicate_topic_in_a_run(tmp_path: Path, nuggets: Path) -> None:
    lines = run_lines()
    run = write_lines(tmp_path / "run.jsonl", [*lines, lines[1]])
    assign_fails(tmp_path, run, nuggets, f"{run}:5:", "sample-2")


def test_two_run_ids_in_one_run_file(tmp_path: Path, nuggets: Path) -> None:
    lines = run_lines()
    lines[3]["run_id"] = "another-run"
    run = write_lines(tmp_path / "run.jsonl", lines)
    assign_fails(tmp_path, run, nuggets, f"{run}:4:", "another-run")


def nuggetize_fails(tmp_path: Path, qrels: Path, corpus: Path, where: str, what: str) -> None:
    out = tmp_path / "nuggets.jsonl"
    result = nuggetizer(
        "nuggetize", "--topics", SAMPLE / "topics.tsv", "--qrels", qrels, "--corpus", corpus,
        "-o", out, *UNREACHABLE,
    )
    assert_clean_failure(result, where, what)
    assert not out.exists() and not out.with_name("nuggets.jsonl.partial").exists()


def test_qrels_with_three_columns(tmp_path: Path) -> None:
    lines = QRELS.read_text().splitlines()
    lines[4] = " ".join(lines[4].split()[:3])
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("\n".join(lines) + "\n")
    nuggetize_fails(tmp_path, qrels, SAMPLE / "corpus.jsonl", f"{qrels}:5:", "4")


def test_qrels_with_a_non_integer_grade(tmp_path: Path) -> None:
    lines = QRELS.read_text().splitlines()
    qid, it, docid, _ = lines[6].split()
    lines[6] = f"{qid} {it} {docid} high"
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("\n".join(lines) + "\n")
    nuggetize_fails(tmp_path, qrels, SAMPLE / "corpus.jsonl", f"{qrels}:7:", "high")


def test_empty_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("")
    nuggetize_fails(tmp_path, QRELS, corpus, f"{corpus}:", "empty")


def test_judged_segment_missing_from_the_corpus(tmp_path: Path) -> None:
    lines = (SAMPLE / "corpus.jsonl").read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["id"] != "sample-doc-2-3"]
    assert len(kept) == len(lines) - 1
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(kept) + "\n")
    judged_line = next(
        i for i, line in enumerate(QRELS.read_text().splitlines(), 1) if "sample-doc-2-3 " in line
    )
    nuggetize_fails(tmp_path, QRELS, corpus, f"{QRELS}:{judged_line}:", "sample-doc-2-3")


def test_unknown_track_is_a_clear_error(tmp_path: Path) -> None:
    result = nuggetizer("evaluate", "--track", "no-such-track", "-o", tmp_path / "o", *UNREACHABLE)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "no-such-track" in result.stderr and "sample" in result.stderr


def test_topics_a_run_answers_outside_the_answer_key_are_skipped_not_errors(tmp_path: Path) -> None:
    """21 judged topics of 301: assignment skips the rest and says how many."""
    key = tmp_path / "nuggets.jsonl"
    write_lines(key, [{"qid": "2024-105741", "query": "q", "nuggets": []}])
    run = REAL / "runs" / "baseline_rag24.test_gpt-4o_top20.jsonl"
    out = tmp_path / "out"
    result = nuggetizer("assign", "--run", run, "--nuggets", key, "-o", out, *UNREACHABLE)
    assert result.returncode == 0, result.stderr
    assert "300 skipped (topic not in the answer key: topic 2024-" in result.stderr
    assert " and 295 more)" in result.stderr  # five named, the rest counted
    assert "0 calls" in result.stderr
    written = (out / "baseline_rag24.test_gpt-4o_top20.jsonl").read_text().splitlines()
    assert len(written) == 1 and json.loads(written[0])["nuggets"] == []


def test_an_unreachable_llm_is_one_line_and_exit_1(tmp_path: Path, nuggets: Path) -> None:
    """Errors raised inside the concurrent units come out as the toolkit's own line."""
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "assign", "--run", str(GOOD_RUN), "--nuggets",
         str(nuggets), "-o", str(out), *UNREACHABLE],
        capture_output=True, text=True, timeout=300, cwd=REPO,
        env={**os.environ, "NUGGETIZER_MAX_RETRIES": "1", "NUGGETIZER_RETRY_WAIT": "0.01"},
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: openai:none at ")
