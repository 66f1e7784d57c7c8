"""A plan and its stages, as executors run them (run/execute.py): live, dry (count and price,
call nothing, write into a throw-away folder) or batched (rounds through the Batch API). A
stage's body exists once; the executor decides where it writes (`Where`) and which assessor it
calls. The plans themselves are made in nuggetizer/plan/.

    plan = assign_plan(method, keys, targets, Path("out/judgments"))
    execute(plan, assessor, mode="dry")  # or "live", "batch"
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.run.dryrun import Ledger


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
    """One stage of a plan: `work(assessor, where)` runs it. The rest says what a dry run
    reports of it (`title`, `note` given the ledgers of the stages before it, `estimate`:
    calls it cannot render; `blocked`: why it cannot be counted yet, said instead) and what a
    live run says when it ends (`done`, given what `work` returned). A stage that calls no
    LLM (`calls` False: scoring, combining, writing tables) runs once into the real outputs
    under every executor but the dry one, which says its `title` instead (what it would read
    and write)."""

    name: str  # its batch state's name (--batch-api)
    work: Work
    title: Callable[[], str]
    note: Callable[[Sequence[Ledger]], str] = _no_note
    estimate: Callable[[], int] = _nothing
    blocked: Callable[[], str | None] = _ready
    done: Callable[[Any], None] | None = None
    calls: bool = True


def local_stage(name: str, run: Callable[[], Any], title: Callable[[], str],
                done: Callable[[Any], None] | None = None) -> Stage:
    """A stage that calls no LLM: `run()` (its result goes to `done`); a dry run says
    `title()` instead of running it."""

    async def work(assessor: Any, where: Where) -> Any:
        return run()

    return Stage(name, work, title=title, done=done, calls=False)


@dataclass
class Plan:
    """The stages of a step, run in order; `total`: a dry run ends with the sum of what its
    stages counted under this name (evaluate); `read`: what the plan was made from (the
    inputs read, formats/track_inputs.py), one line a kind, which a dry run says first."""

    stages: list[Stage] = field(default_factory=list)
    total: str | None = None
    read: list[str] = field(default_factory=list)
