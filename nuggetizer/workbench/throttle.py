"""The login's defence against guessing: failed logins counted per account and per client,
and a lockout with a back-off once either has failed too often in a minute, decided before
any password is hashed (argon2 is slow on purpose: a guessing client must not make every
assessor's save wait behind its hashes).

An account is locked after ACCOUNT_LIMIT failures within WINDOW seconds, a client (its
address) after CLIENT_LIMIT; a lockout lasts LOCK seconds, twice as long for each lockout in a
row (`strikes`, up to MAX_LOCK), and a day without one forgets them. While locked, every login
of that account or from that client is refused with the wait, the right password too. Each
failed password check is in the audit log (`login-failed`), each lockout too (`login-locked`);
the attempts refused while locked are counted in this server's memory only (writing each one
would let a flood of them slow the database). The state lives in the database (`throttles`),
so every server on it and the command line see the same; a lockout is also kept in memory,
where a refused attempt is answered without touching the database or a worker thread.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from nuggetizer.workbench.store import Account, Throttle, audit, now

WINDOW = 60.0  # seconds in which failures count towards a lockout
ACCOUNT_LIMIT = 10  # failures of one account in a window: the next attempt waits
CLIENT_LIMIT = 20  # failures from one client (several accounts) in a window
LOCK = 60.0  # the first lockout, in seconds; each one in a row lasts twice as long
MAX_LOCK = 3600.0
FORGET = timedelta(days=1)  # strikes and quiet rows are forgotten after a day


def account_key(name: str) -> str:
    return "account:" + name.strip()[:80]


def client_key(address: str) -> str:
    return "client:" + address[:120]


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Lock:
    """A key locked now, and until when."""

    key: str
    until: datetime
    strikes: int

    @property
    def seconds(self) -> int:
        """Seconds left, rounded up (at least 1)."""
        return max(1, int((self.until - now()).total_seconds() + 0.999))


class Limiter:
    """The lockouts of one server: `refused` answers from memory, `check` from the
    database; `failed` and `succeeded` record an attempt whose password was checked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until: dict[str, float] = {}  # key -> time.monotonic() its lockout ends
        self.refused: Counter[str] = Counter()  # attempts refused while locked, per key

    def refused_now(self, keys: tuple[str, ...]) -> float:
        """Seconds to wait, from this server's memory (0: ask the database)."""
        with self._lock:
            wait = max((self._until.get(k, 0.0) - time.monotonic() for k in keys), default=0)
            if wait > 0:
                self.refused.update(k for k in keys if self._until.get(k, 0) > time.monotonic())
            return max(0.0, wait)

    def _remember(self, lock: Lock) -> None:
        with self._lock:
            self._until[lock.key] = time.monotonic() + (lock.until - now()).total_seconds()

    def check(self, db: Session, keys: tuple[str, ...]) -> Lock | None:
        """The longest lockout among the keys, from the database (kept in memory too)."""
        locks = locked(db, keys)
        for lock in locks:
            self._remember(lock)
        if locks:
            with self._lock:
                self.refused.update(lock.key for lock in locks)
        return max(locks, key=lambda lock: lock.until) if locks else None

    def failed(self, db: Session, keys: tuple[str, ...], account: Account | None,
               client: str) -> Lock | None:
        """Count a failed password check against each key (in the audit log); the lockout
        it started, if any."""
        for attempt in range(3):  # two first failures of a key at once: one insert wins
            try:
                return self._failed(db, keys, account, client)
            except IntegrityError:
                db.rollback()
                if attempt == 2:
                    raise
        return None

    def _failed(self, db: Session, keys: tuple[str, ...], account: Account | None,
                client: str) -> Lock | None:
        started = [lock for key in keys if (lock := _fail(db, key)) is not None]
        db.add(audit(account.id if account else None, None, "login-failed",
                     name=keys[0].removeprefix("account:"), client=client))
        for lock in started:
            db.add(audit(account.id if account else None, None, "login-locked", key=lock.key,
                         seconds=lock.seconds, strikes=lock.strikes))
            self._remember(lock)
        old = now() - FORGET
        db.execute(delete(Throttle).where(Throttle.window < old, or_(
            Throttle.locked_until.is_(None), Throttle.locked_until < old))
            .execution_options(synchronize_session=False))
        db.commit()
        return max(started, key=lambda lock: lock.until) if started else None

    def succeeded(self, db: Session, name: str) -> None:
        """A right password: the account's count of failures starts again (not its client's,
        which may be guessing other accounts)."""
        row = db.get(Throttle, account_key(name))
        if row is not None:
            row.failures = 0
            row.window = now()

    def unlock(self, db: Session, key: str) -> bool:
        """End a key's lockout and forget its failures (the organizer's decision)."""
        with self._lock:
            self._until.pop(key, None)
        return unlock(db, key)


def _fail(db: Session, key: str) -> Lock | None:
    row = db.get(Throttle, key, with_for_update=True)
    moment = now()
    if row is None:
        row = Throttle(key=key, failures=0, window=moment, strikes=0)
        db.add(row)
        db.flush()
    if moment - _utc(row.window) > timedelta(seconds=WINDOW):
        row.failures, row.window = 0, moment
    if row.locked_until is not None and moment - _utc(row.locked_until) > FORGET:
        row.strikes = 0
    row.failures += 1
    limit = ACCOUNT_LIMIT if key.startswith("account:") else CLIENT_LIMIT
    if row.failures < limit:
        return None
    row.strikes += 1
    seconds = min(MAX_LOCK, LOCK * 2 ** (row.strikes - 1))
    row.locked_until = moment + timedelta(seconds=seconds)
    row.failures, row.window = 0, moment
    return Lock(key, row.locked_until, row.strikes)


def locked(db: Session, keys: tuple[str, ...] | None = None) -> list[Lock]:
    """The keys locked now (of `keys`, else all)."""
    query = select(Throttle).where(Throttle.locked_until.is_not(None))
    if keys is not None:
        query = query.where(Throttle.key.in_(keys))
    moment = now()
    return [Lock(row.key, _utc(row.locked_until), row.strikes) for row in db.scalars(query)
            if row.locked_until is not None and _utc(row.locked_until) > moment]


def unlock(db: Session, key: str) -> bool:
    """End a key's lockout in the database and forget its failures; whether it was locked."""
    row = db.get(Throttle, key)
    if row is None:
        return False
    was = row.locked_until is not None and _utc(row.locked_until) > now()
    row.locked_until, row.failures, row.strikes = None, 0, 0
    db.commit()
    return was
