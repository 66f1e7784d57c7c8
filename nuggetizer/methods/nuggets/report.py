"""The nuggets method's part of `nuggetizer report`: the nuggets no run supported, gathered one
assessment at a time (so that none need be kept), with each topic's query text."""

from __future__ import annotations

import html
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import cache
from itertools import compress
from typing import Any

from nuggetizer.formats.label_rows import LabelRow
from nuggetizer.interface.report_part import ReportPart, ReportSection
from nuggetizer.labels import SUPPORTED
from nuggetizer.types import Assessment

_SUPPORTED = frozenset(SUPPORTED)


@cache
def _line(text: str, importance: str, verdict: str) -> str:
    """A nugget with its verdict, as the drill-down pages list it."""
    E = html.escape
    return (f"<li class='{E(verdict)}'>{E(verdict.replace('_', ' '))}: {E(text)} "
            f"<small>({E(importance)})</small></li>")


class Gaps(ReportPart):
    """What the page reads of the nugget assessments: each topic's query text and the nuggets
    no run supported."""

    items = "nuggets"

    def __init__(self, runs: Collection[str] | None = None) -> None:
        super().__init__(runs)
        self.order: dict[str, dict[str, str]] = {}  # topic: nugget text -> importance
        self.supported: dict[str, set[str]] = {}  # topic: texts some run supported
        self.last: dict[str, list[str]] = {}  # topic: the nugget texts last added

    def add(self, record: Assessment | LabelRow) -> None:
        """One assessment (skipped when its run is not among `runs`)."""
        a = record
        if self.runs is not None and a.run_id not in self.runs:
            return
        self.count += 1
        if a.query:
            self.queries.setdefault(a.qid, a.query)
        if isinstance(a, LabelRow):
            texts, importance, assignment = a.texts, a.importance, a.assignment
        else:
            texts = [n.text for n in a.nuggets]
            importance = [n.importance for n in a.nuggets]
            assignment = [n.assignment for n in a.nuggets]
        seen = self.order.setdefault(a.qid, {})
        if self.last.get(a.qid) != texts:  # the same nuggets as the topic's last: all seen
            self.last[a.qid] = texts
            for text, label in zip(texts, importance):
                seen.setdefault(text, label)
        self.supported.setdefault(a.qid, set()).update(
            compress(texts, map(_SUPPORTED.__contains__, assignment)))

    def detail(self, record: Assessment | LabelRow) -> list[tuple[str, str, list[str]]]:
        """The answer and each nugget with its importance and verdict (one line each, the
        same string wherever it recurs)."""
        a = record
        nuggets: Iterable[tuple[str, str, str]] = \
            zip(a.texts, a.importance, a.assignment) if isinstance(a, LabelRow) else \
            ((n.text, n.importance, n.assignment) for n in a.nuggets)
        return [(a.run_id, a.qid, [f"<div class='answer'>{html.escape(a.answer_text)}</div>"
                                   "<ul>", *(_line(*n) for n in nuggets), "</ul>"])]

    def unsupported(self) -> dict[str, list[tuple[str, str]]]:
        """Per topic, the (importance, text) of nuggets that no run supported."""
        supported = self.supported
        return {q: [(imp, text) for text, imp in texts.items() if text not in supported[q]]
                for q, texts in self.order.items()
                if any(text not in supported[q] for text in texts)}

    def sections(self, table: Any, queries: Mapping[str, str], runs_shown: bool
                 ) -> list[ReportSection]:
        """The nuggets no run (of those shown) supported, per topic with its query text."""
        if not self.count:
            return []
        E = html.escape
        unsupported = self.unsupported()
        count = sum(len(v) for v in unsupported.values())
        whose = "none of the runs shown" if runs_shown else "no run"
        body = []
        for qid, items in unsupported.items():
            entries = "".join(f"<li class='{E(imp)}'>{E(text)} <small>({E(imp)})</small></li>"
                              for imp, text in items)
            query = queries.get(qid)
            body.append(f"<h3>{E(qid)}" + (f": {E(query)}" if query else "") +
                        f"</h3><ul>{entries}</ul>")
        return [ReportSection(f"Nuggets {whose} supported ({count} in {len(unsupported)} "
                              "topics)", "\n".join(body))]


def unsupported_nuggets(assessments: Sequence[Assessment]) -> dict[str, list[tuple[str, str]]]:
    """Per topic, the (importance, text) of nuggets that no run supported, even partially."""
    gaps = Gaps()
    for a in assessments:
        gaps.add(a)
    return gaps.unsupported()
