"""Accounts and sessions: argon2id password hashes, invitation and session tokens stored
only as their SHA-256, a CSRF token per session. An account is named by letters, digits and
`. _ - @` (a name is never a path, but it is never one that could be either); an invitation
expires after INVITE_DAYS; a disabled account neither logs in nor keeps its sessions.

Hashing is the one costly thing a stranger can ask the server for, so it is bounded: argon2id
with OWASP's parameters for one thread (19 MiB, 2 passes, 1 lane: about 30 ms on a quiet
core; argon2-cffi's default of 4 lanes would take every core of a small server), one hash at a
time (HASHING), and a login is checked against the lockouts (throttle.py) before it may hash
at all. A hash made with other parameters is remade at the next login.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from nuggetizer.errors import ConfigError
from nuggetizer.workbench.store import ROLES, Account, Login, audit, now

_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
HASHING = threading.Lock()  # one password hash at a time: the rest of the server keeps a core
MIN_PASSWORD = 8
SESSION_DAYS = 7  # then the assessor logs in again
INVITE_DAYS = 14  # an invitation not taken up by then is spent: the organizer sends another
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,79}")


def digest(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two tokens."""
    return hmac.compare_digest(a.encode(), b.encode())


def hash_password(password: str) -> str:
    """An argon2id hash of a password (at least MIN_PASSWORD characters)."""
    if len(password) < MIN_PASSWORD:
        raise ConfigError(f"a password needs at least {MIN_PASSWORD} characters")
    with HASHING:
        return _HASHER.hash(password)


def check_password(account: Account | None, password: str) -> bool:
    """Whether the password is the account's (a disabled account's never is); as slow for a
    name that does not exist. A right password whose hash has other parameters is hashed
    again (the caller commits)."""
    with HASHING:
        if account is None or not account.password_hash or account.disabled:
            _HASHER.hash("a dummy to take the same time")
            return False
        try:
            _HASHER.verify(account.password_hash, password)
        except (VerificationError, InvalidHashError):
            return False
        if _HASHER.check_needs_rehash(account.password_hash):
            account.password_hash = _HASHER.hash(password)
        return True


def check_name(name: str) -> str:
    """The account name, stripped, or a ConfigError saying what a name may hold."""
    name = name.strip()
    if not NAME.fullmatch(name):
        raise ConfigError(f"account name {name[:80]!r}: 1 to 80 letters, digits and . _ - @, "
                          "starting with a letter or digit")
    return name


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _ended(db: Session, account: Account) -> int:
    """End every session of the account; how many there were."""
    gone = db.execute(delete(Login).where(Login.account_id == account.id))
    return int(getattr(gone, "rowcount", 0) or 0)


def add_account(db: Session, name: str, role: str, password: str | None = None,
                by: Account | None = None) -> str | None:
    """Add an account with a password, or with an invitation token (returned, shown once)."""
    if role not in ROLES:
        raise ConfigError(f"role must be {' or '.join(ROLES)}")
    name = check_name(name)
    if db.scalar(select(Account).where(Account.name == name)) is not None:
        raise ConfigError(f"account {name!r} exists already")
    token = None if password else secrets.token_urlsafe(24)
    account = Account(name=name, role=role,
                      password_hash=hash_password(password) if password else None,
                      invite_hash=digest(token) if token else None,
                      invited=now() if token else None, disabled=False)
    db.add(account)
    db.flush()
    db.add(audit(by.id if by else account.id, None, "add-account", name=name, role=role))
    db.commit()
    return token


def reinvite(db: Session, account: Account, by: Account | None = None) -> str:
    """Reset an account by a new invitation: its password cleared, its sessions ended, an
    earlier invitation spent; the new token (shown once)."""
    token = secrets.token_urlsafe(24)
    account.password_hash = None
    account.invite_hash = digest(token)
    account.invited = now()
    ended = _ended(db, account)
    db.add(audit(by.id if by else account.id, None, "reinvite", name=account.name,
                 sessions_ended=ended))
    db.commit()
    return token


def set_disabled(db: Session, account: Account, disabled: bool, by: Account | None = None
                 ) -> int:
    """Disable an account (its sessions ended: how many) or enable it again."""
    account.disabled = disabled
    ended = _ended(db, account) if disabled else 0
    db.add(audit(by.id if by else account.id, None, "disable" if disabled else "enable",
                 name=account.name, sessions_ended=ended))
    db.commit()
    return ended


def revoke_sessions(db: Session, account: Account, by: Account | None = None) -> int:
    """End every session of an account (it logs in again); how many there were."""
    ended = _ended(db, account)
    db.add(audit(by.id if by else account.id, None, "revoke-sessions", name=account.name,
                 sessions_ended=ended))
    db.commit()
    return ended


def invited_account(db: Session, token: str) -> Account | None:
    """The account an invitation token is for, while it is valid (not spent, not expired,
    the account not disabled)."""
    account = db.scalar(select(Account).where(Account.invite_hash == digest(token)))
    if account is None or account.disabled or account.invited is None:
        return None
    if now() - _utc(account.invited) > timedelta(days=INVITE_DAYS):
        return None
    return account


def accept_invite(db: Session, token: str, password: str, again: str | None = None
                  ) -> Account | None:
    """Set the password of the account a token invites (the token then spent); `again`, the
    confirmation, must be the same."""
    account = invited_account(db, token)
    if account is None:
        return None
    if len(password) >= MIN_PASSWORD and again is not None and again != password:
        raise ConfigError("the two passwords differ: type the same one twice")
    account.password_hash = hash_password(password)
    account.invite_hash = None
    account.invited = None
    db.add(audit(account.id, None, "accept-invite"))
    db.commit()
    return account


def open_session(db: Session, account: Account) -> str:
    """A new login session: the cookie token (stored as its hash)."""
    token = secrets.token_urlsafe(32)
    db.add(Login(token_hash=digest(token), account_id=account.id,
                 csrf=secrets.token_urlsafe(24)))
    db.add(audit(account.id, None, "login"))
    db.commit()
    return token


def session_of(db: Session, token: str | None) -> tuple[Account, Login] | None:
    """The account and login of a session cookie (a session lasts SESSION_DAYS; a disabled
    account has none)."""
    if not token:
        return None
    login = db.get(Login, digest(token))
    if login is None:
        return None
    if now() - _utc(login.created) > timedelta(days=SESSION_DAYS):
        return None
    account = db.get(Account, login.account_id)
    return (account, login) if account is not None and not account.disabled else None
