"""Paired significance tests between runs, corrections, and the published table."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.compare import adjust, pairwise, randomization_p, t_test_p
from nuggetizer.errors import ConfigError, InputError


def test_holm_and_bonferroni():
    p = [0.01, 0.04, 0.03]
    # Holm: sorted 0.01*3, 0.03*2, max(0.04*1, previous)
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06])
    assert adjust(p, "bonferroni") == pytest.approx([0.03, 0.12, 0.09])
    assert adjust([0.5, 0.9], "bonferroni") == [1.0, 1.0]
    assert adjust(p, "none") == p
    with pytest.raises(ConfigError):
        adjust(p, "sidak")


def test_randomization_exact_and_sampled():
    # 4 equal positive differences: only all-plus and all-minus flips reach |mean| 1: 2 of 16
    assert randomization_p([1, 1, 1, 1]) == pytest.approx(2 / 16)
    assert randomization_p([0, 0, 0]) == 1.0
    assert randomization_p([1, -1, 1, -1]) == 1.0  # mean 0: every flip is as extreme
    diffs = [1.0] * 30  # 2^30 flips: sampled; only +-all reach it, so p is 1 / (trials + 1)
    assert randomization_p(diffs, trials=2000, seed=1) == pytest.approx(1 / 2001)
    noisy = [random.Random(3).gauss(0, 1) for _ in range(40)]
    assert randomization_p(noisy, 3000, seed=5) == randomization_p(noisy, 3000, seed=5)


def test_paired_t():
    # differences 1..5: t = 3 / (sqrt(2.5) / sqrt(5)) = 4.243 on 4 df, two-sided p = 0.0132
    assert t_test_p([1, 2, 3, 4, 5]) == pytest.approx(0.0132, abs=5e-4)
    assert t_test_p([0, 0, 0]) == 1.0
    assert t_test_p([0.5, 0.5, 0.5]) == 0.0  # a constant non-zero shift


def test_pairwise_orders_runs_and_corrects():
    rng = random.Random(7)
    topics = [f"t{k}" for k in range(25)]
    base = {t: rng.random() for t in topics}
    per_topic = {
        "good": {t: min(1.0, base[t] + 0.3) for t in topics},
        "same": {t: base[t] + rng.choice((-0.01, 0.01)) for t in topics},
        "base": dict(base),
    }
    tests = pairwise(per_topic, trials=2000, seed=0)
    assert [(t.run_a, t.run_b) for t in tests] == [("good", "same"), ("good", "base"),
                                                   ("same", "base")]
    by_pair = {(t.run_a, t.run_b): t for t in tests}
    assert by_pair[("good", "base")].rand_p_adj < 0.01 and by_pair[("good", "base")].t_p < 0.01
    assert by_pair[("same", "base")].t_p_adj > 0.05
    for t in tests:
        assert t.t_p_adj >= t.t_p and t.rand_p_adj >= t.rand_p
    with pytest.raises(InputError):
        pairwise({"only": per_topic["good"]})


def test_cli_table_from_per_topic_tsv(tmp_path):
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    for run, shift in (("a", 0.2), ("b", 0.0), ("c", 0.05)):
        values = [min(1.0, k / 20 + shift) for k in range(12)]
        lines += [f"{run}\tq{k}\tV_strict\t{v:.4f}" for k, v in enumerate(values)]
        lines.append(f"{run}\tall\tV_strict\t{sum(values) / len(values):.4f}")
    per_topic = tmp_path / "pt.tsv"
    per_topic.write_text("\n".join(lines) + "\n")
    out, md = tmp_path / "sig.tsv", tmp_path / "sig.md"
    result = CliRunner().invoke(cli, ["significance", str(per_topic), "-o", str(out),
                                      "--markdown", str(md), "--correction", "bonferroni"])
    assert result.exit_code == 0, result.output
    rows = [r.split("\t") for r in out.read_text().splitlines()]
    assert rows[0][:5] == ["run_a", "run_b", "mean_a", "mean_b", "diff"]
    assert [r[:2] for r in rows[1:]] == [["a", "c"], ["a", "b"], ["c", "b"]]
    assert all(r[-1] == "*" for r in rows[1:])  # constant shifts over 12 topics: all significant
    text = md.read_text()
    assert "over 12 topics" in text and "bonferroni correction over 3 pairs" in text
    lb = tmp_path / "lb.tsv"
    lb.write_text("run_id\tV_strict\na\t0.5\nb\t0.4\n")
    result = CliRunner().invoke(cli, ["significance", str(lb)])
    assert result.exit_code == 2 and "per-topic" in result.stderr
