"""The answer-key interface every evaluation method implements (DESIGN.md "The flow").

A method is three steps over plain records (one JSONL line each):

    build_key(topic input)            -> key record of one topic      (LLM calls)
    judge(key record, target)         -> judgment record of one (run, topic)  (LLM calls)
    score(key record, judgment, pool) -> {measure: value}             (pure)

The pipeline (nuggetizer/pipeline.py) owns the files, resume journals, provenance,
progress bars and summaries, so adding a method is one module (a subclass registered with
`register`) plus its prompt templates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import ConfigError
from nuggetizer.types import Segment


@dataclass
class KeyInput:
    """What building one topic's key may read; each method uses the parts it needs."""

    qid: str
    query: str
    reference: str | None = None  # CRUX: the human-written reference summary
    documents: list[Segment] = field(default_factory=list)  # judged or retrieved passages
    grades: dict[str, int] = field(default_factory=dict)  # qrels grade of each document


@dataclass
class Target:
    """One thing a run is judged on for one topic: an answer text or a retrieved context."""

    run_id: str
    qid: str
    answer: str | None = None
    passages: list[Segment] | None = None  # a retrieval context, in rank order
    length: int | None = None


@dataclass
class Outcome:
    """A record to write and how many of its items stayed unjudged (counted in the summary)."""

    record: dict[str, Any]
    unjudged: int = 0


class AnswerKeyMethod(ABC):
    """One evaluation method: its prompts, measures and the three steps."""

    name: ClassVar[str]
    prompts: ClassVar[tuple[str, ...]]
    measures: ClassVar[tuple[str, ...]]
    primary: ClassVar[str]
    targets: ClassVar[tuple[str, ...]]  # "answer" and/or "context"
    config_type: ClassVar[type]  # a frozen dataclass of the method's settings

    def __init__(self, config: Any) -> None:
        self.config = config

    def settings(self) -> dict[str, Any]:
        """The configuration recorded in provenance (must decide the outputs)."""
        import dataclasses

        return dataclasses.asdict(self.config)

    @abstractmethod
    async def build_key(self, assessor: Assessor, item: KeyInput) -> Outcome:
        """The key record of one topic: `{"qid", "query", ...}`."""

    @abstractmethod
    async def judge(self, assessor: Assessor, key: Mapping[str, Any], target: Target) -> Outcome:
        """The judgment record of one (run, topic): `{"run_id", "qid", ...}`."""

    @abstractmethod
    def score(
        self, key: Mapping[str, Any], judgment: Mapping[str, Any],
        pool: Sequence[Mapping[str, Any]],
    ) -> dict[str, float]:
        """Measures of one judgment; `pool` holds every judgment of the same topic."""

    def unjudged(self, judgment: Mapping[str, Any]) -> int:
        """Items of a judgment record that stayed unjudged (for resumed records)."""
        return int(judgment.get("unjudged", 0))


REGISTRY: dict[str, type[AnswerKeyMethod]] = {}
METHOD_NAMES: tuple[str, ...] = ("nuggets", "crux", "kpr", "udcg")


def register(cls: type[AnswerKeyMethod]) -> type[AnswerKeyMethod]:
    """Class decorator: make a method available by its name."""
    REGISTRY[cls.name] = cls
    return cls


def method_class(name: str) -> type[AnswerKeyMethod]:
    """The method called `name`; ConfigError naming the known ones otherwise."""
    import importlib

    if name not in REGISTRY and name in METHOD_NAMES:
        importlib.import_module(f"nuggetizer.keys.{name}")
    if name not in REGISTRY:
        raise ConfigError(f"unknown method {name!r}; known: {', '.join(METHOD_NAMES)}")
    return REGISTRY[name]
