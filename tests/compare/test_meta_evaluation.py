"""The TREC AutoJudge meta-evaluation (METHODS.md section 7): tau_AP, tau_AP-b, Kendall@k and
Pearson, by hand and against autojudge-evaluate on the same files."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.compare import (
    compare,
    kendall_at_k,
    load_scores,
    meta_evaluation,
    pearson,
    tau_ap,
    tau_ap_b,
)
from nuggetizer.formats import leaderboard_text, write_text_atomic

TRUTH = [4.0, 3.0, 2.0, 1.0]
BOTTOM_SWAP = [4.0, 3.0, 1.0, 2.0]
TOP_SWAP = [3.0, 4.0, 2.0, 1.0]


def test_tau_ap_by_hand():
    # bottom swap: positions b 1/1, d 2/2, c 2/3 -> 2/3 * 8/3 - 1
    assert tau_ap(TRUTH, BOTTOM_SWAP) == pytest.approx(7 / 9)
    # top swap: a 0/1, c 2/2, d 3/3 -> 2/3 * 2 - 1; Kendall's tau is 2/3 for both
    assert tau_ap(TRUTH, TOP_SWAP) == pytest.approx(1 / 3)
    assert tau_ap(TRUTH, TRUTH) == pytest.approx(1)
    assert tau_ap(TRUTH, TRUTH[::-1]) == pytest.approx(-1)
    assert math.isnan(tau_ap([1.0], [1.0]))


def test_tau_ap_b_by_hand():
    # without ties: the mean of both directions (here equal)
    assert tau_ap_b(TRUTH, BOTTOM_SWAP) == pytest.approx(7 / 9)
    assert tau_ap_b(TRUTH, TOP_SWAP) == pytest.approx(1 / 3)
    # ties in the evaluated scores: direction 1 (groups {a,b} above {c,d}): c 2/2, d 2/2 -> 1;
    # direction 2 (truth order): b 0/1, c 2/2, d 2/3 -> 2/3 * 5/3 - 1 = 1/9; mean 5/9
    assert tau_ap_b(TRUTH, [2.0, 2.0, 1.0, 1.0]) == pytest.approx(5 / 9)


def test_kendall_at_k_by_hand():
    truth = dict(zip("abcde", [5.0, 4.0, 3.0, 2.0, 1.0]))
    evaluated = dict(zip("abcde", [4.0, 5.0, 3.0, 1.0, 2.0]))
    # top 3 of the truth: a, b, c; pairs (a,b) discordant, (a,c), (b,c) concordant
    assert kendall_at_k(truth, evaluated, 3) == pytest.approx(1 / 3)
    assert kendall_at_k(truth, evaluated, 10) == pytest.approx(0.6)  # 8 - 2 of 10 pairs
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1)


def test_meta_evaluation_names():
    m = meta_evaluation(dict(zip("abcd", TRUTH)), dict(zip("abcd", TOP_SWAP)), k=3)
    assert list(m) == ["kendall", "spearman", "pearson", "tau_ap", "tau_ap_b", "kendall@3"]
    assert m["tau_ap"] == pytest.approx(1 / 3) and m["kendall"] == pytest.approx(2 / 3)


# --- against autojudge-evaluate ---------------------------------------------------------------

RUNS = ["r1", "r2", "r3", "r4", "r5", "r6"]
TRUTH_SCORES = {"t1": [0.9, 0.7, 0.6, 0.4, 0.3, 0.1], "t2": [0.8, 0.75, 0.5, 0.45, 0.2, 0.1]}
EVAL_SCORES = {"t1": [0.6, 0.8, 0.5, 0.2, 0.3, 0.1], "t2": [0.7, 0.9, 0.3, 0.5, 0.5, 0.0]}


def board(scores: dict[str, list[float]], measure: str, path: Path) -> Path:
    per_topic = {r: {q: {measure: v[i]} for q, v in scores.items()} for i, r in enumerate(RUNS)}
    means = {r: {measure: sum(v[i] for v in scores.values()) / len(scores)}
             for i, r in enumerate(RUNS)}
    write_text_atomic(path, leaderboard_text(per_topic, means, [measure], RUNS))
    return path


def reference(truth: Path, evaluated: Path, methods: list[str]) -> dict[str, float]:
    from autojudge_offline import import_autojudge_base

    import_autojudge_base()
    evaluation = pytest.importorskip("autojudge_evaluate.evaluation")
    evaluator = evaluation.LeaderboardEvaluator(
        truth, truth_format="tot", eval_format="tot", correlation_methods=methods)
    return evaluator.evaluate(evaluated)[("TRUTH", "EVAL")]


def test_equal_to_autojudge_evaluate(tmp_path):
    truth = board(TRUTH_SCORES, "TRUTH", tmp_path / "truth.txt")
    evaluated = board(EVAL_SCORES, "EVAL", tmp_path / "eval.txt")
    theirs = reference(truth, evaluated, ["kendall", "pearson", "spearman", "tauap_b",
                                          "kendall@3", "kendall@10"])
    result = compare(load_scores([truth], "TRUTH"), load_scores([evaluated], "EVAL"), k=3)
    ours = result.meta
    assert ours["kendall"] == pytest.approx(theirs["kendall"])
    assert ours["spearman"] == pytest.approx(theirs["spearman"])
    assert ours["pearson"] == pytest.approx(theirs["pearson"])
    assert ours["tau_ap_b"] == pytest.approx(theirs["tauap_b"])
    assert ours["kendall@3"] == pytest.approx(theirs["kendall@3"])
    assert compare(load_scores([truth], "TRUTH"), load_scores([evaluated], "EVAL")
                   ).meta["kendall@10"] == pytest.approx(theirs["kendall@10"])


@pytest.mark.parametrize("evaluated", [BOTTOM_SWAP, TOP_SWAP, [2.0, 2.0, 1.0, 1.0],
                                       [1.0, 1.0, 1.0, 2.0], TRUTH])
def test_tau_ap_b_equals_pyircore(evaluated):
    from autojudge_offline import import_autojudge_base

    import_autojudge_base()
    evaluation = pytest.importorskip("autojudge_evaluate.evaluation")
    assert tau_ap_b(TRUTH, evaluated) == pytest.approx(evaluation.tauap_b(TRUTH, evaluated))
    assert tau_ap_b(evaluated, TRUTH) == pytest.approx(evaluation.tauap_b(evaluated, TRUTH))


def test_agreement_cli_on_the_spot_check_truth(tmp_path):
    from shared_data import SPOT_CHECK

    truth = SPOT_CHECK / "trec-leaderboard.txt"
    if not truth.is_file():
        pytest.skip("shared data not available")
    result = CliRunner().invoke(cli, ["agreement", str(truth), str(truth), "--measure-a",
                                      "Measure-01", "--measure-b", "Measure-02",
                                      "--meta-output", str(tmp_path / "meta.tsv")])
    assert result.exit_code == 0, result.output
    # Measure-02 reverses Measure-01's ranking of the three runs
    meta = dict(line.split("\t") for line in (tmp_path / "meta.tsv").read_text().splitlines()[1:])
    assert meta["kendall"] == "-1.0000" and meta["tau_ap"] == "-1.0000"
    assert meta["tau_ap_b"] == "-1.0000"
