"""Accounts and sessions: argon2 password hashes, invitation and session tokens stored only
as their SHA-256, a CSRF token per session."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from nuggetizer.errors import ConfigError
from nuggetizer.workbench.store import ROLES, Account, Login, audit, now

_HASHER = PasswordHasher()
MIN_PASSWORD = 8
SESSION_DAYS = 7  # then the assessor logs in again


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
    return _HASHER.hash(password)


def check_password(account: Account | None, password: str) -> bool:
    """Whether the password is the account's."""
    if account is None or not account.password_hash:
        _HASHER.hash("a dummy to take the same time")
        return False
    try:
        return _HASHER.verify(account.password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def add_account(db: Session, name: str, role: str, password: str | None = None) -> str | None:
    """Add an account with a password, or with an invitation token (returned, shown once)."""
    if role not in ROLES:
        raise ConfigError(f"role must be {' or '.join(ROLES)}")
    name = name.strip()
    if not name or len(name) > 80:
        raise ConfigError("an account name is 1 to 80 characters")
    if db.scalar(select(Account).where(Account.name == name)) is not None:
        raise ConfigError(f"account {name!r} exists already")
    token = None if password else secrets.token_urlsafe(24)
    account = Account(name=name, role=role,
                      password_hash=hash_password(password) if password else None,
                      invite_hash=digest(token) if token else None)
    db.add(account)
    db.flush()
    db.add(audit(account.id, None, "add-account", name=name, role=role))
    db.commit()
    return token


def accept_invite(db: Session, token: str, password: str) -> Account | None:
    """Set the password of the account a token invites (the token then spent)."""
    account = db.scalar(select(Account).where(Account.invite_hash == digest(token)))
    if account is None:
        return None
    account.password_hash = hash_password(password)
    account.invite_hash = None
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
    """The account and login of a session cookie (a session lasts SESSION_DAYS)."""
    if not token:
        return None
    login = db.get(Login, digest(token))
    if login is None:
        return None
    created = login.created if login.created.tzinfo else login.created.replace(tzinfo=UTC)
    if now() - created > timedelta(days=SESSION_DAYS):
        return None
    account = db.get(Account, login.account_id)
    return (account, login) if account is not None else None
