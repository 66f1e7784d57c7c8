"""`agreement` on the rows castorini RAGDoll's `support metric-rows` writes (`run_id topic_id
metric value`, space-separated, no header, no `all` rows: ir_measures' column order, not the
AutoJudge framework's `run_id measure topic value`). Issue 40: such a file was read in the
framework's order, so a real metric name found "no rows" and a topic id given as the measure
compared "0 topics" and exited 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from test_agreement import RUNS, A, B, write

from nuggetizer.cli import cli
from nuggetizer.compare import load_scores

METRICS = ("weighted_precision_first_citation", "weighted_recall_first_citation")
TOPICS = {"t1": "14", "t2": "15", "t3": "72"}  # RAGDoll's ids are TREC narrative ids


def score_text(value: float) -> str:
    """A value as RAGDoll's metric rows print it: 6 decimals, trailing zeros dropped."""
    return f"{value:.6f}".rstrip("0").rstrip(".")


def metric_rows(grid: dict[str, list[int]], path: Path) -> Path:
    """Run k of the grid scores grid[topic][k] / 4 on both metrics, written as RAGDoll writes
    its rows: per run (sorted), per metric, per topic (numeric ids in order)."""
    lines = []
    for k, run in enumerate(RUNS):
        for metric in METRICS:
            for name, topic in sorted(TOPICS.items(), key=lambda kv: int(kv[1])):
                lines.append(f"{run} {topic} {metric} {score_text(grid[name][k] / 4)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_rows_are_read_in_their_own_column_order(tmp_path: Path) -> None:
    scores = load_scores([metric_rows(B, tmp_path / "support_metric_rows.txt")],
                         "weighted_recall_first_citation")
    # run means over the topics present, as RAGDoll has no `all` rows
    assert scores.means == {"r1": 7 / 12, "r2": 6 / 12, "r3": 8 / 12, "r4": 9 / 12}
    assert scores.per_topic is not None and scores.per_topic["r2"] == {"14": 0.5, "15": 0.25,
                                                                       "72": 0.75}


def test_agreement_on_a_real_metric_name(tmp_path: Path) -> None:
    a = metric_rows(A, tmp_path / "a.txt")
    b = metric_rows(B, tmp_path / "b.txt")
    out = tmp_path / "agree.tsv"
    result = CliRunner().invoke(cli, ["agreement", str(a), str(b), "--measure",
                                      "weighted_precision_first_citation", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = [r.split("\t") for r in out.read_text().splitlines()]
    # the same taus as the same grids give as judgments (test_agreement's test_cli_tables)
    assert rows[1][:4] == ["run", "run means", "4", "0.6667"]
    assert rows[2][2] == "12"  # every (topic, run) pair: 3 topics read as topics
    assert rows[3][3] == f"{(1 + 2 / 3 - 1) / 3:.4f}"


def test_rows_against_judgments_of_the_same_grid(tmp_path: Path) -> None:
    """Per (topic, run), RAGDoll's rows and our scores of the same grid pair up."""
    rows = metric_rows(A, tmp_path / "rows.txt")
    judged = write(A, tmp_path / "judged")
    a = load_scores([rows], "weighted_precision_first_citation")
    b = load_scores([judged], "V_strict")
    assert a.means == b.means


def test_a_topic_id_given_as_the_measure_is_an_error(tmp_path: Path) -> None:
    a = metric_rows(A, tmp_path / "a.txt")
    b = metric_rows(B, tmp_path / "b.txt")
    result = CliRunner().invoke(cli, ["agreement", str(a), str(b), "--measure", "14"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"error: {a}: no rows for measure '14' (the file's measures: " \
        "weighted_precision_first_citation, weighted_recall_first_citation)" in result.stderr


def test_the_frameworks_own_order_still_reads(tmp_path: Path) -> None:
    """A `score --autojudge-leaderboard` file (`run_id measure topic value`, `all` rows) and
    the same scores in ir_measures' order give the same values."""
    folder = write(B, tmp_path / "judged")
    boards = {}
    for fmt in ("tot", "ir_measures"):
        boards[fmt] = tmp_path / f"board.{fmt}.txt"
        made = CliRunner().invoke(cli, ["score", str(folder), "--autojudge-leaderboard",
                                        str(boards[fmt]), "--autojudge-format", fmt])
        assert made.exit_code == 0, made.output
    tot, irm = (load_scores([boards[f]], "V_strict") for f in ("tot", "ir_measures"))
    assert tot.means == irm.means  # the `all` rows, 6 decimals
    assert irm.means == pytest.approx({"r1": 7 / 12, "r2": 6 / 12, "r3": 8 / 12, "r4": 9 / 12},
                                      abs=1e-6)
    assert tot.per_topic == irm.per_topic
