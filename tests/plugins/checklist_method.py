"""A method of our own with everything declared, registered through the public API only
(`import nuggetizer`): its settings, its measures (with descriptions, the rule for a topic a
run did not answer), sheets for manual assessment and a part of the HTML report with a figure.

The key is a checklist of points per topic; an answer is judged point by point (yes or no);
`checked` is the share covered, `passed` whether it reaches `pass_share`, `words` the answer's
length (over the answered topics only). Loaded by `NUGGETIZER_METHODS=checklist_method`.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import StrictStr

import nuggetizer
from nuggetizer.errors import InputError
from nuggetizer.parsing import parse_strings

LABELS = ("yes", "no")
COLUMNS = ("kind", "run_id", "qid", "n", "text", "label")


@dataclass(frozen=True)
class ChecklistConfig:
    """How long a checklist is and what passes."""

    items: int = nuggetizer.setting(2, "points on each topic's checklist")
    pass_share: float = nuggetizer.setting(0.5, "share of the points an answer must cover to "
                                                "pass")


class Uncovered(nuggetizer.ReportPart):
    """The report's part: per topic, the points no answer covered, and a bar chart of how
    many points each topic's answers covered."""

    def __init__(self, runs: Collection[str] | None = None) -> None:
        super().__init__(runs)
        self.points: dict[str, list[str]] = {}
        self.covered: dict[str, set[str]] = {}

    def add(self, record: Any) -> None:
        self.count += 1
        qid = record["qid"]
        self.points.setdefault(qid, list(record["items"]))
        self.covered.setdefault(qid, set()).update(
            item for item, label in zip(record["items"], record["labels"] or ()) if
            label == "yes")

    def sections(self, table: Any, queries: Mapping[str, str], runs_shown: bool
                 ) -> list[nuggetizer.ReportSection]:
        missed = {q: [p for p in points if p not in self.covered[q]]
                  for q, points in self.points.items()}
        body = "".join(f"<h3>{html.escape(q)}</h3><ul>" + "".join(
            f"<li>{html.escape(p)}</li>" for p in points) + "</ul>"
            for q, points in missed.items() if points)
        figure = nuggetizer.ReportFigure("checklist.png", "points covered per topic",
                                         lambda path: self.draw(path))
        return [nuggetizer.ReportSection(
            f"Checklist points no answer covered ({sum(map(len, missed.values()))})", body,
            [figure])]

    def draw(self, path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot

        fig, ax = pyplot.subplots(figsize=(4, 3))
        topics = list(self.points)
        ax.bar(range(len(topics)), [len(self.covered[q]) for q in topics])
        ax.set_xticks(range(len(topics)), topics)
        fig.savefig(path)
        pyplot.close(fig)


class ChecklistKey(nuggetizer.KeyIds):
    """A key line: the topic's checklist points."""

    items: list[StrictStr]


@nuggetizer.register
class ChecklistMethod(nuggetizer.AnswerKeyMethod):
    """A checklist per topic as the key; coverage as the measures."""

    name = "checklist"
    prompts = ("checklist_make", "checklist_judge")
    measures = (
        nuggetizer.Measure("checked", "share of the topic's checklist points the answer "
                                      "covers"),
        nuggetizer.Measure("passed", "1 when the answer covers at least pass_share of the "
                                     "points, else 0"),
        nuggetizer.Measure("words", "words in the answer", missing=None, higher_better=False),
    )
    primary = "checked"
    targets = ("answer",)
    config_type = ChecklistConfig
    key_model = ChecklistKey
    prompt_dir = Path(__file__).resolve().parent
    sheet_hint = "fill label with yes or no"

    async def build_key(self, assessor: Any, item: nuggetizer.KeyInput) -> nuggetizer.Outcome:
        n = self.config.items
        schema = {"type": "array", "items": {"type": "string", "maxLength": 60},
                  "minItems": 1, "maxItems": n}
        parsed = await assessor.ask(
            self.prompt("checklist_make").render(query=item.query, n=n),
            lambda text: parse_strings(text, n, min_items=1), schema=schema, max_tokens=96)
        return nuggetizer.Outcome({"qid": item.qid, "query": item.query,
                                   "items": parsed.value or []}, 0 if parsed.value else 1)

    async def judge(self, assessor: Any, key: dict[str, Any], target: nuggetizer.Target
                    ) -> nuggetizer.Outcome:
        items = key["items"]
        schema = {"type": "array", "items": {"type": "string", "enum": list(LABELS)},
                  "minItems": len(items), "maxItems": len(items)}
        parsed = await assessor.ask(
            self.prompt("checklist_judge").render(answer=target.answer or "", items=items),
            lambda text: parse_strings(text, len(items), min_items=len(items)),
            schema=schema, max_tokens=32)
        labels = parsed.value if parsed.value and len(parsed.value) == len(items) else None
        return nuggetizer.Outcome(self.blank_judgment(key, target) | {
            "labels": labels, "unjudged": 0 if labels else len(items)},
            0 if labels else len(items))

    def score(self, key: Any, judgment: dict[str, Any], pool: Sequence[Any]
              ) -> dict[str, float]:
        labels = [label for label in judgment["labels"] or () if label is not None]
        share = sum(1 for label in labels if label == "yes") / (len(judgment["items"]) or 1)
        return {"checked": share, "passed": float(share >= self.config.pass_share),
                "words": float(judgment["words"])}

    # --- sheets ----------------------------------------------------------------------------

    def blank_judgment(self, key: Any, target: nuggetizer.Target) -> dict[str, Any]:
        answer = target.answer or ""
        return {"run_id": target.run_id, "qid": target.qid, "answer": answer,
                "words": len(answer.split()), "items": list(key["items"]),
                "labels": [None] * len(key["items"]), "unjudged": len(key["items"])}

    def sheets(self, judgments: Sequence[Any], comment: str) -> dict[str, str]:
        by_topic: dict[str, io.StringIO] = {}
        for j in judgments:
            if j["qid"] not in by_topic:
                by_topic[j["qid"]] = io.StringIO()
                by_topic[j["qid"]].write(f"# {comment}\n")
                csv.writer(by_topic[j["qid"]], delimiter="\t").writerow(COLUMNS)
            out = csv.writer(by_topic[j["qid"]], delimiter="\t")
            out.writerow(("answer", j["run_id"], j["qid"], "", j["answer"], ""))
            for n, (item, label) in enumerate(zip(j["items"], j["labels"] or
                                                  [None] * len(j["items"])), 1):
                out.writerow(("point", j["run_id"], j["qid"], n, item, label or ""))
        return {qid: text.getvalue() for qid, text in by_topic.items()}

    def read_sheets(self, paths: Sequence[Path], keys: Mapping[str, Any] | None,
                    allow_blank: bool) -> dict[str, list[dict[str, Any]]]:
        files = [f for p in paths for f in (sorted(p.glob("*.tsv")) if p.is_dir() else [p])]
        by_run: dict[str, list[dict[str, Any]]] = {}
        for path in files:
            lines = [(k, line) for k, line in enumerate(path.read_text().splitlines(), 1)
                     if not line.startswith("#")]
            rows = csv.reader([line for _, line in lines], delimiter="\t")
            current: dict[str, Any] | None = None
            for (number, _), row in zip(lines, rows):
                if row == list(COLUMNS):
                    continue
                if len(row) != len(COLUMNS):
                    raise InputError(path, number, f"{len(row)} columns, expected "
                                     f"{len(COLUMNS)}: {' '.join(COLUMNS)}")
                kind, run_id, qid, _, text, label = row
                if kind == "answer":
                    current = {"run_id": run_id, "qid": qid, "answer": text,
                               "words": len(text.split()), "items": [], "labels": [],
                               "unjudged": 0}
                    by_run.setdefault(run_id, []).append(current)
                    continue
                if current is None or kind != "point":
                    raise InputError(path, number, f"kind {kind!r}: expected an answer row, "
                                     "then its point rows")
                if label not in LABELS and not (allow_blank and label == ""):
                    raise InputError(path, number, f"label {label!r} is not one of "
                                     f"{', '.join(LABELS)} (--allow-blank leaves it unjudged)")
                if keys is not None and text not in keys[qid]["items"]:
                    raise InputError(path, number, f"point {text!r} is not in the key of "
                                     f"topic {qid!r}")
                current["items"].append(text)
                current["labels"].append(label or None)
                current["unjudged"] += 0 if label else 1
        return by_run

    def report_part(self, runs: Collection[str] | None) -> Uncovered:
        return Uncovered(runs)
