"""The report's figures (matplotlib, Agg backend): per-topic distributions, the run x topic heat
map, score against length. Runs are named by their leaderboard rank and a short label (what
tells their ids apart: `short_labels`); the page's leaderboard, their legend, gives each rank's
full run id.

Sizes follow the counts: at most MAX_WIDTH_IN wide (the page's width at 1280 pixels, where
the page shows them at their own size: never a scroll box), one row per run, every tick label
at least LABEL_PT points at DPI, so labels stay readable at 100% zoom for a track of 150 runs
x 300 topics (the topics' labels thinned to fit).
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.cbook import boxplot_stats  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.collections import LineCollection, PolyCollection  # noqa: E402
from matplotlib.colors import ListedColormap, NoNorm, Normalize, to_rgba_array  # noqa: E402

from nuggetizer.formats.writing import write_bytes_atomic  # noqa: E402
from nuggetizer.report import figure_worker  # noqa: E402
from nuggetizer.scoring.engine import ScoreTable  # noqa: E402

DPI = 100
LABEL_PT = 7.0  # smallest tick label, in points
CELL_IN = 0.13  # inches per heat-map row and column: a 7 pt label with some space
MIN_CELL_IN = 0.02  # the smallest cell (2 pixels)
MAX_WIDTH_IN = 11.8  # the widest figure: 1180 pixels, within the page at 1280
MAP_IN_HIGH = 40.0  # the highest heat map, inches of cells, before rows shrink
STRIP_ROWS = 32  # heat-map rows matplotlib resamples at a time (see _draw_cells)
POINTS_RUNS = 40  # the distributions show each topic's point up to this many runs
LEGEND_RUNS = 12  # the length figure names its runs in a legend up to this many
SHORT = 16  # characters of a run's short label at most
ROW_IN = 0.13  # inches per run in the distributions: a 7 pt label with some space


def figure(rows: int = 1, cols: int = 1, *, width: float = 8, height: float = 4.5) -> Any:
    """A new figure and a flat list of its axes."""
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False)
    return fig, list(axes.flat)


def save(fig: Any, path: Path, places: Callable[[], Any] | None = None) -> Any:
    """Save a figure as PNG atomically (rendered in memory, then written) and close it;
    `places()`, called once the figure is laid out, gives what to return (where its points
    fall, for the page's hover titles)."""
    buffer = io.BytesIO()
    found = None
    with warnings.catch_warnings():  # a library's warnings are not the user's to read
        warnings.simplefilter("ignore")
        fig.tight_layout()
        if places is not None:
            found = places()
        fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    write_bytes_atomic(path, buffer.getvalue(), sync=False)
    return found


@dataclass(frozen=True)
class Spot:
    """A run's point on a figure: its centre in the PNG's pixels (from the top left) and the
    text of its hover title."""

    x: int
    y: int
    title: str


Draw = Callable[[ScoreTable, str, Path, "Mapping[str, int] | None"], object]


def draw_all(jobs: Sequence[tuple[Draw, str, Path]], table: ScoreTable,
             ranks: Mapping[str, int] | None, meanwhile: Callable[[], None] | None = None
             ) -> dict[Path, Any]:
    """Draw each (figure function, measure, path) of `jobs` for `table`: the heat maps, the
    slowest figures, in the figure worker's child process where there is one
    (report/figure_worker.py) while this process does `meanwhile` (once the child is forked:
    it may start threads) and draws the others; else one after the other. The same
    functions either way, so the same bytes. Returns what each figure function returned, by
    path."""
    apart = [job for job in jobs if job[0] is heatmap_png]
    here = [job for job in jobs if job[0] is not heatmap_png]
    pending = []
    if apart and here:
        for draw, measure, path in apart:
            future = figure_worker.submit(quietly, draw, one_measure(table, measure), measure,
                                          path, dict(ranks or {}))
            if future is None:
                break
            pending.append(future)
    if not pending:
        here = list(jobs)
    drawn = {}
    try:
        if meanwhile is not None:
            meanwhile()
        for draw, measure, path in here:
            drawn[path] = quietly(draw, table, measure, path, ranks)
        for (_, _, path), future in zip(apart, pending):
            drawn[path] = future.result()  # a child's error is raised here
    finally:
        figure_worker.stop()
    return drawn


def quietly(draw: Draw, table: ScoreTable, measure: str, path: Path,
            ranks: Mapping[str, int] | None) -> object:
    """`draw(...)` with matplotlib's and numpy's warnings kept off stderr (an empty run's
    box, a constant axis): the figure is drawn as well as it can be, and they are not the
    user's to read."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return draw(table, measure, path, ranks)


def one_measure(table: ScoreTable, measure: str) -> ScoreTable:
    """The table's scores of one measure (its runs' means kept whole: the same ranking), all
    that the child that draws its heat map is sent: a seventh of the rows to copy to it."""
    per_topic = {run: {q: {measure: row[measure]} for q, row in rows.items() if measure in row}
                 for run, rows in table.per_topic.items()}
    return ScoreTable((measure,), table.primary, table.topics, per_topic, table.means)


@dataclass(frozen=True)
class HeatGeometry:
    """The heat map's size: inches of the figure, of a column (run) and a row (topic), the
    label size, and every how many columns and rows a label is written (thinned where the
    cells are narrower than a label)."""

    width_in: float
    height_in: float
    column_in: float
    row_in: float
    label_pt: float
    column_step: int = 1
    row_step: int = 1

    @property
    def cell_in(self) -> float:
        """The narrower side of a cell."""
        return min(self.column_in, self.row_in)

    @property
    def pixels(self) -> tuple[int, int]:
        """(width, height) of the PNG at DPI."""
        return round(self.width_in * DPI), round(self.height_in * DPI)


def short_labels(runs: Sequence[str]) -> dict[str, str]:
    """Each run's short label: its id less the parts (split at - _ . / : and spaces) that
    every id shares at its start and at its end, cut to SHORT characters; a label two runs
    would share gets a number."""
    parts = {run: re.split(r"(?<=[-_./: ])", run) for run in runs}
    head = tail = 0
    if len(runs) > 1:
        lists = list(parts.values())
        shortest = min(len(p) for p in lists)
        while head < shortest - 1 and len({p[head] for p in lists}) == 1:
            head += 1
        while tail < shortest - 1 - head and len({p[-1 - tail] for p in lists}) == 1:
            tail += 1
    labels: dict[str, str] = {}
    seen: dict[str, int] = {}
    for run, split in parts.items():
        text = "".join(split[head:len(split) - tail]).strip("-_./: ") or run
        text = text if len(text) <= SHORT else text[:SHORT - 1] + "\u2026"
        seen[text] = seen.get(text, 0) + 1
        labels[run] = text if seen[text] == 1 else f"{text}#{seen[text]}"
    return labels


def run_labels(ranked: Sequence[tuple[int, str]]) -> list[str]:
    """"rank short-label" of each (rank, run)."""
    short = short_labels([run for _, run in ranked])
    return [f"{rank} {short[run]}" for rank, run in ranked]


def label_step(cell_in: float) -> int:
    """Every how many cells of `cell_in` a LABEL_PT label fits (with a fifth of space)."""
    return max(1, math.ceil(LABEL_PT * 1.2 / 72 / cell_in - 1e-9))


def heatmap_geometry(columns: int, rows: int, label_chars: int = 12) -> HeatGeometry:
    """A cell of CELL_IN per row while the rows fit in MAP_IN_HIGH, smaller beyond (never
    below MIN_CELL_IN); the columns share what MAX_WIDTH_IN leaves beside the row labels
    (`label_chars` long) and the colour bar, up to CELL_IN each; labels thinned to every so
    many cells so that LABEL_PT labels never overlap."""
    left = 0.6 + label_chars * LABEL_PT * 0.6 / 72  # the row labels, about 0.6 em a character
    room = MAX_WIDTH_IN - left - 1.6  # 1.6: the colour bar and its label
    column = max(MIN_CELL_IN, min(CELL_IN, room / max(columns, 1)))
    row = max(MIN_CELL_IN, min(CELL_IN, MAP_IN_HIGH / max(rows, 1)))
    width = max(6.0, left + columns * column + 1.6)
    height = max(3.0, rows * row + 1.4)  # 1.4: the column labels and the axis titles
    return HeatGeometry(width, height, column, row, LABEL_PT, label_step(column),
                        label_step(row))


def ranks_of(table: ScoreTable, ranks: Mapping[str, int] | None) -> list[tuple[int, str]]:
    """(rank, run) of the table's runs in ranked order; `ranks` (from a larger table) wins."""
    runs = table.ranking()
    return [((ranks or {}).get(run, k), run) for k, run in enumerate(runs, 1)]


def rank_axis(ax: Any, ranked: list[tuple[int, str]]) -> None:
    """The x axis of one column per run at 1, 2, ..., labelled by the runs' ranks."""
    ax.set_xticks(range(1, len(ranked) + 1), [str(rank) for rank, _ in ranked],
                  fontsize=9 if len(ranked) <= 20 else LABEL_PT,
                  rotation=90 if len(ranked) > 20 else 0)
    ax.set_xlabel("run (leaderboard rank)")


def distributions_png(table: ScoreTable, measure: str, path: Path,
                      ranks: Mapping[str, int] | None = None) -> None:
    """Per-topic score distribution of each run (box plot, with the points up to POINTS_RUNS
    runs: beyond, tens of thousands of them only hide the boxes), one row per run in ranked
    order, named by rank and short label."""
    ranked = ranks_of(table, ranks)
    labels = run_labels(ranked)
    longest = max((len(label) for label in labels), default=4)
    fig, (ax,) = figure(width=min(MAX_WIDTH_IN, 8 + longest * LABEL_PT * 0.6 / 72),
                        height=max(3.0, 1.2 + ROW_IN * len(ranked)))
    data = [[v for q in table.topics if (v := table.per_topic[r].get(q, {}).get(measure))
             is not None] for _, r in ranked]
    _boxes(ax, data)
    if any(data) and len(ranked) <= POINTS_RUNS:  # in one collection: the same pixels
        ax.scatter(np.concatenate([np.array(v, dtype=float) for v in data]),
                   np.concatenate([np.full(len(v), k) for k, v in enumerate(data, 1)]), s=6,
                   alpha=0.3, color="black")
    ax.set_yticks(range(1, len(ranked) + 1), labels,
                  fontsize=9 if len(ranked) <= 20 else LABEL_PT)
    ax.set_ylim(len(ranked) + 0.5, 0.5)  # the first rank on top
    ax.set_ylabel("run (rank, short name)")
    ax.set_xlabel(f"{measure} per topic")
    if len(ranked) > 40:
        ax.tick_params(axis="x", top=True, labeltop=True)  # the scale above, too
    save(fig, path)


def _boxes(ax: Any, data: Sequence[Sequence[float]]) -> None:
    """Horizontal box plots of `data`, one row each (1, 2, ...), as matplotlib's boxplot
    draws them (quartiles, median, whiskers to the furthest point within 1.5 IQR, the points
    beyond, the mean as a triangle: cbook.boxplot_stats), in a few collections instead of
    eight lines a box (1,200 artists at 150 runs took most of the figure's time)."""
    stats = [(k, s) for k, (s, values) in enumerate(zip(boxplot_stats(
        [v if v else [math.nan] for v in data]), data), 1) if values]
    half, cap = 0.25, 0.125
    boxes = [[(s["q1"], k - half), (s["q3"], k - half), (s["q3"], k + half),
              (s["q1"], k + half)] for k, s in stats]
    ax.add_collection(PolyCollection(boxes, facecolors="none", edgecolors="black",
                                     linewidths=1))
    whiskers = [seg for k, s in stats for seg in (
        [(s["whislo"], k), (s["q1"], k)], [(s["q3"], k), (s["whishi"], k)],
        [(s["whislo"], k - cap), (s["whislo"], k + cap)],
        [(s["whishi"], k - cap), (s["whishi"], k + cap)])]
    ax.add_collection(LineCollection(whiskers, colors="black", linewidths=1))
    ax.add_collection(LineCollection([[(s["med"], k - half), (s["med"], k + half)]
                                      for k, s in stats], colors="tab:orange", linewidths=1))
    fliers = [(x, k) for k, s in stats for x in s["fliers"]]
    if fliers:
        ax.scatter(*zip(*fliers), s=20, facecolors="none", edgecolors="black", linewidths=1)
    if stats:
        ax.scatter([s["mean"] for _, s in stats], [k for k, _ in stats], marker="^", s=30,
                   color="tab:green", zorder=3)
    ax.autoscale_view()


def by_difficulty(table: ScoreTable, measure: str) -> list[str]:
    """The table's topics, easiest first: by the mean of `measure` over the runs that have
    it, descending (topics without any value last), then in the table's order."""
    means = []
    for k, qid in enumerate(table.topics):
        found = [v for rows in table.per_topic.values()
                 if (v := rows.get(qid, {}).get(measure)) is not None and v == v]
        means.append((-(sum(found) / len(found)) if found else math.inf, k, qid))
    return [qid for _, _, qid in sorted(means)]


def thinned_ticks(ax: Any, axis: str, labels: Sequence[str], step: int, size: float,
                  rotation: int = 0) -> None:
    """Ticks on every cell of the axis, a label on every `step`-th (the first included)."""
    positions = list(range(0, len(labels), step))
    shown = [labels[k] for k in positions]
    if axis == "x":
        ax.set_xticks(positions, shown, fontsize=size, rotation=rotation)
    else:
        ax.set_yticks(positions, shown, fontsize=size, rotation=rotation)


def heatmap_png(table: ScoreTable, measure: str, path: Path,
                ranks: Mapping[str, int] | None = None) -> HeatGeometry:
    """Run x topic heat map of `measure`: one row per run in ranked order (named by rank and
    short label), topics easiest first (by_difficulty), the topics' labels thinned where the
    cells are narrow; returns the geometry it was drawn at."""
    ranked = ranks_of(table, ranks)
    labels = run_labels(ranked)
    topics = by_difficulty(table, measure)
    geometry = heatmap_geometry(len(topics), len(ranked),
                                max((len(label) for label in labels), default=4))
    fig, (ax,) = figure(width=geometry.width_in, height=geometry.height_in)
    grid = [[table.per_topic[r].get(q, {}).get(measure, math.nan) for q in topics]
            for _, r in ranked]
    top = max([1.0] + [v for row in grid for v in row if not math.isnan(v)])
    image = ScalarMappable(Normalize(vmin=0, vmax=top), "viridis")
    _draw_cells(ax, image, grid)
    few = len(ranked) <= 20
    thinned_ticks(ax, "y", labels, geometry.row_step, 9 if few else geometry.label_pt)
    thinned_ticks(ax, "x", topics, geometry.column_step, geometry.label_pt,
                  rotation=0 if len(topics) <= 10 and max(map(len, topics), default=0) < 8
                  else 90)
    ax.set_ylabel("run (rank, short name)")
    ax.set_xlabel("topic (easiest first)")
    if len(ranked) > 40:
        ax.tick_params(axis="x", top=True, labeltop=True)  # topics above, too
    fig.colorbar(image, ax=ax, label=measure, fraction=min(0.15, 1.0 / geometry.width_in),
                 shrink=min(1.0, 4.0 / geometry.height_in), anchor=(0.0, 1.0),
                 panchor=(1.0, 1.0))  # at the top of a tall map, in view as the page opens
    save(fig, path)
    return geometry


def _draw_cells(ax: Any, scale: ScalarMappable, grid: list[list[float]]) -> None:
    """`ax.imshow(grid, cmap, norm, interpolation="nearest")` drawn from each cell's colour
    index instead of its value, in bands of STRIP_ROWS rows: the same pixels (nearest only
    copies a cell to its pixels, each index stands for the very bytes the colour map gives
    that cell, and a band's edges fall between rows of pixels as the rows of cells do), while
    matplotlib resamples 2-byte indices instead of 8-byte values, one band at a time, to the
    figure's size (its arrays of the whole map's pixels, 23 bytes each, take 150 MiB for a
    150 x 300 map; a band's, a tenth of that)."""
    cells = scale.to_rgba(np.ma.masked_invalid(np.array(grid, dtype=float)), bytes=True)
    if not cells.size:
        ax.imshow(grid, aspect="auto", cmap=scale.cmap, norm=scale.norm,
                  interpolation="nearest")
        return
    colours, index = np.unique(cells.reshape(-1, 4), axis=0, return_inverse=True)
    # a float that the colour map turns back into the same byte: (x * 255).astype(uint8)
    exact = np.where(colours == 255, 1.0, (colours + 0.5) / 255)
    indices = index.reshape(cells.shape[:2]).astype(np.uint16)
    colour_map = IndexColours(exact)
    rows, columns = len(grid), len(grid[0])
    for top in range(0, rows, STRIP_ROWS):
        bottom = min(rows, top + STRIP_ROWS)
        ax.imshow(indices[top:bottom], aspect="auto", cmap=colour_map, norm=NoNorm(),
                  interpolation="nearest",
                  extent=(-0.5, columns - 0.5, bottom - 0.5, top - 0.5))
    ax.set_xlim(-0.5, columns - 0.5)  # the limits one image of the whole grid sets
    ax.set_ylim(rows - 0.5, -0.5)


class IndexColours(ListedColormap):
    """A ListedColormap that looks unsigned indices up directly: the very bytes Colormap gives
    them (its table of colours as bytes, taken at each index), without the copy of the whole
    image as 8-byte integers that Colormap makes on the way (70 MiB for a 150 x 300 map drawn
    at 2234 x 4040 pixels). Anything else (floats, masked or out-of-range values, an alpha)
    goes to Colormap itself."""

    def __init__(self, colours: Any) -> None:
        super().__init__(colours)
        self.table = (to_rgba_array(colours) * 255).astype(np.uint8)  # as Colormap's bytes

    def __call__(self, X: Any, alpha: Any = None, bytes: bool = False) -> Any:  # noqa: A002
        data = np.ma.getdata(X)
        if bytes and alpha is None and isinstance(data, np.ndarray) and data.ndim \
                and data.dtype.kind == "u" and data.size and not np.ma.is_masked(X) \
                and int(data.max()) < self.N:
            return self.table.take(data, axis=0)
        return super().__call__(X, alpha=alpha, bytes=bytes)


def length_png(table: ScoreTable, measure: str, path: Path,
               ranks: Mapping[str, int] | None = None) -> list[Spot]:
    """Each run's mean `measure` against its mean answer length L: one point per run,
    labelled by its rank and short label up to POINTS_RUNS runs, by its rank beyond (with
    the full run names in a legend up to LEGEND_RUNS runs); returns each point's Spot (its
    rank and full run name), for the page's hover titles."""
    ranked = [(rank, run) for rank, run in ranks_of(table, ranks)
              if "L" in table.means[run] and measure in table.means[run]]
    named = len(ranked) <= LEGEND_RUNS
    longest = max((len(f"{rank}. {run}") for rank, run in ranked), default=0)
    fig, (ax,) = figure(width=min(MAX_WIDTH_IN, 8 + (longest * 8 * 0.6 / 72 + 0.6
                                                     if named else 0)),
                        height=4.5 if len(ranked) <= 40 else 7)
    x = np.array([table.means[run]["L"] for _, run in ranked], dtype=float)
    y = np.array([table.means[run][measure] for _, run in ranked], dtype=float)
    ax.scatter(x, y, s=18, color="tab:blue", alpha=0.8)
    labels = run_labels(ranked) if len(ranked) <= POINTS_RUNS else \
        [str(rank) for rank, _ in ranked]
    for label, xi, yi in zip(labels, x, y):
        ax.annotate(label, (xi, yi), xytext=(3, 2), textcoords="offset points",
                    fontsize=LABEL_PT if len(ranked) > 20 else 9)
    if named:
        for rank, run in ranked:
            ax.plot([], [], " ", label=f"{rank}. {run}")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  handlelength=0, title="rank. run")
    ax.set_xlabel("mean answer length L (words)")
    ax.set_ylabel(f"mean {measure}")

    def spots() -> list[Spot]:
        height = fig.get_figheight() * fig.dpi
        centres = ax.transData.transform(np.column_stack([x, y])) if len(x) else []
        return [Spot(round(px), round(height - py), f"{rank}. {run}")
                for (rank, run), (px, py) in zip(ranked, centres)]

    return list(save(fig, path, spots))
