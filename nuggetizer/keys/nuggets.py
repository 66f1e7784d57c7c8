"""AutoNuggetizer (METHODS.md 1): iterative creation, importance labels, listwise assignment."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nuggetizer.assessors.base import DEFAULT_REASKS, Assessor
from nuggetizer.assessors.untrusted import inline
from nuggetizer.formats.assessments import assessment_record
from nuggetizer.formats.nuggets import nuggets_record
from nuggetizer.keys.base import AnswerKeyMethod, KeyInput, Outcome, Target, register
from nuggetizer.measures import MEASURES, nugget_scores
from nuggetizer.parsing import labels_schema, parse_labels, parse_strings, strings_schema
from nuggetizer.templates import Prompt, load_prompt
from nuggetizer.types import (
    ASSIGNMENT_LABELS,
    IMPORTANCE_LABELS,
    Answer,
    AssessedNugget,
    Assessment,
    Nugget,
    NuggetList,
    Qrel,
    Segment,
    Sentence,
)

T = TypeVar("T")
PROMPTS = ("nuggets_create", "nuggets_importance", "nuggets_assign")
_ORDER = {"vital": 0, "okay": 1, "unjudged": 2}
# A nugget is 1-12 words: the schema caps each at NUGGET_CHARS characters so that a weak model
# cannot spend its whole budget on one string; NUGGET_TOKENS bounds the answer's token budget.
NUGGET_CHARS = 120
NUGGET_TOKENS = 40


@dataclass(frozen=True)
class NuggetConfig:
    """The method's knobs; the defaults are the published ones (keep=0 disables the trim)."""

    min_grade: int = 1
    window: int = 10
    max_nuggets: int = 30
    keep: int = 20
    label_batch: int = 10
    assign_batch: int = 10
    label: bool = True
    reasks: int = DEFAULT_REASKS


@dataclass
class Unparsed:
    """An LLM answer that never parsed: kept with the output, counted in the summary."""

    step: str
    batch: int
    raw: str
    error: str

    def record(self) -> dict:
        """JSON form stored beside the result."""
        return {"step": self.step, "batch": self.batch, "error": self.error, "raw": self.raw}


@dataclass
class KeyResult:
    """The nuggets of one topic and what went wrong while making them."""

    nuggets: NuggetList
    unparsed: list[Unparsed] = field(default_factory=list)


def chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def judged_pool(qrels: Iterable[Qrel], min_grade: int) -> dict[str, list[Qrel]]:
    """Judged segments per topic with grade >= min_grade, grade descending then doc id."""
    pool: dict[str, list[Qrel]] = {}
    for qrel in qrels:
        if qrel.grade >= min_grade:
            pool.setdefault(qrel.qid, []).append(qrel)
    for judged in pool.values():
        judged.sort(key=lambda q: (-q.grade, q.docid))
    return pool


def sort_and_trim(nuggets: list[Nugget], keep: int) -> list[Nugget]:
    """Vital before okay before unjudged, creation order kept inside each group; first `keep`."""
    ordered = sorted(nuggets, key=lambda n: _ORDER[n.importance])
    return ordered[:keep] if keep > 0 else ordered


async def create_nuggets(
    assessor: Assessor, qid: str, query: str, segments: Sequence[Segment], config: NuggetConfig
) -> KeyResult:
    """Build one topic's nuggets: creation over windows, importance in batches, sort and trim."""
    prompt = load_prompt("nuggets_create")
    texts: list[str] = []
    unparsed: list[Unparsed] = []
    for index, window in enumerate(chunks(segments, config.window)):
        parsed = await assessor.ask(
            prompt.render(
                query=query,
                segments=[inline(s.text) for s in window],
                nuggets=texts,
                max_nuggets=config.max_nuggets,
            ),
            lambda text: parse_strings(text, config.max_nuggets),
            schema=strings_schema(config.max_nuggets, min_items=1, max_length=NUGGET_CHARS),
            max_tokens=NUGGET_TOKENS * config.max_nuggets + 16,
            reasks=config.reasks,
        )
        if parsed.value is None:
            unparsed.append(Unparsed("create", index, parsed.raw, parsed.error or ""))
        else:
            texts = parsed.value
    nuggets = [Nugget(text=t) for t in texts]
    if config.label and nuggets:
        unparsed += await label_importance(assessor, query, nuggets, config)
        nuggets = sort_and_trim(nuggets, config.keep)
    return KeyResult(NuggetList(qid=qid, query=query, nuggets=nuggets), unparsed)


async def _label_batches(
    assessor: Assessor,
    prompt: Prompt,
    variables: dict,
    nuggets: Sequence[str],
    allowed: Sequence[str],
    batch_size: int,
    reasks: int,
) -> list[tuple[list[str] | None, str, str]]:
    """Ask for one label per nugget, `batch_size` nuggets a call, batches concurrently."""

    async def one(batch: Sequence[str]) -> tuple[list[str] | None, str, str]:
        parsed = await assessor.ask(
            prompt.render(nuggets=list(batch), **variables),
            lambda text: parse_labels(text, allowed, len(batch)),
            schema=labels_schema(list(allowed), len(batch)),
            max_tokens=16 * len(batch) + 32,
            reasks=reasks,
        )
        return parsed.value, parsed.raw, parsed.error or ""

    return await asyncio.gather(*(one(b) for b in chunks(nuggets, batch_size)))


async def label_importance(
    assessor: Assessor, query: str, nuggets: list[Nugget], config: NuggetConfig
) -> list[Unparsed]:
    """Set each nugget's importance in place; a batch that never parses stays unjudged."""
    results = await _label_batches(
        assessor,
        load_prompt("nuggets_importance"),
        {"query": query},
        [n.text for n in nuggets],
        IMPORTANCE_LABELS,
        config.label_batch,
        config.reasks,
    )
    unparsed = []
    for index, (labels, raw, error) in enumerate(results):
        start = index * config.label_batch
        if labels is None:
            unparsed.append(Unparsed("importance", index, raw, error))
            continue
        for offset, label in enumerate(labels):
            nuggets[start + offset].importance = label  # type: ignore[assignment]
    return unparsed


async def assign_nuggets(
    assessor: Assessor, key: NuggetList, answer: Answer, length: int, config: NuggetConfig
) -> Assessment:
    """Judge one answer against one topic's nuggets, listwise; failures become unjudged items."""
    results = await _label_batches(
        assessor,
        load_prompt("nuggets_assign"),
        {"query": key.query, "answer": inline(answer.text)},
        [n.text for n in key.nuggets],
        ASSIGNMENT_LABELS,
        config.assign_batch,
        config.reasks,
    )
    assessed: list[AssessedNugget] = []
    batches = chunks(key.nuggets, config.assign_batch)
    for batch, (labels, raw, _error) in zip(batches, results, strict=True):
        for offset, nugget in enumerate(batch):
            assessed.append(
                AssessedNugget(
                    text=nugget.text,
                    importance=nugget.importance,
                    assignment=labels[offset] if labels else "unjudged",  # type: ignore[arg-type]
                    raw=None if labels else raw,
                )
            )
    return Assessment(
        run_id=answer.run_id,
        qid=key.qid,
        query=key.query,
        answer_text=answer.text,
        length=length,
        nuggets=assessed,
    )


@register
class NuggetsMethod(AnswerKeyMethod):
    """AutoNuggetizer in the answer-key interface (keys/base.py): it calls the functions above
    and writes the same records (formats/nuggets.py, formats/assessments.py)."""

    name = "nuggets"
    prompts = PROMPTS
    measures = MEASURES
    primary = "V_strict"
    targets = ("answer",)
    config_type = NuggetConfig

    def __init__(self, config: NuggetConfig | None = None) -> None:
        super().__init__(config or NuggetConfig())

    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        result = await create_nuggets(assessor, item.qid, item.query, item.documents,
                                      self.config)
        record = nuggets_record(result.nuggets)
        if result.unparsed:
            record["unparsed"] = [u.record() for u in result.unparsed]
        problems = len(result.unparsed) + sum(
            1 for n in result.nuggets.nuggets if n.importance == "unjudged")
        return Outcome(record, problems)

    async def judge(self, assessor: Assessor, key: Mapping[str, Any], target: Target
                    ) -> Outcome:
        answer = Answer(run_id=target.run_id, topic_id=target.qid,
                        sentences=[Sentence(text=target.answer or "")])
        length = target.length if target.length is not None else 0
        assessment = await assign_nuggets(
            assessor, NuggetList.model_validate(dict(key)), answer, length, self.config)
        record = assessment_record(assessment)
        unjudged = sum(1 for n in record["nuggets"] if n["assignment"] == "unjudged")
        return Outcome(record, unjudged)

    def score(self, key: Mapping[str, Any], judgment: Mapping[str, Any],
              pool: Any) -> dict[str, float]:
        labels = [(n["importance"], n["assignment"]) for n in judgment["nuggets"]]
        scores = nugget_scores(labels)
        scores["L"] = float(judgment.get("length") or 0)
        return scores

    def unjudged(self, judgment: Mapping[str, Any]) -> int:
        return sum(1 for n in judgment["nuggets"] if n["assignment"] == "unjudged")
