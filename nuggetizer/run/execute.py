"""The executors of a plan (plan/steps.py): live (the stages into their outputs), dry (each
stage on a dry assessor into one throw-away folder: counted and priced, nothing called or
written) and batched (each stage in rounds through the Batch API, run/batching.py)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import click

from nuggetizer.run.dryrun import DryRun, Ledger, Prices, dry_assessor, report_lines
from nuggetizer.run.stages import NothingToCount, Plan, Stage, Where
from nuggetizer.testing.killpoints import kill_point

if TYPE_CHECKING:  # imported when used: it loads openai
    from nuggetizer.run.batching import Batcher

Mode = Literal["live", "dry", "batch"]


class Executor(Protocol):
    """Runs a plan's stages in order: what each returned (None for one not run)."""

    async def run(self, plan: Plan) -> list[Any]: ...

    def lines(self) -> list[str]:
        """What it says after the step's summary."""
        ...


class Live:
    """Every stage into its real outputs, with the assessor's calls."""

    def __init__(self, assessor: Any) -> None:
        self.assessor = assessor

    async def run(self, plan: Plan) -> list[Any]:
        return [_done(stage, await stage.work(self.assessor, Where())) for stage in plan.stages]

    def lines(self) -> list[str]:
        return []


class Batched:
    """Every stage batched: rounds into throw-away folders until one records no new call,
    then the real run, every call a cache hit (run/batching.py)."""

    def __init__(self, batcher: Batcher) -> None:
        self.batcher = batcher

    async def run(self, plan: Plan) -> list[Any]:
        results = []
        for stage in plan.stages:
            if stage.calls:
                results.append(_done(stage, await self.batcher.run(stage.name, _rounds(stage))))
            else:  # nothing to batch: into the real outputs, once
                results.append(_done(stage, await stage.work(None, Where())))
            kill_point("batch.step")
        return results

    def lines(self) -> list[str]:
        return [self.batcher.line()]


class Dry:
    """Every stage on the dry assessor into one throw-away folder: what each would send,
    counted and priced (`prices`), said on stderr; nothing called, nothing kept."""

    def __init__(self, dry: DryRun, prices: Prices | None) -> None:
        self.dry, self.prices = dry, prices or Prices()  # none given: no cost said

    def say(self, step: str, ledger: Ledger, note: str = "") -> None:
        for line in report_lines(step, ledger, self.dry.tokenizer, self.prices, note):
            click.echo(line, err=True)

    async def run(self, plan: Plan) -> list[Any]:
        results: list[Any] = []
        ledgers: list[Ledger] = []
        for line in plan.read:
            click.echo(f"dry run {line}", err=True)
        with tempfile.TemporaryDirectory(prefix="nuggetizer-dry-") as tmp:
            for stage in plan.stages:
                ledger, done = await self._count(stage, Where(Path(tmp), dry=True), ledgers)
                results.append(done)
                if ledger is not None:
                    ledgers.append(ledger)
        if plan.total is not None:
            total = Ledger()
            for ledger in ledgers:
                total = total.plus(ledger)
            self.say(plan.total, total)
        return results

    async def _count(self, stage: Stage, where: Where, ledgers: list[Ledger]
                     ) -> tuple[Ledger | None, Any]:
        if not stage.calls:  # not run: what it would read and write, said
            click.echo(f"dry run {stage.title()}", err=True)
            return None, None
        blocked = stage.blocked()
        if blocked is not None:
            click.echo(blocked, err=True)
            return None, None
        before = self.dry.counted()
        try:
            done = await stage.work(self.dry.assessor, where)
        except NothingToCount:
            return None, None
        ledger = self.dry.counted().minus(before)
        ledger.estimated_calls += stage.estimate()
        self.say(stage.title(), ledger, stage.note(ledgers))
        return ledger, done

    def lines(self) -> list[str]:
        return []


def _rounds(stage: Stage) -> Callable[[Any, Path | None], Coroutine[Any, Any, Any]]:
    """The stage as a Batcher runs it: into a round's folder, or (None) its outputs."""

    def work(assessor: Any, folder: Path | None) -> Coroutine[Any, Any, Any]:
        return stage.work(assessor, Where(folder))

    return work


def _done(stage: Stage, result: Any) -> Any:
    if stage.done is not None:
        stage.done(result)
    return result


def executor(mode: Mode, assessor: Any, folder: Path | None = None,
             options: dict[str, Any] | None = None) -> Executor:
    """The executor of `mode` for the assessor: `folder` holds a batched run's state
    (FOLDER/.batches); `options`: the dry run's (tokenizer, completion_ratio) and the
    batch's (batch_poll, batch_write_only)."""
    options = options or {}
    if mode == "dry":
        return Dry(dry_assessor(assessor, options), assessor.prices)
    if mode == "batch":
        from nuggetizer.run.batching import Batcher

        return Batched(Batcher(assessor, folder or Path("."),
                               poll=options.get("batch_poll", 60.0),
                               write_only=bool(options.get("batch_write_only"))))
    return Live(assessor)


def outside(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` in a fresh event loop. What a plan returns is kept outside the loop's task
    by its callers, not returned by it: asyncio.run's restoring of the Ctrl-C handler writes
    the repr of the main task, result included, which for a score table of a whole track is
    tenths of a second."""
    asyncio.run(work)


def execute(plan: Plan, assessor: Any, mode: Mode = "live", folder: Path | None = None,
            options: dict[str, Any] | None = None) -> list[Any]:
    """Run the plan with the assessor (closed at the end): what each stage returned (a
    Summary for a key or assign stage, a Graded for a grading stage; None where a dry run
    had nothing to count)."""
    runner = executor(mode, assessor, folder, options)
    results: list[Any] = []

    async def main() -> None:
        try:
            results.extend(await runner.run(plan))
        finally:
            await assessor.aclose()

    outside(main())
    return results


def run_local(plan: Plan) -> list[Any]:
    """Run a plan whose stages call no LLM (scoring): what each returned."""
    if any(stage.calls for stage in plan.stages):
        raise ValueError("run_local runs stages that call no LLM; give an assessor (execute)")
    results: list[Any] = []

    async def main() -> None:
        results.extend(await Live(None).run(plan))

    outside(main())
    return results
