"""The submission checker's part for TREC RAG 2026 runs: the rules of formats/rag26.py, each
problem naming its rule, checked against the narratives file when one is given, and the safe
fixes (`validate --fix`): the narrative copied from the file, citations by doc id written as
positions, a citation repeated in one answer object dropped (the object cites the same
references). Dropping citations beyond three, or cutting an answer over 1,024 words, is not safe
(it changes what the run says) and is left to the run's authors."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from nuggetizer.formats import rag26
from nuggetizer.measures.nuggets import answer_length

if TYPE_CHECKING:
    from nuggetizer.validate.run_report import RunReport

FIXABLE = (f"{rag26.NAME} narrative-copied", f"{rag26.NAME} citation-repeated")


class Rag26Checks:
    """Mixed into the checker (validate/checker.py), whose `add`, `report`, `lengths` and
    `fixed_records` it uses; `narratives` are the narratives file's texts by id, or None."""

    report: RunReport
    lengths: list[int]
    fixed_records: list[dict[str, Any]]
    narratives: dict[str, str] | None = None
    fixable_errors = 0

    def add(self, line: int | None, fld: str, message: str, severity: str = "error",
            kind: str = "") -> None:
        raise NotImplementedError

    def empty_answer(self, obj: dict[str, Any], n: int) -> None:
        raise NotImplementedError

    def rule_tag(self, rule: str) -> str:
        """" [rag26 RULE]" for a 2026 run's problem, else nothing."""
        return f" [{rag26.NAME} {rule}]" if self.report.shape == rag26.NAME else ""

    def check_rag26(self, obj: dict[str, Any], n: int) -> None:
        """One 2026 line: every rule's finding, then its fixed copy."""
        meta = rag26.metadata(obj)
        self.empty_answer(obj, n)
        findings = rag26.check(obj)
        if self.narratives is not None:
            findings += rag26.check_narrative(meta, self.narratives)
        for found in findings:
            self.add(n, found.field, found.message, found.severity, f"[{found.rule}]")
            if found.rule in FIXABLE and found.severity == "error":
                self.fixable_errors += 1
        items = rag26.listed(obj, "answer")
        texts = [i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)]
        self.lengths.append(answer_length(texts, rag26.WORD_LIMIT))  # L as `score` cuts it
        self.report.word_limit = rag26.WORD_LIMIT
        if rag26.words(obj) > rag26.WORD_LIMIT:
            self.report.over_length += 1
        self.report.citations += sum(len(i["citations"]) for i in items if isinstance(i, dict)
                                     and isinstance(i.get("citations"), list))
        self.fixed_records.append(self.fixed(obj, meta))

    def fixed(self, obj: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        """A copy of the line with the safe fixes made (counted in the report's `fixes`)."""
        out = copy.deepcopy(obj)
        nid = meta.get("narrative_id")
        if self.narratives is not None and isinstance(nid, str) and nid in self.narratives \
                and meta.get("narrative") != self.narratives[nid]:
            out["metadata"]["narrative"] = self.narratives[nid]
            self.report.fixes += 1
        refs = rag26.listed(obj, "references")
        for item in rag26.listed(out, "answer"):
            cites = item.get("citations") if isinstance(item, dict) else None
            if isinstance(cites, list):
                fixed = positions_once(cites, refs)
                if fixed != cites:
                    item["citations"] = fixed
                    self.report.fixes += 1
        return out


def positions_once(cites: list[Any], refs: list[Any]) -> list[Any]:
    """An object's citations with each doc id written as its position and each reference
    kept once (its first citation); one that names no reference is kept as written."""
    out: list[Any] = []
    seen: set[int] = set()
    for cite in cites:
        at = rag26.position(cite, refs)
        if at is None:
            out.append(cite)
        elif at not in seen:
            seen.add(at)
            out.append(at)
    return out
