"""Rubric authoring from nuggets, as RAGDoll authors them (castorini/RAGDoll, `rubric author`,
src/ragdoll/rubric/prompts.py): the model turns a topic's nuggets, each tagged `nK` and vital or
okay, into typed criteria (explicit, implicit, synthesis, references, communication,
instruction) naming the nugget each derives from; then RAGDoll's mapping sets the weights: a
criterion from a vital nugget is mandatory with weight 5, any other optional with weight 2, and
every vital nugget no criterion derives from gets one of its own ("The answer conveys: ...",
explicit, mandatory, 5).

The rubric is written in the ResearchRubrics shape the rubrics method grades (`{"qid", "query",
"rubrics": [{"criterion", "weight", "axis"}]}`, the axis being the ResearchRubrics axis of the
criterion's type), each criterion keeping RAGDoll's `tier`, `type` and `source_nugget` besides.
A nugget whose importance is unjudged is not vital (its criterion optional), and counted. An
answer that never parses leaves the topic with no criteria (the rubrics method then neither
grades nor scores it), its raw answer and reason kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.interface.base import KeyInput, Outcome
from nuggetizer.labels import UNJUDGED
from nuggetizer.methods.rubrics.method import RubricsMethod
from nuggetizer.parsing import ParseFailure, parse_list
from nuggetizer.types import NuggetList

PROMPT = "rubrics_author"
MANDATORY_WEIGHT = 5
OPTIONAL_WEIGHT = 2
# RAGDoll's criterion types and the ResearchRubrics axes they are
AXES = {"explicit": "Explicit Criteria", "implicit": "Implicit Criteria",
        "synthesis": "Synthesis of Information",
        "references": "References & Citation Quality",
        "communication": "Communication Quality", "instruction": "Instruction Following"}
TYPES = tuple(AXES)
SCHEMA: dict[str, Any] = {"type": "array", "minItems": 1, "items": {
    "type": "object", "additionalProperties": False,
    "required": ["text", "type", "source_nugget"],
    "properties": {"text": {"type": "string", "minLength": 1},
                   "type": {"type": "string", "enum": list(TYPES)},
                   "source_nugget": {"type": ["string", "null"]}}}}


def parse_rubric(text: str) -> list[dict[str, Any]]:
    """The authored criteria `{text, type, source_nugget}` of an answer (a JSON array; a type
    off the list read as explicit, as RAGDoll reads it); ParseFailure when there is none."""
    criteria = []
    for item in parse_list(text):
        if not isinstance(item, dict) or not str(item.get("text") or "").strip():
            continue
        kind = str(item.get("type") or "explicit").strip().lower()
        source = item.get("source_nugget")
        criteria.append({"text": str(item["text"]).strip(),
                         "type": kind if kind in AXES else "explicit",
                         "source_nugget": str(source) if source not in (None, "") else None})
    if not criteria:
        raise ParseFailure("no criterion: expected a JSON array of objects with text, type "
                           "and source_nugget")
    return criteria


def criterion(text: str, kind: str, vital: bool, source: str | None) -> dict[str, Any]:
    """One criterion in the ResearchRubrics shape with RAGDoll's fields."""
    return {"criterion": text, "weight": MANDATORY_WEIGHT if vital else OPTIONAL_WEIGHT,
            "axis": AXES[kind], "tier": "mandatory" if vital else "optional", "type": kind,
            "source_nugget": source}


def finalize(authored: Sequence[Mapping[str, Any]], nuggets: NuggetList) -> list[dict[str, Any]]:
    """RAGDoll's mapping (see the module's doc): weights from the source nuggets' importance,
    and a criterion for each vital nugget none derives from."""
    vital = {f"n{k}" for k, n in enumerate(nuggets.nuggets) if n.importance == "vital"}
    final = [criterion(c["text"], c["type"], c["source_nugget"] in vital, c["source_nugget"])
             for c in authored]
    covered = {c["source_nugget"] for c in final if c["tier"] == "mandatory"}
    for k, nugget in enumerate(nuggets.nuggets):
        if f"n{k}" in vital and f"n{k}" not in covered:
            final.append(criterion(f"The answer conveys: {nugget.text}", "explicit", True,
                                   f"n{k}"))
    return final


async def author_rubric(assessor: Assessor, nuggets: NuggetList, query: str, reasks: int
                        ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(criteria, None), or ([], what went wrong) when no answer parsed."""
    messages = RubricsMethod().prompt(PROMPT).render(
        query=query, nuggets=[{"text": n.text, "importance": n.importance}
                              for n in nuggets.nuggets])
    parsed = await assessor.ask(messages, parse_rubric, schema=SCHEMA,
                                max_tokens=80 * len(nuggets.nuggets) + 400, reasks=reasks)
    if parsed.value is None:
        return [], {"step": "author", "error": parsed.error or "", "raw": parsed.raw}
    return finalize(parsed.value, nuggets), None


class RubricAuthoring(RubricsMethod):
    """The rubrics method whose keys are authored from nuggets (`author-rubrics`)."""

    def __init__(self, nuggets: Mapping[str, NuggetList], source: str,
                 config: Any = None) -> None:
        super().__init__(config)
        self.nuggets = nuggets
        self.source = source

    def used_prompts(self) -> tuple[str, ...]:
        return (PROMPT,)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "authored_from": self.source,
                "weights": {"mandatory": MANDATORY_WEIGHT, "optional": OPTIONAL_WEIGHT}}

    def unrendered_key_calls(self, inputs: Sequence[KeyInput]) -> int:
        return 0

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        nuggets = self.nuggets[item.qid]
        criteria, problem = await author_rubric(assessor, nuggets, item.query,
                                                self.config.reasks)
        record: dict[str, Any] = {"qid": item.qid, "query": item.query, "rubrics": criteria}
        unjudged = sum(1 for n in nuggets.nuggets if n.importance == UNJUDGED)
        if unjudged:
            record["unjudged_importance"] = unjudged
        if problem is not None:
            record["unparsed"] = [problem]
        return Outcome(record, int(problem is not None) + unjudged)
