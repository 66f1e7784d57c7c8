"""`nuggetizer workbench`: the assessors' workbench run on its own: accounts, projects made
from a track's files, the server, and the export to the files `score` reads."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import click

from nuggetizer.cli.common import ANY
from nuggetizer.errors import ConfigError

DB = click.option("--db", "database", default="workbench.sqlite", show_default=True,
                  envvar="NUGGETIZER_WORKBENCH_DB",
                  help="SQLite file, or a database URL (postgresql://user@host/name)")


@click.group("workbench")
def workbench_command() -> None:
    """The assessors' workbench (needs the [workbench] extra)."""
    missing = [m for m in ("fastapi", "uvicorn", "sqlalchemy", "argon2", "multipart")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"the workbench needs {', '.join(missing)}: pip install "
                          "'trec-nuggetizer[workbench]'")


@workbench_command.command("account")
@click.argument("name")
@click.option("--role", type=click.Choice(["assessor", "organizer"]), default="assessor",
              show_default=True)
@click.option("--password-env", default=None,
              help="the environment variable holding the password [default: an invitation "
                   "token is printed instead]")
@DB
def account_command(name: str, role: str, password_env: str | None, database: str) -> None:
    """Add an account: with a password, or an invitation link to choose one."""
    from nuggetizer.workbench.security import add_account
    from nuggetizer.workbench.store import make_engine, sessions

    password = os.environ.get(password_env) if password_env else None
    if password_env and not password:
        raise click.UsageError(f"the environment variable {password_env} is empty")
    with sessions(make_engine(database))() as db:
        token = add_account(db, name, role, password)
    click.echo(f"workbench: {role} {name} added" +
               (f"; invitation: /invite/{token}" if token else ""), err=True)
    if token:
        click.echo(token)


@workbench_command.command("create")
@click.argument("name")
@click.option("--organizer", required=True, help="the organizer account making it")
@click.option("--task", "tasks", multiple=True, required=True,
              type=click.Choice(["postedit", "assign", "support", "battle", "rubric"]))
@click.option("--assessor", "assessors", multiple=True, required=True)
@click.option("--topics", "--narratives", "topics", required=True, type=ANY)
@click.option("--run", "runs", multiple=True, type=ANY,
              help="answer run JSONL whose answers the tasks show (repeatable)")
@click.option("--nuggets", type=ANY, default=None,
              help="the nugget key the post-editing and assignment tasks start from")
@click.option("--corpus", type=ANY, default=None,
              help="JSONL passages: the texts of the passages answers cite (support)")
@click.option("--rubrics", type=ANY, default=None,
              help="the rubrics key whose criteria the rubric task grades")
@click.option("--grading", type=click.Choice(["binary", "ternary"]), default="binary",
              show_default=True)
@click.option("--double", type=float, default=0.0, show_default=True,
              help="share of items judged by two assessors (agreement)")
@click.option("--show-llm/--hide-llm", default=False, show_default=True)
@click.option("--llm", "llm", multiple=True, type=(str, ANY),
              help="TASK PATH: the LLM's judgments of a task (suggestions, and agreement)")
@DB
def create_command(name: str, organizer: str, tasks: tuple[str, ...],
                   assessors: tuple[str, ...], topics: Path, runs: tuple[Path, ...],
                   nuggets: Path | None, corpus: Path | None, rubrics: Path | None,
                   grading: str, double: float, show_llm: bool,
                   llm: tuple[tuple[str, Path], ...], database: str) -> None:
    """Make a project from a track's files; topics go to assessors in turn."""
    from sqlalchemy import select

    from nuggetizer.workbench.build import ProjectSpec, create_project
    from nuggetizer.workbench.store import Account, Item, make_engine, sessions

    judged: dict[str, list[Path]] = {}
    for task, path in llm:
        judged.setdefault(task, []).append(path)
    spec = ProjectSpec(name, topics, tasks, assessors, runs, nuggets, corpus, rubrics,
                       grading, double, show_llm, judged)
    with sessions(make_engine(database))() as db:
        boss = db.scalar(select(Account).where(Account.name == organizer))
        if boss is None or boss.role != "organizer":
            raise click.UsageError(f"no organizer account {organizer!r}")
        project = create_project(db, spec, boss)
        count = len(db.scalars(select(Item).where(Item.project_id == project.id)).all())
    click.echo(f"workbench: project {name}: {count} items of {', '.join(tasks)} for "
               f"{len(assessors)} assessors", err=True)


@workbench_command.command("export")
@click.argument("name")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path))
@DB
def export_command(name: str, output: Path, database: str) -> None:
    """Write a project's judgments as the files `score` reads."""
    from nuggetizer.workbench.exports import export_project
    from nuggetizer.workbench.store import make_engine, sessions

    with sessions(make_engine(database))() as db:
        counts = export_project(db, name, output)
    click.echo("workbench export: " + ", ".join(f"{n} in {k}" for k, n in counts.items()) +
               f" to {output}", err=True)


@workbench_command.command("import")
@click.argument("name")
@click.argument("paths", nargs=-1, required=True, type=ANY)
@click.option("--task", required=True,
              type=click.Choice(["postedit", "assign", "support", "battle", "rubric"]))
@click.option("--assessor", required=True, help="whose judgments these are")
@click.option("--mapping", type=ANY, default=None, help="blind battle sheets: their mapping")
@DB
def import_command(name: str, paths: tuple[Path, ...], task: str, assessor: str,
                   mapping: Path | None, database: str) -> None:
    """Bring existing judgments, sheets or a post-edited key into a project."""
    from nuggetizer.workbench.imports import import_judgments
    from nuggetizer.workbench.store import make_engine, sessions

    with sessions(make_engine(database))() as db:
        filled, unmatched = import_judgments(db, name, task, assessor, paths, mapping)
    click.echo(f"workbench import: {filled} items of {task} judged by {assessor}" +
               (f"; {unmatched} records match no item of the project" if unmatched else ""),
               err=True)


@workbench_command.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="the address to listen on (another than 127.0.0.1 opens it to the network)")
@click.option("--port", default=8031, show_default=True, type=int)
@click.option("--sqlite-sync", "sync", type=click.Choice(["normal", "full"]), default="normal",
              show_default=True,
              help="SQLite: normal keeps every save through a killed server; full also "
                   "through a power cut, at a disk flush per save")
@DB
def serve_command(host: str, port: int, sync: str, database: str) -> None:
    """Serve the workbench's pages (on 127.0.0.1 unless --host says otherwise)."""
    import uvicorn

    from nuggetizer.workbench.app import create_app

    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"workbench: listening on {host}: reachable from the network; put it "
                   "behind HTTPS", err=True)
    uvicorn.run(create_app(database, sync), host=host, port=port, log_level="warning")
