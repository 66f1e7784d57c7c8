"""Every leaderboard format the TREC AutoJudge framework reads, written by `score
--autojudge-format` and read back by autojudge-base (and autojudge-evaluate); nugget banks
from `nugget-bank` read by autojudge-base; and the meta-evaluation measures autojudge-evaluate
1.1 adds, equal to its own on the same files."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
from autojudge_offline import import_autojudge_base
from click.testing import CliRunner
from shared_data import RAG24, SPOT_CHECK
from test_agreement import RUNS, A, B, write

from nuggetizer.cli import cli
from nuggetizer.compare import compare, load_scores, per_topic
from nuggetizer.formats import FORMATS, read_leaderboard_rows, read_nuggets
from nuggetizer.measures import bland_altman, coverage, tau_gap

autojudge_base = import_autojudge_base()
evaluation = pytest.importorskip("autojudge_evaluate.evaluation")
eval_results = pytest.importorskip("autojudge_evaluate.eval_results")


def scored(grid: dict[str, list[int]], tmp: Path, fmt: str = "tot") -> Path:
    """`score --autojudge-leaderboard --autojudge-format FMT` of one of test_agreement's grids
    of assessments (run k supports grid[topic][k] of 4 vital nuggets)."""
    folder = write(grid, tmp / f"assessed-{id(grid)}")
    out = tmp / (f"board.{fmt}" if fmt != "trec_eval" else "board-trec_eval")
    result = CliRunner().invoke(cli, ["score", str(folder), "--autojudge-leaderboard", str(out),
                                      "--autojudge-format", fmt])
    assert result.exit_code == 0, result.output
    return out


def values(board) -> dict[tuple[str, str, str], float]:
    return {(e.run_id, e.topic_id, m): float(v) for e in board.entries
            for m, v in e.values.items()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_leaderboard_format_round_trips_through_the_framework(tmp_path, fmt):
    from autojudge_base import Leaderboard

    reference = values(Leaderboard.load(scored(A, tmp_path), format="tot"))
    path = scored(A, tmp_path, fmt)
    theirs = values(Leaderboard.load(path, format=fmt))
    assert theirs == pytest.approx(reference) and len(reference) == 4 * 4 * 7
    # grid A: V_strict of run k is k/4 on every topic and in the mean
    assert theirs[("r3", "all", "V_strict")] == pytest.approx(0.75)
    ours = {(run, topic, m): v for run, m, topic, v in read_leaderboard_rows(path, fmt)}
    assert ours == pytest.approx(reference)
    if fmt != "rag4reports":  # autojudge-evaluate reads the others, verified
        result = eval_results.load(path, format=fmt, has_header=False, drop_aggregates=False,
                                   recompute_aggregates=False, verify=True, on_missing="error")
        assert result.get_aggregate_ranking("V_strict") == pytest.approx(
            {run: k / 4 for k, run in enumerate(RUNS, 1)})


def test_the_ranking_format_ranks_the_runs_per_topic_and_measure(tmp_path):
    rows = [line.split("\t") for line in scored(B, tmp_path, "ranking").read_text().splitlines()]
    t2 = {r[2]: int(r[3]) for r in rows if r[0] == "t2" and r[5] == "V_strict"}
    assert t2 == {"r4": 1, "r3": 2, "r1": 3, "r2": 4}  # B on t2 supports 2, 1, 3, 4 nuggets


@pytest.mark.parametrize("fmt", ["nuggetizer", "autojudge"])
def test_nugget_banks_of_a_real_key_load_with_the_framework(tmp_path, fmt):
    from autojudge_base.nugget_data import (
        NuggetBanks,
        NuggetizerNuggetBanks,
        load_nugget_banks_generic,
    )

    key = RAG24 / "nuggets.mistral.jsonl"
    out = tmp_path / f"banks.{fmt}.jsonl"
    result = CliRunner().invoke(cli, ["nugget-bank", str(key), "-o", str(out), "--format", fmt,
                                      "--lenient"])
    assert result.exit_code == 0, result.output
    ours = read_nuggets(key, lenient=True)
    banks = load_nugget_banks_generic(out, NuggetizerNuggetBanks if fmt == "nuggetizer"
                                      else NuggetBanks)
    assert sorted(banks.banks) == sorted(ours)
    banks.verify(expected_topic_ids=sorted(ours))
    for qid, nl in ours.items():
        bank = banks.banks[qid]
        if fmt == "nuggetizer":
            got = [(n.text, n.importance) for n in bank.nuggets]
        else:
            assert bank.title_query == nl.query
            got = [(c.claim, c.importance) for c in bank.nuggets_as_list()]
        wanted = [(n.text, n.importance if n.importance in ("vital", "okay") else None)
                  for n in nl.nuggets]
        if fmt == "autojudge":  # the framework keys claims by text: a repeated text is one
            # claim (merged), so its importance is compared only where the text occurs once
            once = {t for t, _ in wanted if sum(t == u for u, _ in wanted) == 1}
            assert [t for t, _ in got] == list(dict.fromkeys(t for t, _ in wanted)), qid
            got = [g for g in got if g[0] in once]
            wanted = [w for w in wanted if w[0] in once]
        assert got == wanted, qid


# --- the meta-evaluation against autojudge-evaluate ----------------------------------------

def reference(truth: Path, evaluated: Path, methods: list[str]):
    evaluator = evaluation.LeaderboardEvaluator(truth, truth_format="tot", eval_format="tot",
                                                correlation_methods=methods)
    return evaluator.evaluate(evaluated), evaluator.evaluate_per_topic(evaluated)


def judged_spot_check(tmp: Path) -> Path:
    """Our judge's leaderboard of the spot-check runs (the scripted assessor, through the
    framework's `auto-judge run`)."""
    from autojudge_base._commands._run import run_workflow
    from test_autojudge_judge import run_args

    result = CliRunner().invoke(run_workflow, run_args(
        tmp, "--set", "assessor=scripted:spot-graded", "--set", f"cache={tmp / 'c.sqlite'}"))
    assert result.exit_code == 0, (result.output, result.exception)
    return tmp / "out" / "default.eval.txt"


def check_equal(truth: Path, evaluated: Path, k: int) -> int:
    """Ours equal theirs for every (truth measure, evaluated measure) pair; returns how many
    pairs were compared."""
    methods = ["tau_gap", f"tau_gap@{k}", "kendall", "spearman"]
    theirs, theirs_topics = reference(truth, evaluated, methods)
    for (tm, em), correlations in theirs.items():
        a, b = load_scores([truth], tm), load_scores([evaluated], em)
        ours = compare(a, b, k=k).meta
        for method in ("tau_gap", f"tau_gap@{k}"):
            assert (math.isnan(ours[method]) and math.isnan(correlations[method])
                    or ours[method] == pytest.approx(correlations[method])), (tm, em, method)
        topics = per_topic(a.per_topic, b.per_topic)
        assert sorted(topics) == sorted(theirs_topics[tm, em])
        for q, row in theirs_topics[tm, em].items():
            for method in ("kendall", "spearman"):
                mine, ref = topics[q][method], row[method]
                assert (math.isnan(mine) and math.isnan(ref)) or mine == pytest.approx(ref), \
                    (tm, em, q, method)
    return len(theirs)


def test_meta_evaluation_equals_autojudge_evaluate_on_the_spot_check(tmp_path):
    truth = SPOT_CHECK / "trec-leaderboard.txt"
    assert check_equal(truth, truth, 3) == 4  # Measure-01/02 against each other
    assert check_equal(truth, judged_spot_check(tmp_path), 3) == 2 * 7


@pytest.mark.parametrize("k", [3, 4, 10])  # autojudge-evaluate needs 3 runs or more
def test_meta_evaluation_equals_autojudge_evaluate_on_scored_grids(tmp_path, k):
    a, b = scored(A, tmp_path / "a"), scored(B, tmp_path / "b")
    assert check_equal(a, b, k) == 7 * 7
    assert check_equal(b, a, k) == 7 * 7


def test_tau_gap_weighs_a_swap_by_the_truth_gap():
    truth = [1.0, 0.9, 0.2, 0.1]
    assert tau_gap(truth, truth) == pytest.approx(1.0)
    assert tau_gap(truth, truth[::-1]) == pytest.approx(-1.0)
    # one swapped pair each (Kendall's tau 2/3 for both), weighed differently; by hand:
    # [b, a, c, d]: position 2 gets 0 of gap 0.1, positions 3 and 4 all of theirs
    assert tau_gap(truth, [0.9, 1.0, 0.2, 0.1]) == pytest.approx(2 / 3 * (0 + 1 + 1) - 1)
    # [a, c, b, d]: c 0.8 of 0.8; b 0.1 of 0.1 + 0.7 (c above it is wrong); d all
    assert tau_gap(truth, [1.0, 0.2, 0.9, 0.1]) == pytest.approx(2 / 3 * (1 + 0.1 / 0.8 + 1) - 1)
    assert math.isnan(tau_gap([0.5, 0.5], [0.1, 0.2]))  # every pair tied in the truth


def test_coverage_and_bland_altman_by_hand(tmp_path):
    a, b = scored(A, tmp_path / "a"), scored(B, tmp_path / "b")
    meta = compare(load_scores([a], "V_strict"), load_scores([b], "V_strict")).meta
    # run means of A: k/4; of B: 7/12, 6/12, 8/12, 9/12 -> differences 4, 0, -1, -3 (/12)
    diffs = [4 / 12, 0.0, -1 / 12, -3 / 12]
    spread = 1.96 * statistics.stdev(diffs)
    assert meta["ba_bias"] == pytest.approx(0.0, abs=1e-12)
    assert meta["ba_loa_low"] == pytest.approx(-spread)
    assert meta["ba_loa_high"] == pytest.approx(spread)
    assert meta["coverage"] == 1.0
    assert coverage(["r1", "r2", "r3", "r4"], ["r1", "r2", "r3", "x"]) == 0.75
    assert bland_altman([0.5, 0.7], [0.6, 0.9]) == pytest.approx(
        {"ba_bias": 0.15, "ba_loa_low": 0.15 - 1.96 * statistics.stdev([0.1, 0.2]),
         "ba_loa_high": 0.15 + 1.96 * statistics.stdev([0.1, 0.2])})
    assert math.isnan(bland_altman([0.5], [0.6])["ba_bias"])


def test_the_agreement_command_reports_the_new_columns(tmp_path):
    a, b = scored(A, tmp_path / "a"), scored(B, tmp_path / "b")
    result = CliRunner().invoke(cli, ["agreement", str(a), str(b), "--meta-output",
                                      str(tmp_path / "meta.tsv"), "--top-k", "3"])
    assert result.exit_code == 0, result.output
    rows = dict(line.split("\t") for line in (tmp_path / "meta.tsv").read_text().splitlines())
    for name in ("tau_gap", "tau_gap@3", "coverage", "ba_bias", "ba_loa_low", "ba_loa_high",
                 "topic_kendall", "topic_spearman"):
        assert name in rows, name
    assert rows["coverage"] == "1.0000"
    # per-topic taus of B against A: t1 1, t2 (5 - 1) / 6, t3 -1
    assert rows["topic_kendall"] == f"{(1 + 4 / 6 - 1) / 3:.4f}"
