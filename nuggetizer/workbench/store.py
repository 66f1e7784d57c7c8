"""The workbench's database (SQLAlchemy): SQLite in WAL mode by default, PostgreSQL by URL.

Accounts and their login sessions, projects, items (what one assessor judges on one page),
assignments of items to assessors, judgments (one per item and assessor, saved as made) and
the audit log of every change. An item's `shown` is what its page may show (a blind battle's
holds no run id); `record` is the method's blank judgment record, kept server-side for the
export; `suggestion` is the LLM's labels, shown only where the project says so.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from nuggetizer.errors import ConfigError

ROLES = ("organizer", "assessor")


def now() -> datetime:
    """The time of a change (UTC)."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """The workbench's tables."""


class Account(Base):
    """A person: an organizer or an assessor; a hashed password, or an invitation token (its
    hash, and when it was made: it expires) to set one; a disabled account cannot log in."""

    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    invite_hash: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    invited: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)


class Login(Base):
    """A login session: the hash of its cookie token, and its CSRF token."""

    __tablename__ = "logins"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    csrf: Mapped[str] = mapped_column(String(64))
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Project(Base):
    """An assessment project: its tasks and settings (`show_llm`, `double`, the files read)."""

    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Item(Base):
    """What one page judges: a task on one topic (and answer, or battle); `ref` is the opaque
    id its URL names."""

    __tablename__ = "items"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ref: Mapped[str] = mapped_column(String(32), unique=True, index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id"), index=True)
    task: Mapped[str] = mapped_column(String(16))
    qid: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    shown: Mapped[dict[str, Any]] = mapped_column(JSON)
    record: Mapped[dict[str, Any]] = mapped_column(JSON, deferred=True)  # read by exports only
    suggestion: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Assignment(Base):
    """An item given to an assessor."""

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("item_id", "account_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)


class Judgment(Base):
    """An assessor's labels of an item (question -> value), as last saved; `seconds` spent."""

    __tablename__ = "judgments"
    __table_args__ = (UniqueConstraint("item_id", "account_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    value: Mapped[dict[str, Any]] = mapped_column(JSON)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    saved: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Adjudication(Base):
    """The organizer's label of a question that an item's assessors labelled differently."""

    __tablename__ = "adjudications"
    __table_args__ = (UniqueConstraint("item_id", "key"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id"), index=True)
    key: Mapped[str] = mapped_column(String(64))
    label: Mapped[str] = mapped_column(String(32))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Throttle(Base):
    """Failed logins of one account or one client (`key`: "account:NAME", "client:ADDRESS"):
    the failures in the current window, and the lockout they led to (`strikes`: lockouts in
    a row, each twice as long as the one before)."""

    __tablename__ = "throttles"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    window: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True),
                                                          nullable=True)
    strikes: Mapped[int] = mapped_column(Integer, default=0)


class Audit(Base):
    """Who changed what and when: the question, its value before and after; a failed login
    names no account when its name is unknown."""

    __tablename__ = "audit"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now, index=True)
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"), nullable=True)
    item_id: Mapped[int | None] = mapped_column(ForeignKey("items.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text)


def audit(account_id: int | None, item_id: int | None, action: str, **detail: Any) -> Audit:
    """An audit row (the detail as JSON)."""
    return Audit(account_id=account_id, item_id=item_id, action=action,
                 detail=json.dumps(detail, ensure_ascii=False, sort_keys=True))


def database_url(target: str) -> str:
    """A SQLAlchemy URL: a URL as given, else a SQLite file path."""
    if "://" in target:
        if target.startswith("postgresql://"):
            return "postgresql+psycopg://" + target.removeprefix("postgresql://")
        return target
    return f"sqlite:///{target}"


SYNC = ("normal", "full")


def make_engine(target: str, sync: str = "normal") -> Engine:
    """The engine of a database (created with its tables when new). SQLite runs in WAL mode:
    with synchronous=normal (the default) a committed save survives a killed server (SIGKILL,
    a crash), and only a power cut or an OS crash can lose the last ones; synchronous=full
    survives those too at one disk flush per save (about 10 ms each, saves one at a time)."""
    if sync not in SYNC:
        raise ValueError(f"sync must be {' or '.join(SYNC)}")
    url = database_url(target)
    # more connections than the server's 40 worker threads, so a worker seldom waits for one
    # (sessions give theirs back on the event loop, which never waits for a connection)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30},
                               pool_size=5, max_overflow=60)

        @event.listens_for(engine, "connect")
        def _pragmas(connection: Any, _record: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={sync.upper()}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()
    else:
        engine = create_engine(url, pool_size=10, max_overflow=40, pool_pre_ping=True)
    try:
        Base.metadata.create_all(engine)
    except SQLAlchemyError as exc:
        engine.dispose()
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise ConfigError(f"cannot open the workbench database {shown(target)}: {reason} "
                          "(a SQLite file in a folder that exists and is writable, or "
                          "a postgresql:// URL of a server that answers)") from None
    return engine


def shown(target: str) -> str:
    """A database as a message names it: a URL without its password."""
    if "://" not in target or "@" not in target:
        return target
    scheme, rest = target.split("://", 1)
    user, host = rest.rsplit("@", 1)
    return f"{scheme}://{user.split(':', 1)[0]}@{host}"


def sessions(engine: Engine) -> sessionmaker[Any]:
    """A session factory that keeps loaded objects readable after commit."""
    return sessionmaker(engine, expire_on_commit=False)
