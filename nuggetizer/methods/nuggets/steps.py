"""The AutoNuggetizer's steps as functions over an assessor (TREC 2024 RAG Track): iterative
nugget creation, importance labels, listwise assignment of nuggets to one answer; their
settings (NuggetConfig). methods/nuggets/method.py is the method built on them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.untrusted import inline, line_safe
from nuggetizer.formats.nuggets import extras_record
from nuggetizer.interface.base import reasks_setting
from nuggetizer.interface.declare import check_choices, setting
from nuggetizer.labels import (
    ASSIGNMENT_LABELS,
    IMPORTANCE_LABELS,
    IMPORTANCE_ORDER,
    assignment_of,
    importance_of,
)
from nuggetizer.methods.nuggets.labelling import Unparsed, chunks, label_batches
from nuggetizer.parsing import parse_strings, strings_schema
from nuggetizer.templates import RENDERINGS, load_prompt
from nuggetizer.types import (
    Answered,
    AssessedNugget,
    Assessment,
    Nugget,
    NuggetList,
    Segment,
    joined,
)

PROMPTS = ("nuggets_create", "nuggets_importance", "nuggets_assign", "nuggets_subnarrative",
           "nuggets_assign_binary", "nuggets_agentic_create")
AGENTIC_PROMPT = "nuggets_agentic_create"  # used only by agentic creation (agentic.py)
MAPPING_PROMPT = "nuggets_subnarrative"  # used only to map nuggets to given sub-narratives
# the assignment prompt and its labels by `grades`: castorini's three, or support / not_support
ASSIGN_PROMPTS = {"3": ("nuggets_assign", ASSIGNMENT_LABELS),
                  "2": ("nuggets_assign_binary", ("support", "not_support"))}
# A nugget is 1-12 words: the schema caps each at NUGGET_CHARS characters so that a weak model
# cannot spend its whole budget on one string; NUGGET_TOKENS bounds the answer's token budget.
NUGGET_CHARS = 120
NUGGET_TOKENS = 40


@dataclass(frozen=True)
class NuggetConfig:
    """The method's knobs; the defaults are the published ones (keep=0 disables the trim)."""

    min_grade: int = setting(1, "lowest qrels grade of a judged passage nuggets are made from "
                             "(nuggetize --min-grade)", minimum=0)
    window: int = setting(10, "segments per call", flag="--window", commands=("nuggetize",),
                          minimum=1)
    max_nuggets: int = setting(30, "nuggets kept while creating", flag="--max-nuggets",
                               commands=("nuggetize",), minimum=1)
    keep: int = setting(20, "nuggets kept after sorting (0: all)", flag="--keep",
                        commands=("nuggetize",), minimum=0)
    label_batch: int = setting(10, "nuggets per importance-labelling call", minimum=1)
    assign_batch: int = setting(10, "nuggets per call", flag="--batch", commands=("assign",),
                                minimum=1)
    grades: str = setting("3", "assignment labels: 3 (support, partial_support, not_support) or "
                          "2 (support, not_support: castorini's two-grade prompt, as RAGDoll "
                          "asks it)", choices=tuple(ASSIGN_PROMPTS))
    label: bool = setting(True, "label the nuggets' importance, then sort and trim them",
                          flag="--no-labels", commands=("nuggetize",),
                          flag_help="skip importance and trim (for post-editing)")
    reasks: int = reasks_setting()
    render: str = setting(
        RENDERINGS[0], "nuggets prompts: castorini's bytes (Python lists; the track's) or json "
        "(lists as JSON, this toolkit's earlier prompts, whose cache entries it hits)",
        choices=RENDERINGS, flag="--render", commands=("nuggetize", "assign"))

    def __post_init__(self) -> None:
        check_choices(self)

    def untrusted(self, text: str) -> str:
        """An answer or passage as the prompt carries it: castorini's bytes (one line, spaces
        kept), or collapsed to single spaces under the JSON rendering."""
        return inline(text) if self.render == "json" else line_safe(text)

    def answer(self, answer: Answered) -> str:
        """The answer text the assignment prompt reads: its sentences joined by a space,
        unstripped as castorini joins them (stripped under the JSON rendering)."""
        if self.render == "json":
            return inline(joined(answer.sentences))
        return line_safe(" ".join(s.text for s in answer.sentences))


@dataclass
class KeyResult:
    """The nuggets of one topic and what went wrong while making them."""

    nuggets: NuggetList
    unparsed: list[Unparsed] = field(default_factory=list)


def sort_and_trim(nuggets: list[Nugget], keep: int) -> list[Nugget]:
    """Vital before okay before unjudged, creation order kept inside each group; first `keep`."""
    ordered = sorted(nuggets, key=lambda n: IMPORTANCE_ORDER[n.importance])
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
                segments=[config.untrusted(s.text) for s in window],
                nuggets=texts,
                max_nuggets=config.max_nuggets,
                render=config.render,
            ),
            lambda text: parse_strings(text, config.max_nuggets),
            schema=strings_schema(config.max_nuggets, min_items=1, max_length=NUGGET_CHARS),
            max_tokens=NUGGET_TOKENS * config.max_nuggets + 16,
            reasks=config.reasks,
        )
        if parsed.value is None:
            unparsed.append(Unparsed("create", index, parsed.raw, parsed.error or "",
                                     parsed.reasoning))
        else:
            texts = parsed.value
    nuggets = [Nugget(text=t) for t in texts]
    if config.label and nuggets:
        unparsed += await label_importance(assessor, query, nuggets, config)
        nuggets = sort_and_trim(nuggets, config.keep)
    return KeyResult(NuggetList(qid=qid, query=query, nuggets=nuggets), unparsed)


async def label_importance(
    assessor: Assessor, query: str, nuggets: list[Nugget], config: NuggetConfig
) -> list[Unparsed]:
    """Set each nugget's importance in place; a batch that never parses stays unjudged."""
    results = await label_batches(
        assessor,
        load_prompt("nuggets_importance"),
        {"query": query, "render": config.render},
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
            nuggets[start + offset].importance = importance_of(label)
    return unparsed


async def assign_nuggets(
    assessor: Assessor, key: NuggetList, answer: Answered, length: int, config: NuggetConfig
) -> Assessment:
    """Judge one answer against one topic's nuggets, listwise; failures become unjudged items."""
    prompt, labels_asked = ASSIGN_PROMPTS[config.grades]
    results = await label_batches(
        assessor,
        load_prompt(prompt),
        {"query": key.query, "answer": config.answer(answer), "render": config.render},
        [n.text for n in key.nuggets],
        labels_asked,
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
                    assignment=assignment_of(labels[offset] if labels else None),
                    raw=None if labels else raw,
                    **extras_record(nugget),
                )
            )
    return Assessment(
        run_id=answer.run_id,
        qid=key.qid,
        query=key.query,
        answer_text=joined(answer.sentences),
        length=length,
        nuggets=assessed,
    )
