"""Battles as a method like any other in a track: `evaluate` of a track listing nuggets,
support and battles (mock assessor) writes one combined board carrying bt_score and its
interval, and the report of that board shows it; when one method cannot be scored (support,
every verdict unjudged) the other boards are still written, the combined board says which
method is missing and why, and the exit code says something failed."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner
from scripted import SCRIPTS

from nuggetizer.assessors.base import Request
from nuggetizer.assessors.mock import _Answer
from nuggetizer.cli import cli

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
RUNS = [REPO / "runs" / "sample" / f"{name}.jsonl" for name in ("good", "middling", "poor")]


def track(tmp: Path) -> Path:
    """The sample track's inputs, evaluated by three methods."""
    runs = ", ".join(json.dumps(str(r)) for r in RUNS)
    path = tmp / "track.toml"
    path.write_text(f"""name = "three"
methods = ["nuggets", "support", "battles"]
topics = {json.dumps(str(SAMPLE / 'topics.tsv'))}
corpus = {json.dumps(str(SAMPLE / 'corpus.jsonl'))}
qrels = {json.dumps(str(REPO / 'qrels' / 'sample.qrels'))}
runs = [{runs}]

[nuggets]
min_grade = 1
max_nuggets = 6
keep = 6

[battles]
rounds = 50
""")
    return path


def mock_but_support(request: Request) -> str:
    """The mock assessor's answer, except to the support judge: words that never parse."""
    if any("supported by its corresponding citations" in text for _, text in request.messages):
        return "I would rather not say."
    answer = _Answer(request.messages[-1][1])
    return json.dumps(answer.value(request.schema, "$")) if request.schema is not None \
        else answer.words("$", 1, 12)


SCRIPTS["mock-but-support"] = mock_but_support


def board(path: Path) -> dict[str, dict[str, str]]:
    with path.open() as lines:
        return {row["run_id"]: row for row in csv.DictReader(lines, delimiter="\t")}


def test_battles_in_a_track_give_one_combined_board_with_their_interval(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["evaluate", "--track", str(track(tmp_path)), "-o", str(out),
                                    "--assessor", "mock", "--no-cache"])
    assert done.exit_code == 0, done.output
    combined = board(out / "leaderboard.tsv")
    assert set(combined) == {"sample-good", "sample-middling", "sample-poor"}
    for row in combined.values():
        assert float(row["bt_low"]) <= float(row["bt_score"]) <= float(row["bt_high"])
        assert row["V_strict"] != "-" and row["battles"].isdigit()  # a count, whole
    assert (out / "battles" / "battles" / "battles.jsonl").is_file()
    assert not (out / "missing.tsv").exists()
    report = tmp_path / "report"
    done = CliRunner().invoke(cli, ["report", str(out / "per_topic.tsv"), "-o", str(report)])
    assert done.exit_code == 0, done.output
    page = (report / "index.html").read_text(encoding="utf-8")
    head = page.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert "bt_score 95% CI" in head and "V_strict 95% CI" in head
    for run, row in combined.items():
        low, high = float(row["bt_low"]), float(row["bt_high"])
        assert f"[{low:.4f}, {high:.4f}]" in page, run  # the battles' own interval


def test_a_method_that_cannot_be_scored_leaves_the_others_boards(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["evaluate", "--track", str(track(tmp_path)), "-o", str(out),
                                    "--assessor", "scripted:mock-but-support", "--no-cache"])
    assert done.exit_code == 1, done.output
    assert "Traceback" not in done.output
    assert "1 of 3 methods not scored (support: score --method support: nothing was judged" \
        in done.output
    for name in ("nuggets", "battles"):
        assert (out / name / "leaderboard.tsv").is_file(), name
    assert not (out / "support" / "leaderboard.tsv").exists()
    combined = board(out / "leaderboard.tsv")
    row = next(iter(combined.values()))
    assert "V_strict" in row and "bt_score" in row
    assert "support_precision" not in row and "support_recall" not in row
    missing = (out / "missing.tsv").read_text().splitlines()
    assert missing[0] == "method\twhy" and missing[1].startswith("support\tscore --method "
                                                                 "support: nothing was judged")
    sidecar = json.loads((out / "leaderboard.tsv.provenance.json").read_text())
    assert "support" in sidecar["missing_methods"]
