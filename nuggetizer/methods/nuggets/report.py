"""The nuggets method's part of `nuggetizer report`: the nuggets no run supported, gathered one
assessment at a time (so that none need be kept), with each topic's query text; for the
drill-down pages, each topic's key (importance and sub-narrative of each nugget) and each
answer with one verdict character per nugget of that key."""

from __future__ import annotations

import html
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import compress
from typing import Any

from nuggetizer.formats.label_rows import LabelRow
from nuggetizer.interface.report_part import (
    NOT_JUDGED,
    VERDICT_CODES,
    ReportPart,
    ReportSection,
)
from nuggetizer.labels import SUPPORTED
from nuggetizer.types import Assessment

_SUPPORTED = frozenset(SUPPORTED)
_CODE = {label: code for label, code in VERDICT_CODES.items()}


class Gaps(ReportPart):
    """What the page reads of the nugget assessments: each topic's query text and the nuggets
    no run supported."""

    items = "nuggets"

    def __init__(self, runs: Collection[str] | None = None) -> None:
        super().__init__(runs)
        self.order: dict[str, dict[str, str]] = {}  # topic: nugget text -> importance
        self.supported: dict[str, set[str]] = {}  # topic: texts some run supported
        self.last: dict[str, list[str]] = {}  # topic: the nugget texts last added
        self.places: dict[str, dict[str, int]] = {}  # topic: nugget text -> place in `key`

    def use_keys(self, keys: Mapping[str, Any]) -> None:
        """The key's nuggets, in its order, with their sub-narratives (which the assessment
        lines that `assign` writes do not repeat)."""
        for qid, listed in keys.items():
            for nugget in getattr(listed, "nuggets", ()):
                self._place(str(qid), nugget.text, nugget.importance,
                            nugget.mapped_sub_narrative or "")

    def _place(self, qid: str, text: str, importance: str, sub: str = "") -> int:
        """The place of a nugget in the topic's key, added at its end when new."""
        places = self.places.setdefault(qid, {})
        place = places.get(text)
        if place is None:
            place = places[text] = len(places)
            self.key.setdefault(qid, []).append((text, importance, sub))
        return place

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

    def keep(self, record: Assessment | LabelRow) -> None:
        """The answer and one verdict character per nugget of the topic's key (a nugget new
        to it added). The answers are kept as they are: at track scale (45,000 answers, 72
        MB) compressing each to decompress it at the end cost more time than the memory is
        worth."""
        a = record
        nuggets: Iterable[tuple[str, str, str, str]] = \
            ((t, i, v, "") for t, i, v in zip(a.texts, a.importance, a.assignment)) \
            if isinstance(a, LabelRow) else \
            ((n.text, n.importance, n.assignment, n.mapped_sub_narrative or "")
             for n in a.nuggets)
        places = [(self._place(a.qid, text, imp, sub), _CODE.get(verdict, "u"))
                  for text, imp, verdict, sub in nuggets]
        codes = [NOT_JUDGED] * len(self.places.get(a.qid, ()))
        for place, code in places:
            codes[place] = code
        self.answers.setdefault(a.qid, {})[a.run_id] = (a.answer_text, "".join(codes))

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
