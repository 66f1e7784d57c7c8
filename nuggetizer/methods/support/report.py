"""The support method's part of `nuggetizer report`: on each run's page, every sentence of its
answer with each citation's support verdict (the passage's id, the label, a reason if any)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from nuggetizer.interface.report_part import ReportPart


class SupportPart(ReportPart):
    """What the page shows of the support judgments: each answer's citations, judged."""

    items = "citation pairs"

    def add(self, record: Mapping[str, Any]) -> None:
        if self.runs is not None and record["run_id"] not in self.runs:
            return
        self.count += 1
        if record.get("query"):
            self.queries.setdefault(str(record["qid"]), str(record["query"]))

    def detail(self, record: Mapping[str, Any]) -> list[tuple[str, str, list[str]]]:
        """Each sentence, then one line per citation: the passage and its verdict."""
        E = html.escape
        pieces = ["<ol>"]
        for sentence in record.get("sentences", ()):
            pairs = "".join(
                f"<li class='{E(str(p.get('label')))}'>[{E(str(p.get('citation')))}] "
                f"{E(str(p.get('docid')))}: {E(str(p.get('label')).replace('_', ' '))}"
                + (f" <small>({E(str(p['reason']))})</small>" if p.get("reason") else "")
                + "</li>" for p in sentence.get("pairs", ()))
            pieces.append(f"<li>{E(str(sentence.get('text', '')))}"
                          + (f"<ul>{pairs}</ul>" if pairs else " <small>(no citation)</small>")
                          + "</li>")
        pieces.append("</ol>")
        return [(str(record["run_id"]), str(record["qid"]), ["".join(pieces)])]
