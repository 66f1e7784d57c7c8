"""The answer length L counted one way by `validate`, `assign` (recorded with each judgment)
and `score`: the run's answer objects as the sentences, trailing ones dropped until the
answer is within its year's limit: 400 words for TREC RAG 2024 and 2025 runs, 1,024 for a
TREC RAG 2026 run (METHODS.md 1.3 and 8). `validate`'s table gives each run's limit and the
answers over it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from nuggetizer.cli import cli


def words(n: int, word: str = "alpha") -> str:
    return " ".join([word] * n) + "."


def run_2026(path: Path, sizes: list[int]) -> Path:
    """A TREC RAG 2026 run of one narrative, its answer objects of `sizes` words."""
    path.write_text(json.dumps({
        "metadata": {"team_id": "t", "run_id": "r26", "narrative_id": "58",
                     "narrative": "What about nuclear energy?", "run_desc": "test"},
        "references": ["shard_00459_61697"],
        "answer": [{"text": words(n), "citations": [0]} for n in sizes]}) + "\n")
    return path


def run_2024(path: Path, texts: list[str]) -> Path:
    path.write_text(json.dumps({"run_id": "r24", "topic_id": "58", "topic": "q",
                                "references": [], "response_length": sum(
                                    len(t.split()) for t in texts),
                                "answer": [{"text": t, "citations": []} for t in texts]}) + "\n")
    return path


def nuggets(path: Path) -> Path:
    path.write_text(json.dumps({"qid": "58", "query": "What about nuclear energy?", "nuggets": [
        {"text": "alpha", "importance": "vital"}]}) + "\n")
    return path


def validate_row(run: Path) -> dict[str, str]:
    done = CliRunner().invoke(cli, ["validate", str(run)])
    lines = done.stdout.strip().splitlines()
    return dict(zip(lines[-2].split(), lines[-1].split(), strict=True))


def score_l(tmp_path: Path, run: Path) -> tuple[float, int]:
    """(L of the leaderboard, L recorded in the judgment) after assign and score (mock)."""
    out = tmp_path / "judged"
    key = nuggets(tmp_path / "nuggets.jsonl")
    made = CliRunner().invoke(cli, ["assign", "--run", str(run), "--nuggets", str(key), "-o",
                                    str(out), "--assessor", "mock", "--no-cache"])
    assert made.exit_code == 0, made.output
    scored = CliRunner().invoke(cli, ["score", str(out), "--nuggets", str(key)])
    assert scored.exit_code == 0, scored.output
    row = next(x for x in scored.stdout.splitlines() if x.startswith("r2"))
    recorded = json.loads(next(out.glob("*.jsonl")).read_text().splitlines()[0])["length"]
    return float(row.split()[-1]), recorded


def test_a_2026_answer_is_cut_at_1024_words_not_400(tmp_path: Path) -> None:
    """A valid 590-word 2026 answer has L 590 (it got 354, cut at the 2024 limit)."""
    run = run_2026(tmp_path / "run.jsonl", [118] * 5)  # 590 words, in five objects
    assert score_l(tmp_path, run) == (590.0, 590)
    row = validate_row(run)
    assert (row["limit"], row["over_limit"], row["mean_L"]) == ("1024", "0", "590.0")


def test_a_2026_answer_over_1024_words_is_counted_and_cut_there(tmp_path: Path) -> None:
    run = run_2026(tmp_path / "run.jsonl", [300, 300, 300, 300])  # 1,200 words
    row = validate_row(run)
    assert (row["limit"], row["over_limit"], row["mean_L"]) == ("1024", "1", "900.0")


def test_a_markdown_heading_object_counts_the_same_in_validate_and_score(tmp_path: Path
                                                                         ) -> None:
    """A heading is an answer object of its own; the cut at 400 falls right after it: every
    command drops the last sentence and keeps the heading (2 words), L = 382."""
    texts = [words(60) for _ in range(6)] + ["## Sources", words(40)]  # 360 + 2 + 40 = 402
    run = run_2024(tmp_path / "run.jsonl", texts)
    row = validate_row(run)
    assert (row["limit"], row["over_limit"], row["mean_L"]) == ("400", "1", "362.0")
    assert score_l(tmp_path, run) == (362.0, 362)


def test_validate_says_an_answer_list_is_empty(tmp_path: Path) -> None:
    run = run_2024(tmp_path / "run.jsonl", [])
    done = CliRunner().invoke(cli, ["validate", str(run)])
    assert done.exit_code == 0
    assert re.search(r"run.jsonl:1: warning: answer: the answer list is empty: the topic is "
                     r"answered with nothing", done.stderr), done.stderr
