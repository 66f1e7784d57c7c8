"""Separability and agreement with confidence: on intervals set by hand, the topic bootstrap
against a loop written here, and `agreement` printing them for per-topic TSVs and for a
battles folder against a nuggets TSV."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.compare.separability import (
    agreement_with_confidence,
    pair_agreement,
    separability,
    topic_intervals,
)

REF = {"a": (0.8, 0.9), "b": (0.6, 0.7), "c": (0.55, 0.65), "d": (0.1, 0.2)}


def test_separability_and_agreement_on_intervals_set_by_hand() -> None:
    # pairs: ab, ac, ad, bc (overlap), bd, cd: 5 of 6 apart
    assert separability(REF) == pytest.approx(5 / 6)
    evaluated = {"a": (0.5, 0.6), "b": (0.7, 0.8),  # a and b swapped, apart: -1
                 "c": (0.3, 0.75),  # overlaps a and b: 0 for ac, bc not counted
                 "d": (0.0, 0.1)}  # below all: +1 for ad, bd, cd
    # reference-separated pairs: ab (-1), ac (0), ad (+1), bd (+1), cd (+1)
    assert agreement_with_confidence(REF, evaluated) == pytest.approx(2 / 5)
    assert agreement_with_confidence(REF, REF) == 1
    scores = {"a": 0.55, "b": 0.75, "c": 0.5, "d": 0.05}
    # ab wrong, ac right, ad right, bd right, cd right
    assert pair_agreement(REF, scores) == pytest.approx(4 / 5)
    assert math.isnan(separability({"a": (0, 1)}))
    assert math.isnan(agreement_with_confidence({"a": (0, 1), "b": (0.5, 2)}, REF))


def test_topic_bootstrap_against_a_plain_loop() -> None:
    rng = np.random.default_rng(5)
    per_topic = {r: {f"q{t}": float(rng.random() + k / 3) for t in range(15)}
                 for k, r in enumerate("wxyz")}
    per_topic["w"]["extra"] = 9.0  # a topic not every run has is left out
    got = topic_intervals(per_topic, list("wxyz"), rounds=400, seed=3, level=0.9)
    topics = [f"q{t}" for t in range(15)]
    topics.sort()
    draw = np.random.default_rng(3).integers(0, 15, (400, 15))
    for r in "wxyz":
        means = [np.mean([per_topic[r][topics[i]] for i in row]) for row in draw]
        assert got[r] == pytest.approx((np.percentile(means, 5), np.percentile(means, 95)))


def write_per_topic(path: Path, values: dict[str, list[float]], measure: str) -> None:
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    for run, row in values.items():
        lines += [f"{run}\tq{t}\t{measure}\t{v}" for t, v in enumerate(row)]
        lines.append(f"{run}\tall\t{measure}\t{sum(row) / len(row)}")
    path.write_text("\n".join(lines) + "\n")


def test_agreement_prints_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    strong = {f"run{k}": list(k * 0.2 + rng.normal(0, 0.05, 30)) for k in range(5)}
    weak = {f"run{k}": list(k * 0.01 + rng.normal(0, 0.2, 30)) for k in range(5)}
    write_per_topic(tmp_path / "a.tsv", strong, "V_strict")
    write_per_topic(tmp_path / "b.tsv", weak, "V_strict")
    result = CliRunner().invoke(cli, ["agreement", str(tmp_path / "a.tsv"),
                                      str(tmp_path / "b.tsv"), "--meta-output",
                                      str(tmp_path / "meta.tsv")])
    assert result.exit_code == 0, result.output
    meta = dict(line.split("\t") for line in (tmp_path / "meta.tsv").read_text().splitlines()[1:])
    runs = sorted(strong)
    ia = topic_intervals({r: {f"q{t}": v for t, v in enumerate(strong[r])} for r in runs},
                         runs)
    ib = topic_intervals({r: {f"q{t}": v for t, v in enumerate(weak[r])} for r in runs}, runs)
    assert float(meta["separability_a"]) == pytest.approx(separability(ia), abs=1e-4)
    assert separability(ia) == 1.0
    assert float(meta["separability_b"]) == pytest.approx(separability(ib), abs=1e-4)
    assert separability(ib) < 0.5
    assert float(meta["agreement_with_confidence"]) == pytest.approx(
        agreement_with_confidence(ia, ib), abs=1e-4)
    assert "| separability_a | 1.0000 |" in result.output

    # battles (their bootstrap intervals) against the nuggets TSV
    arena = ["model_a,model_b,winner,question_id"]
    for t in range(40):
        for i in range(5):
            for j in range(i + 1, 5):
                win = rng.random() < 1 / (1 + math.exp(-(j - i) * 0.8))
                arena.append(f"run{j},run{i},{'model_a' if win else 'model_b'},q{t}")
    (tmp_path / "arena.csv").write_text("\n".join(arena) + "\n")
    made = CliRunner().invoke(cli, ["import-arena-battles", str(tmp_path / "arena.csv"), "-o",
                                    str(tmp_path / "battles")])
    assert made.exit_code == 0, made.output
    board = tmp_path / "board.tsv"
    scored = CliRunner().invoke(cli, ["score", "--method", "battles", str(tmp_path / "battles"),
                                      "-o", str(board)])
    assert scored.exit_code == 0, scored.output
    rows = [line.split("\t") for line in board.read_text().splitlines()]
    col = {name: k for k, name in enumerate(rows[0])}
    bt = {r[0]: (float(r[col["bt_low"]]), float(r[col["bt_high"]])) for r in rows[1:]}
    both = CliRunner().invoke(cli, ["agreement", str(tmp_path / "battles"), str(tmp_path / "a.tsv"),
                                    "--measure-a", "bt_score", "--measure-b", "V_strict",
                                    "--meta-output", str(tmp_path / "meta2.tsv")])
    assert both.exit_code == 0, both.output
    meta = dict(line.split("\t") for line in (tmp_path / "meta2.tsv").read_text().splitlines()[1:])
    assert float(meta["separability_a"]) == pytest.approx(separability(bt), abs=1e-4)
    assert float(meta["agreement_with_confidence"]) == pytest.approx(
        agreement_with_confidence(bt, ia), abs=1e-4)
