"""What a method adds to `nuggetizer report` (its `report_part` hook): parts of the page of
its own, gathered from its judgments one at a time as the score engine reads them.

The report itself is generic (report/page.py): leaderboard, the glossary of the
measures as the method declares them, topics, per-topic distributions and heat maps of the
measures asked. A method adds what only it knows: the nuggets method the nuggets no run
supported; the battles method its Bradley-Terry scores and win matrix, the measures its
generic figures show and the page's first line. A section's figures are drawn by the method
itself (a callable given the PNG's path) into the report's folder; its `plots`, figures of
the score table, by the report's figure worker from a function the method names.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LONG = 400  # characters from which a piece of a judgment's HTML is kept compressed
# a nugget's verdict on an answer, as the drill-down pages' data writes it (report/drill.py):
# one character per nugget of the topic's key, "-" for a nugget the answer was not judged on
VERDICT_CODES = {"support": "s", "partial_support": "p", "not_support": "n", "unjudged": "u"}
NOT_JUDGED = "-"


def kept(text: str) -> str | bytes:
    """A text as the part keeps it until the pages are written: a long one compressed."""
    return zlib.compress(text.encode("utf-8"), 1) if len(text) > LONG else text


def unkept(text: str | bytes) -> str:
    """A text `kept` gave, as it was."""
    return text if isinstance(text, str) else zlib.decompress(text).decode("utf-8")


@dataclass
class ReportFigure:
    """A PNG a method draws into the report's folder: its file name (no folder), its caption
    and `draw(path)`, called once with the path to write."""

    name: str
    caption: str
    draw: Callable[[Path], None]


@dataclass(frozen=True)
class Plot:
    """A figure of the score table, drawn by the report beside its generic ones (in its figure
    worker, with the runs' leaderboard ranks): its file name, the measure drawn, its caption
    and `draw`, the "package.module:function" of a `draw(table, measure, path, ranks)`,
    imported only when the report is drawn (a method need not import a plotting library)."""

    name: str
    measure: str
    caption: str
    draw: str


@dataclass
class ReportSection:
    """One part of the page: a heading, an HTML body (escaped by the method: the report
    inserts it as given) and figures shown below it."""

    title: str
    html: str = ""
    figures: Sequence[ReportFigure] = field(default_factory=tuple)


class ReportPart:
    """A method's part of the report. `add` sees each judgment record (as `read_scored`, or a
    method scored per run's table, gives it) of the runs shown, once, while the scores are
    computed, so that none need be kept; `queries` collects the topics' query texts the records
    carry; `sections` gives the page's parts once the score table (of the runs shown) is known;
    `items` names what the method's judgments leave unjudged, in the page's summary; `drawn`,
    `plots` and `summary` as below. By default: nothing."""

    items = "items"
    drawn: tuple[str, ...] = ()  # the measures drawn when none is asked (else the primary)
    plots: tuple[Plot, ...] = ()  # the method's figures of the score table

    def __init__(self, runs: Collection[str] | None = None) -> None:
        self.runs = runs  # only these runs' judgments count (None: all)
        self.queries: dict[str, str] = {}  # qid -> query text, the first seen
        self.count = 0  # judgments added
        # run: topic: what its judgments show on the run's page: HTML pieces, the long ones
        # zlib-compressed (a track's answers), the short ones kept as given
        self.details: dict[str, dict[str, list[str | bytes]]] = {}
        # topic: run: (its answer; the verdict of each nugget of the topic's `key`, in
        # VERDICT_CODES), for a method that judges answers against a key of nuggets
        self.answers: dict[str, dict[str, tuple[str, str]]] = {}
        # topic: the key, (text, importance, sub-narrative or "") of each nugget, in order
        self.key: dict[str, list[tuple[str, str, str]]] = {}

    def shows(self, run_id: str, record: Any) -> bool:
        """Whether a judgment (of `run_id`, as read) belongs to the runs shown (all of them
        when `runs` is None); the report adds only those."""
        return self.runs is None or run_id in self.runs

    def add(self, record: Any) -> None:
        """One judgment record (the report filters by run, `shows`, before it calls this)."""
        self.count += 1

    def detail(self, record: Any) -> Sequence[tuple[str, str, Sequence[str]]]:
        """What one judgment shows on the drill-down pages: (run, topic, pieces of HTML
        escaped by the method, shown one after the other) for each run it judges (none by
        default)."""
        return ()

    def keep(self, record: Any) -> None:
        """Keep what `detail` gives of one judgment (its long pieces compressed)."""
        for run, qid, pieces in self.detail(record):
            self.details.setdefault(run, {}).setdefault(qid, []).extend(map(kept, pieces))

    def use_keys(self, keys: Mapping[str, Any]) -> None:
        """The answer key the judgments were scored against, when the report reads one
        (before any judgment is added); by default unused."""

    def summary(self, table: Any) -> str | None:
        """The page's first line, for a method whose judgments are not counted by topic
        (None: the generic count of runs, topics, unjudged items and unanswered topics)."""
        return None

    def sections(self, table: Any, queries: Mapping[str, str], runs_shown: bool
                 ) -> list[ReportSection]:
        """The parts of the page, after the generic ones: `table` is the score table of the
        runs shown, `queries` every query text known, `runs_shown` whether only some runs
        are shown (their ranks stay those among all)."""
        return []
