"""`agreement` across scales: V_strict (0-1) against bt_score (Elo-like, mean 1000) compares the
rankings (Kendall's tau, tau_AP) and refuses the value comparisons (Pearson's r, Bland-Altman),
saying why; two measures of one scale keep them. The tables as LaTeX (booktabs)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.measures.correlation import kendall_tau

BOARD = {"r1": (0.52, 1071.3, 0.61), "r2": (0.47, 1032.9, 0.40), "r3": (0.41, 1011.0, 0.55),
         "r4": (0.33, 941.7, 0.20), "r5": (0.30, 943.1, 0.35)}


def leaderboard(tmp_path: Path) -> Path:
    path = tmp_path / "leaderboard.tsv"
    path.write_text("run_id\tV_strict\tbt_score\tsupport_recall\n" + "".join(
        f"{run}\t{v}\t{bt}\t{s}\n" for run, (v, bt, s) in BOARD.items()))
    return path


def agreement(*args: str | Path) -> str:
    done = CliRunner().invoke(cli, ["agreement", *map(str, args)])
    assert done.exit_code == 0, done.output
    return done.output


def test_rankings_compare_across_scales_values_do_not(tmp_path: Path) -> None:
    board = leaderboard(tmp_path)
    tex = tmp_path / "agreement.tex"
    said = agreement(board, "--measure-a", "V_strict", "--measure-b", "bt_score",
                     "--latex", tex, "--meta-output", tmp_path / "meta.tsv")
    tau = kendall_tau([v[0] for v in BOARD.values()], [v[1] for v in BOARD.values()])
    assert f"| run | run means | 5 | {tau:.4f} |" in said
    assert "| tau_ap |" in said and "| kendall |" in said
    assert "| pearson |" not in said and "ba_bias" not in said
    assert "Pearson's r and Bland-Altman left out" in said and "Elo-like (mean 1000)" in said
    meta = (tmp_path / "meta.tsv").read_text()
    assert "tau_ap\t" in meta and "pearson" not in meta and "ba_bias" not in meta
    latex = tex.read_text()
    assert latex.count("\\toprule") == 2 and "\\bottomrule" in latex
    assert "tau\\_ap" in latex and "pearson" not in latex


def test_one_scale_keeps_the_value_comparisons(tmp_path: Path) -> None:
    said = agreement(leaderboard(tmp_path), "--measure-a", "V_strict", "--measure-b",
                     "support_recall")
    assert "| pearson |" in said and "| ba_bias |" in said and "left out" not in said
