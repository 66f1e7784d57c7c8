"""Agreement of N judges: Krippendorff's alpha over any number of judges with missing values
against the krippendorff package, pairwise kappa against scikit-learn, and `qrels-agreement`
on three qrels (the 2026 development qrels of three LLMs) against both."""

from __future__ import annotations

import json
import math
import random
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from shared_data import RAG26_DEV

from nuggetizer.cli import cli
from nuggetizer.compare import compare_many_qrels, compare_qrels
from nuggetizer.formats import read_qrels
from nuggetizer.measures import agreement as ma

krippendorff = pytest.importorskip("krippendorff")
np = pytest.importorskip("numpy")
QRELS = sorted((RAG26_DEV / "qrels").glob("*.qrels"))


def reliability(units: list[list[int | None]]) -> np.ndarray:
    """The judges x items matrix the krippendorff package reads (NaN: not judged)."""
    return np.array([[np.nan if v is None else v for v in judge] for judge in zip(*units)],
                    dtype=float)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
def test_alpha_of_n_judges_with_missing_values_matches_krippendorff(seed: int, metric: str
                                                                     ) -> None:
    rng = random.Random(seed)
    judges = rng.randint(2, 5)
    units = []
    for _ in range(rng.randint(5, 60)):
        truth = rng.randint(0, 4)
        units.append([None if rng.random() < 0.2 else
                      min(4, max(0, truth + rng.choice((-1, 0, 0, 0, 1))))
                      for _ in range(judges)])
    expected = krippendorff.alpha(reliability_data=reliability(units),
                                  level_of_measurement=metric)
    ours = ma.krippendorff_alpha(units, metric)
    if math.isnan(expected):
        assert math.isnan(ours)
    else:
        assert math.isclose(ours, expected, abs_tol=1e-9)


def test_alpha_by_hand_and_undefined_cases() -> None:
    # three judges, two items: (1, 1, 0) and (0, 0, None); nominal coincidences:
    # item 1 (m=3): o11 += 2*1/2 = 1, o10 = o01 += 2*1/2 = 1; item 2 (m=2): o00 += 2
    # n1 = 2, n0 = 3, n = 5: D_o = 2 (o10 + o01), D_e = 2 * n0 * n1 = 12: 1 - 4 * 2 / 12
    assert math.isclose(ma.krippendorff_alpha([[1, 1, 0], [0, 0, None]]), 1 - 8 / 12)
    assert math.isnan(ma.krippendorff_alpha([[1, None, None], [2, 2, 2]]))  # no variation
    assert math.isnan(ma.krippendorff_alpha([[1, None], [None, 2]]))  # nothing pairable
    with pytest.raises(ValueError, match="unknown metric"):
        ma.krippendorff_alpha([[1, 2]], "ratio-ish")


def test_pairwise_kappa_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    for _ in range(20):
        a = [rng.randint(0, 3) for _ in range(40)]
        b = [min(3, max(0, x + rng.choice((-1, 0, 1)))) for x in a]
        assert math.isclose(ma.cohen_kappa(a, b), metrics.cohen_kappa_score(a, b),
                            abs_tol=1e-12)


@pytest.fixture(scope="module")
def three() -> list[Path]:
    assert len(QRELS) == 3, f"expected the three 2026 development qrels in {RAG26_DEV}"
    return QRELS


@pytest.fixture(scope="module")
def many(three: list[Path]) -> Any:
    return compare_many_qrels(three, relevant=2)


def test_three_qrels_pairwise_as_two_and_alpha_as_krippendorff(three: list[Path], many: Any
                                                               ) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    assert [(p.a, p.b) for p in many.pairs] == [(str(a), str(b)) for a, b in
                                                combinations(three, 2)]
    grades = [{(q.qid, q.docid): q.grade for q in read_qrels(p)} for p in three]
    for pair, (i, j) in zip(many.pairs, combinations(range(3), 2)):
        two = compare_qrels(three[i], three[j], relevant=2)
        assert pair.items == two.pairs and pair.measures == two.measures
        common = [k for k in grades[i] if k in grades[j]]
        x, y = [grades[i][k] for k in common], [grades[j][k] for k in common]
        assert math.isclose(pair.measures["kappa"], metrics.cohen_kappa_score(x, y),
                            abs_tol=1e-9)
        assert math.isclose(pair.measures["kappa_ge2"], metrics.cohen_kappa_score(
            [int(v >= 2) for v in x], [int(v >= 2) for v in y]), abs_tol=1e-9)
    items = list(dict.fromkeys(k for g in grades for k in g))
    data = np.array([[g.get(k, np.nan) for k in items] for g in grades], dtype=float)
    for name, metric, values in (("alpha_ordinal", "ordinal", data),
                                 ("alpha_nominal", "nominal", data),
                                 ("alpha_nominal_ge2", "nominal",
                                  np.where(np.isnan(data), np.nan, data >= 2))):
        expected = krippendorff.alpha(reliability_data=values, level_of_measurement=metric,
                                      value_domain=sorted(set(values[~np.isnan(values)])))
        assert math.isclose(many.overall[name], expected, abs_tol=1e-9), name
    assert many.items == len(items) and many.by_all == sum(
        all(k in g for g in grades) for k in items)


def test_qrels_agreement_command_takes_three_and_still_two(three: list[Path], many: Any,
                                                           tmp_path: Path) -> None:
    out, report = tmp_path / "agreement.json", tmp_path / "agreement.tsv"
    result = CliRunner().invoke(cli, ["qrels-agreement", *map(str, three), "--relevant", "2",
                                      "--json", str(out), "-o", str(report)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["judges"] == [str(p) for p in three] and len(data["pairs"]) == 3
    assert data["all"]["alpha_ordinal"] == round(many.overall["alpha_ordinal"], 6)
    assert "Agreement of 3 judges" in result.output and "J1-J2" in result.output
    assert f"| Krippendorff's alpha (ordinal) | {many.overall['alpha_ordinal']:.4f} |" \
        in result.output
    rows = [line.split("\t") for line in report.read_text().splitlines()[1:]]
    assert ["all", "", "judged_by_all", str(many.by_all)] in rows
    assert (tmp_path / "agreement.json.provenance.json").is_file()
    two = CliRunner().invoke(cli, ["qrels-agreement", *map(str, three[:2])])
    assert two.exit_code == 0 and two.output == compare_qrels(*three[:2]).markdown()
    one = CliRunner().invoke(cli, ["qrels-agreement", str(three[0])])
    assert one.exit_code == 2 and "at least two" in one.output


# --- `agreement` of three assessment sets ---------------------------------------------------------

LABELS = ("not_support", "partial_support", "support")


def write_judge(folder: Path, seed: int, drop: float) -> dict[tuple[str, str, str], int]:
    """Assessments of 4 runs x 3 topics x 5 vital nuggets: a shared truth perturbed by the
    judge's seed, some labels left unjudged (`drop`); what it wrote, as credit ranks."""
    from nuggetizer.formats import assessment_record, write_jsonl_atomic
    from nuggetizer.types import AssessedNugget, Assessment

    truth, rng = random.Random(0), random.Random(seed)
    written: dict[tuple[str, str, str], int] = {}
    for run in ("r1", "r2", "r3", "r4"):
        records = []
        for qid in ("t1", "t2", "t3"):
            nuggets = []
            for j in range(5):
                rank = truth.randint(0, 2)
                if rng.random() < 0.3:
                    rank = rng.randint(0, 2)
                label = "unjudged" if rng.random() < drop else LABELS[rank]
                if label != "unjudged":
                    written[run, qid, f"n{j}"] = rank
                nuggets.append(AssessedNugget(text=f"n{j}", importance="vital",
                                              assignment=label))
            records.append(assessment_record(Assessment(
                run_id=run, qid=qid, query=qid, answer_text="x", length=10, nuggets=nuggets)))
        write_jsonl_atomic(folder / f"{run}.jsonl", records)
    return written


def test_agreement_of_three_assessment_sets(tmp_path: Path) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    from nuggetizer.compare import compare, load_scores

    folders = [tmp_path / f"judge{i}" for i in range(3)]
    labels = [write_judge(f, seed, drop) for f, seed, drop in zip(folders, (1, 2, 3),
                                                                  (0.0, 0.1, 0.2))]
    table = tmp_path / "agreement.tsv"
    result = CliRunner().invoke(cli, ["agreement", *map(str, folders), "-o", str(table)])
    assert result.exit_code == 0, result.output
    rows = {(a, b, m): v for a, b, m, v in
            (line.split("\t") for line in table.read_text().splitlines()[1:])}
    scores = [load_scores([f], "V_strict") for f in folders]
    for i, j in combinations(range(3), 2):
        a, b = str(folders[i]), str(folders[j])
        assert rows[a, b, "run_tau"] == f"{compare(scores[i], scores[j]).run_tau:.4f}"
        common = [k for k in labels[i] if k in labels[j]]
        x, y = [labels[i][k] for k in common], [labels[j][k] for k in common]
        assert rows[a, b, "labels.items"] == str(len(common))
        assert rows[a, b, "labels.kappa"] == f"{metrics.cohen_kappa_score(x, y):.4f}"
    items = list(dict.fromkeys(k for judged in labels for k in judged))
    data = np.array([[judged.get(k, np.nan) for k in items] for judged in labels], dtype=float)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert rows["all", "", "labels.alpha_ordinal"] == f"{alpha:.4f}"
    values = [{(r, q): v for r, row in s.per_topic.items() for q, v in row.items()}
              for s in scores]
    cells = list(values[0])
    interval = krippendorff.alpha(reliability_data=[[v[c] for c in cells] for v in values],
                                  level_of_measurement="interval")
    assert rows["all", "", "alpha_interval"] == f"{interval:.4f}"
    assert "Agreement of 3 judges" in result.output and "kappa = support" in result.output
    refused = CliRunner().invoke(cli, ["agreement", *map(str, folders), "--plot",
                                       str(tmp_path / "p.png")])
    assert refused.exit_code == 2 and "give A and B only" in refused.output
