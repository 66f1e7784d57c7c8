"""`POST /v1/battles`: answers of two or more runs judged in pairs (the battles method: its
schedule and step, as `nuggetizer battles` runs them), one record per battle."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from nuggetizer.errors import ConfigError
from nuggetizer.methods.battles.records import BATTLES_FILE
from nuggetizer.methods.battles.step import judge_battles, plan_battles
from nuggetizer.run.stages import Plan, Stage, Where
from nuggetizer.serve.door import Payload
from nuggetizer.serve.engine import Engine
from nuggetizer.serve.errors import ApiError
from nuggetizer.serve.inputs import items, jsonl, targets_of

router = APIRouter(tags=["methods"])


def _count(payload: dict[str, Any], name: str) -> int | None:
    value = payload.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 1):
        raise ApiError(422, "invalid_request", f"{name}: a positive integer")
    return value


@router.post("/v1/battles")
async def battles(request: Request, payload: Payload) -> dict[str, Any]:
    """Battles between runs: `{"answers": [TREC RAG answer records of 2+ runs], "narratives"?:
    {qid: text}, "per_topic"?, "budget"?, "seed"?, "settings"?, "passages"?: {docid: text}}`."""
    engine: Engine = request.app.state.engine
    settings = payload.get("settings")
    method = engine.method("battles", settings)
    limit = engine.settings.max_items
    answers = items(payload, "answers", limit)
    narratives = payload.get("narratives") or {}
    if not isinstance(narratives, dict) or not all(isinstance(v, str)
                                                   for v in narratives.values()):
        raise ApiError(422, "invalid_request", "narratives: an object of topic texts")
    seed = payload.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ApiError(422, "invalid_request", "seed: an integer")
    per_topic, budget = _count(payload, "per_topic"), _count(payload, "budget")
    async with engine.work() as work:
        targets = targets_of(method, work.scratch, answers, payload.get("passages"))
        try:
            plan = plan_battles(targets, narratives, per_topic, budget, seed)
        except ConfigError as exc:
            raise ApiError(422, "invalid_input", str(exc)) from None
        out = work.scratch / "battles"

        async def run(assessor: Any, where: Where) -> Any:
            return await judge_battles(method, plan, assessor, where.path(out))

        await work.run(Plan([Stage("battles", run, title=lambda: "battles")]))
        return {"method": method.name, "battles": jsonl(out / BATTLES_FILE),
                "provenance": engine.provenance(work, method), "usage": work.usage()}
