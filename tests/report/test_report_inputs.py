"""Bad inputs on the newer surfaces (report runs, leaderboards, --fill qrels): one line naming
file, line and the format expected, exit code 2, nothing written; --fill rows of topics not
graded are said, not dropped silently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import SPOT_CHECK

REPO = Path(__file__).resolve().parents[2]
UNREACHABLE = ["--assessor", "openai:none", "--base-url", "http://127.0.0.1:9/v1", "--no-cache"]
TRUTH = SPOT_CHECK / "trec-leaderboard.txt"
SPOT_RUNS = sorted((SPOT_CHECK / "runs").glob("*.jsonl"))


def nuggetizer(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nuggetizer", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


def one_line(result: subprocess.CompletedProcess[str], where: str, *what: str) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {where}"), result.stderr
    assert all(w in lines[0] for w in what), lines[0]
    return lines[0]


def write(path: Path, *records: dict | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records), encoding="utf-8")
    return path


@pytest.fixture
def key(tmp_path: Path) -> Path:
    return write(tmp_path / "nuggets.jsonl", {"qid": "28", "query": "q", "nuggets": [
        {"text": "n", "importance": "vital"}]})


def test_a_misspelt_responses_key_names_the_report_format(tmp_path: Path, key: Path) -> None:
    line = json.loads(SPOT_RUNS[0].read_text())
    line["respones"] = line.pop("responses")
    run = write(tmp_path / "run.jsonl", line)
    out = tmp_path / "out"
    result = nuggetizer("assign", "--run", run, "--nuggets", key, "-o", out, *UNREACHABLE)
    one_line(result, f"{run}:1:", "missing field 'responses'", "found 'respones'",
             "report shape of NeuCLIR / RAGTIME / DRAGUN / AutoJudge")
    assert "narrative_id" not in result.stderr and not out.exists()
    checked = nuggetizer("validate", run)
    assert checked.returncode == 2
    assert f"{run}:1: error: responses: missing field 'responses'" in checked.stderr


def test_missing_passages_of_a_report_run_name_its_file_and_line(tmp_path: Path) -> None:
    corpus = write(tmp_path / "corpus.jsonl", {"docno": "1", "text": "another abstract"})
    out = tmp_path / "out"
    result = nuggetizer("assign", "--method", "support", "--run", SPOT_RUNS[0], "--corpus",
                        corpus, "-o", out, *UNREACHABLE)
    one_line(result, f"{SPOT_RUNS[0]}:1:", "topic '28'", "passage 224 is not in the corpus",
             str(corpus))
    assert "<input>" not in result.stderr and not out.exists()


@pytest.mark.parametrize(("rows", "line", "what"), [
    ("my_best_run_01 Measure-01 28 high\n", 1, "not a score table"),
    ("my_best_run_01 Measure-01 28 1\nmy_best_run_02 Measure-01 28\n", 2, "expected 4 columns"),
    ("my_best_run_01 Measure-01 all 1\nmy_best_run_01 Measure-01 all 2\n", 2, "a second row"),
    ("run_id\tV_strict\nmy_best_run_01\t0.5\n", 1, "without a 'Measure-01' column"),
    ("\n", None, "empty file"),
])
def test_leaderboard_errors_name_the_autojudge_format(tmp_path: Path, rows: str,
                                                      line: int | None, what: str) -> None:
    board = tmp_path / "judge.txt"
    board.write_text(rows, encoding="utf-8")
    out = tmp_path / "agreement.tsv"
    result = nuggetizer("agreement", board, TRUTH, "--measure", "Measure-01", "-o", out)
    where = f"{board}:{line}:" if line else f"{board}:"
    one_line(result, where, what, "run_id measure topic value")
    assert not out.exists()


def test_a_leaderboard_of_run_means_only_compares_runs(tmp_path: Path) -> None:
    board = tmp_path / "judge.txt"
    board.write_text("".join(f"{r} Measure-01 all {v}\n" for r, v in
                             [("my_best_run_01", 3), ("my_best_run_02", 2),
                              ("my_best_run_02_citations", 1)]), encoding="utf-8")
    result = nuggetizer("agreement", board, TRUTH, "--measure", "Measure-01")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_fill_rows_of_topics_not_graded_are_said(tmp_path: Path) -> None:
    fill = write(tmp_path / "fill.qrels", "28 0 224 2", "28 0 279 1", "91 0 d1 1", "91 0 d2 0",
                 "92 0 d3 3")
    out = tmp_path / "graded.qrels"
    result = nuggetizer("relevance", "--topics", SPOT_CHECK / "queries.jsonl", "--run",
                        SPOT_RUNS[0], "--fill", fill, "-o", out, *UNREACHABLE)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "--fill" in line and "note" in line]
    assert notes == ["note: 3 --fill qrels of 2 topics not among the topics graded (--topics, "
                     "--only-topics) are left out of the qrels written: 91, 92"]
    assert out.read_text().split("\n")[:2] == ["28 0 224 2", "28 0 279 1"]
    assert "91" not in out.read_text()


@pytest.mark.parametrize("name", ["judge.txt", "judge.tsv"])
def test_the_report_names_what_it_reads_instead_of_a_leaderboard(tmp_path: Path,
                                                                 name: str) -> None:
    board = tmp_path / name
    board.write_text(TRUTH.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "report"
    result = nuggetizer("report", board, "-o", out)
    one_line(result, f"{board}:1:", "AutoJudge leaderboard (run_id measure topic value)",
             "per-topic TSV")
    assert not out.exists()
