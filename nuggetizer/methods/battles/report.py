"""The battles method's part of `nuggetizer report`: each run's Bradley-Terry score with its
bootstrap interval and the run-against-run win-rate heat map (drawn by
methods/battles/figures.py), the generic figures of the win rate per topic, and a first line
that counts battles rather than unjudged items."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from nuggetizer.interface.report_part import Plot, ReportPart

FIGURES = "nuggetizer.methods.battles.figures"
SCORES_FIGURE = "battle_scores.png"
WINS_FIGURE = "battle_wins.png"


class BattlesPart(ReportPart):
    """The report's battles: their figures and their count."""

    items = "battles"
    drawn = ("win_rate",)  # a topic's Bradley-Terry score is the run's: no per-topic spread
    plots = (
        Plot(SCORES_FIGURE, "bt_score", "Bradley-Terry scores with bootstrap intervals",
             f"{FIGURES}:scores_png"),
        Plot(WINS_FIGURE, "win_rate", "Pairwise win rates: run (row) against opponent "
             "(wins-ties-losses in the cells; grey: never met)",
             f"{FIGURES}:wins_png"),
    )

    def shows(self, run_id: str, record: Mapping[str, Any]) -> bool:
        """A battle is shown when either of its runs is (its id is the pair's)."""
        return self.runs is None or record["run_a"] in self.runs or record["run_b"] in self.runs

    def detail(self, record: Mapping[str, Any]) -> list[tuple[str, str, list[str]]]:
        """A battle, on each of its two runs' pages: the opponent, the result for the run,
        and every order's verdict."""
        E = html.escape
        a, b, result = record["run_a"], record["run_b"], record.get("result")
        orders = "; ".join(f"{E(str(o.get('first')))} shown first: {E(str(o.get('verdict')))}"
                           for o in record.get("orders", ()))
        shown = []
        for run, other, mine in ((a, b, "a"), (b, a, "b")):
            said = ("tie" if result == "tie" else "unjudged" if result not in ("a", "b")
                    else "won" if result == mine else "lost")
            shown.append((run, record["qid"], [f"<p>Battle against {E(other)}: <b>{said}</b>"
                                               f" <small>({orders})</small></p>"]))
        return shown

    def summary(self, table: Any) -> str:
        # each battle counts once for each of its two runs
        played = sum(int(m["battles"]) for m in table.means.values()) // 2
        return (f"{len(table.means)} runs, {len(table.topics)} topics, {played} battles with "
                "a result (blind, pairwise; guide: the TREC RAG 2026 tutorial, Pairwise battles).")
