"""The battles report's figures (matplotlib, as report/figures.py draws them): each
run's Bradley-Terry score with its bootstrap interval, and the pairwise win-rate heat map (row
run against column run, from the win/tie/loss matrix of `score --method battles`). Runs are
labelled by their leaderboard rank, as every report figure. The battles method's report
part (methods/battles/report.py) names them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize

from nuggetizer.report.figures import (
    LABEL_PT,
    HeatGeometry,
    _draw_cells,
    figure,
    heatmap_geometry,
    rank_axis,
    ranks_of,
    save,
    thinned_ticks,
)
from nuggetizer.scoring.engine import ScoreTable


def matrix_of(table: ScoreTable) -> dict[tuple[str, str], float]:
    """(run, opponent) -> the run's win rate against it, from the table's matrix TSV."""
    return {pair: rate for pair, (_, rate) in results_of(table).items()}


def results_of(table: ScoreTable) -> dict[tuple[str, str], tuple[str, float]]:
    """(run, opponent) -> ("wins-ties-losses", win rate) of the run against it."""
    rows = [line.split("\t") for line in table.extras.get("matrix", "").splitlines()[1:]]
    return {(r[0], r[1]): (f"{r[2]}-{r[3]}-{r[4]}", float(r[5])) for r in rows if len(r) == 6}


NUMBERED = 25  # up to this many runs, every cell of the win matrix shows its counts
NEVER_MET = "#b0b0b0"  # the colour of a pair that never met


def scores_png(table: ScoreTable, measure: str, path: Path,
               ranks: Mapping[str, int] | None = None) -> None:
    """Each run's Bradley-Terry score (`measure`) with its interval (bt_low, bt_high), ranked."""
    ranked = ranks_of(table, ranks)
    per_run = 0.5 if len(ranked) <= 20 else 0.16
    fig, (ax,) = figure(width=max(6, 1.5 + per_run * len(ranked)))
    means = [table.means[r] for _, r in ranked]
    score = np.array([m[measure] for m in means], dtype=float)
    low = np.array([m.get("bt_low", m[measure]) for m in means], dtype=float)
    high = np.array([m.get("bt_high", m[measure]) for m in means], dtype=float)
    x = np.arange(1, len(ranked) + 1)
    # the interval as the bootstrap gives it, from bt_low to bt_high, whether or not it holds
    # the score: with few topics the score can lie outside it (an error bar around the score
    # cannot show that, matplotlib refuses it)
    bars = ax.vlines(x, low, high, linewidth=1)
    colour = bars.get_color()
    ax.hlines(np.concatenate([low, high]), np.tile(x - 0.12, 2), np.tile(x + 0.12, 2),
              colors=colour, linewidth=1)
    ax.plot(x, score, "o", markersize=4, color=colour)
    ax.axhline(1000, color="grey", linewidth=0.5)
    rank_axis(ax, ranked)
    ax.set_ylabel(f"{measure} (bootstrap interval)")
    save(fig, path)


def wins_png(table: ScoreTable, measure: str, path: Path,
             ranks: Mapping[str, int] | None = None) -> HeatGeometry:
    """Run x run heat map of the row run's win rate against the column run, the wins, ties
    and losses written in each cell up to NUMBERED runs; a pair that never met is grey
    (NEVER_MET), never a colour of the scale; returns the geometry it was drawn at."""
    ranked = ranks_of(table, ranks)
    results = results_of(table)
    numbered = len(ranked) <= NUMBERED
    geometry = heatmap_geometry(len(ranked), len(ranked), 4)
    if numbered:  # cells wide enough for "12-3-4" at 6 pt
        geometry = HeatGeometry(max(6.0, 1.5 + 0.55 * len(ranked)),
                                max(3.0, 1.4 + 0.3 * len(ranked)), 0.55, 0.3, LABEL_PT)
    fig, (ax,) = figure(width=geometry.width_in, height=geometry.height_in)
    grid = [[results[(r, c)][1] if (r, c) in results else math.nan for _, c in ranked]
            for _, r in ranked]
    colours = matplotlib.colormaps["RdBu"].with_extremes(bad=NEVER_MET)
    image: Any = ScalarMappable(Normalize(vmin=0, vmax=1), colours)
    _draw_cells(ax, image, grid)
    labels = [str(rank) for rank, _ in ranked]
    thinned_ticks(ax, "x", labels, geometry.column_step, 9 if numbered else geometry.label_pt,
                  rotation=0 if numbered else 90)
    thinned_ticks(ax, "y", labels, geometry.row_step, 9 if numbered else geometry.label_pt)
    if numbered:
        for i, (_, r) in enumerate(ranked):
            for j, (_, c) in enumerate(ranked):
                text = results[(r, c)][0] if (r, c) in results else "-" if r == c else "never"
                if text:
                    ax.text(j, i, text, ha="center", va="center", fontsize=8,
                            color="black" if 0.25 < grid[i][j] < 0.75 or
                            math.isnan(grid[i][j]) else "white")
    ax.set_xlabel("opponent (leaderboard rank)")
    ax.set_ylabel("run (leaderboard rank)")
    fig.colorbar(image, ax=ax, label="win rate (a tie half)",
                 fraction=min(0.15, 1.0 / geometry.width_in))
    save(fig, path)
    return geometry

