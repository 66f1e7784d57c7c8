"""Battles in arena-rank's form: read (CSV and JSONL), scored like any battles, written back
the same; a row that is not a battle is named with its line and field."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.measures.bradley_terry import Verdict, fit_bradley_terry


def arena_file(path: Path, rows: int = 300, seed: int = 4) -> list[dict[str, str]]:
    rng = random.Random(seed)
    models = ["gpt", "llama", "mistral", "qwen"]
    out = []
    for k in range(rows):
        a, b = rng.sample(models, 2)
        winner = rng.choice(["model_a", "model_a", "model_b", "tie", "tie (bothbad)"])
        out.append({"model_a": a, "model_b": b, "winner": winner, "question_id": f"q{k % 30}"})
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(out[0]))
        writer.writeheader()
        writer.writerows(out)
    return out


def test_arena_battles_round_trip_and_score_as_verdicts(tmp_path: Path) -> None:
    rows = arena_file(tmp_path / "arena.csv")
    runner = CliRunner()
    got = runner.invoke(cli, ["import-arena-battles", str(tmp_path / "arena.csv"), "-o",
                              str(tmp_path / "b")])
    assert got.exit_code == 0, got.output
    board = tmp_path / "board.tsv"
    scored = runner.invoke(cli, ["score", "--method", "battles", str(tmp_path / "b"), "-o",
                                 str(board), "--set", "rounds=20"])
    assert scored.exit_code == 0, scored.output
    lines = [r.split("\t") for r in board.read_text().splitlines()]
    scores = {r[0]: float(r[1]) for r in lines[1:]}
    # the same battles as verdicts, the side named model_a first
    verdicts = [Verdict(r["question_id"], r["model_a"], r["model_b"],
                        {"model_a": "a", "model_b": "b"}.get(r["winner"], "tie")) for r in rows]
    assert scores == pytest.approx(fit_bradley_terry(verdicts), abs=1e-3)

    out = tmp_path / "back.jsonl"
    exported = runner.invoke(cli, ["export-arena-battles", "--battles", str(tmp_path / "b"),
                                   "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    back = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(back) == len(rows)
    again = runner.invoke(cli, ["import-arena-battles", str(out), "-o", str(tmp_path / "c")])
    assert again.exit_code == 0, again.output
    first = [json.loads(x) for x in (tmp_path / "b" / "battles.jsonl").read_text().splitlines()]
    second = [json.loads(x) for x in (tmp_path / "c" / "battles.jsonl").read_text().splitlines()]
    assert [(r["qid"], r["run_a"], r["run_b"], r["result"]) for r in first] == \
        [(r["qid"], r["run_a"], r["run_b"], r["result"]) for r in second]


def test_a_row_that_is_not_a_battle_is_named(tmp_path: Path) -> None:
    path = tmp_path / "arena.csv"
    path.write_text("model_a,model_b,winner\nx,y,model_a\nx,y,model_c\n")
    got = CliRunner().invoke(cli, ["import-arena-battles", str(path), "-o", str(tmp_path / "b")])
    assert got.exit_code != 0
    assert "arena.csv:3: field 'winner' is 'model_c'" in got.output
    assert "Traceback" not in got.output and not (tmp_path / "b" / "battles.jsonl").exists()
    path.write_text("model_a,model_b,winner\nx,,model_a\n")
    got = CliRunner().invoke(cli, ["import-arena-battles", str(path), "-o", str(tmp_path / "b")])
    assert got.exit_code != 0 and "arena.csv:2: field 'model_b' is missing" in got.output


def test_score_names_a_bad_battle_line(tmp_path: Path) -> None:
    """The quick reader of `score` hands a line it cannot take to the full check, whose
    message names the line and the field; --lenient records an off-menu verdict unjudged."""
    folder = tmp_path / "b"
    folder.mkdir()
    good = {"qid": "q1", "run_a": "x", "run_b": "y", "orders": [{"first": "x", "verdict": "A"}]}
    bad = {"qid": "q2", "run_a": "x", "run_b": "y", "orders": [{"first": "x",
                                                                "verdict": "maybe"}]}
    (folder / "battles.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    got = CliRunner().invoke(cli, ["score", "--method", "battles", str(folder)])
    assert got.exit_code != 0 and "battles.jsonl:2: orders[0] has verdict 'maybe'" in got.output
    lenient = CliRunner().invoke(cli, ["score", "--method", "battles", str(folder),
                                       "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    assert "1 answers with nothing judged" in lenient.output
    (folder / "battles.jsonl").write_text(json.dumps(good) + "\n{not json\n")
    got = CliRunner().invoke(cli, ["score", "--method", "battles", str(folder)])
    assert got.exit_code != 0 and "battles.jsonl:2" in got.output
    assert "Traceback" not in got.output
