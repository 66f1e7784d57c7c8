"""`nuggetizer workbench`: the assessors' workbench run on its own. Every command calls the
campaign operation the organizer's page of the same name calls (workbench/campaign.py), so a
campaign can be run from a script as well as from the browser: accounts, projects made from a
track's files, assignment, progress, the board, adjudication, imports, exports, the server."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from nuggetizer.cli.common import ANY
from nuggetizer.errors import ConfigError
from nuggetizer.names import WORKBENCH_MODULES

TASKS = ("postedit", "assign", "support", "battle", "rubric")
DB = click.option("--db", "database", default="workbench.sqlite", show_default=True,
                  envvar="NUGGETIZER_WORKBENCH_DB",
                  help="SQLite file, or a database URL (postgresql://user@host/name)")
TASK = click.option("--task", "tasks", multiple=True, type=click.Choice(TASKS),
                    help="only these tasks (repeatable) [default: all the project's]")
TOPIC = click.option("--topic", "topics", multiple=True,
                     help="only these topic ids (repeatable) [default: all]")


@click.group("workbench")
def workbench_command() -> None:
    """The assessors' workbench (needs the [workbench] extra): a campaign run in the
    browser (`serve`) or from these commands, which the organizer's pages share."""
    missing = [m for m in WORKBENCH_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"the workbench needs {', '.join(missing)}: pip install "
                          "'trec-nuggetizer[workbench]'")


@contextmanager
def _db(database: str) -> Iterator[Any]:
    from nuggetizer.workbench.store import make_engine, sessions

    engine = make_engine(database)
    try:
        with sessions(engine)() as db:
            yield db
    finally:
        engine.dispose()


def _say(text: str) -> None:
    click.echo(f"workbench: {text}", err=True)


def _rows(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A table on stdout, tab-separated, for scripts."""
    click.echo("\t".join(header))
    for row in rows:
        click.echo("\t".join("" if c is None else str(c) for c in row))


# --- accounts ---

@workbench_command.command("account")
@click.argument("name")
@click.option("--role", type=click.Choice(["assessor", "organizer"]), default="assessor",
              show_default=True)
@click.option("--password-env", default=None,
              help="the environment variable holding the password [default: an invitation "
                   "token is printed instead]")
@DB
def account_command(name: str, role: str, password_env: str | None, database: str) -> None:
    """Invite someone: an account with an invitation to choose a password (the token on
    stdout, its page /invite/TOKEN; it works once, for 14 days), or with a password."""
    from nuggetizer.workbench import campaign

    password = os.environ.get(password_env) if password_env else None
    if password_env and not password:
        raise click.UsageError(f"the environment variable {password_env} is empty")
    with _db(database) as db:
        token = campaign.invite(db, name, role, password=password)
    _say(f"{role} {name} added" + (f"; invitation: /invite/{token}" if token else ""))
    if token:
        click.echo(token)


@workbench_command.command("reinvite")
@click.argument("name")
@DB
def reinvite_command(name: str, database: str) -> None:
    """Reset an account by a new invitation (a forgotten password): its password and
    sessions end, the new token is printed."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        token = campaign.reinvite(db, name)
    _say(f"{name}: password and sessions ended; invitation: /invite/{token}")
    click.echo(token)


@workbench_command.command("disable")
@click.argument("name")
@DB
def disable_command(name: str, database: str) -> None:
    """Disable an account: it cannot log in and its sessions end (its judgments stay)."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        ended = campaign.disable(db, name)
    _say(f"{name} disabled; {ended} sessions ended")


@workbench_command.command("enable")
@click.argument("name")
@DB
def enable_command(name: str, database: str) -> None:
    """Let a disabled account log in again."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        campaign.enable(db, name)
    _say(f"{name} enabled")


@workbench_command.command("revoke")
@click.argument("name")
@DB
def revoke_command(name: str, database: str) -> None:
    """End every session of an account (it logs in again)."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        ended = campaign.revoke(db, name)
    _say(f"{ended} sessions of {name} ended")


@workbench_command.command("unlock")
@click.argument("what")
@DB
def unlock_command(what: str, database: str) -> None:
    """End a login lockout: of an account (its NAME) or of a client (client:ADDRESS). A
    server keeps a lockout it saw in memory until it ends: unlock from its Accounts page to
    end it there too."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        was = campaign.unlock(db, what)
    _say(f"{what} unlocked" if was else f"{what} was not locked")


@workbench_command.command("accounts")
@DB
def accounts_command(database: str) -> None:
    """Every account: role, state, sessions, last login, failed logins of the last day and
    a lockout; then the logins' news (failures, lockouts) on stderr."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        rows = campaign.accounts(db)
        news = campaign.logins(db)
    _rows(("name", "role", "state", "sessions", "last_login", "failed_logins_day",
           "locked_until"),
          [(r.name, r.role, r.state, r.sessions, r.last_login, r.failures, r.locked_until)
           for r in rows])
    _say(f"{news.failures} failed logins and {news.lockouts} lockouts in the last day" +
         "".join(f"; {lock.key} locked until {lock.until:%Y-%m-%d %H:%M} UTC"
                 for lock in news.locked))


# --- projects ---

@workbench_command.command("create")
@click.argument("name")
@click.option("--organizer", required=True, help="the organizer account making it")
@click.option("--task", "tasks", multiple=True, required=True, type=click.Choice(TASKS))
@click.option("--assessor", "assessors", multiple=True,
              help="assessors to give the topics to in turn (repeatable; or `assign` later)")
@click.option("--topics", "topics", required=True, type=ANY,
              help="the topics: TSV qid<TAB>narrative, or a narratives JSONL")
@click.option("--narratives", type=ANY, default=None,
              help="the sub-narratives (a narratives JSONL) [default: the topics file's when "
                   "it is one, else those the nuggets map to]")
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
@click.option("--overlap", "--double", "double", type=float, default=0.0, show_default=True,
              help="share of topics judged by two assessors (agreement, adjudication)")
@click.option("--seed", type=int, default=0, show_default=True,
              help="draws which run each battle shows first")
@click.option("--show-llm/--hide-llm", default=False, show_default=True)
@click.option("--llm", "llm", multiple=True, type=(click.Choice(TASKS), ANY),
              help="TASK PATH: the LLM's judgments of a task (suggestions, and agreement)")
@DB
def create_command(name: str, organizer: str, tasks: tuple[str, ...],
                   assessors: tuple[str, ...], topics: Path, narratives: Path | None,
                   runs: tuple[Path, ...], nuggets: Path | None, corpus: Path | None,
                   rubrics: Path | None, grading: str, double: float, seed: int,
                   show_llm: bool, llm: tuple[tuple[str, Path], ...], database: str) -> None:
    """Make a project from a track's files; with --assessor, give its topics to them in
    turn."""
    from sqlalchemy import func, select

    from nuggetizer.workbench import campaign
    from nuggetizer.workbench.build import ProjectSpec
    from nuggetizer.workbench.store import Item

    judged: dict[str, list[Path]] = {}
    for task, path in llm:
        judged.setdefault(task, []).append(path)
    spec = ProjectSpec(name, topics, tasks, assessors, runs, nuggets, corpus, rubrics,
                       grading, double, show_llm, judged, narratives, seed)
    with _db(database) as db:
        project = campaign.make_project(db, spec, campaign.organizer_named(db, organizer))
        count = db.scalar(select(func.count()).select_from(Item).where(
            Item.project_id == project.id))
    _say(f"project {project.name}: {count} items of {', '.join(tasks)}" +
         (f" for {len(assessors)} assessors" if assessors else "; assign them with "
          "`nuggetizer workbench assign`"))


@workbench_command.command("assign")
@click.argument("project")
@click.option("--assessor", "assessors", multiple=True, required=True,
              help="the assessors, in turn (repeatable)")
@TASK
@TOPIC
@click.option("--overlap", type=float, default=0.0, show_default=True,
              help="share of the topics judged by two assessors")
@DB
def assign_command(project: str, assessors: tuple[str, ...], tasks: tuple[str, ...],
                   topics: tuple[str, ...], overlap: float, database: str) -> None:
    """Give a project's topics to assessors in turn (topic k to assessor k mod n, the
    overlap's topics to the next one too); an assignment with saved work stays."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        made = campaign.assign_topics(db, project, assessors, tasks=tasks, topics=topics,
                                      overlap=overlap)
    _say(f"{project}: {made.added} assignments added, {made.dropped} dropped, {made.kept} "
         f"kept (work saved on them); topics judged twice: {', '.join(made.twice) or 'none'}")


@workbench_command.command("reassign")
@click.argument("project")
@click.option("--from", "source", required=True, help="the assessor whose items move")
@click.option("--to", "target", required=True, help="the assessor they move to")
@TASK
@TOPIC
@DB
def reassign_command(project: str, source: str, target: str, tasks: tuple[str, ...],
                     topics: tuple[str, ...], database: str) -> None:
    """Move an assessor's unfinished items to another (finished ones stay)."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        moved = campaign.reassign_items(db, project, source, target, tasks=tasks,
                                        topics=topics)
    _say(f"{project}: {moved} unfinished items moved from {source} to {target}")


@workbench_command.command("progress")
@click.argument("project")
@click.option("--by", type=click.Choice(["assessor", "topic"]), default="assessor",
              show_default=True)
@DB
def progress_command(project: str, by: str, database: str) -> None:
    """Items assigned, done and left, the median seconds per item and the hours spent, per
    assessor (or topic) and task."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        done = campaign.progress_of(db, project)
    rows = done.by_assessor if by == "assessor" else done.by_topic
    _rows((by, "task", "assigned", "done", "left", "median_seconds", "hours"),
          [(*r[:5], "" if r[5] is None else f"{r[5]:.1f}", f"{r[6]:.2f}") for r in rows])


@workbench_command.command("board")
@click.argument("project")
@DB
def board_command(project: str, database: str) -> None:
    """Each task's leaderboard from what is judged so far (as `score` scores the export:
    answers not judged yet left out and counted)."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        found = campaign.board_of(db, project)
    for board in found:
        unit = "battles" if board.task == "battle" else "answers"
        click.echo(f"# {board.task}: {board.items - board.not_judged} of {board.items} {unit} "
                   "judged" + (f"; left out: {board.left_out}" if board.left_out else ""))
        if board.rows:
            _rows(board.rows[0], board.rows[1:])
        else:
            click.echo(f"# {board.note}")


@workbench_command.command("disagreements")
@click.argument("project")
@DB
def disagreements_command(project: str, database: str) -> None:
    """Every question the assessors of an item labelled differently: the item's ref, the
    question's key, each label, the LLM's, and the decision once settled."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        found = campaign.disagreements_of(db, project)
    _rows(("ref", "task", "topic", "key", "labels", "llm", "settled", "by"),
          [(d.item.ref, d.item.task, d.item.qid, d.question["key"],
            ", ".join(f"{w}={label}" for w, label in d.labels.items()), d.llm or "",
            d.settled[0] if d.settled else "", d.settled[1] if d.settled else "")
           for d in found])


@workbench_command.command("settle")
@click.argument("project")
@click.argument("ref")
@click.argument("key")
@click.argument("label")
@click.option("--organizer", required=True, help="the organizer deciding")
@DB
def settle_command(project: str, ref: str, key: str, label: str, organizer: str,
                   database: str) -> None:
    """Decide a disagreement (REF and KEY as `disagreements` lists them) with LABEL; the
    export then carries it, with who decided."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        campaign.settle_question(db, project, ref, key, label,
                                 campaign.organizer_named(db, organizer))
    _say(f"{project}: {ref} {key} settled as {label}")


@workbench_command.command("export")
@click.argument("name")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="a new or empty folder, or an earlier export (replaced)")
@DB
def export_command(name: str, output: Path, database: str) -> None:
    """Write a project's judgments as the files `score` reads (every item: those not judged
    yet have every label unjudged and are listed in not-judged-yet.tsv)."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        counts = campaign.export(db, name, output)
    tasks = sorted({k.split(" ")[0] for k in counts})
    _say("export: " + ", ".join(
        f"{t} {counts[f'{t} items'] - counts[f'{t} not judged yet']} of "
        f"{counts[f'{t} items']} judged" for t in tasks) + f" to {output}")


@workbench_command.command("import")
@click.argument("name")
@click.argument("paths", nargs=-1, required=True, type=ANY)
@click.option("--task", required=True, type=click.Choice(TASKS))
@click.option("--assessor", required=True, help="whose judgments these are")
@click.option("--mapping", type=ANY, default=None, help="blind battle sheets: their mapping")
@DB
def import_command(name: str, paths: tuple[Path, ...], task: str, assessor: str,
                   mapping: Path | None, database: str) -> None:
    """Bring existing judgments, sheets or a post-edited key into a project (refused, with
    the first difference named, where they do not fit the project's items)."""
    from nuggetizer.workbench import campaign

    with _db(database) as db:
        filled = campaign.import_files(db, name, task, assessor, paths, mapping)
    _say(f"import: {filled} items of {task} judged by {assessor}")


@workbench_command.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="the address to listen on (another than 127.0.0.1 opens it to the network)")
@click.option("--port", default=8031, show_default=True, type=int)
@click.option("--sqlite-sync", "sync", type=click.Choice(["normal", "full"]), default="normal",
              show_default=True,
              help="SQLite: normal keeps every save through a killed server; full also "
                   "through a power cut, at a disk flush per save")
@click.option("--allow-dir", "allow", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="a folder whose files the organizer may make projects from in the browser "
                   "(repeatable) [default: none: uploads only]")
@click.option("--upload-dir", "uploads", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="where uploaded track files are kept [default: DB.uploads "
                                 "beside a SQLite database; none (no uploads) for a URL]")
@click.option("--max-upload-mb", "max_upload", type=click.IntRange(1, 100_000), default=200,
              show_default=True, help="the largest upload (all its files), in MB")
@DB
def serve_command(host: str, port: int, sync: str, allow: tuple[Path, ...],
                  uploads: Path | None, max_upload: int, database: str) -> None:
    """Serve the workbench's pages (on 127.0.0.1 unless --host says otherwise)."""
    import uvicorn

    from nuggetizer.workbench.app import create_app, default_settings

    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"workbench: listening on {host}: reachable from the network; put it "
                   "behind HTTPS", err=True)
    settings = default_settings(database, allow, uploads, max_upload * 2**20)
    uvicorn.run(create_app(database, sync, settings), host=host, port=port,
                log_level="warning")
