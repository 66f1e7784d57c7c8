"""`nuggetizer serve`: the toolkit over HTTP (nuggetizer/serve/), with the assessor options of
every LLM command; bound to 127.0.0.1 unless told otherwise, and then only with a token."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path
from typing import Any

import click

from nuggetizer.cli.common import assessor_options
from nuggetizer.errors import ConfigError

TOKEN_ENV = "NUGGETIZER_SERVE_TOKEN"


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="address to bind (beyond loopback only with a token)")
@click.option("--port", type=int, default=8085, show_default=True)
@click.option("--token", default=None, envvar=TOKEN_ENV,
              help=f"bearer token every request but /healthz must carry [env {TOKEN_ENV}]")
@click.option("--state", type=click.Path(file_okay=False, path_type=Path),
              default=Path("serve-state"), show_default=True,
              help="folder of the jobs (their outputs and journals) and scratch space")
@click.option("--track", "tracks", multiple=True, metavar="NAME=FILE",
              help="a track.toml jobs may name (besides the shipped tracks)")
@click.option("--max-body", type=click.IntRange(min=1024), default=8 * 1024 * 1024,
              show_default=True, help="largest request body, in bytes (413 above)")
@click.option("--workbench", "workbench", default=None, metavar="DB",
              help="also serve the assessors' workbench under /workbench, on this database "
                   "(a SQLite file or a postgresql:// URL; see `nuggetizer workbench`); needs "
                   "the workbench extra")
@click.option("--max-items", type=click.IntRange(min=1), default=1000, show_default=True,
              help="most answers, passages, nuggets or records in one request (413 above)")
@click.option("--lenient", is_flag=True,
              help="requests' default for `lenient`: an off-menu label in a key (the TREC RAG "
                   "2024 nuggets' importance) kept as an unjudged item instead of refused; a "
                   "request's own `lenient` wins")
@assessor_options
def serve_command(host: str, port: int, token: str | None, state: Path, tracks: tuple[str, ...],
                  max_body: int, max_items: int, workbench: str | None, lenient: bool,
                  **options: Any) -> None:
    """Serve the toolkit over HTTP: castorini's /v1/create, /v1/assign and umbrela's /v1/judge,
    every method's keys, judgments and scores, relevance grading and jobs for whole tracks
    (OpenAPI docs at /docs). Needs the `serve` extra (fastapi, uvicorn)."""
    try:
        import uvicorn

        from nuggetizer.serve.app import guarded
        from nuggetizer.serve.settings import Settings
    except ImportError as exc:
        raise ConfigError(f"serve needs the serve extra ({exc.name} is missing): "
                          "pip install 'trec-nuggetizer[serve]'") from None
    named = {}
    for given in tracks:
        name, sep, path = given.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--track {given}: give NAME=FILE")
        named[name] = str(Path(path).resolve())
    settings = Settings(options=options, state=state.resolve(), host=host, port=port,
                        token=token, max_body=max_body, max_items=max_items, tracks=named,
                        workbench=workbench, lenient=lenient)
    settings.check()
    free_port(host, port)
    os.environ.setdefault("NUGGETIZER_PROGRESS_INTERVAL", "0")  # jobs report by events
    uvicorn.run(guarded(settings), host=host, port=port, log_level="warning",
                timeout_graceful_shutdown=5)


def free_port(host: str, port: int) -> None:
    """ConfigError (exit code 2) naming the address when `host:port` cannot be bound (another
    process listens there), before anything is started."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ConfigError(f"--host {host}: cannot be resolved ({exc})") from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(address)
        except OSError as exc:
            why = ("another process is listening there: stop it, or choose another --port"
                   if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc))
            raise ConfigError(f"--port {port}: cannot listen on {host}:{port}: {why}") from None
