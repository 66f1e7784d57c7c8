"""The FastAPI application: one router per group of routes (castorini's, the methods', the
jobs'; more mount the same way), the JSON error handlers, and the guard around it all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI

from nuggetizer import __version__
from nuggetizer.errors import ConfigError
from nuggetizer.serve import battles, castorini, errors, jobs, methods
from nuggetizer.serve.engine import Engine
from nuggetizer.serve.guard import Guard
from nuggetizer.serve.jobs import Jobs
from nuggetizer.serve.settings import Settings

WORKBENCH = "/workbench"  # where the workbench's pages and API live when the server has one
ROUTERS: tuple[APIRouter, ...] = (castorini.router, methods.router, battles.router,
                                  jobs.router)


def create_app(settings: Settings, routers: tuple[APIRouter, ...] = ROUTERS) -> FastAPI:
    """The application (not yet guarded: `guarded` wraps it for serving)."""
    engine = Engine(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.jobs.resume()
        try:
            yield
        finally:
            await app.state.jobs.stop()
            await engine.close()

    app = FastAPI(title="nuggetizer", version=__version__, lifespan=lifespan,
                  description="TREC-style nugget evaluation of retrieval-augmented generation")
    app.state.engine = engine
    app.state.jobs = Jobs(engine, settings.state / "jobs")
    errors.install(app)
    for router in routers:
        app.include_router(router)
    if settings.workbench is not None:  # the assessors' workbench in the same server
        try:
            from nuggetizer.workbench.app import mount
        except ImportError as exc:
            raise ConfigError(f"--workbench needs the workbench extra ({exc.name} is missing): "
                              "pip install 'trec-nuggetizer[workbench]'") from None
        mount(app, settings.workbench, WORKBENCH)
    return app


def guarded(settings: Settings, app: FastAPI | None = None) -> Any:
    """The application behind its guard (bearer token, body size), as uvicorn serves it; its
    assessor made first, as every command makes it, so a bad one stops the start in a line."""
    app = app or create_app(settings)
    app.state.engine.assessor()
    return Guard(app, settings.token, settings.max_body)
