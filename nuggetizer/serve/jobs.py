"""Jobs for long work: a track's evaluation (plan/evaluate.py, as `nuggetizer evaluate` runs
it) submitted by the name of a track the server knows (the shipped ones, and those given to
`serve --track NAME=FILE`; never a path from the payload). Each job has a folder under the
server's state: job.json (its request, state and usage), its events, and out/ (the outputs,
journalled as the CLI's). A job the server was running when it stopped (or was killed) resumes
when it starts again, the journals skipping what was judged; a cancelled job stops sending
calls, keeps what was judged and can be resumed by submitting it again.

    POST /v1/jobs {"track": "sample"}          -> {"id", "state", ...}
    GET  /v1/jobs/ID                           -> state, usage, leaderboard when done
    GET  /v1/jobs/ID/events                    -> server-sent events (progress, stages, end)
    GET  /v1/jobs/ID/leaderboard, /files, /files/NAME;  POST /v1/jobs/ID/cancel
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import shutil
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, StreamingResponse

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import ConfigError, Interrupted, NuggetizerError
from nuggetizer.formats.track_inputs import read_track_inputs
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.plan.evaluate import (
    Evaluation,
    TrackMethod,
    TrackScope,
    evaluate_plan,
    track_methods,
    track_methods_made,
    track_wanted,
)
from nuggetizer.plan.track import Track, builtin_tracks, load_track
from nuggetizer.run.execute import Live
from nuggetizer.run.usage import usage_under
from nuggetizer.scoring.engine import ScoreTable
from nuggetizer.serve.door import Payload
from nuggetizer.serve.engine import Engine
from nuggetizer.serve.errors import ApiError, exc_text, from_toolkit
from nuggetizer.serve.plans import announced, check_plan, plan_of, read_plan

router = APIRouter(tags=["jobs"])
log = logging.getLogger("nuggetizer.serve")
ACTIVE = ("queued", "running")
EVENT_SECONDS = 0.5


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def leaderboard(table: ScoreTable) -> list[dict[str, Any]]:
    """The board's rows in ranking order: run_id and the mean of each measure."""
    return [{"run_id": run, **{m: table.means[run][m] for m in table.measures
                               if m in table.means[run]}} for run in table.ranking()]


class Quiet:
    """What evaluate shows as its scoring stages end: here, events of the job."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def scoring(self, method: AnswerKeyMethod) -> None:
        self.job.event("scoring", method=method.name)

    def scored(self, method: AnswerKeyMethod, table: ScoreTable) -> None:
        self.job.event("scored", method=method.name, leaderboard=leaderboard(table))

    def combined(self, names: list[str], table: ScoreTable) -> None:
        self.job.event("combined", methods=names)

    def failed(self, method: AnswerKeyMethod, why: str) -> None:
        self.job.event("failed", method=method.name, why=why)


class Job:
    """One job: its record (job.json), its events, and while it runs, its assessor copy."""

    def __init__(self, folder: Path, record: dict[str, Any]) -> None:
        self.folder, self.record = folder, record
        self.events: list[dict[str, Any]] = []
        self.assessor: Assessor | None = None
        self.task: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def out(self) -> Path:
        return self.folder / "out"

    def save(self) -> None:
        write_text_atomic(self.folder / "job.json", json.dumps(self.record, indent=1) + "\n")

    def usage(self) -> dict[str, Any]:
        """Every run of the job so far: what its steps' usage records hold (killed runs
        included, from their spend journals) when it started, plus this run's."""
        total = dict(self.record.get("usage_before") or {})
        if self.assessor is not None:
            for name, value in self.assessor.stats.as_dict().items():
                total[name] = total.get(name, 0) + value
        return total

    def recorded(self) -> dict[str, Any]:
        """What the job's usage records count (run/usage.py): the job's own spend, read
        from out/, whatever a server that was killed kept in memory."""
        return usage_under(self.out) if self.out.exists() else {}

    def event(self, kind: str, **fields: Any) -> None:
        self.events.append({"event": kind, "at": _now(), **fields})
        self.changed.set()

    def view(self) -> dict[str, Any]:
        shown = {k: v for k, v in self.record.items() if k != "usage_before"}
        return {**shown, "usage": self.usage()}


class Jobs:
    """Every job of the server, kept under `root`."""

    def __init__(self, engine: Engine, root: Path) -> None:
        self.engine, self.root = engine, root
        self.jobs: dict[str, Job] = {}

    def tracks(self) -> dict[str, str]:
        """Track names a job may name: the shipped ones and the server's own."""
        return {**{name: name for name in builtin_tracks()}, **self.engine.settings.tracks}

    def submit(self, payload: dict[str, Any]) -> Job:
        """A new job: a track the server knows (`track`), or a plan given inline (`plan`)."""
        if "plan" in payload:
            plan = payload["plan"]
            if not isinstance(plan, dict):
                raise ApiError(422, "invalid_request", "plan: an object")
            return self._new({"plan": plan.get("method", "nuggets")},
                             lambda folder: check_plan(self.engine, folder, plan))
        track = payload.get("track")
        known = self.tracks()
        if not isinstance(track, str) or track not in known:
            raise ApiError(422, "unknown_track", f"track: one of {', '.join(sorted(known))} "
                           "(a name the server knows, never a path), or give a plan")
        only = payload.get("only_topics")
        if only is not None and (not isinstance(only, list)
                                 or not all(isinstance(q, str) for q in only)):
            raise ApiError(422, "invalid_request", "only_topics: a list of topic ids")
        return self._new({"track": track, "only_topics": only}, lambda folder: None)

    def _new(self, fields: dict[str, Any], prepare: Any) -> Job:
        job_id = secrets.token_hex(8)
        folder = self.root / job_id
        folder.mkdir(parents=True)
        try:
            prepare(folder)  # checked and kept before the job exists
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        job = Job(folder, {"id": job_id, **fields, "state": "queued", "created": _now()})
        job.save()
        self.jobs[job_id] = job
        self.start(job)
        return job

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise ApiError(404, "unknown_job", f"no job {job_id!r}")
        return job

    def start(self, job: Job) -> None:
        job.task = asyncio.get_running_loop().create_task(self._run(job))

    def resume(self) -> None:
        """Read every job kept; start again those that were queued or running. A job whose
        job.json cannot be read is listed as "damaged" with the reason (and said on stderr),
        never skipped in silence; its folder is left as it is."""
        if not self.root.exists():
            return
        for path in sorted(self.root.glob("*/job.json")):
            record = _read_record(path)
            if "error" in record and record.get("state") == "damaged":
                log.warning("%s", record["error"])
            job = Job(path.parent, record)
            self.jobs[job.id] = job
            if record.get("state") in ACTIVE:
                job.event("resumed")
                self.start(job)

    def cancel(self, job: Job) -> None:
        if job.record["state"] not in ACTIVE:
            return
        job.record["cancel"] = True
        if job.assessor is not None:
            job.assessor.stop_new_calls()  # the calls in flight finish; their answers are kept

    async def stop(self) -> None:
        """The server stops: running jobs are left as running, to resume at the next start."""
        for job in self.jobs.values():
            if job.task is not None and not job.task.done():
                job.task.cancel()
        await asyncio.gather(*(j.task for j in self.jobs.values() if j.task is not None),
                             return_exceptions=True)

    async def _evaluation(self, job: Job) -> Evaluation:
        """The track's evaluation, as `nuggetizer evaluate` plans it, into the job's out/."""
        record = job.record
        known = self.tracks()
        if not isinstance(record.get("track"), str) or record["track"] not in known:
            raise ConfigError(f"track {record.get('track')!r} (in {job.folder / 'job.json'}) "
                              f"is not one this server knows ({', '.join(sorted(known))}): "
                              "start the server with --track NAME=FILE, then resume the job")
        config: Track = await asyncio.to_thread(load_track, known[record["track"]])
        only = set(record["only_topics"]) if record.get("only_topics") else None

        def planned() -> tuple[TrackScope, list[TrackMethod]]:
            made = track_methods_made(config)
            scope = TrackScope(config, read_track_inputs(track_wanted(config, made)), job.out,
                               only)
            return scope, track_methods(scope, made)

        scope, methods = await asyncio.to_thread(planned)
        evaluation = evaluate_plan(scope, methods, Quiet(job))
        evaluation.plan.stages = [announced(job, s) for s in evaluation.plan.stages]
        return evaluation

    async def _run(self, job: Job) -> None:
        record = job.record
        record["state"], record["started"] = "running", _now()
        record["runs"] = int(record.get("runs", 0)) + 1
        record["usage_before"] = job.recorded()
        job.save()
        job.event("started", run=record["runs"])
        try:
            job.assessor = self.engine.assessor().sharing()
            if record.get("cancel"):  # cancelled before it began: it ends at once
                job.assessor.stop_new_calls()
            if "plan" in record:
                plan, table = plan_of(self.engine, job, read_plan(job.folder))
                await Live(job.assessor).run(plan)
                record["leaderboard"] = leaderboard(table())
            else:
                evaluation = await self._evaluation(job)
                await Live(job.assessor).run(evaluation.plan)
                if evaluation.failed:
                    record["missing_methods"] = dict(evaluation.failed)
                if evaluation.table is None:
                    raise NuggetizerError("no method of the track could be scored: " + "; ".join(
                        f"{name}: {why}" for name, why in evaluation.failed.items()))
                record["leaderboard"] = leaderboard(evaluation.table)
            record["state"] = "done"
        except Interrupted:
            record["state"] = "cancelled"
        except asyncio.CancelledError:  # the server stops: resumed at its next start
            record["usage_before"] = job.recorded()
            job.assessor = None
            job.save()
            raise
        except NuggetizerError as exc:
            record["state"], record["error"] = "failed", from_toolkit(exc).message
        except Exception as exc:  # noqa: BLE001 - said in the job, never a traceback
            record["state"], record["error"] = "failed", f"{type(exc).__name__}: {exc_text(exc)}"
        record["finished"] = _now()
        record["usage_before"] = job.recorded()
        job.assessor = None
        job.save()
        job.event("end", state=record["state"])


def _read_record(path: Path) -> dict[str, Any]:
    """A job's record from its job.json, or a "damaged" record saying what is wrong with it
    and what to do."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(record, dict) and isinstance(record.get("id"), str) \
                and record.get("id") == path.parent.name:
            return record
        why = "it is not the record of this job (no matching id)"
    except OSError as exc:
        why = f"it cannot be read ({exc.strerror or exc})"
    except ValueError as exc:
        why = f"it is not whole JSON, perhaps cut short ({exc})"
    return {"id": path.parent.name, "state": "damaged",
            "error": f"{path}: {why}; the job is not resumed: repair the file or delete the "
                     "job's folder"}


def _jobs(request: Request) -> Jobs:
    jobs: Jobs = request.app.state.jobs
    return jobs


@router.post("/v1/jobs", status_code=202)
async def submit(request: Request, payload: Payload) -> dict[str, Any]:
    """Start a job: `{"track": NAME, "only_topics": [...]}`; or resume a cancelled or failed
    one: `{"resume": ID}`."""
    jobs = _jobs(request)
    if "resume" in payload:
        job = jobs.get(str(payload["resume"]))
        if job.record["state"] in ACTIVE:
            raise ApiError(409, "job_running", f"job {job.id} is {job.record['state']}")
        if job.record["state"] == "damaged":
            raise ApiError(409, "job_damaged", job.record["error"])
        job.record.pop("error", None)
        job.record.pop("cancel", None)
        jobs.start(job)
        return job.view()
    return jobs.submit(payload).view()


@router.get("/v1/jobs")
async def list_jobs(request: Request) -> dict[str, Any]:
    return {"jobs": [j.view() for j in _jobs(request).jobs.values()],
            "tracks": sorted(_jobs(request).tracks())}


@router.get("/v1/jobs/{job_id}")
async def status(request: Request, job_id: str) -> dict[str, Any]:
    return _jobs(request).get(job_id).view()


@router.post("/v1/jobs/{job_id}/cancel")
async def cancel(request: Request, job_id: str) -> dict[str, Any]:
    """Stop sending calls; what was judged is kept (journalled), the job ends cancelled."""
    jobs = _jobs(request)
    job = jobs.get(job_id)
    jobs.cancel(job)
    return job.view()


@router.get("/v1/jobs/{job_id}/leaderboard")
async def board(request: Request, job_id: str) -> dict[str, Any]:
    job = _jobs(request).get(job_id)
    if job.record.get("leaderboard") is None:
        raise ApiError(409, "not_done", f"job {job_id} is {job.record['state']}: no "
                       "leaderboard yet")
    return {"id": job.id, "leaderboard": job.record["leaderboard"]}


def _listing(job: Job) -> dict[str, Path]:
    if not job.out.exists():
        return {}
    return {p.relative_to(job.out).as_posix(): p for p in sorted(job.out.rglob("*"))
            if p.is_file()}


@router.get("/v1/jobs/{job_id}/files")
async def files(request: Request, job_id: str) -> dict[str, Any]:
    job = _jobs(request).get(job_id)
    return {"id": job.id, "files": [{"name": n, "bytes": p.stat().st_size}
                                    for n, p in _listing(job).items()]}


@router.get("/v1/jobs/{job_id}/files/{name:path}")
async def file(request: Request, job_id: str, name: str) -> FileResponse:
    """One of the files the listing names (no other path is ever opened)."""
    job = _jobs(request).get(job_id)
    found = _listing(job).get(name)
    if found is None:
        raise ApiError(404, "unknown_file", f"job {job_id} has no file {name!r} (see /files)")
    return FileResponse(found)


@router.get("/v1/jobs/{job_id}/events")
async def events(request: Request, job_id: str) -> StreamingResponse:
    """Server-sent events: each of the job's events, a `progress` event (state and usage)
    every half second while it runs, and `end` when it is over."""
    job = _jobs(request).get(job_id)

    async def stream() -> AsyncIterator[str]:
        sent = 0
        last = 0.0
        while True:
            while sent < len(job.events):
                event = job.events[sent]
                sent += 1
                yield f"event: {event['event']}\ndata: {json.dumps(event)}\n\n"
            if job.record["state"] not in ACTIVE and (not job.events
                                                      or job.events[-1]["event"] == "end"
                                                      or job.task is None):
                yield f"event: job\ndata: {json.dumps(job.view())}\n\n"
                return
            if time.monotonic() - last >= EVENT_SECONDS:
                last = time.monotonic()
                yield f"event: progress\ndata: {json.dumps(job.view())}\n\n"
            job.changed.clear()
            try:
                await asyncio.wait_for(job.changed.wait(), EVENT_SECONDS)
            except TimeoutError:
                pass

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"cache-control": "no-cache"})
