"""A method of our own, outside the package: the proof that a method is one module plus its
templates. Its key is up to three key terms per topic; an answer is judged on which terms it
covers; TermRecall is the share covered. Loaded by `NUGGETIZER_METHODS=keyterms_method`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import StrictStr

from nuggetizer.assessors import Assessor
from nuggetizer.formats import KeyIds
from nuggetizer.interface import AnswerKeyMethod, KeyInput, Outcome, Target, register, setting
from nuggetizer.measures import Measure
from nuggetizer.parsing import parse_strings


@dataclass(frozen=True)
class KeytermsConfig:
    """How many terms a key holds."""

    terms: int = setting(2, "key terms a topic's key holds at most")


class KeytermsKey(KeyIds):
    """A key line: the topic's key terms."""

    terms: list[StrictStr]


@register
class KeytermsMethod(AnswerKeyMethod):
    """Key terms as the answer key; term recall as the measure."""

    name = "keyterms"
    prompts = ("keyterms_extract", "keyterms_judge")
    declared = (Measure("TermRecall", "share of the topic's key terms the answer covers"),)
    primary = "TermRecall"
    targets = ("answer",)
    config_type = KeytermsConfig
    key_model = KeytermsKey
    prompt_dir = Path(__file__).resolve().parent

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        n = self.config.terms
        schema = {"type": "array", "items": {"type": "string", "maxLength": 40},
                  "minItems": 1, "maxItems": n}
        parsed = await assessor.ask(
            self.prompt("keyterms_extract").render(query=item.query, n=n),
            lambda text: parse_strings(text, n, min_items=1), schema=schema, max_tokens=64)
        return Outcome({"qid": item.qid, "query": item.query, "terms": parsed.value or []},
                       0 if parsed.value else 1)

    async def judge(self, assessor: Assessor, key: dict[str, Any], target: Target) -> Outcome:
        terms = key["terms"]
        schema = {"type": "array", "items": {"type": "string", "enum": ["yes", "no"]},
                  "minItems": len(terms), "maxItems": len(terms)}
        parsed = await assessor.ask(
            self.prompt("keyterms_judge").render(answer=target.answer or "", terms=terms),
            lambda text: parse_strings(text, len(terms), min_items=len(terms)),
            schema=schema, max_tokens=32)
        labels = parsed.value if parsed.value and len(parsed.value) == len(terms) else None
        return Outcome({"run_id": target.run_id, "qid": target.qid, "labels": labels,
                        "unjudged": 0 if labels else len(terms)}, 0 if labels else len(terms))

    def score(self, key: dict[str, Any], judgment: dict[str, Any], pool: Sequence[Any]
              ) -> dict[str, float]:
        labels = judgment["labels"] or []
        terms = len(key["terms"]) or 1
        return {"TermRecall": sum(1 for label in labels if label == "yes") / terms}
