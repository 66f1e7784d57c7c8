"""This server's routes for every registered method: what each is (`GET /v1/methods`), its
keys built (`POST /v1/keys`), targets judged (`POST /v1/judgments`: nuggets, support, rubrics,
battles' answers, ...), judgments scored by the score engine (`POST /v1/scores`), and passages
graded for relevance on 0-3 or 0-4 (`POST /v1/relevance`). Each answer carries the records the
CLI would write, their provenance and the request's usage."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi import APIRouter, Request

from nuggetizer.interface.registry import method_names
from nuggetizer.relevance.scales import Grading, get_scale
from nuggetizer.scoring.engine import read_judged, score_judged
from nuggetizer.serve.door import Payload
from nuggetizer.serve.engine import Engine
from nuggetizer.serve.errors import ApiError
from nuggetizer.serve.inputs import flag, items, key_inputs_of, keys_of, read_back, targets_of, text
from nuggetizer.serve.jobs import leaderboard
from nuggetizer.serve.steps import build_keys, grade, judge
from nuggetizer.types import Topic

router = APIRouter(tags=["methods"])


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def _method(engine: Engine, payload: dict[str, Any]) -> Any:
    settings = payload.get("settings")
    name = payload.get("method", "nuggets")
    if name not in method_names():
        raise ApiError(422, "unknown_method", f"method: {name!r} is not one of "
                       f"{', '.join(method_names())}")
    return engine.method(name, settings)


@router.get("/v1/methods")
async def methods(request: Request) -> dict[str, Any]:
    """Every registered method: what it judges, whether it needs a key, its settings and
    measures, and the relevance scales."""
    engine = _engine(request)
    listed = []
    for name in method_names():
        method = engine.method(name)
        judging = method.judging
        listed.append({"name": name, "targets": sorted(method.targets),
                       "needs_key": judging.needs_key, "builds_from": sorted(judging.needs),
                       "citations": judging.citations, "settings": method.settings(),
                       "measures": list(getattr(method, "measure_names", ()) or ()),
                       "prompts": list(method.used_prompts())})
    return {"methods": listed, "relevance_scales": ["0-3", "0-4"]}


@router.post("/v1/keys")
async def keys(request: Request, payload: Payload) -> dict[str, Any]:
    """Build keys: `{"method", "settings"?, "topics": [{"qid", "query", "passages": [{"docid",
    "text", "grade"?}], "reference"?, "sub_narratives"?}]}`."""
    engine = _engine(request)
    method = _method(engine, payload)
    limit = engine.settings.max_items
    inputs = key_inputs_of(items(payload, "topics", limit), limit)
    async with engine.work() as work:
        made = await build_keys(work, method, inputs)
        return {"method": method.name, "keys": made,
                "provenance": engine.provenance(work, method), "usage": work.usage()}


@router.post("/v1/judgments")
async def judgments(request: Request, payload: Payload) -> dict[str, Any]:
    """Judge answers: `{"method", "settings"?, "keys": [key records] (a method with a key),
    "answers": [TREC RAG answer records], "passages"?: {docid: text} (cited passages),
    "lenient"?: true (an off-menu key label kept as an unjudged item, as --lenient)}`."""
    engine = _engine(request)
    method = _method(engine, payload)
    limit = engine.settings.max_items
    answers = items(payload, "answers", limit)
    given = items(payload, "keys", limit, required=method.judging.needs_key)
    lenient = flag(payload, "lenient", engine.settings.lenient)
    passages = payload.get("passages") or {}
    if not isinstance(passages, dict) or len(passages) > limit:
        raise ApiError(422, "invalid_request", f"passages: an object of at most {limit} texts")
    async with engine.work() as work:
        made_keys = keys_of(method, work.scratch, given, lenient) if given else None
        targets = targets_of(method, work.scratch, answers, passages)
        judged, _ = await judge(work, method, made_keys, targets)
        return {"method": method.name, "judgments": judged,
                "dropped": dropped(answers, judged, made_keys),
                "provenance": engine.provenance(work, method), "usage": work.usage()}


def dropped(answers: list[Any], judged: list[dict[str, Any]], keys: dict[str, Any] | None
            ) -> dict[str, Any]:
    """The answers a request gave that have no judgment, each with its place in `answers`
    and why: `{"count", "why": {reason: n}, "answers": [{"index", "run_id", "topic_id",
    "why"}]}`."""
    done = {(str(r.get("run_id")), str(r.get("qid"))) for r in judged}
    left: list[dict[str, Any]] = []
    for index, answer in enumerate(answers):
        run_id = str(answer.get("run_id") or (answer.get("metadata") or {}).get("run_id"))
        topic = str(answer.get("topic_id") or (answer.get("metadata") or {}).get(
            "narrative_id"))
        if (run_id, topic) in done:
            continue
        why = ("its topic has no key" if keys is not None and topic not in keys
               else "its topic's key has nothing to judge")
        left.append({"index": index, "run_id": run_id, "topic_id": topic, "why": why})
    reasons = Counter(item["why"] for item in left)
    return {"count": len(left), "why": dict(reasons), "answers": left}


@router.post("/v1/scores")
async def scores(request: Request, payload: Payload) -> dict[str, Any]:
    """Score judgments with the score engine: `{"method", "judgments": [records], "keys"?:
    [key records] (their topics are the universe), "topics"?: [ids]}`; no LLM call."""
    engine = _engine(request)
    method = _method(engine, payload)
    limit = engine.settings.max_items
    records = items(payload, "judgments", limit)
    given = items(payload, "keys", limit, required=False)
    lenient = flag(payload, "lenient", engine.settings.lenient)
    topics = payload.get("topics")
    if topics is not None and (not isinstance(topics, list)
                               or not all(isinstance(t, str) for t in topics)):
        raise ApiError(422, "invalid_request", "topics: a list of topic ids")
    async with engine.work() as work:
        made_keys = keys_of(method, work.scratch, given, lenient) if given else None
        table = read_back(work.scratch, "judgments", records, lambda path: score_judged(
            method, read_judged(method, [path], lenient, scoring=True), made_keys, lenient,
            topics))
        return {"method": method.name, "primary": table.primary,
                "measures": list(table.measures), "leaderboard": leaderboard(table),
                "per_topic": table.per_topic, "unjudged": table.unjudged,
                "warnings": table.warnings, "usage": work.usage()}


@router.post("/v1/relevance")
async def relevance(request: Request, payload: Payload) -> dict[str, Any]:
    """Grade passages (UMBRELA): `{"scale": "0-3" | "0-4", "topics": [{"qid", "query",
    "passages": [{"docid", "text"}], "sub_narratives"?: [...] (0-4)}]}`."""
    engine = _engine(request)
    limit = engine.settings.max_items
    scale_name = payload.get("scale", "0-3")
    scale = get_scale(text(scale_name, "scale"))
    inputs = key_inputs_of(items(payload, "topics", limit), limit)
    if sum(len(i.documents) for i in inputs) > limit:
        raise ApiError(413, "too_many_items", f"at most {limit} passages in one request")
    subs = {i.qid: i.sub_narratives for i in inputs} if scale.sub_narratives else None
    grading = Grading(scale, subs, {"path": "request"} if subs is not None else None)
    grading.check([i.qid for i in inputs], "the request")
    pool = {i.qid: [f"t{n}p{k}" for k in range(len(i.documents))]
            for n, i in enumerate(inputs)}
    texts = {pid: d for i in inputs for pid, d in zip(pool[i.qid], i.documents)}
    async with engine.work() as work:
        graded, _ = await grade(work, {i.qid: Topic(id=i.qid, text=i.query) for i in inputs},
                             pool, texts, grading)
        grades = []
        for i in inputs:
            for k, document in enumerate(i.documents):
                found = graded.get(f"{i.qid}\t{pool[i.qid][k]}", {})
                one = {"qid": i.qid, "docid": document.id, "grade": found.get("grade")}
                if found.get("grade") is None:
                    one["unjudged"] = found.get("error", "not graded")
                grades.append(one)
        return {"scale": scale.name, "grades": grades,
                "provenance": engine.provenance(work, prompts=(scale.prompt,)),
                "usage": work.usage()}

