"""The one engine under every route: the assessor the CLI's options build (run/factories.py),
shared by every request and job through `Assessor.sharing` (the same cache, concurrency limit,
retry policy and reasoning adaptations; an identical call in flight is sent once), the live
executor (run/execute.py) and a scratch folder per request for the steps' journals.

    engine = Engine(settings)
    async with engine.work() as work:          # one request's assessor, its usage counted
        results = await work.run(plan)
        work.usage()                           # {"calls": 0, "cache_hits": 3, ...}
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetizer.assessors.base import Assessor
from nuggetizer.errors import ConfigError, first_error
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.registry import make_method, method_names
from nuggetizer.run.execute import Live
from nuggetizer.run.factories import make_assessor_from
from nuggetizer.run.progress import TOKEN_FIELDS
from nuggetizer.run.provenance import provenance
from nuggetizer.run.stages import Plan
from nuggetizer.serve.errors import ApiError
from nuggetizer.serve.settings import Settings

SCRATCH_ENV = "NUGGETIZER_SERVE_SCRATCH"
MAX_MODELS = 8  # other models requests may ask for (castorini's `overrides.model`)


@dataclass
class Work:
    """One request's (or job's) share of the engine: its own assessor copy and scratch folder."""

    assessor: Assessor
    scratch: Path

    async def run(self, plan: Plan) -> list[Any]:
        """Run the plan live with this work's assessor: what each stage returned; a step's
        failure as the toolkit's error inside its task group (an LLM that failed: the
        AssessorError), never the group."""
        try:
            return await Live(self.assessor).run(plan)
        except BaseExceptionGroup as group:
            found = first_error(group)
            if found is None:
                raise
            raise found from found.__cause__  # its own cause kept (what the LLM answered)

    def usage(self) -> dict[str, Any]:
        """What this work spent (0 calls when the cache answered everything), priced when the
        server was given prices."""
        stats = self.assessor.stats.as_dict()
        spent: dict[str, Any] = {name: stats[name] for name in TOKEN_FIELDS}
        spent["retries"] = stats["retries"]
        prices = self.assessor.prices
        cost = prices.spent(stats) if prices is not None else None
        if cost is not None:
            spent["cost"] = cost
        return spent


class Engine:
    """The assessors (one per model asked for; the server's by default) and the scratch space."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.assessors: dict[str, Assessor] = {}
        self.scratch = scratch_root(settings)
        self.methods: dict[str, AnswerKeyMethod] = {}

    def assessor(self, model: str | None = None) -> Assessor:
        """The server's assessor, or one of the same kind for `model` (made once)."""
        options = dict(self.settings.options)
        key = model or ""
        if key not in self.assessors:
            if len(self.assessors) > MAX_MODELS:
                raise ApiError(422, "invalid_override", f"overrides.model: this server has "
                               f"made {MAX_MODELS} other models already; use one of "
                               f"{', '.join(sorted(k for k in self.assessors if k))}")
            if model is not None:
                spec = self.assessor().spec
                kind = spec.split(":", 1)[0]
                if kind == "mock":
                    options["assessor_spec"] = ("mock",)
                elif kind in ("openai", "vllm"):
                    options["assessor_spec"] = (f"{kind}:{model}",)
                else:
                    raise ApiError(422, "invalid_override", f"overrides.model: the server's "
                                   f"assessor {spec} has no other model")
            made = make_assessor_from(options)
            if not isinstance(made, Assessor):
                raise ConfigError("serve takes one --assessor (no ensemble, no --samples)")
            self.assessors[key] = made
        return self.assessors[key]

    def method(self, name: str, settings: Any = None, field: str = "settings"
               ) -> AnswerKeyMethod:
        """A registered method with its settings (422 for an unknown method, for `settings`
        given as anything but an object, named as `field`, and for a setting of the wrong
        type or out of its range, named)."""
        if not isinstance(name, str):
            raise ApiError(422, "invalid_request", "method: a method name")
        if settings is not None and not isinstance(settings, dict):
            raise ApiError(422, "invalid_request", f"{field}: an object of setting names and "
                           "values, e.g. {\"window\": 10}")
        key = f"{name}\t{sorted((settings or {}).items())!r}"
        if key not in self.methods:
            try:
                self.methods[key] = make_method(name, settings or {})
            except ConfigError as exc:
                raise ApiError(422, "unknown_method" if name not in method_names()
                               else "invalid_settings", str(exc)) from None
        return self.methods[key]

    @contextlib.asynccontextmanager
    async def work(self, model: str | None = None) -> AsyncIterator[Work]:
        """One request's assessor copy and scratch folder (removed at the end)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="request-", dir=self.scratch))
        try:
            yield Work(self.assessor(model).sharing(), folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def provenance(self, work: Work, method: AnswerKeyMethod | None = None,
                   prompts: tuple[str, ...] = ()) -> dict[str, Any]:
        """What the response was made with: assessor, model, template hashes, versions."""
        if method is not None:
            return provenance(work.assessor.provenance(), method.used_prompts(),
                              config={"method": method.name, **method.settings()},
                              prompt_dir=method.prompt_dir)
        return provenance(work.assessor.provenance(), prompts)

    async def close(self) -> None:
        for made in self.assessors.values():
            await made.aclose()
        shutil.rmtree(self.scratch, ignore_errors=True)


def scratch_root(settings: Settings) -> Path:
    """Where requests' scratch folders go: memory (/dev/shm) where the system has it, as
    nothing there outlives its request (its journals' fsyncs are then free), else the state
    folder; $NUGGETIZER_SERVE_SCRATCH chooses."""
    chosen = os.environ.get(SCRATCH_ENV)
    if chosen:
        return Path(chosen)
    memory = Path("/dev/shm")
    if memory.is_dir() and os.access(memory, os.W_OK):
        return memory / f"nuggetizer-serve-{os.getpid()}"
    return settings.state / "scratch"
