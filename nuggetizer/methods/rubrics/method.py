"""Rubric scoring, ResearchRubrics (Sharma et al., arXiv 2511.07685; ../shared/METHODS.md
section 8): each topic comes with expert-written criteria, each with a weight (negative weights
mark failure modes) and an axis; an answer is graded on every criterion and scored

    Compliance Score = Σ(weight × score) / Σ(positive weights)

with "Binary grading: Satisfied = 1.0, Not Satisfied = 0.0" and negative-weight criteria
excluded from the denominator (the paper's released evaluation code,
https://github.com/scaleapi/researchrubrics, README "Calculating Compliance Scores" and
src/calculate_metrics/calculate_compliance_score.py; see nuggetizer/measures/rubrics.py).

The key is the rubrics file itself (`research-rubrics-dev-rubrics.jsonl`: `{"qid", "rubrics":
[{"criterion", "weight", "axis"}], ...}`), given as `--key`; there is nothing to build. Grading
is pointwise, one (answer, criterion) per call, as the release grades them; the verdict comes as
JSON under a schema with the closed menu Satisfied / Not Satisfied, so an answer off the menu is
re-asked and then left unjudged (kept raw, counted), never scored.

The key is checked as strictly as a sheet: an empty criterion is an error (file, line, field);
a topic whose rubric lists no criterion is neither graded nor scored (counted, never a 0); each
judgment's provenance records the hash of the criteria it was graded on (`key_sha256`), and
scoring refuses a judgment whose criteria are not the key's, naming the first difference
(`--lenient`: scored as judged, with a note).

Judgment record: `{"run_id", "qid", "answer_text", "criteria": [{"criterion", "weight", "axis",
"label", "error"?, "raw"?}], "unjudged"}`; label satisfied / not_satisfied / unjudged.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.untrusted import inline
from nuggetizer.cache import cache_key
from nuggetizer.errors import ConfigError, InputError
from nuggetizer.formats import ragdoll
from nuggetizer.formats.records import validated
from nuggetizer.interface.base import (
    AnswerKeyMethod,
    Checked,
    Judged,
    KeyInput,
    Outcome,
    Target,
    reasks_setting,
)
from nuggetizer.interface.declare import check_choices, setting
from nuggetizer.interface.judging import AnswerKey, Judging
from nuggetizer.interface.registry import register
from nuggetizer.labels import UNJUDGED
from nuggetizer.measures import rubrics as mr
from nuggetizer.methods.rubrics.records import RubricsJudgment, RubricsKey
from nuggetizer.methods.rubrics.sheets import read_rubric_sheets, rubric_sheets
from nuggetizer.parsing import json_label, label_schema, normalise_label

# the release's verdict spellings, on each scale
VERDICTS = {"binary": ("Satisfied", "Not Satisfied"),
            "ternary": ("Satisfied", "Partially Satisfied", "Not Satisfied")}
SCHEMAS = {grading: label_schema("verdict", menu) for grading, menu in VERDICTS.items()}
SCHEMA = SCHEMAS["binary"]  # the default scale's
_WORD = re.compile(r"\b(not[\s_-]*satisfied|unsatisfied|partially[\s_-]*satisfied|satisfied)\b",
                   re.I)

log = logging.getLogger(__name__)


def grade_label(text: str, grading: str = "binary") -> str | None:
    """`satisfied` / `not_satisfied` (/ `partially_satisfied`, ternary) for a verdict as written
    (any case or separator); None for one off the scale's menu."""
    label = normalise_label(text)
    if label == "unsatisfied":
        return "not_satisfied"
    return label if label in mr.SCALES[grading] else None


def parse_verdict(text: str, grading: str = "binary") -> str:
    """The label of an answer: `{"verdict": ...}`, else the first verdict word; ParseFailure."""
    menu = " or ".join(f'{{"verdict": "{v}"}}' for v in VERDICTS[grading])
    return json_label(text, "verdict", lambda t: grade_label(t, grading), _WORD, menu)


@dataclass(frozen=True)
class RubricsConfig:
    """How criteria are graded: on the release's binary scale or the paper's graders'
    ternary one (measures/rubrics.py), and how often an off-menu verdict is asked again."""

    grading: str = setting("binary", "binary: Satisfied / Not Satisfied (the release's "
                           "compliance score); ternary: Partially Satisfied too, worth half "
                           "(the release's final score)", choices=("binary", "ternary"))
    reasks: int = reasks_setting()

    def __post_init__(self) -> None:
        check_choices(self)


@register
class RubricsMethod(AnswerKeyMethod):
    """ResearchRubrics: weighted criteria graded Satisfied / Not Satisfied; compliance score."""

    name = "rubrics"
    prompts = ("rubrics_grade", "rubrics_author")  # the second: authoring.py's
    declared = mr.DECLARED
    primary = "compliance"
    targets = ("answer",)
    config_type = RubricsConfig
    judging = Judging.keyed(AnswerKey(file="rubrics.jsonl"), judgments_dir="rubrics")
    sheet_hint = ("fill label with satisfied, partially_satisfied (ternary grading) or "
                  "not_satisfied (S, PS, NS); a negative weight marks "
                  "a failure mode, satisfied when the answer shows it; unjudged where it cannot "
                  "be judged")

    def used_prompts(self) -> tuple[str, ...]:
        return ("rubrics_grade",)

    def key_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                   ) -> dict[str, Any]:
        """A rubrics line: `qid` and its criteria (`query`/`prompt` kept when present); an
        empty criterion is an InputError (it cannot be graded). A castorini RAGDoll rubric
        line reads as one (formats/ragdoll.py: its criteria as RAGDoll grades them)."""
        if ragdoll.is_rubric(obj):
            obj = ragdoll.rubric_key(obj, path, line)
        given = obj.get("rubrics")
        for k, item in enumerate(given if isinstance(given, list) else []):
            text = item.get("criterion") if isinstance(item, dict) else None
            if isinstance(text, str) and not text.strip():
                raise InputError(path, line, f"field 'rubrics[{k}].criterion' is empty: write "
                                 "what the answer is graded on, or remove the criterion")
        validated(RubricsKey, obj, path, line)
        obj.setdefault("query", str(obj.get("prompt") or ""))
        if not obj.get("rubrics"):
            log.warning("%s:%d: topic %r has no criteria: it is skipped (neither graded nor "
                        "scored); give it a criterion to grade it", path, line, str(obj["qid"]))
        return obj

    def read_keys(self, path: str | Path, lenient: bool = False) -> dict[str, Any]:
        """The rubrics file; InputError when no topic of it has a criterion to grade."""
        keys = super().read_keys(path, lenient)
        if all(not key["rubrics"] for key in keys.values()):
            raise InputError(path, None, f"none of its {len(keys)} topics has a criterion "
                             "(every 'rubrics' list is empty): nothing to grade")
        return keys

    def nothing_to_judge(self, key: Mapping[str, Any]) -> str | None:
        """A topic whose rubric lists no criterion is neither graded nor scored (a 0 would
        be a score for nothing): counted as one with "no criteria"."""
        return None if key["rubrics"] else "no criteria"

    def key_digest(self, key: Mapping[str, Any]) -> str:
        """The sha256 of the topic's criteria (text, weight, axis), in order."""
        return cache_key({"criteria": _criteria(key["rubrics"])})

    def check(self, key: Mapping[str, Any] | None, judged: Judged, lenient: bool) -> Checked:
        """A judgment against the rubric it is scored with: its criteria must be the key's
        (text, weight, axis, in order), and the key hash its provenance records (if any) the
        key's; InputError naming the first difference, or under `lenient` a note (scored on
        the criteria as judged)."""
        checked = Checked(self.unjudged(judged.record), [], None)
        if key is None:
            return checked
        problem = _key_difference(key, judged.record, self.key_digest(key))
        if problem is None:
            return checked
        if not lenient:
            raise InputError(judged.path, judged.line, f"run {judged.run_id!r} topic "
                             f"{judged.qid!r} was judged against another rubric than the "
                             f"rubrics file's ({problem}): judge it again against this "
                             "rubrics file, or score with the one it was judged with "
                             "(--lenient scores it as judged)")
        checked.notes.append(f"run {judged.run_id} topic {judged.qid}: {problem}, scored as "
                             "judged")
        return checked

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        raise ConfigError("--method rubrics: the rubrics are given, nothing to build; pass the "
                          "rubrics file (e.g. research-rubrics-dev-rubrics.jsonl) to assign and "
                          "score as --key")

    def _record(self, key: Mapping[str, Any], target: Target, labels: Sequence[str]
                ) -> dict[str, Any]:
        criteria = [{"criterion": c["criterion"], "weight": c["weight"],
                     "axis": c.get("axis", ""), "label": label}
                    for c, label in zip(key["rubrics"], labels, strict=True)]
        return {"run_id": target.run_id, "qid": target.qid, "answer_text": target.answer or "",
                "criteria": criteria, "unjudged": labels.count(UNJUDGED)}

    async def judge(self, assessor: Assessor, key: Mapping[str, Any], target: Target
                    ) -> Outcome:
        cfg: RubricsConfig = self.config
        prompt = self.prompt("rubrics_grade")
        document = inline(target.answer or "")
        results = await asyncio.gather(*(
            assessor.ask(prompt.render(document=document, criterion=c["criterion"],
                                       axis=c.get("axis", ""), weight=c["weight"],
                                       ternary=cfg.grading == "ternary"),
                         lambda text: parse_verdict(text, cfg.grading),
                         schema=SCHEMAS[cfg.grading], max_tokens=24, reasks=cfg.reasks)
            for c in key["rubrics"]))
        record = self._record(key, target, [r.value or UNJUDGED for r in results])
        for entry, parsed in zip(record["criteria"], results, strict=True):
            if parsed.value is None:
                entry["error"] = parsed.error
                entry.update(parsed.kept())
        return Outcome(record, record["unjudged"])

    def blank_judgment(self, key: Mapping[str, Any], target: Target) -> dict[str, Any]:
        return self._record(key, target, [UNJUDGED] * len(key["rubrics"]))

    def judgment_record(self, obj: dict[str, Any], path: Path, line: int, lenient: bool
                        ) -> dict[str, Any]:
        """A judgment line, checked: its criteria and each one's label (an off-menu label is an
        error, or under `lenient` unjudged with the reason). A castorini RAGDoll graded
        rubric line reads as one (formats/ragdoll.py)."""
        if ragdoll.is_graded_rubric(obj):
            obj = ragdoll.rubric_judgment(obj, path, line)
        validated(RubricsJudgment, obj, path, line)
        for k, item in enumerate(obj["criteria"]):
            label = item.get("label")
            if label in mr.LABELS or label == UNJUDGED:
                continue
            if not lenient:
                raise InputError(path, line, f"criteria[{k}] has label {label!r}, not one of "
                                 f"{', '.join(mr.LABELS)} or {UNJUDGED} (--lenient records it "
                                 "unjudged)")
            item["label"], item["reason"] = UNJUDGED, f"off-menu label {label!r}"
        return obj

    def unjudged(self, judgment: Mapping[str, Any]) -> Counter[str]:
        return Counter({"criteria": sum(1 for c in judgment["criteria"]
                                        if c["label"] == UNJUDGED)})

    def nothing_judged(self, judgment: Mapping[str, Any]) -> str | None:
        """An answer whose every criterion stayed unjudged: no score (not a 0); under the
        ragdoll profile it scores, every unjudged criterion counting as not satisfied."""
        if self.profile.failures_zero:
            return None
        labels = [c["label"] for c in judgment["criteria"]]
        return "answer" if labels and all(label == UNJUDGED for label in labels) else None

    def score(self, key: Any, judgment: Mapping[str, Any], pool: Sequence[Any]
              ) -> dict[str, float]:
        profile = self.profile
        return {"compliance": mr.compliance(
            ((c["weight"], c["label"]) for c in judgment["criteria"]), self.config.grading,
            failures_zero=profile.failures_zero,
            empty=math.nan if profile.empty_rubric_nan else 0.0)}

    def sheets(self, judgments: Sequence[Any], comment: str) -> dict[str, str]:
        return rubric_sheets(judgments, comment)

    def read_sheets(self, paths: Sequence[Path], keys: Mapping[str, Any] | None,
                    allow_blank: bool) -> dict[str, list[dict[str, Any]]]:
        return read_rubric_sheets(paths, keys, allow_blank=allow_blank)


def _criteria(rubrics: Sequence[Mapping[str, Any]]) -> list[tuple[str, float, str]]:
    """(text, weight, axis) of each criterion, as compared and hashed (weights as floats: 5
    and 5.0 are one weight)."""
    return [(str(c["criterion"]).strip(), float(c["weight"]), str(c.get("axis", "")).strip())
            for c in rubrics]


def _key_difference(key: Mapping[str, Any], judgment: Mapping[str, Any], digest: str
                    ) -> str | None:
    """The first difference between a judgment's criteria and the key's, said in words;
    None when there is none."""
    ours, theirs = _criteria(key["rubrics"]), _criteria(judgment["criteria"])
    if len(ours) != len(theirs):
        return (f"{len(theirs)} criteria judged, {len(ours)} in the rubrics file")
    for n, (now, then) in enumerate(zip(ours, theirs, strict=True), 1):
        for field, k in (("text", 0), ("weight", 1), ("axis", 2)):
            if now[k] != then[k]:
                return (f"criterion {n}: {field} {then[k]!r} when judged, {now[k]!r} in the "
                        "rubrics file")
    stamp = judgment.get("provenance")
    recorded = stamp.get("key_sha256") if isinstance(stamp, Mapping) else None
    if recorded is not None and recorded != digest:
        return f"its provenance records key hash {str(recorded)[:12]}, the rubrics file's is " \
               f"{digest[:12]}"
    return None
