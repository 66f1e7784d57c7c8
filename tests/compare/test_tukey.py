"""The randomised Tukey HSD test (Carterette 2012; Sakai, ch. 4) against computations written
here: every permutation of a small matrix enumerated, and a plain loop over random
permutations of a larger one; 150 synthetic runs with known differences told apart with
B = 10,000 (the benchmark's generator); `significance --test tukey` and the report's groups."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from emulated import load_module

from nuggetizer.cli import cli
from nuggetizer.measures.tukey import tukey_hsd
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.uncertainty import groups

REPO = Path(__file__).resolve().parents[2]


def null_p(ranges: list[float], means: list[float]) -> dict[tuple[int, int], float]:
    """Each pair's p-value: the share of `ranges` at least its |difference of means|."""
    return {(i, j): sum(r >= abs(means[i] - means[j]) - 1e-12 for r in ranges) / len(ranges)
            for i, j in itertools.combinations(range(len(means)), 2)}


def plain_ranges(rows: list[list[float]], permutations: list[tuple[list[int], ...]]
                 ) -> list[float]:
    """The range of the run means under each permutation (one per topic) of the rows."""
    found = []
    for chosen in permutations:
        sums = [0.0] * len(rows[0])
        for row, order in zip(rows, chosen):
            for run, source in enumerate(order):
                sums[run] += row[source]
        means = [s / len(rows) for s in sums]
        found.append(max(means) - min(means))
    return found


def test_every_permutation_of_a_small_matrix_gives_the_same_separations() -> None:
    # 3 runs x 6 topics: all 6^6 = 46,656 ways to permute each topic's scores, enumerated
    rows = [[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.7, 0.4, 0.3], [1.0, 0.5, 0.0],
            [0.6, 0.6, 0.1], [0.9, 0.3, 0.2]]
    means = [sum(r[k] for r in rows) / len(rows) for k in range(3)]
    orders = list(itertools.permutations(range(3)))
    exact = null_p(plain_ranges(rows, list(itertools.product(orders, repeat=len(rows)))), means)
    hsd = tukey_hsd(np.array(rows), trials=10000, seed=3)
    p = hsd.p_values()
    for (i, j), expected in exact.items():
        error = math.sqrt(expected * (1 - expected) / 10000)
        assert abs(p[i, j] - expected) <= 4 * error + 1e-9, (i, j, p[i, j], expected)
        assert (p[i, j] < 0.05) == (expected < 0.05)
    assert exact[(0, 2)] < 0.05 <= exact[(1, 2)]  # one pair told apart, one not
    assert np.allclose(hsd.means, means)


def test_a_plain_loop_over_random_permutations_separates_the_same_pairs() -> None:
    rng = random.Random(11)
    effects = [0.0, 0.01, 0.25, 0.26, 0.5, 0.52]
    rows = [[0.3 + e + rng.gauss(0, 0.1) for e in effects] for _ in range(30)]
    means = [sum(r[k] for r in rows) / len(rows) for k in range(len(effects))]
    permutations = []
    for _ in range(10000):
        permutations.append(tuple(rng.sample(range(len(effects)), len(effects))
                                  for _ in rows))
    loop = null_p(plain_ranges(rows, permutations), means)
    hsd = tukey_hsd(np.array(rows), trials=10000, seed=0)
    p = hsd.p_values()
    assert {pair for pair, v in loop.items() if v < 0.05} == \
        {(i, j) for i, j in loop if p[i, j] < 0.05} == \
        {(i, j) for i, j in loop if abs(effects[i] - effects[j]) > 0.1}
    for (i, j), expected in loop.items():
        error = math.sqrt(max(expected, 1e-4) * (1 - expected) / 10000)
        assert abs(p[i, j] - expected) <= 2 * 4 * error, (i, j)  # two draws, each its error
    # the critical difference splits the pairs as the p-values do
    critical = hsd.critical(0.05)
    assert all((abs(means[i] - means[j]) > critical) == (p[i, j] < 0.05) for i, j in loop)
    # seeded: the same draws again
    assert np.array_equal(tukey_hsd(np.array(rows), trials=10000, seed=0).ranges, hsd.ranges)


def test_150_runs_with_known_differences_are_told_apart_with_B_10000() -> None:
    bench = load_module(REPO / "benchmarks" / "bench_groups.py")
    grid, true = bench.known_differences(150, 300)
    hsd = tukey_hsd(grid, trials=10000, seed=0)
    first, second = np.triu_indices(150, k=1)
    separated = hsd.p_values()[first, second] < 0.05
    gap = np.abs(true[first] - true[second])
    assert not separated[gap < bench.STEP / 2].any()  # equal true means: never told apart
    assert separated[gap >= 5 * bench.STEP - 1e-9].all()  # 0.10 apart: always
    assert 5000 < separated.sum() < 11175
    # the pooled draw against every topic shuffled afresh in every trial (written here, 2,000
    # trials): the same null distribution, its 95% quantile within the error of 2,000 trials
    rng = np.random.default_rng(9)
    ranges = []
    for _ in range(20):
        rows = np.tile(grid, (100, 1))
        for row in rows:
            rng.shuffle(row)
        sums = rows.reshape(100, 300, 150).sum(axis=1) / 300
        ranges += list(sums.max(axis=1) - sums.min(axis=1))
    assert abs(np.quantile(ranges, 0.95) - hsd.critical(0.05)) < 0.0015
    assert abs(np.median(ranges) - np.median(hsd.ranges)) < 0.0015


def table_of(grid: np.ndarray) -> ScoreTable:
    """A score table of `grid` (topics x runs), topic ids in reverse order."""
    topics = [f"q{k:03d}" for k in range(grid.shape[0])][::-1]
    runs = [f"r{k:03d}" for k in range(grid.shape[1])]
    per_topic = {r: {q: {"V": float(grid[t, k])} for t, q in enumerate(topics)}
                 for k, r in enumerate(runs)}
    means = {r: {"V": float(grid[:, k].mean())} for k, r in enumerate(runs)}
    return ScoreTable(("V",), "V", topics, per_topic, means)


def test_the_groups_of_many_runs_come_from_tukey_hsd_and_say_how_stable_they_are() -> None:
    bench = load_module(REPO / "benchmarks" / "bench_groups.py")
    grid, _ = bench.known_differences(30, 100, seed=2)
    table = table_of(grid)
    found = groups(table, "V", trials=2000)
    assert found.test == "tukey" and found.pairs == 435
    ranked = found.runs
    index = {r: k for k, r in enumerate(ranked)}
    # the test's matrix: topics by id (q000 first), runs ranked
    hsd = tukey_hsd(grid[::-1][:, [int(r[1:]) for r in ranked]], trials=2000, seed=0)
    p = hsd.p_values()
    for (a, b), value in found.p_adjusted.items():
        assert value == pytest.approx(p[index[a], index[b]])
    assert found.separated == sum(v < 0.05 for v in found.p_adjusted.values()) > 0
    errors = [abs(v - 0.05) < 2 * math.sqrt(v * (1 - v) / 2000)
              for v in found.p_adjusted.values()]
    assert found.unstable == sum(errors)
    sentence = found.sentence()
    assert "randomised Tukey HSD over 100 topics, B = 2,000 permutations" in sentence
    assert f"{found.separated:,} of 435 pairs told apart" in sentence
    assert f"{found.unstable:,} of the 435 decisions lie within" in sentence
    # the letters: runs sharing one are exactly the pairs not told apart ("c-f": c to f)
    names = ["".join(t) for size in (1, 2) for t in
             itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=size)]

    def letter_set(text: str) -> set[str]:
        if "-" in text:
            low, high = text.split("-")
            return set(names[names.index(low):names.index(high) + 1])
        return set(text)

    shown = {run: letter_set(text) for run, text in found.letters().items()}
    assert all(shown.values())
    for (a, b), value in found.p_adjusted.items():
        assert bool(shown[a] & shown[b]) == (value >= 0.05), (a, b)
    # a handful of runs: the paired test with Holm
    few = groups(table_of(grid[:, :5]), "V", trials=2000)
    assert few.test == "holm" and "Holm over 10 pairs" in few.sentence()


def test_significance_offers_tukey_hsd(tmp_path: Path) -> None:
    bench = load_module(REPO / "benchmarks" / "bench_groups.py")
    grid, _ = bench.known_differences(8, 40, seed=5)
    lines = ["run_id\ttopic_id\tmeasure\tvalue"]
    for k in range(8):
        run = f"run|{k}<b>"
        lines += [f"{run}\tq{t}\tV_strict\t{grid[t, k]:.6f}" for t in range(40)]
    per_topic = tmp_path / "pt.tsv"
    per_topic.write_text("\n".join(lines) + "\n")
    out, md = tmp_path / "sig.tsv", tmp_path / "sig.md"
    done = CliRunner().invoke(cli, ["significance", str(per_topic), "--test", "tukey",
                                    "--trials", "3000", "-o", str(out), "--markdown", str(md)])
    assert done.exit_code == 0, done.output
    assert "B = 3,000 permutations" in done.stderr
    rows = [r.split("\t") for r in out.read_text().splitlines()]
    assert rows[0] == ["run_a", "run_b", "mean_a", "mean_b", "diff", "tukey_p", "sig"]
    assert len(rows) == 1 + 28
    values = {f"run|{k}<b>": [float(f"{grid[t, k]:.6f}") for t in range(40)]
              for k in range(8)}
    order = sorted(values, key=lambda r: -sum(values[r]))
    hsd = tukey_hsd(np.array([values[r] for r in order]).T[np.argsort(
        [f"q{t}" for t in range(40)])], trials=3000, seed=0)
    p = hsd.p_values()
    for row in rows[1:]:
        i, j = order.index(row[0]), order.index(row[1])
        assert float(row[5]) == pytest.approx(p[i, j], abs=5e-5)
        assert (row[6] == "*") == (p[i, j] < 0.05)
    text = md.read_text()
    assert "randomised Tukey HSD over 40 topics, B = 3,000" in text
    assert "| run\\|0&lt;b&gt; |" in text  # run ids escaped in every cell
