"""Agreement between two assessment sets whose taus the test knows by construction."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from flows import score

from nuggetizer.cli import cli
from nuggetizer.compare import compare, kendall_tau, load_scores
from nuggetizer.errors import InputError
from nuggetizer.formats import assessment_record, write_jsonl_atomic
from nuggetizer.scoring import leaderboard_tsv, per_topic_tsv
from nuggetizer.types import AssessedNugget, Assessment

RUNS = ["r1", "r2", "r3", "r4"]
# supported vital nuggets (of 4) per topic and run: V_strict = k / 4
A = {"t1": [1, 2, 3, 4], "t2": [1, 2, 3, 4], "t3": [1, 2, 3, 4]}
B = {"t1": [1, 2, 3, 4],  # same order: tau 1
     "t2": [2, 1, 3, 4],  # one pair swapped of 6: tau (5 - 1) / 6
     "t3": [4, 3, 2, 1]}  # reversed: tau -1
# run means of B: r1 7/12, r2 6/12, r3 8/12, r4 9/12: one pair (r1, r2) swapped against A


def assessments(grid: dict[str, list[int]]) -> list[Assessment]:
    return [
        Assessment(run_id=run, qid=qid, query=qid, answer_text="x", length=10, nuggets=[
            AssessedNugget(text=f"n{j}", importance="vital",
                           assignment="support" if j < supported else "not_support")
            for j in range(4)])
        for qid, row in grid.items() for run, supported in zip(RUNS, row)
    ]


def write(grid: dict[str, list[int]], folder: Path) -> Path:
    items = assessments(grid)
    for run in RUNS:
        write_jsonl_atomic(folder / f"{run}.jsonl",
                           [assessment_record(a) for a in items if a.run_id == run])
    return folder


def tau_b_by_definition(x: list[float], y: list[float]) -> float:
    """Kendall's tau-b from its definition: (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0:
            ties_x += 1
        if dy == 0:
            ties_y += 1
        if dx * dy > 0:
            concordant += 1
        elif dx * dy < 0:
            discordant += 1
    n0 = len(x) * (len(x) - 1) / 2
    return (concordant - discordant) / math.sqrt((n0 - ties_x) * (n0 - ties_y))


def test_known_taus(tmp_path):
    a = load_scores([write(A, tmp_path / "a")], "V_strict")
    b = load_scores([write(B, tmp_path / "b")], "V_strict")
    result = compare(a, b)
    assert result.runs == RUNS and result.topics == ["t1", "t2", "t3"]
    assert result.run_tau == pytest.approx(2 / 3)
    assert result.run_spearman == pytest.approx(0.8)  # rank differences 1, 1, 0, 0
    assert result.topic_taus == pytest.approx({"t1": 1.0, "t2": 2 / 3, "t3": -1.0})
    assert result.topic_tau == pytest.approx((1 + 2 / 3 - 1) / 3)
    pairs_a = [k / 4 for q in A for k in A[q]]
    pairs_b = [k / 4 for q in B for k in B[q]]
    assert result.pair_tau == pytest.approx(tau_b_by_definition(pairs_a, pairs_b))
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)


def test_tsv_inputs_give_the_same_taus(tmp_path):
    ta, tb = score(assessments(A)), score(assessments(B))
    (tmp_path / "a.tsv").write_text(per_topic_tsv(ta))
    (tmp_path / "b.tsv").write_text(per_topic_tsv(tb))
    (tmp_path / "lb.tsv").write_text(leaderboard_tsv(tb))
    from_tsv = compare(load_scores([tmp_path / "a.tsv"], "V_strict"),
                       load_scores([tmp_path / "b.tsv"], "V_strict"))
    assert from_tsv.topic_tau == pytest.approx((1 + 2 / 3 - 1) / 3)
    assert from_tsv.run_tau == pytest.approx(2 / 3)
    run_only = compare(load_scores([tmp_path / "a.tsv"], "V_strict"),
                       load_scores([tmp_path / "lb.tsv"], "V_strict"))
    assert run_only.run_tau == pytest.approx(2 / 3) and run_only.pair_tau is None


def test_constant_topic_is_left_out_of_the_mean(tmp_path):
    flat = dict(B, t3=[2, 2, 2, 2])
    result = compare(load_scores([write(A, tmp_path / "a")], "V_strict"),
                     load_scores([write(flat, tmp_path / "b")], "V_strict"))
    assert result.undefined_topics == ["t3"]
    assert result.topic_tau == pytest.approx((1 + 2 / 3) / 2)


def test_too_few_common_runs(tmp_path):
    a = load_scores([write(A, tmp_path / "a")], "V_strict")
    b = load_scores([tmp_path / "a" / "r1.jsonl"], "V_strict")
    with pytest.raises(InputError, match="at least two"):
        compare(a, b)


def test_cli_tables_and_plot(tmp_path):
    a, b = write(A, tmp_path / "a"), write(B, tmp_path / "b")
    out, plot, md = tmp_path / "agree.tsv", tmp_path / "agree.png", tmp_path / "agree.md"
    result = CliRunner().invoke(cli, ["agreement", str(a), str(b), "-o", str(out), "--plot",
                                      str(plot), "--markdown", str(md)])
    assert result.exit_code == 0, result.output
    rows = [r.split("\t") for r in out.read_text().splitlines()]
    assert rows[1][:4] == ["run", "run means", "4", "0.6667"]
    assert rows[3][3] == f"{(1 + 2 / 3 - 1) / 3:.4f}"
    assert "| run | run means | 4 | 0.6667 | 0.8000 |" in md.read_text()
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 5000
    result = CliRunner().invoke(cli, ["agreement", str(a), str(b), "--measure", "nope"])
    assert result.exit_code == 2 and "unknown measure 'nope'" in result.stderr
