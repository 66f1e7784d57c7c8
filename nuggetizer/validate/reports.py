"""The submission checker's part for report-shape runs (NeuCLIR / RAGTIME / DRAGUN /
AutoJudge): the shape's own checks, then the track's rules (formats/track_rules.py), chosen
with `validate --track-rules` or detected from the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nuggetizer.formats.track_rules import (
    TRACKS,
    Limit,
    TrackRules,
    check_report,
    detect,
    limit_for,
)
from nuggetizer.measures.nuggets import answer_length

if TYPE_CHECKING:
    from nuggetizer.validate.run_report import RunReport


class ReportChecks:
    """Mixed into the checker (validate/checker.py), whose `add`, `report`, `lengths`,
    `fixed_records` and `ref_limit` it uses; `track` is "auto", "none" or a track name."""

    report: RunReport
    ref_limit: int | None
    lengths: list[int]
    fixed_records: list[dict[str, Any]]
    track: str = "auto"
    limits: dict[str, Limit]
    length_limit: int | None = None
    rules: TrackRules | None = None
    rules_chosen = False

    def add(self, line: int | None, fld: str, message: str, severity: str = "error",
            kind: str = "") -> None:
        raise NotImplementedError

    def track_of(self, obj: dict[str, Any]) -> TrackRules | None:
        """The rules of this file: the one chosen, else the first report line's track."""
        if not self.rules_chosen:
            name = detect(obj) if self.track == "auto" else self.track
            self.rules = TRACKS.get(name or "")
            self.rules_chosen = True
            self.report.track = self.rules.name if self.rules else None
        return self.rules

    def check_report(self, obj: dict[str, Any], n: int, topic: str | None, refs: list[str],
                     items: list[tuple[int, dict[str, Any]]]) -> None:
        """A report, from the parts whose types are right (validate/checker.py
        `check_line`): doc ids of any collection, citations a list of ids or an {id:
        confidence} map, each in references (or references empty: the cited ids); then the
        track's rules."""
        rules = self.track_of(obj)
        limit = self.ref_limit
        if limit is not None and len(refs) > limit:
            self.add(n, "references", f"{len(refs)} references, over the limit of {limit}")
        for k, ref in enumerate(refs):
            if not ref.strip():
                self.add(n, f"references[{k}]", f"{ref!r} is not a doc id (a non-empty string)")
            elif ref in refs[:k]:
                self.add(n, f"references[{k}]", f"{ref} is listed twice", "warning")
        texts = self.check_responses(items, refs, n, rules)
        if rules is not None:
            for found in check_report(rules, obj, limit_for(rules, topic, self.limits,
                                                             self.length_limit)):
                self.add(n, found.field, found.message, found.severity, f"[{found.rule}]")
        self.lengths.append(answer_length(texts))
        self.fixed_records.append(obj)

    def check_responses(self, items: list[tuple[int, dict[str, Any]]], refs: list[str], n: int,
                        rules: TrackRules | None) -> list[str]:
        """Each response's citations: doc ids (with a numeric confidence, in a map) that are
        in the references; the texts."""
        unlisted = 0
        for k, item in items:
            where = f"responses[{k}]"
            cites = item.get("citations") or []
            if isinstance(cites, dict):
                for docid, confidence in cites.items():
                    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
                        self.add(n, f"{where}.citations[{docid!r}]", "must be a number (the "
                                 f"citation's confidence), got {confidence!r}"[:120])
            for j, cite in enumerate(cites):
                self.report.citations += 1
                if not isinstance(cite, str) or not cite.strip():
                    self.add(n, f"{where}.citations[{j}]", f"must be a doc id, got {cite!r}")
                elif not refs:
                    unlisted += 1
                elif cite not in refs:
                    self.add(n, f"{where}.citations[{j}]",
                             f"cites {cite!r}, which is not in references")
        if unlisted and (rules is None or rules.references != "absent"):
            self.add(n, "references", f"empty, but the responses cite {unlisted} doc ids: "
                     "they are taken as the references", "warning")
        return [item["text"] for _, item in items]
