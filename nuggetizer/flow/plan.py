"""A plan: the stages of one step (build keys, judge targets; grade then build), built once
from what the step reads, and run by an executor (flow/execute.py): live, dry (count and
price, call nothing, write into a throw-away folder) or batched (rounds through the Batch
API). A stage's body exists once; the executor decides where it writes (`Where`) and which
assessor it calls.

    plan = assign_plan(method, keys, targets, Path("out/judgments"))
    execute(plan, assessor, mode="dry")  # or "live", "batch"
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.flow.dryrun import Ledger, importance_estimate
from nuggetizer.flow.sources import mapping_estimate
from nuggetizer.flow.steps import build_keys, judge_targets
from nuggetizer.methods.base import AnswerKeyMethod, KeyInput, Target

NUGGETIZE_NOTE = ("nugget creation is iterative: the first window of each topic is counted "
                  "exactly, later windows as a lower bound (rendered without the nuggets "
                  "created before them); importance calls are estimated, not rendered")
ASSIGN_NOTE = ("exact for answers that parse at once (a re-ask is an extra call a dry run "
               "cannot see)")


@dataclass(frozen=True)
class Where:
    """Where a stage runs: into its real outputs (`folder` None), or into a throw-away folder
    (a dry run's, a batch round's); `dry`: its calls are counted, not made."""

    folder: Path | None = None
    dry: bool = False

    @property
    def final(self) -> bool:
        """Whether this run writes the real outputs (then it reports what it made)."""
        return self.folder is None

    def path(self, real: Path) -> Path:
        """Where the output `real` (a file or a folder) goes in this run."""
        return real if self.folder is None else self.folder / real.name


Work = Callable[[Any, Where], Coroutine[Any, Any, Any]]


class NothingToCount(Exception):
    """A dry run's stage that has nothing it could render (no passage to build from)."""


def _no_note(ledgers: Sequence[Ledger]) -> str:
    return ""


def _nothing() -> int:
    return 0


def _ready() -> str | None:
    return None


@dataclass
class Stage:
    """One LLM step of a plan: `work(assessor, where)` runs it. The rest says what a dry run
    reports of it (`title`, `note` given the ledgers of the stages before it, `estimate`:
    calls it cannot render; `blocked`: why it cannot be counted yet, said instead) and what a
    live run says when it ends (`done`, given what `work` returned)."""

    name: str  # its batch state's name (--batch-api)
    work: Work
    title: Callable[[], str]
    note: Callable[[Sequence[Ledger]], str] = _no_note
    estimate: Callable[[], int] = _nothing
    blocked: Callable[[], str | None] = _ready
    done: Callable[[Any], None] | None = None


@dataclass
class Plan:
    """The stages of a step, run in order; `total`: a dry run ends with the sum of what its
    stages counted under this name (evaluate)."""

    stages: list[Stage] = field(default_factory=list)
    total: str | None = None


def key_stage(method: AnswerKeyMethod, inputs: Sequence[KeyInput], key: Path, *,
              skipped: int = 0, track: str | None = None) -> Stage:
    """Build every topic's key from `inputs` into `key`; `skipped` topics had no passage to
    build from; `track`: the track the keys' provenance names."""

    def work(assessor: Any, where: Where) -> Coroutine[Any, Any, Any]:
        return build_keys(method, inputs, assessor, where.path(key), track, skipped)

    return Stage("nuggetize", work,
                 title=lambda: f"nuggetize --method {method.name} ({len(inputs)} topics)",
                 note=lambda ledgers: NUGGETIZE_NOTE,
                 estimate=lambda: extra_key_calls(method, inputs))


def extra_key_calls(method: AnswerKeyMethod, inputs: Sequence[KeyInput]) -> int:
    """The calls of building the keys of `inputs` a dry run cannot render: importance, and
    the mapping to sub-narratives of the inputs that carry them (--map-sub-narratives)."""
    mapped = sum(1 for i in inputs if i.sub_narratives)
    return importance_estimate(method, len(inputs)) + mapping_estimate(method, mapped)


def assign_stage(method: AnswerKeyMethod, keys: Callable[[], Mapping[str, Any] | None],
                 targets: Mapping[str, Mapping[str, Target]], output: Path,
                 track: str | None = None) -> Stage:
    """Judge every target against its topic's key (`keys()`, read when the stage starts:
    they may be built by the stage before) into the folder `output`."""

    def work(assessor: Any, where: Where) -> Coroutine[Any, Any, Any]:
        return judge_targets(method, keys(), targets, assessor, where.path(output), track)

    return Stage("assign", work, title=lambda: f"assign --method {method.name}",
                 note=lambda ledgers: ASSIGN_NOTE)


def nuggetize_plan(method: AnswerKeyMethod, inputs: Sequence[KeyInput], output: Path | str,
                   skipped: int = 0) -> Plan:
    """The keys of every topic of `inputs`, built into `output` (JSONL); `skipped` topics
    had no passage to build from (counted in the summary)."""
    return Plan([key_stage(method, inputs, Path(output), skipped=skipped)])


def assign_plan(method: AnswerKeyMethod, keys: Mapping[str, Any] | None,
                targets: Mapping[str, Mapping[str, Target]], output: Path | str) -> Plan:
    """Every target judged against its topic's key (`keys` None: a method that judges
    without one), one judgment file per run in the folder `output`."""
    return Plan([assign_stage(method, lambda: keys, targets, Path(output))])
