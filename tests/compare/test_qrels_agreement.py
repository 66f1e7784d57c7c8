"""Agreement of two qrels: kappa, ordinal alpha, P/R/F1 and the confusion matrix against values
worked out by hand on a small case, against scikit-learn and krippendorff where installed, and
the ranking tau through ir_measures on runs whose scores are known."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.compare import compare_qrels, label_agreement
from nuggetizer.measures import agreement as ma
from nuggetizer.types import Qrel

A = [0, 0, 1, 1, 2, 3]
B = [0, 1, 1, 2, 2, 3]


def close(value: float, exact: Fraction) -> bool:
    return math.isclose(value, float(exact), rel_tol=0, abs_tol=1e-12)


def test_kappa_by_hand() -> None:
    # p_o = 4/6; marginals A 2,2,1,1 and B 1,2,2,1: p_e = (2+4+2+1)/36 = 1/4
    assert close(ma.cohen_kappa(A, B), (Fraction(2, 3) - Fraction(1, 4)) / Fraction(3, 4))
    assert close(ma.cohen_kappa(A, B), Fraction(5, 9))
    # >= 1: A 0,0,1,1,1,1 / B 0,1,1,1,1,1: p_o 5/6, p_e (2*1 + 4*5)/36 = 11/18
    assert close(ma.cohen_kappa(ma.binary(A, 1), ma.binary(B, 1)), Fraction(4, 7))
    # >= 2: A 0,0,0,0,1,1 / B 0,0,0,1,1,1: p_o 5/6, p_e (4*3 + 2*3)/36 = 1/2
    assert close(ma.cohen_kappa(ma.binary(A, 2), ma.binary(B, 2)), Fraction(2, 3))
    assert math.isnan(ma.cohen_kappa([1, 1], [1, 1]))  # no variation: undefined


def test_ordinal_alpha_by_hand() -> None:
    # coincidences: o00 = o11 = o22 = o33 = 2, o01 = o10 = o12 = o21 = 1; n = 3, 4, 3, 2 (12)
    # d2(0,1) = (3+4-3.5)^2 = 12.25 = d2(1,2); d2(0,2) = (10-3)^2 = 49;
    # d2(0,3) = (12-2.5)^2 = 90.25; d2(1,3) = (9-3)^2 = 36; d2(2,3) = (5-2.5)^2 = 6.25
    observed = 2 * 12.25 + 2 * 12.25  # 49
    expected = 2 * (12 * 12.25 + 12 * 12.25 + 9 * 49 + 6 * 90.25 + 8 * 36 + 6 * 6.25)  # 3204
    assert expected == 3204 and observed == 49
    assert close(ma.krippendorff_alpha_ordinal(A, B), 1 - Fraction(11 * 49, 3204))
    assert math.isnan(ma.krippendorff_alpha_ordinal([2, 2], [2, 2]))
    assert ma.krippendorff_alpha_ordinal(A, A) == 1


def test_set_agreement_and_confusion_by_hand() -> None:
    sets = ma.set_agreement(A, B, 1)  # relevant: A items 2..5 (4), B items 1..5 (5)
    assert (sets["relevant_a"], sets["relevant_b"], sets["relevant_both"]) == (4, 5, 4)
    assert close(sets["precision"], Fraction(4, 5)) and sets["recall"] == 1
    assert close(sets["f1"], Fraction(8, 9)) and close(sets["jaccard"], Fraction(4, 5))
    sets2 = ma.set_agreement(A, B, 2)  # A items 4, 5; B items 3, 4, 5
    assert close(sets2["precision"], Fraction(2, 3)) and sets2["recall"] == 1
    assert ma.confusion(A, B) == {(0, 0): 1, (0, 1): 1, (1, 1): 1, (1, 2): 1, (2, 2): 1,
                                  (3, 3): 1}


def random_grades(seed: int, n: int = 200) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    a = [rng.randrange(4) for _ in range(n)]
    b = [min(3, max(0, x + rng.choice([-1, 0, 0, 1, 2]))) for x in a]
    return a, b


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kappa_matches_scikit_learn(seed: int) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    a, b = random_grades(seed)
    assert math.isclose(ma.cohen_kappa(a, b), metrics.cohen_kappa_score(a, b), abs_tol=1e-12)
    assert math.isclose(ma.cohen_kappa(ma.binary(a, 2), ma.binary(b, 2)),
                        metrics.cohen_kappa_score(ma.binary(a, 2), ma.binary(b, 2)),
                        abs_tol=1e-12)
    assert math.isclose(ma.cohen_kappa(A, B), metrics.cohen_kappa_score(A, B), abs_tol=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_matches_krippendorff(seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    a, b = random_grades(seed)
    for x, y in ((a, b), (A, B)):
        expected = krippendorff.alpha(reliability_data=[x, y], level_of_measurement="ordinal")
        assert math.isclose(ma.krippendorff_alpha_ordinal(x, y), expected, abs_tol=1e-9)


def test_binary_alpha_has_the_closed_form_of_nominal_alpha() -> None:
    """With two values the ordinal distance is a constant, so alpha is nominal alpha; for two
    judges without missing labels that is 1 - (n - 1) * disagreements / (n0 * n1), n = 2 *
    items and n0, n1 the counts of each value over both judges."""
    a, b = ma.binary(random_grades(4)[0], 2), ma.binary(random_grades(4)[1], 2)
    n = 2 * len(a)
    n1 = sum(a) + sum(b)
    n0 = n - n1
    disagree = sum(1 for x, y in zip(a, b) if x != y)
    closed = 1 - (n - 1) * disagree / (n0 * n1)
    assert math.isclose(ma.krippendorff_alpha_ordinal(a, b), closed, abs_tol=1e-12)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_ranking_tau_on_runs_with_known_scores(tmp_path: Path) -> None:
    """P@2 under A (d1, d2 relevant) and B (d3, d4 relevant): r1 1 / 0, r2 0.5 / 0.5,
    r3 0 / 1, so the orderings are reversed: tau = -1."""
    qa = write(tmp_path / "a.qrels", "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d4 0\n")
    qb = write(tmp_path / "b.qrels", "q1 0 d1 0\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 1\n")
    runs = []
    for tag, docs in (("r1", "d1 d2 d3 d4"), ("r2", "d1 d3 d2 d4"), ("r3", "d3 d4 d1 d2")):
        lines = [f"q1 Q0 {d} {i + 1} {10 - i} {tag}" for i, d in enumerate(docs.split())]
        runs.append(write(tmp_path / f"{tag}.run", "\n".join(lines) + "\n"))
    result = CliRunner().invoke(cli, ["qrels-agreement", str(qa), str(qb), "--measure", "P@2",
                                      *[x for r in runs for x in ("--retrieval-run", str(r))],
                                      "--json", str(tmp_path / "agreement.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "agreement.json").read_text())
    assert report["ranking"]["runs"] == {"r1": {"a": 1.0, "b": 0.0}, "r2": {"a": 0.5, "b": 0.5},
                                         "r3": {"a": 0.0, "b": 1.0}}
    assert report["ranking"]["kendall_tau"] == -1.0
    assert report["measures"]["kappa"] == -1.0  # every binary label flipped, balanced
    assert report["pairs"] == 4 and report["only_a"] == report["only_b"] == 0
    assert "Kendall's tau -1.0000 over 3 runs" in result.output
    assert (tmp_path / "agreement.json.provenance.json").is_file()


def test_pairs_judged_by_one_side_are_left_out(tmp_path: Path) -> None:
    qa = [Qrel(qid="q", docid=f"d{i}", grade=g) for i, g in enumerate(A)]
    qb = [Qrel(qid="q", docid=f"d{i}", grade=g) for i, g in enumerate(B)]
    qb.append(Qrel(qid="q", docid="extra", grade=3))
    qa.append(Qrel(qid="other", docid="d0", grade=0))
    result = label_agreement(qa, qb)
    assert (result.pairs, result.only_a, result.only_b) == (6, 1, 1)
    assert close(result.measures["kappa"], Fraction(5, 9))
    assert close(result.measures["f1"], Fraction(8, 9))
    assert result.topics == ["q"] and result.grades == [0, 1, 2, 3]


def test_sample_qrels_agree_with_themselves_and_disjoint_qrels_are_an_error(
        tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parents[2] / "qrels" / "sample.qrels"
    result = compare_qrels(sample, sample)
    assert result.pairs == 32 and all(v == 1 for v in result.measures.values())
    other = write(tmp_path / "other.qrels", "x 0 y 1\n")
    run = CliRunner().invoke(cli, ["qrels-agreement", str(sample), str(other)])
    assert run.exit_code == 2 and "no (topic, passage) pair is judged in both" in run.output
