"""Long2RAG key point recall: key points per document, merged, then entailment.

Key record: `{"qid", "query", "key_points": [{"text", "sources": [[doc, point], ...]}],
"extracted": [{"docid", "points": [{"text", "spans": [{"text", "verbatim"}]}]}]}`; `sources`
names the extracted points (1-based per document) each merged point stands for, so every
extracted point appears in exactly one key point. A de-duplication answer that drops, repeats
or invents a point is re-asked; when it never passes the check, the extracted points are kept
unmerged and the failure is recorded under `unparsed` (and counted).
Judgment record: `{"run_id", "qid", "answer_text", "key_points": [{"text", "label"}]}`, label
yes / no / neutral, or unjudged (raw output kept) when the answer never parsed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.untrusted import inline
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Outcome, Target, reasks_setting
from nuggetizer.interface.declare import setting
from nuggetizer.interface.judging import AnswerKey, Judging
from nuggetizer.interface.registry import register
from nuggetizer.measures import kpr as mk
from nuggetizer.methods.records import KprJudgment, KprKey
from nuggetizer.parsing import ParseFailure, parse_list
from nuggetizer.templates import load_prompt

_TAGGED = re.compile(r"<point_start>(.*?)<point_end>((?:\s*<span_start>.*?<span_end>)*)", re.S)
_SPAN = re.compile(r"<span_start>(.*?)<span_end>", re.S)
_LINE = re.compile(r"^\s*Point\s*\[?(\d+)\]?\s*:\s*(.+?)\s*$", re.M)
_SOURCES = re.compile(r"^(.*?)\s*\[([\d,\s]+)\]\s*$", re.S)
_LABEL = re.compile(r"\[(yes|no|neutral)\]", re.I)

EXTRACT_SCHEMA_ITEM = {
    "type": "object",
    "properties": {
        "point": {"type": "string", "minLength": 1, "maxLength": 200},
        "spans": {"type": "array", "items": {"type": "string", "maxLength": 200},
                  "maxItems": 3},
    },
    "required": ["point", "spans"],
    "additionalProperties": False,
}
DEDUP_SCHEMA_ITEM = {
    "type": "object",
    "properties": {
        "point": {"type": "string", "minLength": 1, "maxLength": 200},
        "sources": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
    },
    "required": ["point", "sources"],
    "additionalProperties": False,
}
ENTAIL_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["[yes]", "[no]", "[neutral]"]}},
    "required": ["answer"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class KprConfig:
    """KPR knobs: points kept per document, the one-shot demonstration, re-asks."""

    max_points: int = setting(10, "key points extracted per document at most", minimum=1)
    demonstration: bool = setting(True, "show the extraction prompt its one-shot demonstration")
    reasks: int = reasks_setting()


def _list_or_empty(text: str) -> list:
    """The list in an answer that gives one as JSON or Python; [] when it gives none."""
    try:
        return parse_list(text)
    except ParseFailure:
        return []


def parse_points(text: str, max_points: int) -> list[tuple[str, list[str]]]:
    """(point, spans) pairs from the tagged format, `Point n:` lines or a JSON list."""
    tagged = [(p.strip(), [s.strip() for s in _SPAN.findall(spans)])
              for p, spans in _TAGGED.findall(text or "")]
    points = [(p, s) for p, s in tagged if p]
    if not points:
        for item in _list_or_empty(text):
            if isinstance(item, dict) and isinstance(item.get("point"), str):
                spans = [s for s in item.get("spans") or [] if isinstance(s, str)]
                points.append((item["point"].strip(), spans))
            elif isinstance(item, str):
                points.append((item.strip(), []))
        points = [(p, s) for p, s in points if p]
    if not points:
        points = [(m.group(2), []) for m in _LINE.finditer(text or "")]
    if not points:
        raise ParseFailure("no key point found; write each as Point [number]: <point_start>"
                           "...<point_end><span_start>...<span_end>")
    return points[:max_points]


def parse_dedup(text: str, total: int) -> list[tuple[str, list[int]]]:
    """Merged points with their original numbers; every 1..total exactly once, or ParseFailure."""
    merged: list[tuple[str, list[int]]] = []
    for item in _list_or_empty(text):
        if isinstance(item, dict) and isinstance(item.get("point"), str):
            sources = item.get("sources") or []
            merged.append((item["point"].strip(), [int(s) for s in sources
                                                   if isinstance(s, int)]))
    if not merged:
        for match in _LINE.finditer(text or ""):
            body = _SOURCES.match(match.group(2))
            if body:
                numbers = [int(n) for n in re.findall(r"\d+", body.group(2))]
                merged.append((body.group(1).strip(), numbers))
    if not merged:
        raise ParseFailure("no merged point found; write lines Point [number]: content "
                           "[original numbers]")
    check_dedup([numbers for _, numbers in merged], total)
    return merged


def check_dedup(groups: Sequence[Sequence[int]], total: int) -> None:
    """ParseFailure unless the groups use every original number 1..total exactly once."""
    counts: dict[int, int] = {}
    for group in groups:
        for n in group:
            counts[n] = counts.get(n, 0) + 1
    missing = [n for n in range(1, total + 1) if n not in counts]
    repeated = sorted(n for n, c in counts.items() if c > 1 and 1 <= n <= total)
    invented = sorted(n for n in counts if not 1 <= n <= total)
    problems = []
    if missing:
        problems.append(f"points {missing} are missing")
    if repeated:
        problems.append(f"points {repeated} appear more than once")
    if invented:
        problems.append(f"points {invented} do not exist (there are {total})")
    if problems:
        raise ParseFailure("; ".join(problems) + ": every original point must be in exactly "
                           "one merged point")


def parse_entailment(text: str) -> str:
    """yes / no / neutral from the first [label] (or a bare one-word answer)."""
    match = _LABEL.search(text or "")
    if match:
        return match.group(1).lower()
    bare = (text or "").strip().strip("\"'.[]").lower()
    if bare in mk.LABELS:
        return bare
    raise ParseFailure("no [yes], [no] or [neutral] found")


@register
class KprMethod(AnswerKeyMethod):
    """Long2RAG: key points from retrieved documents; pointwise entailment of each by answers."""

    name = "kpr"
    prompts = ("kpr_extract", "kpr_dedup", "kpr_entail")
    declared = mk.DECLARED
    primary = "KPR"
    targets = ("answer",)
    config_type = KprConfig

    judging = Judging.keyed(AnswerKey(reads={"docs_runs", "qrels", "corpus"},
                                      file="kpr_key.jsonl"))
    key_model = KprKey
    judgment_model = KprJudgment

    async def _extract(self, assessor: Assessor, query: str, docid: str, text: str) -> Any:
        cfg: KprConfig = self.config
        schema = {"type": "array", "items": EXTRACT_SCHEMA_ITEM, "minItems": 1,
                  "maxItems": cfg.max_points}
        return await assessor.ask(
            load_prompt("kpr_extract").render(query=query, text=inline(text),
                                              demonstration=cfg.demonstration),
            lambda raw: parse_points(raw, cfg.max_points),
            schema=schema, max_tokens=120 * cfg.max_points, reasks=cfg.reasks,
        )

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        cfg: KprConfig = self.config
        results = await asyncio.gather(
            *(self._extract(assessor, item.query, d.id, d.text) for d in item.documents)
        )
        extracted, flat, unparsed = [], [], []
        for doc, parsed in zip(item.documents, results, strict=True):
            if parsed.value is None:
                unparsed.append({"step": "extract", "docid": doc.id, **parsed.kept()})
                continue
            points = []
            for number, (point, spans) in enumerate(parsed.value, 1):
                points.append({"text": point, "spans": [
                    {"text": s, "verbatim": bool(s) and inline(s) in inline(doc.text)}
                    for s in spans]})
                flat.append((point, [doc.id, number]))
            extracted.append({"docid": doc.id, "points": points})
        key_points = [{"text": p, "sources": [src]} for p, src in flat]
        if len(flat) > 1:
            schema = {"type": "array", "items": DEDUP_SCHEMA_ITEM, "minItems": 1,
                      "maxItems": len(flat)}
            merged = await assessor.ask(
                load_prompt("kpr_dedup").render(query=item.query, points=[p for p, _ in flat]),
                lambda raw: parse_dedup(raw, len(flat)),
                schema=schema, max_tokens=60 * len(flat) + 32, reasks=cfg.reasks,
            )
            if merged.value is None:
                unparsed.append({"step": "dedup", "error": merged.error, **merged.kept()})
            else:
                key_points = [{"text": text, "sources": [flat[n - 1][1] for n in numbers]}
                              for text, numbers in merged.value]
        record = {"qid": item.qid, "query": item.query, "key_points": key_points,
                  "extracted": extracted}
        if unparsed:
            record["unparsed"] = unparsed
        return Outcome(record, len(unparsed))

    async def judge(self, assessor: Assessor, key: Mapping[str, Any], target: Target) -> Outcome:
        cfg: KprConfig = self.config
        answer = target.answer or ""
        prompt = load_prompt("kpr_entail")
        results = await asyncio.gather(*(
            assessor.ask(prompt.render(answer=inline(answer), key_point=kp["text"]),
                         parse_entailment,
                         schema=ENTAIL_SCHEMA, max_tokens=24, reasks=cfg.reasks)
            for kp in key["key_points"]
        ))
        judged = []
        for kp, parsed in zip(key["key_points"], results, strict=True):
            entry: dict[str, Any] = {"text": kp["text"], "label": parsed.value or "unjudged"}
            if parsed.value is None:
                entry.update(parsed.kept())
            judged.append(entry)
        unjudged = sum(1 for j in judged if j["label"] == "unjudged")
        record = {"run_id": target.run_id, "qid": target.qid, "answer_text": answer,
                  "key_points": judged, "unjudged": unjudged}
        return Outcome(record, unjudged)

    def nothing_judged(self, judgment: Mapping[str, Any]) -> str | None:
        """An answer whose every key point stayed unjudged: no score."""
        labels = [kp["label"] for kp in judgment["key_points"]]
        return "answer" if labels and all(label == "unjudged" for label in labels) else None

    def score(
        self, key: Mapping[str, Any], judgment: Mapping[str, Any],
        pool: Sequence[Mapping[str, Any]],
    ) -> dict[str, float]:
        return {"KPR": mk.kpr(kp["label"] for kp in judgment["key_points"])}


def dumps_points(points: Sequence[tuple[str, list[str]]]) -> str:
    """Points in the published tagged format (for tests and demonstrations)."""
    return "\n".join(
        f" Point {i}: <point_start>{p}<point_end>"
        + "".join(f"<span_start>{s}<span_end>" for s in spans)
        for i, (p, spans) in enumerate(points, 1)
    )
