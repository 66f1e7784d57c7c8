"""What every route of the workbench shares: its settings (where project files may be read
from, where uploads go and how large they may be), a database session per request, who is
logged in, the CSRF check of a form, and the pages' security headers.

A page asked for without a session answers with the login page's address and the way back
(`LoginFirst`, turned into a redirect by `mount`); the script's API answers 401.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session, sessionmaker

from nuggetizer.workbench import pages
from nuggetizer.workbench.security import same, session_of
from nuggetizer.workbench.store import Account, Login
from nuggetizer.workbench.throttle import Limiter

COOKIE = "wb_session"
PRE = "wb_pre"  # the double-submit token of the login and invitation forms
HEADERS = {"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src "
           "'self'; connect-src 'self'; img-src 'self'; form-action 'self'; "
           "frame-ancestors 'none'; base-uri 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}
MAX_UPLOAD = 200 * 2**20  # bytes of one upload request (a track's runs and corpus)


@dataclass(frozen=True)
class Settings:
    """What the server may read and write besides its database: folders whose files a new
    project may name (`allow`), the folder uploads are kept in (None: no uploads) and the
    largest upload request, in bytes."""

    allow: tuple[Path, ...] = ()
    uploads: Path | None = None
    max_upload: int = MAX_UPLOAD


class LoginFirst(Exception):
    """A page asked for without a session: the login page, then back to `back`."""

    def __init__(self, back: str) -> None:
        super().__init__(back)
        self.back = back


@dataclass
class Web:
    """The routes' shared state and checks."""

    factory: sessionmaker[Any]
    base: str
    settings: Settings = field(default_factory=Settings)
    limiter: Limiter = field(default_factory=Limiter)

    def __post_init__(self) -> None:
        # SQLite ignores SELECT ... FOR UPDATE: one save at a time keeps a judgment's
        # read-modify-write whole (SQLite has one writer anyway); PostgreSQL locks the row
        sqlite = self.factory.kw["bind"].dialect.name == "sqlite"
        self.one_writer: AbstractContextManager[Any] = threading.Lock() if sqlite \
            else nullcontext()

    async def db(self) -> AsyncIterator[Session]:
        """A session per request, made and closed on the event loop, not in a worker: it
        takes its connection only when a worker first queries, and closing it (a rollback at
        most) gives that connection back at once, never waiting for a free worker."""
        with self.factory() as session:
            yield session

    def who(self, request: Request, session: Session) -> tuple[Account, Login] | None:
        return session_of(session, request.cookies.get(COOKIE))

    def need(self, request: Request, session: Session) -> tuple[Account, Login]:
        """The logged-in account, or 401 (the script's API)."""
        found = self.who(request, session)
        if found is None:
            raise HTTPException(401, "log in first")
        return found

    def need_page(self, request: Request, session: Session) -> tuple[Account, Login]:
        """The logged-in account, or the login page and back here (a page)."""
        found = self.who(request, session)
        if found is None:
            raise LoginFirst(request.url.path + (f"?{request.url.query}"
                                                 if request.url.query else ""))
        return found

    def organizer(self, request: Request, session: Session, page: bool = True
                  ) -> tuple[Account, Login]:
        """The logged-in organizer; anyone else sees no such page."""
        account, login = (self.need_page if page else self.need)(request, session)
        if account.role != "organizer":
            raise HTTPException(404, "no such page")
        return account, login

    async def form(self, request: Request, login: Login) -> dict[str, Any]:
        """A posted form's fields, once its CSRF token is the session's (else 403)."""
        form = await request.form()
        if not same(str(form.get("csrf", "")), login.csrf):
            raise HTTPException(403, "missing or wrong CSRF token")
        fields: dict[str, Any] = {}
        for key, value in form.multi_items():
            fields.setdefault(key, []).append(value)
        return {k: v[0] if len(v) == 1 else v for k, v in fields.items() if k != "csrf"}

    def html(self, text: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(text, status_code=status, headers=HEADERS)

    def page(self, title: str, body: str, account: Account, login: Login,
             data: dict[str, Any] | None = None, status: int = 200) -> HTMLResponse:
        """A page of a logged-in account."""
        return self.html(pages.page(title, body, base=self.base, csrf=login.csrf,
                                    who=account.name, role=account.role, data=data), status)

    def to_login(self, back: str) -> RedirectResponse:
        """The login page, with the way back (a path of this workbench only)."""
        return RedirectResponse(f"{self.base}/login?next={quote(back, safe='/')}",
                                status_code=303)

    def back(self, wanted: str) -> str:
        """Where a login goes: a path inside the workbench, else its home (never another
        site: `//host` and `/\\host` are refused)."""
        home = f"{self.base}/"
        if not wanted.startswith(home if self.base else "/") or wanted.startswith("//") \
                or "\\" in wanted or "\n" in wanted or "\r" in wanted:
            return home
        return wanted
