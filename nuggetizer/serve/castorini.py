"""castorini's routes: `GET /healthz`, `POST /v1/create`, `POST /v1/assign` (nuggetizer 0.0.6
`serve`) and `POST /v1/judge` (umbrela `serve`), taking their payloads and answering with their
`castorini.cli.v1` envelopes (the effective settings in `resolved`), plus this server's
`provenance` and `usage`. A refused request answers their error envelope (400), with this
server's `error` beside it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from nuggetizer.errors import NuggetizerError
from nuggetizer.interface.base import KeyInput
from nuggetizer.relevance.scales import Grading
from nuggetizer.serve import castorini_payloads as cp
from nuggetizer.serve.door import Payload
from nuggetizer.serve.engine import Engine
from nuggetizer.serve.errors import (
    ApiError,
    LlmError,
    error_body,
    from_toolkit,
    llm_error,
)
from nuggetizer.serve.inputs import keys_of, targets_of
from nuggetizer.serve.steps import build_keys, grade, judge
from nuggetizer.types import Segment, Topic

router = APIRouter(tags=["castorini"])


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def _refused(repo: str, command: str, error: ApiError) -> JSONResponse:
    """castorini's error envelope (a refused request: 400, as theirs; an LLM that failed: 502
    or 503, the cause and whether to retry in it), with this server's `error` beside it."""
    retryable = isinstance(error, LlmError) and error.retryable
    status = 400 if error.status == 422 else error.status
    return JSONResponse({**cp.error_envelope(repo, command, error.code, error.message,
                                             retryable), **error_body(error)},
                        status_code=status)


async def _answer(repo: str, command: str, work: Any) -> JSONResponse:
    try:
        return JSONResponse(await work)
    except ValueError as exc:
        return _refused(repo, command, ApiError(400, "validation_error", str(exc)))
    except ApiError as exc:
        return _refused(repo, command, exc)
    except NuggetizerError as exc:
        return _refused(repo, command, from_toolkit(exc))


def _model(engine: Engine, given: dict[str, Any]) -> str | None:
    for name in ("use_azure_openai", "use_openrouter"):
        if given.get(name):
            raise ValueError(f"overrides.{name}: this server reaches the model it was started "
                             "with (--assessor, --base-url)")
    if given.get("reasoning_effort") not in (None, engine.settings.options.get(
            "reasoning_effort")):
        raise ValueError("overrides.reasoning_effort: set when the server starts "
                         "(--reasoning-effort)")
    model = given.get("model")
    if model is not None and not isinstance(model, str):
        raise ValueError("overrides.model: a string is required")
    return model


def _lenient(engine: Engine, payload: dict[str, Any], given: dict[str, Any]) -> bool:
    """Whether off-menu importance labels are kept as unjudged nuggets (as --lenient): the
    request's `lenient` (top level or in `overrides`), else the server's default
    (`serve --lenient`)."""
    chosen = given.get("lenient", payload.get("lenient"))
    if chosen is None:
        return engine.settings.lenient
    if not isinstance(chosen, bool):
        raise ValueError("lenient: true or false")
    return chosen


def _count(value: Any, field: str) -> int:
    """A whole number of at least 1 (a ValueError naming `field` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{field}: a whole number of at least 1 is required, got {value!r}")
    return value


def _within_limit(engine: Engine, candidates: int) -> None:
    """A request's candidate passages within the server's item limit, else HTTP 413."""
    limit = engine.settings.max_items
    if candidates > limit:
        raise ApiError(413, "too_many_items", f"candidates: {candidates}; this server takes "
                       f"at most {limit}")


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.post("/v1/create")
async def create(request: Request, payload: Payload) -> JSONResponse:
    """castorini's create: nuggets for one query from its candidate passages."""
    return await _answer("nuggetizer", "create", _create(_engine(request), payload))


async def _create(engine: Engine, payload: dict[str, Any]) -> dict[str, Any]:
    given = cp.overrides(payload, cp.CREATE_OVERRIDES, "create")
    record = cp.query_record(payload, "create")
    _within_limit(engine, len(record.candidates))
    min_judgment = given.get("min_judgment", cp.DEFAULT_MIN_JUDGMENT)
    if isinstance(min_judgment, bool) or not isinstance(min_judgment, int | float):
        raise ValueError("overrides.min_judgment: a number is required")
    settings: dict[str, Any] = {}
    for name, setting in (("window_size", "window"), ("max_nuggets", "max_nuggets")):
        if given.get(name) is not None:
            settings[setting] = _count(given[name], f"overrides.{name}")
    method = engine.method("nuggets", settings)
    model = _model(engine, given)
    kept = [c for c in record.candidates if c.judgment is None or c.judgment >= min_judgment]
    item = KeyInput(record.qid, record.query,
                    documents=[Segment(id=f"p{i}", text=c.text) for i, c in enumerate(kept)])
    async with engine.work(model) as work:
        made = await build_keys(work, method, [item]) if kept else []
        nuggets = [{"text": n["text"], "importance": n.get("importance", "vital")}
                   for r in made for n in r.get("nuggets", [])]
        effective = work.assessor.model
        return {**cp.envelope(
            "nuggetizer", "create", inputs={"source": "direct"},
            resolved={"input_mode": "direct", "execution_mode": given.get("execution_mode",
                                                                          "sync"),
                      "model": effective, "creator_model": effective, "scorer_model": effective,
                      "min_judgment": min_judgment,
                      "reasoning_effort": engine.settings.options.get("reasoning_effort"),
                      "window_size": method.settings().get("window"),
                      "max_nuggets": method.settings().get("max_nuggets")},
            validation={"valid": True, "record_count": 1},
            artifacts=[cp.data_artifact("create-result", {"query": record.query,
                                                          "nuggets": nuggets})],
            metrics={"nugget_count": len(nuggets), "candidates_kept": len(kept)}),
            "provenance": engine.provenance(work, method), "usage": work.usage()}


@router.post("/v1/assign")
async def assign(request: Request, payload: Payload) -> JSONResponse:
    """castorini's assign: each nugget's support in one answer (or each of a batch)."""
    return await _answer("nuggetizer", "assign", _assign(_engine(request), payload))


async def _assign(engine: Engine, payload: dict[str, Any]) -> dict[str, Any]:
    given = cp.overrides(payload, cp.ASSIGN_OVERRIDES, "assign")
    items, batch = cp.assign_items(payload)
    limit = engine.settings.max_items
    if len(items) > limit or any(len(i.nuggets) > limit for i in items):
        raise ApiError(413, "too_many_items", f"this server takes at most {limit} answers, "
                       "and nuggets per answer, in one request")
    method = engine.method("nuggets")
    model = _model(engine, given)
    lenient = _lenient(engine, payload, given)
    keys = [{"qid": f"t{n}", "query": i.query, "nuggets": i.nuggets}
            for n, i in enumerate(items)]
    answers = [{"run_id": "request", "topic_id": f"t{n}", "topic": i.query, "references": [],
                "answer": [{"text": i.context, "citations": []}]} for n, i in enumerate(items)]
    async with engine.work(model) as work:
        judged, failed = await judge(work, method, keys_of(method, work.scratch, keys, lenient),
                                     targets_of(method, work.scratch, answers), partial=True)
        if failed is not None and not judged:
            raise failed  # nothing judged: 502 or 503, the cause in the envelope
        cause = llm_error(failed) if failed is not None else None
        by_topic = {r["qid"]: r for r in judged}
        outputs: list[dict[str, Any]] = []
        for n, item in enumerate(items):
            record = by_topic.get(f"t{n}")
            nuggets = [_assigned(x, given["importance"]) for x, given in zip(
                record["nuggets"], item.nuggets, strict=True)] if record is not None else [
                {**n, "assignment": "failed", "error": cause.message if cause else "",
                 "retryable": cause.retryable if cause else False} for n in item.nuggets]
            if batch:
                outputs.append({"query": item.nugget_query, "qid": item.qid,
                                "answer_text": item.context,
                                "response_length": item.response_length,
                                "length": item.length,  # L, as `score` takes it
                                "run_id": item.run_id, "nuggets": nuggets})
            else:
                outputs.append({"query": item.query, "nuggets": nuggets})
        data: Any = outputs if batch else outputs[0]
        metrics = {"record_count": len(outputs)} if batch else {
            "nugget_count": len(outputs[0]["nuggets"])}
        failures = sum(n["assignment"] == "failed" for o in outputs for n in o["nuggets"])
        if failures:  # castorini's metrics otherwise
            metrics["failed_count"] = failures
        return {**cp.envelope(
            "nuggetizer", "assign", inputs={"source": "direct"},
            resolved={"input_mode": "direct", "assign_mode": "context",
                      "execution_mode": given.get("execution_mode", "sync"),
                      "model": work.assessor.model, "lenient": lenient,
                      "reasoning_effort": engine.settings.options.get("reasoning_effort")},
            validation={"valid": True, "record_count": len(items)},
            artifacts=[cp.data_artifact("assign-result", data)], metrics=metrics,
            warnings=_failed_warning(failures, "nuggets", cause)),
            "provenance": engine.provenance(work, method), "usage": work.usage()}


def _assigned(nugget: dict[str, Any], importance: str) -> dict[str, Any]:
    """A judged nugget as castorini's assign gives it, its importance as the request gave it
    (a lenient request's off-menu label too); one left unjudged (its window refused or never
    parsed) is "failed", as theirs, with the reason (a rerun asks the same: not retryable)."""
    kept = {"text": nugget["text"], "importance": importance,
            "assignment": nugget.get("assignment")}
    if kept["assignment"] in (None, "unjudged"):
        kept.update(assignment="failed", error=str(nugget.get("raw") or "not judged"),
                    retryable=False)
    return kept


def _failed_warning(failures: int, what: str, cause: LlmError | None) -> list[str]:
    """The envelope's warning for a response with failed items."""
    if not failures:
        return []
    why = f": {cause.message}" if cause is not None else " (see each item's error)"
    return [f"{failures} {what} failed{why}"]


@router.post("/v1/judge")
async def judge_route(request: Request, payload: Payload) -> JSONResponse:
    """umbrela's judge: each candidate passage's relevance to the query, 0-3."""
    return await _answer("umbrela", "judge", _judge(_engine(request), payload))


async def _judge(engine: Engine, payload: dict[str, Any]) -> dict[str, Any]:
    given = cp.overrides(payload, cp.JUDGE_OVERRIDES, "judge")
    record = cp.query_record(payload, "judge")
    _within_limit(engine, len(record.candidates))
    model = _model(engine, given)
    grading = Grading()
    ids = [f"p{i}" for i in range(len(record.candidates))]
    async with engine.work(model) as work:
        graded, failed = await grade(work, {"q": Topic(id="q", text=record.query)}, {"q": ids},
                                     {d: Segment(id=d, text=c.text)
                                      for d, c in zip(ids, record.candidates)}, grading,
                                     partial=True)
        if failed is not None and not graded:
            raise failed  # nothing judged: 502 or 503, the cause in the envelope
        cause = llm_error(failed) if failed is not None else None
        judgments = []
        for d, c in zip(ids, record.candidates):
            found = graded.get(f"q\t{d}")
            one: dict[str, Any] = {"query": record.query, "passage": c.text,
                                   "judgment": (found or {}).get("grade")}
            if found is None:  # never asked: the LLM failed before
                one.update(unjudged="failed", error=cause.message if cause else "not graded",
                           retryable=bool(cause and cause.retryable))
            elif found.get("grade") is None:
                one.update(unjudged="failed", error=found.get("error", "not graded"),
                           retryable=False)
            judgments.append(one)
        failures = sum("unjudged" in j for j in judgments)
        return {**cp.envelope(
            "umbrela", "judge", inputs={"mode": "direct", "backend": work.assessor.spec},
            resolved={"input_mode": "direct",
                      "execution_mode": given.get("execution_mode", "sync"),
                      "backend": work.assessor.spec, "model": work.assessor.model,
                      "prompt_type": grading.scale.prompt, "few_shot_count": 0,
                      "scale": grading.scale.name},
            validation={"valid": True, "record_count": 1},
            artifacts=[cp.data_artifact("judgments", judgments)],
            metrics={"failed_count": failures} if failures else {},
            warnings=_failed_warning(failures, "judgments", cause)),
            "provenance": engine.provenance(work, prompts=(grading.scale.prompt,)),
            "usage": work.usage()}
