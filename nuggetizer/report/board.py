"""The report's leaderboard: every measure of every run, a 95% interval beside each measure
drawn (scoring/uncertainty.py: a seeded bootstrap over topics, or the battles' own interval),
the group letters of the runs the paired test cannot tell apart and those groups in words; as
HTML for the page, and as Markdown and LaTeX (booktabs) tables for a paper."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nuggetizer.report.drill import number
from nuggetizer.report.html import Cell, rows_html
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.uncertainty import (
    ALPHA,
    LEVEL,
    OWN_INTERVALS,
    ROUNDS,
    SEED,
    TRIALS,
    Groups,
    bootstrap_intervals,
    groups,
)


@dataclass
class Board:
    """A leaderboard with its intervals and groups, for the runs of `table`."""

    table: ScoreTable
    ranks: Mapping[str, int]  # among all runs (a subset shown keeps them)
    intervals: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    groups: dict[str, Groups] = field(default_factory=dict)
    level: float = LEVEL
    rounds: int = ROUNDS

    @property
    def runs(self) -> list[str]:
        return self.table.ranking()

    @property
    def grouped(self) -> Groups | None:
        """The groups of the ranking measure (None where it has no per-topic values)."""
        return self.groups.get(self.table.primary)

    @property
    def measures(self) -> list[str]:
        """The columns of measures: the table's, less the bounds of an interval shown in a
        column of its own (bt_low, bt_high)."""
        bounds = {b for m, pair in OWN_INTERVALS.items() if m in self.intervals for b in pair}
        return [m for m in self.table.measures if m not in bounds]

    def head(self) -> list[str]:
        cells = ["rank", "run_id"] + (["group"] if self.grouped else [])
        for m in self.measures:
            cells.append(m)
            if m in self.intervals:
                cells.append(f"{m} {round(self.level * 100)}% CI")
        return cells

    def rows(self) -> list[list[tuple[str, float | None]]]:
        """(text, sort value) of each cell, in ranking order."""
        letters = self.grouped.letters() if self.grouped else {}
        rows = []
        for run in self.runs:
            means = self.table.means[run]
            row: list[tuple[str, float | None]] = [(str(self.ranks[run]), None), (run, None)]
            if self.grouped:
                row.append((letters.get(run, "-"), None))
            for m in self.measures:
                row.append((number(m, means.get(m)), means.get(m)))
                if m in self.intervals:
                    low_high = self.intervals[m].get(run)
                    row.append((f"[{number(m, low_high[0])}, {number(m, low_high[1])}]"
                                if low_high else "-", low_high[0] if low_high else None))
            rows.append(row)
        return rows

    def sentences(self) -> list[str]:
        """The groups in words, one per measure grouped."""
        return [g.sentence(self.ranks) for g in self.groups.values()]

    def notes(self) -> list[str]:
        """How the intervals were made, in words."""
        level = f"{round(self.level * 100)}%"
        said = []
        boot = [m for m in self.intervals if m not in OWN_INTERVALS]
        if boot:
            said.append(f"{level} intervals of {', '.join(boot)}: percentile bootstrap over "
                        f"topics ({self.rounds} resamples, seed {SEED}).")
        own = [m for m in self.intervals if m in OWN_INTERVALS]
        if own:
            said.append(f"Intervals of {', '.join(own)}: the battles' own bootstrap "
                        "(topics resampled, the Bradley-Terry model refitted each time); "
                        "runs whose intervals overlap may not differ.")
        return said


def make_board(table: ScoreTable, ranks: Mapping[str, int], measures: Sequence[str], *,
               rounds: int = ROUNDS, trials: int = TRIALS, level: float = LEVEL,
               alpha: float = ALPHA, test: str = "auto") -> Board:
    """The leaderboard of `table` with intervals of each of `measures` (those the table
    holds) and the groups of the ranking measure by `test` (where the runs have per-topic
    values of it: the groups are stretches of the page's ranks)."""
    board = Board(table, ranks, level=level, rounds=rounds)
    for m in dict.fromkeys(measures):
        if m not in table.measures:
            continue
        found = bootstrap_intervals(table, m, rounds=rounds, level=level)
        if found:
            board.intervals[m] = found
    m = table.primary
    if m not in OWN_INTERVALS and any(m in row for rows in table.per_topic.values()
                                      for row in rows.values()):
        board.groups[m] = groups(table, m, trials=trials, alpha=alpha, test=test)
    return board


def board_html(board: Board, links: Mapping[str, str]) -> str:
    """The groups in words and how the intervals were made, then the leaderboard table (run
    names linked to their pages). The ranking measure and its interval come first after the
    rank, then the run's name (wrapped where long), its group letters (the runs each shares
    a letter with in its title) and the other measures: on a phone the scores are in view,
    and only the other measures scroll sideways."""
    head = board.head()
    first = 2 + bool(board.grouped)  # the ranking measure's column, and its interval's
    scores = [first] + ([first + 1] if head[first + 1:first + 2] and head[first + 1]
                        .endswith("CI") else [])
    order = [0, *scores, *[k for k in range(1, len(head)) if k not in scores]]
    together = _together(board)
    rows = []
    for row in board.rows():
        cells = []
        for k, (text, sort) in enumerate(row):
            if k == 1:
                cells.append(Cell(text, links.get(text), None, "name"))
            elif k == 2 and board.grouped:
                cells.append(Cell(text, None, None, "text group",
                                  together.get(row[1][0], "")))
            else:
                cells.append(Cell(text, None, sort, "ci" if text.startswith("[") else ""))
        rows.append([cells[k] for k in order])
    E = html.escape
    words = "".join(f"<li>{E(s)}</li>" for s in board.sentences())
    notes = " ".join(board.notes())
    return ((f"<div class='groups'><b>Which runs can be told apart</b><ul>{words}</ul>"
             "</div>" if words else "")
            + (f"<p><small>{E(notes)}</small></p>" if notes else "")
            + "<div class='wide'>" + rows_html([head[k] for k in order], rows,
                                               ["", "", "", "text"] if len(scores) == 2
                                               else ["", "", "text"])
            + "</div>")


def _together(board: Board) -> dict[str, str]:
    """Each run's group in words, for its cell's title: the ranks of the runs it cannot be
    told apart from."""
    grouped = board.grouped
    if grouped is None:
        return {}
    alike: dict[str, list[int]] = {run: [] for run in grouped.runs}
    for (a, b), p in grouped.p_adjusted.items():
        if p >= grouped.alpha:
            alike[a].append(board.ranks[b])
            alike[b].append(board.ranks[a])
    if not grouped.p_adjusted:  # not tested: every run with every other
        for run in grouped.runs:
            alike[run] = [board.ranks[r] for r in grouped.runs if r != run]
    said = {}
    for run, ranks in alike.items():
        spans: list[list[int]] = []
        for rank in sorted([*ranks, board.ranks[run]]):
            if spans and rank == spans[-1][1] + 1:
                spans[-1][1] = rank
            else:
                spans.append([rank, rank])
        said[run] = ("told apart from every other run" if not ranks else
                     "cannot be told apart from the runs ranked "
                     + ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)
                     + " (itself among them)")
    return said


_MARKDOWN = re.compile(r"[\\`*\[\]~|]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def markdown_cell(text: str) -> str:
    """Text as one Markdown table cell that reads back as itself: `<`, `>` and `&` written
    as entities (a run id or topic holding HTML stays text wherever the table is rendered: a
    Markdown renderer passes raw HTML through), and a backslash before each character that
    would split the cell or start a code span, emphasis, a link or a strike-through (`_` only
    at the edge of a word: inside one it stays as it is)."""
    return _MARKDOWN.sub(lambda m: "\\" + m.group(0), html.escape(text, quote=False))


def board_markdown(board: Board) -> str:
    """The leaderboard as a Markdown table with its caption: the run id (and the group
    letters) left-aligned, the rank and the numbers right-aligned."""
    head = board.head()
    text = 3 if board.grouped else 2  # columns up to the first number: rank, run_id, group
    lines = [markdown_cell(" ".join([*board.notes(), *board.sentences()])), "",
             "| " + " | ".join(markdown_cell(h) for h in head) + " |",
             "|" + "|".join(":---" if 0 < k < text else "---:" for k in range(len(head)))
             + "|"]
    lines += ["| " + " | ".join(markdown_cell(t) for t, _ in row) + " |"
              for row in board.rows()]
    return "\n".join(lines) + "\n"


# every ASCII character that LaTeX reads as a command, or that the OT1 encoding of its default
# fonts prints as another glyph (| < > " as an em dash, inverted marks and a right quote; '
# and ` as curly quotes); a "-" before another, so that "--" is not set as an en dash
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "|": r"\textbar{}", "<": r"\textless{}",
          ">": r"\textgreater{}", '"': r"\textquotedbl{}", "'": r"\textquotesingle{}",
          "`": r"\textasciigrave{}"}


def latex_escape(text: str) -> str:
    """Text as LaTeX sets it, each character as itself: its special characters escaped, the
    ligatures of dashes broken."""
    return "".join(_LATEX.get(c, c) for c in text).replace("--", "-{}-").replace("--", "-{}-")


def latex_table(head: Sequence[str], rows: Sequence[Sequence[str]], caption: str,
                label: str, text_columns: int = 1) -> str:
    """A booktabs table (\\toprule, \\midrule, \\bottomrule): the first `text_columns`
    columns left-aligned, the others right."""
    spec = "l" * text_columns + "r" * (len(head) - text_columns)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             f"\\caption{{{latex_escape(caption)}}}", f"\\label{{{label}}}",
             f"\\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(latex_escape(h) for h in head) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def board_latex(board: Board) -> str:
    """The leaderboard as a LaTeX booktabs table, the groups and intervals in its caption."""
    head = board.head()
    rows = [[t for t, _ in row] for row in board.rows()]
    # rank is a number, but reads best left of the run's name
    return latex_table(head, rows, " ".join([*board.notes(), *board.sentences()]),
                       "tab:leaderboard", text_columns=3 if board.grouped else 2)
