"""Support (attribution) assessment, TREC RAG 2024/2025: is each answer sentence supported by
the passage it cites? (Thakur et al., SIGIR 2025; ../shared/METHODS.md section 6.)

No answer key: every (sentence, cited passage) pair is judged on its own, pointwise, as
full_support / partial_support / no_support; only the first citation of each sentence, as the
2024 track did, unless `citations = "all"`: every citation of a sentence, the TREC RAG 2026
rule (METHODS.md section 8; a 2026 answer object holds at most 3, each reference once: the
run reader refuses a repeat). A passage an older run's sentence cites twice is judged once.
The default stays "first" (earlier judgments and caches stay valid); 2026 runs are scored
under the 2026 rule with `--set citations=all`. Both variants score with the same measures
(measures/support.py, where the 2026 reading of recall is stated). Pointwise because each pair
has its own passage: one pair per call keeps the prompt short (small context windows, the
embedded model), a failed call leaves one pair unjudged rather than a list, and a pair judged
once is a cache hit in every run that repeats it. The prompt is the paper's (Figure 1); its
three answers, "Full Support", "Partial Support" and "No Support", come as JSON under a schema
(`{"label": ...}`), so a constrained model's output parses, and as the bare words otherwise.
Citations resolve through the run's `references` to passages of `--corpus` (plan/inputs.py
`cite_targets`); one that does not resolve is an error there, or under --allow-missing an
unjudged pair whose `reason` names it.

Judgment record: `{"run_id", "qid", "query", "sentences": [{"text", "citations": [as written],
"pairs": [{"citation", "docid", "passage", "label", "reason"?, "error"?, "raw"?}]}],
"unjudged"}`; label one of the menu or `unjudged` (`reason`: the pair cannot be judged by
anyone; `error` and `raw`: the LLM's output never parsed).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.untrusted import inline
from nuggetizer.errors import InputError
from nuggetizer.formats.ragdoll import (
    citation_labels,
    is_support_assignment,
    support_judgment,
)
from nuggetizer.formats.records import validated
from nuggetizer.interface.base import (
    AnswerKeyMethod,
    Outcome,
    Target,
    citation_problem,
    reasks_setting,
    resolve,
)
from nuggetizer.interface.declare import check_choices, setting
from nuggetizer.interface.judging import Judging
from nuggetizer.interface.registry import register
from nuggetizer.labels import SUPPORT_LABELS, UNJUDGED, support_label
from nuggetizer.measures import support as ms
from nuggetizer.methods.support.records import SupportJudgment
from nuggetizer.methods.support.report import SupportPart
from nuggetizer.methods.support.sheets import read_support_sheets, support_sheets
from nuggetizer.parsing import json_label, label_schema

ANSWERS = ("Full Support", "Partial Support", "No Support")  # the paper's spelling
SCHEMA = label_schema("label", ANSWERS)
_WORD = re.compile(r"\b(full[\s_-]*support|partial[\s_-]*support|no[\s_-]*support|fs|ps|ns)\b",
                   re.I)


@dataclass(frozen=True)
class SupportConfig:
    """`citations`: "first" (each sentence's first citation, as the 2024 track judged) or
    "all" (every citation, TREC RAG 2026)."""

    citations: str = setting("first", "citations judged: each sentence's first (TREC RAG "
                             "2024) or all of them (TREC RAG 2026)", choices=("first", "all"))
    reasks: int = reasks_setting()

    def __post_init__(self) -> None:
        check_choices(self)


def parse_support(text: str) -> str:
    """The label of an answer: `{"label": ...}`, else the first label words ("Full Support",
    full_support, FS...); ParseFailure."""
    return json_label(text, "label", support_label, _WORD,
                      '{"label": "Full Support"}, {"label": "Partial Support"} or '
                      '{"label": "No Support"}')


def passage_text(target: Target, docid: str) -> str:
    """The text a cited passage is judged on: its title (if any), then its body."""
    segment = target.cited[docid]
    return f"{segment.title}. {segment.text}" if segment.title else segment.text


@register
class SupportMethod(AnswerKeyMethod):
    """Support of answer sentences by their cited passages: weighted precision and recall."""

    name = "support"
    prompts = ("support_judge",)
    declared = ms.DECLARED
    primary = "support_recall"
    targets = ("answer",)
    config_type = SupportConfig
    judging = Judging.keyless(judgments_dir="support", citations=True)
    sheet_hint = ("fill label with full_support, partial_support or no_support (FS, PS, NS); "
                  "unjudged where the pair cannot be judged")

    @property
    def first_citation_only(self) -> bool:
        return self.config.citations == "first"

    def report_part(self, runs: Collection[str] | None) -> SupportPart:
        return SupportPart(runs)

    def _pairs(self, target: Target) -> Iterator[tuple[int, dict[str, Any]]]:
        """(sentence index, pair record without its label) of every pair to judge; a passage
        a sentence cites twice is one pair (judged once; a 2026 run may not repeat one)."""
        for k, sentence in enumerate(target.sentences):
            count = len(sentence.citations)
            judged: set[str | None] = set()
            for j in range(min(1, count) if self.first_citation_only else count):
                docid, _ = resolve(target, k, j)
                if docid in judged:
                    continue
                if docid is not None:
                    judged.add(docid)
                why = citation_problem(target, k, j)
                pair: dict[str, Any] = {"citation": sentence.citations[j], "docid": docid,
                                        "passage": passage_text(target, docid)
                                        if why is None and docid is not None else ""}
                if why is not None:
                    pair["reason"] = why
                yield k, pair

    def _record(self, target: Target, pairs: list[tuple[int, dict[str, Any]]]
                ) -> dict[str, Any]:
        sentences: list[dict[str, Any]] = [
            {"text": s.text, "citations": list(s.citations), "pairs": []}
            for s in target.sentences]
        for k, pair in pairs:
            sentences[k]["pairs"].append(pair)
        unjudged = sum(1 for _, p in pairs if p["label"] == UNJUDGED)
        return {"run_id": target.run_id, "qid": target.qid, "query": target.query,
                "sentences": sentences, "unjudged": unjudged}

    async def judge(self, assessor: Assessor, key: Any, target: Target) -> Outcome:
        cfg: SupportConfig = self.config
        prompt = self.prompt("support_judge")
        pairs = list(self._pairs(target))

        async def one(k: int, pair: dict[str, Any]) -> None:
            if "reason" in pair:
                pair["label"] = UNJUDGED
                return
            parsed = await assessor.ask(
                prompt.render(sentence=inline(target.sentences[k].text),
                              passage=inline(pair["passage"])),
                parse_support, schema=SCHEMA, max_tokens=32, reasks=cfg.reasks)
            pair["label"] = parsed.value or UNJUDGED
            if parsed.value is None:
                pair["error"] = parsed.error
                pair.update(parsed.kept())

        await asyncio.gather(*(one(k, pair) for k, pair in pairs))
        record = self._record(target, pairs)
        return Outcome(record, record["unjudged"])

    def blank_judgment(self, key: Any, target: Target) -> dict[str, Any]:
        pairs = list(self._pairs(target))
        for _, pair in pairs:
            pair["label"] = UNJUDGED
        return self._record(target, pairs)

    # --- records at the file edge ----------------------------------------------------------

    def judgment_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                        ) -> dict[str, Any]:
        """A judgment line, checked: its sentences, their pairs and each pair's label (an
        off-menu label is an error, or under `lenient` unjudged with the reason). A line of
        castorini RAGDoll's support assignments (formats/ragdoll.py) reads as one."""
        if is_support_assignment(obj):
            obj = support_judgment(obj, path, line, self.first_citation_only)
        validated(SupportJudgment, obj, path, line)
        where = f"run {obj['run_id']!r} topic {obj['qid']!r}"
        for k, sentence in enumerate(obj["sentences"], 1):
            for j, pair in enumerate(sentence["pairs"]):
                label = pair["label"]
                if label in SUPPORT_LABELS or label == UNJUDGED:
                    continue
                if not lenient:
                    raise InputError(path, line, f"{where}: sentence {k} pairs[{j}] has label "
                                     f"{label!r}, not one of {', '.join(SUPPORT_LABELS)} or "
                                     f"{UNJUDGED} (--lenient records it unjudged)")
                pair["label"], pair["reason"] = UNJUDGED, f"off-menu label {label!r}"
        return obj

    def unjudged(self, judgment: Mapping[str, Any]) -> Counter[str]:
        """Unjudged pairs by kind: `citation` (cannot be judged: `reason`), `label` (else)."""
        counts: Counter[str] = Counter()
        for sentence in judgment["sentences"]:
            for pair in sentence["pairs"]:
                if pair["label"] == UNJUDGED:
                    counts["citation" if "reason" in pair else "label"] += 1
        return counts

    def nothing_judged(self, judgment: Mapping[str, Any]) -> str | None:
        """An answer whose every (sentence, citation) pair stayed unjudged: no score (not the
        0 of an answer without support); under the ragdoll profile it scores 0, as RAGDoll
        scores it."""
        if self.profile.support_object_mean:
            return None
        labels = [p["label"] for s in judgment["sentences"] for p in s["pairs"]]
        return "answer" if labels and all(label == UNJUDGED for label in labels) else None

    def score(self, key: Any, judgment: Mapping[str, Any], pool: Sequence[Any]
              ) -> dict[str, float]:
        if self.profile.support_object_mean:  # RAGDoll's: `citations` picks its metric
            return ms.object_mean_scores([citation_labels(s, self.first_citation_only)
                                          for s in judgment["sentences"]])
        # a RAGDoll file's second judgment of a passage cited twice (`repeat`) is left out:
        # here a passage a sentence cites twice is one pair
        return ms.support_scores([[p["label"] for p in s["pairs"] if not p.get("repeat")]
                                  for s in judgment["sentences"]])

    # --- sheets ------------------------------------------------------------------------------

    def sheets(self, judgments: Sequence[Any], comment: str) -> dict[str, str]:
        return support_sheets(judgments, comment)

    def read_sheets(self, paths: Sequence[Path], keys: Mapping[str, Any] | None,
                    allow_blank: bool) -> dict[str, list[dict[str, Any]]]:
        return read_support_sheets(paths, allow_blank=allow_blank)
