"""A job's plan given inline (`POST /v1/jobs {"plan": {...}}`): a method's keys and answers
judged and scored, as `nuggetizer assign` then `score` do, into the job's folder. What the
request gave is kept there (plan.json, written by the server) so that a restarted server
rebuilds the same plan, whose journals then skip what was judged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from nuggetizer.errors import InputError
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.plan.score import TABLES, score_stage
from nuggetizer.plan.steps import assign_stage
from nuggetizer.run.stages import Plan, Stage
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.scoring.files import ScoreFiles, ScoreScope
from nuggetizer.serve.engine import Engine
from nuggetizer.serve.errors import ApiError
from nuggetizer.serve.inputs import flag, items, keys_of, targets_of

PLAN_FILE = "plan.json"
MAX_PLAN_ITEMS = 1_000_000  # a job's plan is long work: the body size limits it


class Announcing(Protocol):
    folder: Path

    @property
    def out(self) -> Path: ...

    def event(self, kind: str, **fields: Any) -> None: ...


def read_plan(folder: Path) -> dict[str, Any]:
    """The plan a job was given (its plan.json); InputError naming the file when it is
    missing or damaged."""
    path = folder / PLAN_FILE
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, None, f"{path} cannot be read ({exc.strerror or exc}): the "
                         "job's plan is lost; submit it again") from None
    except ValueError as exc:
        raise InputError(path, None, f"{path} is not whole JSON, perhaps cut short ({exc}): "
                         "the job's plan is lost; submit it again") from None
    if not isinstance(plan, dict):
        raise InputError(path, None, f"{path} is not a plan (a JSON object): submit it again")
    return plan


def check_plan(engine: Engine, folder: Path, plan: dict[str, Any]) -> None:
    """Check the plan as the job will read it (422 at once), then keep it in `folder`."""
    method = engine.method(plan.get("method", "nuggets"), plan.get("settings"),
                           "plan.settings")
    inputs = folder / "in"
    inputs.mkdir()
    keys = items(plan, "keys", MAX_PLAN_ITEMS, required=method.judging.needs_key)
    plan["lenient"] = flag(plan, "lenient", engine.settings.lenient)  # kept: a restart agrees
    if keys:
        keys_of(method, inputs, keys, plan["lenient"])
    targets_of(method, inputs, items(plan, "answers", MAX_PLAN_ITEMS), plan.get("passages"))
    write_text_atomic(folder / PLAN_FILE, json.dumps(plan, ensure_ascii=False))


def plan_of(engine: Engine, job: Announcing, plan: dict[str, Any]
            ) -> tuple[Plan, Callable[[], ScoreTable]]:
    """The job's stages (judge, then score into out/) and the table they end with."""
    method = engine.method(plan.get("method", "nuggets"), plan.get("settings") or {})
    lenient = flag(plan, "lenient")
    inputs = job.folder / "in"
    given = plan.get("keys") or []
    keys = keys_of(method, inputs, given, lenient) if given else None
    targets = targets_of(method, inputs, plan["answers"], plan.get("passages"))
    judged = job.out / "judgments"
    tables: list[ScoreTable] = []
    scope = ScoreScope(inputs / "keys.jsonl" if keys is not None else None, None, None, lenient)
    stages = [assign_stage(method, lambda: keys, targets, judged),
              score_stage(method, [judged], scope,
                          ScoreFiles(job.out / TABLES[0], job.out / TABLES[1]), Kept(tables))]

    def table() -> ScoreTable:
        if not tables:
            raise ApiError(500, "failed", "the plan ended without a score table")
        return tables[0]

    return Plan([announced(job, s) for s in stages]), table


class Kept:
    """A scoring shown to nobody: its table kept in `tables`."""

    def __init__(self, tables: list[ScoreTable]) -> None:
        self.tables = tables

    def scoring(self, method: AnswerKeyMethod) -> None:
        """Nothing to say before a scoring."""

    def scored(self, method: AnswerKeyMethod, table: ScoreTable) -> None:
        self.tables.append(table)


def announced(job: Announcing, stage: Stage) -> Stage:
    """The stage, saying in the job's events when it starts and ends."""
    work = stage.work

    async def said(assessor: Any, where: Any) -> Any:
        job.event("stage", name=stage.name, title=stage.title())
        result = await work(assessor, where)
        job.event("stage_done", name=stage.name)
        return result

    stage.work = said
    return stage
