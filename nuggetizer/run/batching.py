"""`--batch-api`: a step's uncached calls sent through the OpenAI Batch API, in rounds.

A round runs the step into a throw-away folder on a stand-in of the assessor
(Assessor.stand_in: the real one's model, settings and cache keys, its calls answered by a
BatchRound): calls the cache holds are replayed; each other call is recorded (its cache key
and the exact body a live call sends) and refused, which leaves its item unjudged in the
throw-away output. A call made after such a miss in the same task (the next window of nugget
creation, importance after creation) depends on an answer still to come: it is refused
without being recorded, so no request is sent that the real run would not make. The recorded
calls go out as one batch; its answers are folded into the cache under the same keys; the
next round finds them there and records the calls that depended on them. When a round
records nothing (at most MAX_ROUNDS), the step runs for real into its outputs: every call is
a cache hit.

A batch whose lines the server refused for a parameter the backend can change (`max_tokens`
or `temperature` on a reasoning model) teaches the backend, as a live call would: the next
round collects those requests again, adapted.

A request whose batch line failed (an error line, a non-200 status, no answer in a batch
that expired or failed) is sent again in another batch, RETRIES times at most; after that the
real run refuses it with the batch's reason ("batch: ..."): its item is left unjudged and
counted like any refusal, never sent live.

Resuming: each batch's state (input file id, batch id) is written to FOLDER/.batches/ before
and after it is created (the id before anything is polled or folded; a batch created and not
yet recorded is found again by its upload), and once its answers are all folded ("failed":
the lines that were not answered). Before a step collects anything, every batch an earlier
command of the step left open (created, not yet folded: killed while polling, or while
folding its answers into the cache) is polled and folded first, from its own request file,
so a rerun never sends again what a batch already holds, however much of it was folded. The
state is removed when the step ends; the request files are kept (vLLM's run_batch answers
them too: `nuggetizer batch-import`). The answers of the batches whose state a killed
command left are spent for the step when it replays them (batch answers, not cache hits),
unless the killed command's spend journal already counted them (run/usage.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

import click

from nuggetizer.assessors.base import Assessor
from nuggetizer.assessors.batch_api import (
    TERMINAL,
    BatchBackend,
    BatchClient,
    LineResult,
    read_results,
)
from nuggetizer.assessors.batch_api import request_line as _line
from nuggetizer.assessors.openai_compat import parse_completion
from nuggetizer.assessors.outcomes import adaptable_in
from nuggetizer.assessors.protocol import Completion, RefusedError, Request, TransientError
from nuggetizer.assessors.stats import paid, paid_before
from nuggetizer.cache import Cache
from nuggetizer.errors import ConfigError, NuggetizerError
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.run.progress import progress_bar
from nuggetizer.testing.killpoints import kill_point

T = TypeVar("T")
MAX_ROUNDS = 64
RETRIES = 2  # more batches for a request whose line failed, before it is left unjudged
FIRST_POLL = 1.0  # seconds before the first poll; the wait grows 1.5 times up to --batch-poll

# True in a task once one of its calls was recorded: its later calls wait for that answer
_waiting: ContextVar[bool] = ContextVar("nuggetizer_batch_waiting", default=False)


class Collected(RefusedError):
    """A round's answer to a call it recorded (or one that waits for an earlier answer)."""


class RequestsWritten(NuggetizerError):
    """--batch-write-only: the round's request file is written; the command stops."""

    exit_code = 0


class BatchRound:
    """The sender of the real assessor's stand-in in a batched step (see the module's doc).
    `collecting`: record the calls the cache does not hold; else (the real run): refuse them
    with the batch's reason, never send them."""

    def __init__(self, backend: BatchBackend, failed: dict[str, str], collecting: bool,
                 folded: dict[str, tuple[int, int, int]] | None = None) -> None:
        self.batch_backend = backend  # real.backend, as the Batch API sees it
        self.failed = failed
        self.folded = folded if folded is not None else {}
        self.collecting = collecting
        self.pending: dict[str, dict[str, Any]] = {}

    async def complete(self, assessor: Assessor, request: Request) -> Completion:
        key = assessor.cache_key(request)
        replayed = assessor.replay(key)
        if replayed is not None:
            spent = None if self.collecting else self.folded.pop(key, None)
            if spent is not None and not paid_before(key):  # paid for, at the batch price
                paid({"batch_calls": 1, "batch_prompt_tokens": spent[0],
                      "batch_completion_tokens": spent[1],
                      "batch_reasoning_tokens": spent[2]}, key)
                stats = assessor.stats
                stats.batch_calls += 1
                stats.batch_prompt_tokens += spent[0]
                stats.batch_completion_tokens += spent[1]
                stats.batch_reasoning_tokens += spent[2]
            return replayed
        reason = self.failed.get(key)
        if self.collecting:
            if reason is None and not _waiting.get():
                self.pending[key] = self.batch_backend.request_args(request)
                _waiting.set(True)
            raise Collected("batch: waiting for the batch's answer")
        exc = RefusedError(f"batch: {reason or 'not answered by a batch'}")
        assessor.count_refusal(exc)
        raise exc


def fold_results(cache: Cache, requests: dict[str, dict[str, Any]],
                 results: dict[str, LineResult], missing: str,
                 folded: dict[str, tuple[int, int, int]] | None = None) -> dict[str, str]:
    """Store every answered request's completion in `cache` under its custom_id (its cache
    key), as a live call would have; cache key -> reason for the others (`missing`: the
    reason of a request with no line at all). `folded`: cache key -> (prompt, completion,
    reasoning) tokens of each answer stored, added to."""
    failures: dict[str, str] = {}
    for key, body in requests.items():
        result = results.get(key)
        if result is None or result.body is None:
            failures[key] = result.error or missing if result is not None else missing
            continue
        try:
            completion = parse_completion(result.body, str(body.get("model") or ""),
                                          int(body.get("top_logprobs") or 0))
        except TransientError as exc:
            failures[key] = str(exc)
            continue
        cache.put(key, completion.to_json())
        kill_point("batch.fold")
        if folded is not None:
            folded[key] = (completion.prompt_tokens, completion.completion_tokens,
                           completion.reasoning_tokens)
    return failures


def request_text(requests: dict[str, dict[str, Any]]) -> str:
    """The batch input file: one line per request, custom_id = cache key, sorted."""
    return "".join(_line(key, requests[key]) + "\n" for key in sorted(requests))


class Batcher:
    """Runs steps batched (see the module's doc); counts what it sent."""

    def __init__(self, assessor: Assessor, folder: Path, *, poll: float = 60.0,
                 write_only: bool = False, retries: int = RETRIES,
                 max_rounds: int = MAX_ROUNDS) -> None:
        backend = assessor.backend
        if not isinstance(backend, BatchBackend):
            raise ConfigError(f"--batch-api sends through the OpenAI Batch API: it needs "
                              f"--assessor openai:MODEL, not {assessor.spec}")
        if assessor.cache is None:
            raise ConfigError("--batch-api folds the batch's answers into the LLM cache: leave "
                              "out --no-cache")
        self.assessor, self.backend, self.cache = assessor, backend, assessor.cache
        self.folder = folder / ".batches"
        self.poll, self.write_only = max(poll, 0.01), write_only
        self.retries, self.max_rounds = retries, max_rounds
        self.failed: dict[str, str] = {}
        self.rounds = self.batches = self.sent = self.resumed = 0
        self.recovered = 0  # answers an earlier, killed command folded and never used
        self.usage = [0, 0]  # prompt and completion tokens of the answers folded
        # the answers folded and not yet replayed by the step's real run, which counts them
        # as spent (Stats.batch_*): cache key -> (prompt, completion) tokens
        self.folded: dict[str, tuple[int, int, int]] = {}

    async def run(self, step: str,
                  work: Callable[[Assessor, Path | None], Coroutine[Any, Any, T]]) -> T:
        """`work(assessor, folder)` (folder None: the real outputs) batched: rounds into
        throw-away folders until one records nothing, then the real run."""
        self._count_folded(self._left_folded(step))
        await self._resume_open(step)
        for _ in range(self.max_rounds):
            collector = BatchRound(self.backend, self.failed, collecting=True)
            with tempfile.TemporaryDirectory(prefix="nuggetizer-batch-") as tmp:
                _waiting.set(False)
                stand_in = self.assessor.stand_in(collector)  # counters of its own
                await asyncio.create_task(work(stand_in, Path(tmp)))  # a context of its own
            if not collector.pending:
                break
            self.rounds += 1
            if self.write_only:
                path = self._paths(step, collector.pending, 1)[1]
                self._write_requests(path, collector.pending)
                raise RequestsWritten(
                    f"{len(collector.pending)} requests written to {path}; answer them (e.g. "
                    f"vLLM: python -m vllm.entrypoints.openai.run_batch -i {path} -o "
                    f"results.jsonl --model MODEL), fold the answers in with `nuggetizer "
                    f"batch-import results.jsonl --requests {path}`, then run this command "
                    "again (it writes the next round's requests, or finishes)")
            await self.send(step, collector.pending)
        else:
            click.echo(f"batch {step}: still new calls after {self.max_rounds} rounds; the "
                       "rest are left unjudged", err=True)
        final = BatchRound(self.backend, self.failed, collecting=False, folded=self.folded)
        result = await work(self.assessor.stand_in(final, self.assessor.stats), None)
        for state in self.folder.glob(f"{step}-*.json"):
            state.unlink()
        return result

    def line(self) -> str:
        """What the batches did, for the command's summary."""
        failed = f", {len(self.failed)} failed every time (left unjudged)" if self.failed else ""
        resumed = f", {self.resumed} resumed from an earlier command" if self.resumed else ""
        if self.recovered:
            resumed += f", {self.recovered} answers folded by an earlier command"
        return (f"batch: {self.sent} requests in {self.batches} batches over {self.rounds} "
                f"rounds{resumed}{failed}; answers: {self.usage[0]} prompt + {self.usage[1]} "
                "completion tokens at the batch price")

    async def send(self, step: str, requests: dict[str, dict[str, Any]]) -> None:
        """Send `requests` as one batch; the lines that failed again, RETRIES times at most;
        the requests that failed every time are remembered with their reason."""
        todo, failures = dict(requests), {}
        for attempt in range(1, self.retries + 2):
            failures = await self._one_batch(step, *self._paths(step, todo, attempt), todo)
            if not failures or self._adapted(failures):
                return  # (adapted: the next round collects them again, sent as adapted)
            todo = {key: todo[key] for key in failures}
            first = next(iter(failures.values()))
            more = "; sent again" if attempt <= self.retries else "; left unjudged"
            click.echo(f"batch {step}: {len(failures)} requests failed (e.g. {first}){more}",
                       err=True)
        self.failed.update(failures)

    def _adapted(self, failures: dict[str, str]) -> bool:
        """Whether the server refused a parameter of the requests that the backend can adapt
        (outcomes.Decision.ADAPT, here from the lines' reasons): then it is adapted, as a
        live call would be, and the requests are left for the next round."""
        before = self.assessor.options
        for reason in set(failures.values()):
            param = adaptable_in(reason)
            if param is not None:
                self.backend.adapt(param)
        return self.assessor.learned(before)

    def _paths(self, step: str, requests: dict[str, Any], attempt: int) -> tuple[Path, Path]:
        digest = hashlib.sha256("\n".join(sorted(requests)).encode()).hexdigest()[:12]
        name = f"{step}-{digest}-{attempt}"
        return self.folder / f"{name}.json", self.folder / f"{name}.requests.jsonl"

    def _write_requests(self, path: Path, requests: dict[str, dict[str, Any]]) -> None:
        if not path.exists():
            write_text_atomic(path, request_text(requests))

    async def _resume_open(self, step: str) -> None:
        """See through every batch of `step` an earlier command created (or uploaded) and did
        not fold: polled and folded from its own request file, whatever this command's rounds
        would collect now (a batch killed while folding holds answers the cache lacks and
        answers it has). Its failed lines are left to the rounds, which send them again."""
        for state_path in sorted(self.folder.glob(f"{step}-*.json")):
            requests_path = state_path.with_name(state_path.stem + ".requests.jsonl")
            try:
                state = json.loads(state_path.read_text(encoding="utf-8"))
                requests = {str(line["custom_id"]): dict(line["body"]) for line in
                            map(json.loads, requests_path.read_text(encoding="utf-8")
                                .splitlines()) if line}
            except (OSError, ValueError, KeyError, TypeError):
                continue  # no batch was sent from it, or its files are not ours to read
            if not isinstance(state, dict) or "failed" in state or "file_id" not in state:
                continue  # folded already, or nothing uploaded
            await self._one_batch(step, state_path, requests_path, requests)

    async def _one_batch(self, step: str, state_path: Path, requests_path: Path,
                         requests: dict[str, dict[str, Any]]) -> dict[str, str]:
        """Send (or resume) one batch; fold its answers; cache key -> reason of the others."""
        state: dict[str, Any] = (json.loads(state_path.read_text(encoding="utf-8"))
                                 if state_path.exists() else {})
        if "failed" in state:  # folded by an earlier command killed after it
            return dict(state["failed"])
        self._write_requests(requests_path, requests)

        def save() -> None:
            write_text_atomic(state_path, json.dumps(state, indent=1) + "\n")

        client = BatchClient(self.backend.endpoints[0], self.backend.api_key,
                             self.assessor.retried)
        label = f"batch {step} ({requests_path.name})"
        try:
            if "batch_id" in state:
                self.resumed += 1
                click.echo(f"{label}: resuming batch {state['batch_id']} of an earlier "
                           "command", err=True)
            elif "file_id" in state and (made := await client.find(
                    state["file_id"], state.get("uploaded"))):
                state["batch_id"] = str(made["id"])  # created, then killed before recording
                save()
                self.resumed += 1
                click.echo(f"{label}: resuming batch {state['batch_id']}, made from this "
                           "upload by an earlier command", err=True)
            else:
                if "file_id" not in state:
                    uploaded = int(time.time()) - 60  # a server's clock may run behind
                    state["file_id"] = await client.upload(requests_path.read_bytes(),
                                                           requests_path.name)
                    state["uploaded"] = uploaded
                    save()
                batch = await client.create(state["file_id"], {"nuggetizer_step": step})
                kill_point("batch.created")
                state["batch_id"] = str(batch["id"])
                save()
                self.batches += 1
                self.sent += len(requests)
                click.echo(f"{label}: batch {state['batch_id']} created, {len(requests)} "
                           "requests", err=True)
            batch = await self._poll(client, state["batch_id"], len(requests), label)
            results: dict[str, LineResult] = {}
            for field in ("error_file_id", "output_file_id"):
                if batch.get(field):
                    results.update(read_results(await client.content(str(batch[field]))))
        finally:
            await client.close()
        status = str(batch.get("status"))
        errors = (batch.get("errors") or {}).get("data") or []
        why = f": {errors[0].get('message')}" if errors and isinstance(errors[0], dict) else ""
        folded: dict[str, tuple[int, int, int]] = {}
        state["failed"] = fold_results(self.cache, requests, results,
                                       f"the batch ended {status}{why} without this request",
                                       folded)
        self._add_folded(folded)
        state["status"] = status
        save()
        kill_point("batch.folded")
        return dict(state["failed"])

    def _add_folded(self, folded: dict[str, tuple[int, int, int]]) -> None:
        """Answers folded into the cache, to be counted as spent when the step uses them."""
        new = {key: spent for key, spent in folded.items() if key not in self.folded}
        self.folded.update(new)
        self.usage[0] += sum(spent[0] for spent in new.values())
        self.usage[1] += sum(spent[1] for spent in new.values())

    def _count_folded(self, stored: dict[str, dict[str, Any] | None]) -> None:
        """The answers an earlier command folded (cache key -> the cache's JSON) and never
        used: spent for this command's step (those its killed step journalled as spent are
        left out when replayed: `paid_before`)."""
        found = {key: (c.prompt_tokens, c.completion_tokens, c.reasoning_tokens)
                 for key, data in stored.items() if data is not None
                 for c in [Completion.from_json(data, cached=True)]}
        self.recovered += len(found)
        self._add_folded(found)

    def _left_folded(self, step: str) -> dict[str, dict[str, Any] | None]:
        """What the cache holds for the requests of the batches an earlier command of `step`
        sent and did not see through (their state is removed when a step ends): cache key ->
        the cache's JSON (None: not answered), the requests whose lines failed left out."""
        stored: dict[str, dict[str, Any] | None] = {}
        for state_path in sorted(self.folder.glob(f"{step}-*.json")):
            requests_path = state_path.with_name(state_path.stem + ".requests.jsonl")
            try:
                state = json.loads(state_path.read_text(encoding="utf-8"))
                keys = [str(json.loads(line)["custom_id"]) for line in
                        requests_path.read_text(encoding="utf-8").splitlines() if line.strip()]
                failed = dict(state.get("failed") or {})
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # no batch was sent from it, or its files are not ours to read
            for key in keys:
                if key not in failed:
                    stored[key] = self.cache.get(key)
        return stored

    async def _poll(self, client: BatchClient, batch_id: str, total: int, label: str
                    ) -> dict[str, Any]:
        """The batch once it has ended, with progress while it runs."""
        wait, shown = min(FIRST_POLL, self.poll), 0
        with progress_bar(total, label, unit="requests") as bar:
            while True:
                batch = await client.get(batch_id)
                counts = batch.get("request_counts") or {}
                done = int(counts.get("completed") or 0) + int(counts.get("failed") or 0)
                if done > shown:
                    bar.update(done - shown)
                    shown = done
                if batch.get("status") in TERMINAL:
                    return batch
                kill_point("batch.poll")
                await asyncio.sleep(wait)
                wait = min(self.poll, wait * 1.5)
