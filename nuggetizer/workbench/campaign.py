"""The campaign's operations: everything an organizer does, as plain functions over the
workbench's database. The organizer's pages are forms over these, and each `nuggetizer
workbench` command calls the same one, so the command line is the scriptable twin of every
page. Each function names accounts and projects by name, checks what it is given (a
ConfigError saying what to fix) and records what it changed, and by whom, in the audit log.

    projects     make_project, project_named, projects
    accounts     invite, reinvite, disable, enable, revoke, unlock, accounts, logins
    assignment   assign_topics, reassign_items
    watching     progress_of, agreement_of, board_of
    adjudication disagreements_of, settle_question
    files        export, import_files
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from nuggetizer.compare.judges import JudgesAgreement
from nuggetizer.errors import ConfigError
from nuggetizer.workbench import security, throttle
from nuggetizer.workbench.adjudicate import Disagreement, disagreements, settle
from nuggetizer.workbench.assign import Assigned, assign, people, reassign
from nuggetizer.workbench.board import Board, boards
from nuggetizer.workbench.build import ProjectSpec, create_project
from nuggetizer.workbench.exports import export_project
from nuggetizer.workbench.imports import import_judgments
from nuggetizer.workbench.progress import Progress, agreement, progress
from nuggetizer.workbench.store import Account, Audit, Login, Project, audit, now

DAY = timedelta(days=1)


# --- projects ---

def make_project(db: Session, spec: ProjectSpec, by: Account) -> Project:
    """Make a project from a track's files (and assign it when the spec names assessors)."""
    if by.role != "organizer":
        raise ConfigError(f"{by.name!r} is not an organizer")
    return create_project(db, spec, by)


def project_named(db: Session, name: str) -> Project:
    """The project of this name, or a ConfigError listing those there are."""
    project = db.scalar(select(Project).where(Project.name == name))
    if project is None:
        there = ", ".join(p.name for p in projects(db)) or "none yet"
        raise ConfigError(f"no project {name!r} (projects: {there})")
    return project


def projects(db: Session) -> list[Project]:
    """Every project, oldest first."""
    return list(db.scalars(select(Project).order_by(Project.id)))


# --- accounts ---

def account_named(db: Session, name: str) -> Account:
    """The account of this name, or a ConfigError."""
    account = db.scalar(select(Account).where(Account.name == name))
    if account is None:
        raise ConfigError(f"no account {name!r}")
    return account


def organizer_named(db: Session, name: str) -> Account:
    """The organizer account of this name, or a ConfigError."""
    account = db.scalar(select(Account).where(Account.name == name))
    if account is None or account.role != "organizer":
        raise ConfigError(f"no organizer account {name!r}")
    return account


def invite(db: Session, name: str, role: str = "assessor", by: Account | None = None,
           password: str | None = None) -> str | None:
    """Add an account: the invitation token to choose a password (shown once), or none when
    a password is given."""
    return security.add_account(db, name, role, password, by)


def reinvite(db: Session, name: str, by: Account | None = None) -> str:
    """Reset an account by a new invitation (its password and sessions ended); the token."""
    return security.reinvite(db, account_named(db, name), by)


def disable(db: Session, name: str, by: Account | None = None) -> int:
    """Disable an account: it cannot log in, its sessions end (how many); its assignments
    and judgments stay (reassign its unfinished items)."""
    account = account_named(db, name)
    if by is not None and account.id == by.id:
        raise ConfigError("an organizer cannot disable their own account")
    return security.set_disabled(db, account, True, by)


def enable(db: Session, name: str, by: Account | None = None) -> None:
    """Let a disabled account log in again."""
    security.set_disabled(db, account_named(db, name), False, by)


def revoke(db: Session, name: str, by: Account | None = None) -> int:
    """End every session of an account; how many there were."""
    return security.revoke_sessions(db, account_named(db, name), by)


def unlock(db: Session, what: str, limiter: throttle.Limiter | None = None,
           by: Account | None = None) -> bool:
    """End the login lockout of an account (its name) or a client (`client:ADDRESS`);
    whether one was in force."""
    key = what if what.startswith(("client:", "account:")) else throttle.account_key(what)
    was = limiter.unlock(db, key) if limiter is not None else throttle.unlock(db, key)
    db.add(audit(by.id if by else None, None, "unlock", key=key, was_locked=was))
    db.commit()
    return was


@dataclass
class AccountRow:
    """An account as the organizer's list shows it."""

    name: str
    role: str
    state: str  # active, invited, invitation expired, disabled
    sessions: int
    last_login: datetime | None
    failures: int  # failed logins in the last day
    locked_until: datetime | None


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _state(account: Account) -> str:
    if account.disabled:
        return "disabled"
    if account.password_hash:
        return "active"
    if account.invited is not None and now() - _utc(account.invited) <= timedelta(
            days=security.INVITE_DAYS):
        return "invited"
    return "invitation expired"


def accounts(db: Session) -> list[AccountRow]:
    """Every account with its state, sessions, last login and failed logins of the day."""
    since = now() - DAY
    sessions = dict(db.execute(select(Login.account_id, func.count()).group_by(
        Login.account_id)).all())
    last = dict(db.execute(select(Audit.account_id, func.max(Audit.at)).where(
        Audit.action == "login").group_by(Audit.account_id)).all())
    failed = dict(db.execute(select(Audit.account_id, func.count()).where(
        Audit.action == "login-failed", Audit.at >= since).group_by(Audit.account_id)).all())
    locks = {lock.key: lock.until for lock in throttle.locked(db)}
    return [AccountRow(a.name, a.role, _state(a), sessions.get(a.id, 0), last.get(a.id),
                       failed.get(a.id, 0), locks.get(throttle.account_key(a.name)))
            for a in db.scalars(select(Account).order_by(Account.role.desc(), Account.name))]


@dataclass
class Logins:
    """What the organizer is told of the logins of the last day: failures, lockouts, the
    keys locked now, the latest failures (when, name, client), and attempts refused while
    locked (this server's count)."""

    failures: int
    lockouts: int
    locked: list[throttle.Lock]
    latest: list[tuple[datetime, str, str]] = field(default_factory=list)
    refused: int = 0


def logins(db: Session, limiter: throttle.Limiter | None = None, latest: int = 10) -> Logins:
    """Failed logins and lockouts of the last day, and what is locked now."""
    since = now() - DAY
    rows = db.scalars(select(Audit).where(Audit.action.in_(("login-failed", "login-locked")),
                                          Audit.at >= since).order_by(Audit.id.desc())).all()
    failed = [r for r in rows if r.action == "login-failed"]
    shown = []
    for r in failed[:latest]:
        detail = json.loads(r.detail)
        shown.append((_utc(r.at), str(detail.get("name", "")), str(detail.get("client", ""))))
    return Logins(len(failed), len(rows) - len(failed), throttle.locked(db), shown,
                  sum(limiter.refused.values()) if limiter is not None else 0)


# --- assignment ---

def assign_topics(db: Session, project_name: str, assessors: Sequence[str], *,
                  tasks: Sequence[str] = (), topics: Sequence[str] = (),
                  overlap: float = 0.0, by: Account | None = None) -> Assigned:
    """Give a project's topics (all, or those named) of its tasks (all, or those named) to
    the assessors in turn, the `overlap` share of topics to two of them."""
    project = project_named(db, project_name)
    return assign(db, project, people(db, assessors), tasks=tasks or None,
                  topics=topics or None, overlap=overlap, by=by)


def reassign_items(db: Session, project_name: str, source: str, target: str, *,
                   tasks: Sequence[str] = (), topics: Sequence[str] = (),
                   by: Account | None = None) -> int:
    """Move an assessor's unfinished items to another; how many moved."""
    project = project_named(db, project_name)
    return reassign(db, project, account_named(db, source), account_named(db, target),
                    tasks=tasks or None, topics=topics or None, by=by)


# --- watching ---

def progress_of(db: Session, project_name: str) -> Progress:
    """Done, left and time per item, per assessor and per topic."""
    return progress(db, project_named(db, project_name))


def agreement_of(db: Session, project_name: str) -> dict[str, JudgesAgreement]:
    """Agreement per task on the questions judged twice (the LLM one more judge)."""
    return agreement(db, project_named(db, project_name))


def board_of(db: Session, project_name: str) -> list[Board]:
    """Each task's leaderboard from what is judged so far."""
    return boards(db, project_named(db, project_name))


# --- adjudication ---

def disagreements_of(db: Session, project_name: str) -> list[Disagreement]:
    """Every question the assessors of an item labelled differently."""
    return disagreements(db, project_named(db, project_name))


def settle_question(db: Session, project_name: str, ref: str, key: str, label: str,
                    by: Account) -> None:
    """The organizer's label of a disagreeing question."""
    if by.role != "organizer":
        raise ConfigError(f"{by.name!r} is not an organizer")
    settle(db, project_named(db, project_name), ref, key, label, by)


# --- files ---

def export(db: Session, project_name: str, out: Path) -> dict[str, int]:
    """Write the project's judgments as the files `score` reads; items and items not judged
    yet, per task."""
    return export_project(db, project_named(db, project_name).name, out)


def import_files(db: Session, project_name: str, task: str, assessor: str,
                 paths: Sequence[Path], mapping: Path | None = None,
                 by: Account | None = None) -> int:
    """Existing judgments brought in as an assessor's; the items filled."""
    return import_judgments(db, project_named(db, project_name).name, task, assessor, paths,
                            mapping, by)
