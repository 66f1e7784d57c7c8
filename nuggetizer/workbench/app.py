"""The workbench's routes, pages and API on a FastAPI router (`workbench_router`), its own app
(`create_app`) and `mount` onto another app (the `nuggetizer serve` one): logging in, the
assessors' pages and saves here, the organizer's pages in organizer.py.

Every state-changing request is a POST carrying the session's CSRF token (a form's `csrf`
field, or the `X-CSRF-Token` header of the script's saves); an assessor reaches only the items
assigned to them (any other is 404, as if it did not exist); the organizer's pages are the
organizer's alone. Items are named by an opaque random ref, so a URL says nothing about a run.

The event loop only reads request bodies: password hashing and database work run in the
thread pool, so one slow login or one save waiting for the database never stalls the others.
A login is first checked against the lockouts (throttle.py) before any password is hashed; a
client already locked out is answered from memory, on the event loop.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from nuggetizer.errors import ConfigError
from nuggetizer.workbench import pages
from nuggetizer.workbench.organizer import home_body, organizer_routes
from nuggetizer.workbench.security import accept_invite, check_password, open_session, same
from nuggetizer.workbench.static import CSS, JS
from nuggetizer.workbench.store import (
    Account,
    Assignment,
    Item,
    Judgment,
    Project,
    audit,
    make_engine,
    now,
    sessions,
)
from nuggetizer.workbench.tasks import TITLES, answered, check_value
from nuggetizer.workbench.throttle import Lock, account_key, client_key
from nuggetizer.workbench.web import COOKIE, HEADERS, PRE, LoginFirst, Settings, Web

MAX_SECONDS = 7 * 24 * 3600.0  # the time an item's page may report spent on it
REFUSED_DELAY = 1.0  # seconds a login refused while locked waits before its answer


def finished(item: Item, judgment: Judgment | None) -> bool:
    """Whether an assessor's judgment answers every question of the item."""
    return answered(item.task, item.shown, judgment.value if judgment else None)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def workbench_router(factory: sessionmaker[Any], prefix: str = "",
                     settings: Settings | None = None) -> APIRouter:
    """The workbench's routes under `prefix` (the base of every link it writes)."""
    router = APIRouter(prefix=prefix)
    web = Web(factory, prefix, settings or Settings())
    base = prefix

    @router.get("/static/workbench.js")
    def script() -> Response:
        return Response(JS, media_type="text/javascript", headers=HEADERS)

    @router.get("/static/workbench.css")
    def style() -> Response:
        return Response(CSS, media_type="text/css", headers=HEADERS)

    def login_page(request: Request, error: str = "", invite: str | None = None,
                   status: int = 200, after: str = "", wait: Lock | None = None
                   ) -> HTMLResponse:
        pre = request.cookies.get(PRE) or secrets.token_urlsafe(24)
        response = web.html(pages.page("Log in", pages.login_form(
            base, pre, error, invite, after or request.query_params.get("next", "")),
            base=base), status)
        response.set_cookie(PRE, pre, httponly=True, samesite="strict")
        if wait is not None:
            response.headers["Retry-After"] = str(wait.seconds)
        return response

    @router.get("/login", response_class=HTMLResponse)
    def login_get(request: Request) -> HTMLResponse:
        return login_page(request)

    async def pre_checked(request: Request) -> dict[str, Any]:
        form = dict(await request.form())
        pre = request.cookies.get(PRE, "")
        if not pre or not same(str(form.get("csrf", "")), pre):
            raise HTTPException(403, "missing or wrong CSRF token")
        return form

    def logged_in(session: Session, account: Account, after: str) -> RedirectResponse:
        token = open_session(session, account)
        response = RedirectResponse(web.back(after), status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    def locked_page(request: Request, lock: Lock, after: str) -> HTMLResponse:
        minutes = f"{lock.seconds} seconds" if lock.seconds < 120 else \
            f"{math.ceil(lock.seconds / 60)} minutes"
        return login_page(request, f"too many failed logins: wait {minutes}, then try again "
                          "(the organizer has been told)", status=429, after=after, wait=lock)

    async def refused(request: Request, lock: Lock, after: str = "") -> Response:
        """A login refused while locked: answered late (the guesser's loop slows down, the
        server spends nothing while it waits), a person the form again, a script one line."""
        await asyncio.sleep(REFUSED_DELAY)
        if "text/html" in request.headers.get("accept", ""):
            return locked_page(request, lock, after)
        return Response(f"too many failed logins: wait {lock.seconds} seconds, then try "
                        "again (the organizer has been told)\n", status_code=429,
                        media_type="text/plain",
                        headers={**HEADERS, "Retry-After": str(lock.seconds)})

    def lock_of(key: str, seconds: float) -> Lock:
        return Lock(key, now() + timedelta(seconds=seconds - REFUSED_DELAY), 0)

    @router.post("/login")
    async def login_post(request: Request, session: Session = Depends(web.db)) -> Response:
        client = request.client.host if request.client else "unknown"
        wait = web.limiter.refused_now((client_key(client),))
        if wait:  # a locked client: answered before its form is read
            return await refused(request, lock_of(client_key(client), wait))
        form = await pre_checked(request)
        name = str(form.get("name", "")).strip()[:80]
        keys = (account_key(name), client_key(client))
        after = str(form.get("next", ""))
        wait = web.limiter.refused_now(keys)
        if wait:  # locked: answered here, no worker thread, no database, no hashing
            return await refused(request, lock_of(keys[0], wait), after)

        def checked() -> Response:
            lock = web.limiter.check(session, keys)  # before any hashing
            if lock is not None:
                return locked_page(request, lock, after)
            account = session.scalar(select(Account).where(Account.name == name))
            if account is None or not check_password(account, str(form.get("password", ""))):
                started = web.limiter.failed(session, keys, account, client)
                if started is not None:  # this one was checked: the next ones wait
                    return login_page(request, "wrong name or password; after so many "
                                      f"failures the next login waits {started.seconds} "
                                      "seconds", status=401, after=after, wait=started)
                return login_page(request, "wrong name or password", status=401, after=after)
            web.limiter.succeeded(session, name)
            return logged_in(session, account, after)
        return await run_in_threadpool(checked)

    @router.get("/invite/{token}", response_class=HTMLResponse)
    def invite_get(request: Request, token: str) -> HTMLResponse:
        return login_page(request, invite=token)

    @router.post("/invite/{token}")
    async def invite_post(request: Request, token: str, session: Session = Depends(web.db)
                          ) -> Response:
        form = await pre_checked(request)

        def accepted() -> Response:
            try:
                account = accept_invite(session, token, str(form.get("password", "")),
                                        str(form.get("again", "")))
            except ConfigError as exc:
                return login_page(request, str(exc), invite=token, status=400)
            if account is None:
                return login_page(request, "this invitation is spent, expired or unknown: "
                                  "ask the organizer for a new one", status=404)
            return logged_in(session, account, "")
        return await run_in_threadpool(accepted)

    @router.post("/logout")
    async def logout(request: Request, session: Session = Depends(web.db)) -> Response:
        _, login = await run_in_threadpool(web.need, request, session)
        await web.form(request, login)

        def ended() -> None:
            session.delete(login)
            session.commit()
        await run_in_threadpool(ended)
        response = RedirectResponse(f"{base}/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    def items_of(session: Session, account: Account) -> list[tuple[Item, Judgment | None]]:
        rows = session.execute(
            select(Item, Judgment).join(Assignment, Assignment.item_id == Item.id)
            .outerjoin(Judgment, (Judgment.item_id == Item.id)
                       & (Judgment.account_id == account.id))
            .where(Assignment.account_id == account.id)
            .order_by(Item.project_id, Item.position)).all()
        return [(i, j) for i, j in rows]

    @router.get("/", response_class=HTMLResponse)
    def home(request: Request, session: Session = Depends(web.db)) -> Response:
        account, login = web.need_page(request, session)
        if account.role == "organizer":
            return web.page("Projects", home_body(session, web, login.csrf), account, login)
        rows = items_of(session, account)
        names = {p.id: p.name for p in session.scalars(select(Project))}
        todo = [i for i, j in rows if not finished(i, j)]
        body = [f"<h1>Your items</h1><p>{len(todo)} of {len(rows)} left</p>"]
        if todo:
            body.append(f'<p><a class="button" id="continue" href="{pages.e(base)}/item/'
                        f'{pages.e(todo[0].ref)}">Continue ({pages.e(TITLES[todo[0].task])}, '
                        f"topic {pages.e(todo[0].qid)})</a> <kbd>n</kbd></p>")
        body.append(pages.queue_summary(base, [
            (names.get(i.project_id, ""), i.task, i.qid, finished(i, j), i.ref)
            for i, j in rows]))
        data = {"next": f"{base}/item/{todo[0].ref}" if todo else ""}
        return web.page("Your items", "".join(body), account, login, data)

    def neighbours(session: Session, account: Account, item: Item
                   ) -> tuple[str | None, str | None, int, int]:
        """The next unfinished item after this one (else the first), the previous item in
        the queue, and this one's place (1-based) in the queue."""
        rows = items_of(session, account)
        at = next(k for k, (i, _) in enumerate(rows) if i.id == item.id)
        later = [i for i, j in rows[at + 1:] + rows[:at] if not finished(i, j)]
        return (later[0].ref if later else None, rows[at - 1][0].ref if at else None,
                at + 1, len(rows))

    def mine(session: Session, account: Account, ref: str) -> Item:
        item = session.scalar(select(Item).join(Assignment).where(
            Item.ref == ref, Assignment.account_id == account.id))
        if item is None:
            raise HTTPException(404, "no such item")
        return item

    def view(session: Session, account: Account, item: Item) -> dict[str, Any]:
        j = session.scalar(select(Judgment).where(Judgment.item_id == item.id,
                                                  Judgment.account_id == account.id))
        project = session.get(Project, item.project_id)
        shown_llm = bool(project and project.settings.get("show_llm"))
        return {"task": item.task, "qid": item.qid, "shown": item.shown,
                "value": dict(j.value) if j else {}, "seconds": j.seconds if j else 0.0,
                "suggestion": item.suggestion if shown_llm else None}

    @router.get("/item/{ref}", response_class=HTMLResponse)
    def item_page(ref: str, request: Request, session: Session = Depends(web.db)
                  ) -> Response:
        account, login = web.need_page(request, session)
        item = mine(session, account, ref)
        v = view(session, account, item)
        following, before, place, total = neighbours(session, account, item)
        data = {"ref": item.ref, "api": f"{base}/api/item/{item.ref}", "task": item.task,
                "seconds": v["seconds"], "login": f"{base}/login?next={base}/item/{item.ref}",
                "next": f"{base}/item/{following}" if following else f"{base}/",
                "prev": f"{base}/item/{before}" if before else "",
                "importance": item.shown.get("importance", []),
                "sub_narratives": item.shown.get("topic", {}).get("sub_narratives", []),
                "nuggets": v["value"].get("nuggets", item.shown.get("nuggets", []))}
        body = pages.item_page(item.task, item.shown, v["value"], v["suggestion"],
                               f"{base}/item/{item.ref}", login.csrf,
                               f"item {place} of {total}")
        return web.page(TITLES[item.task], body, account, login, data)

    @router.get("/api/item/{ref}")
    def item_api(ref: str, request: Request, session: Session = Depends(web.db)
                 ) -> JSONResponse:
        account, _ = web.need(request, session)
        return JSONResponse(view(session, account, mine(session, account, ref)),
                            headers=HEADERS)

    @router.get("/api/items")
    def items_api(request: Request, session: Session = Depends(web.db)) -> JSONResponse:
        account, _ = web.need(request, session)
        return JSONResponse([{"ref": i.ref, "task": i.task, "qid": i.qid,
                              "done": finished(i, j)}
                             for i, j in items_of(session, account)], headers=HEADERS)

    def store(session: Session, account: Account, item: Item, changes: dict[str, Any],
              seconds: float | None) -> bool:
        """Save the changes (each checked) in one transaction, with their audit rows."""
        for key, label in changes.items():
            why = check_value(item.task, item.shown, key, label)
            if why:
                raise HTTPException(422, why)
        with web.one_writer:
            return _stored(session, account, item, changes, seconds)

    def _stored(session: Session, account: Account, item: Item, changes: dict[str, Any],
                seconds: float | None) -> bool:
        for attempt in range(3):
            try:
                j = session.scalar(select(Judgment).where(
                    Judgment.item_id == item.id, Judgment.account_id == account.id)
                    .with_for_update())  # two saves of one item: one waits for the other
                if j is None:
                    j = Judgment(item_id=item.id, account_id=account.id, value={})
                    session.add(j)
                before = dict(j.value)
                j.value = {**before, **changes}
                if seconds is not None:
                    j.seconds = seconds
                j.saved = now()
                for key, label in changes.items():
                    session.add(audit(account.id, item.id, "save", key=key,
                                      before=before.get(key), after=label))
                session.commit()
                return answered(item.task, item.shown, j.value)
            except IntegrityError:
                session.rollback()
                if attempt == 2:
                    raise
        return False

    def body_of(raw: bytes) -> tuple[str, Any, float | None]:
        """(key, value, seconds) of a save's JSON body, or 400/422 saying what is wrong
        (NaN and Infinity are not JSON; the seconds a finite count)."""
        try:
            body = json.loads(raw, parse_constant=_refuse_constant)
        except ValueError as exc:
            raise HTTPException(400, f"the body is not JSON: {exc}") from None
        if not isinstance(body, dict) or not isinstance(body.get("key"), str):
            raise HTTPException(400, 'send {"key": ..., "value": ..., "seconds": ...}')
        seconds = body.get("seconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(
                seconds, int | float) or not 0 <= seconds <= MAX_SECONDS):
            raise HTTPException(422, f"seconds must be a number from 0 to {MAX_SECONDS:.0f}")
        return body["key"], body.get("value"), None if seconds is None else float(seconds)

    @router.post("/api/item/{ref}")
    async def save_api(ref: str, request: Request, session: Session = Depends(web.db)
                       ) -> JSONResponse:
        raw = await request.body()

        def saved() -> bool:  # the checks in their order: who, the token, the item, the body
            account, login = web.need(request, session)
            if not same(request.headers.get("x-csrf-token", ""), login.csrf):
                raise HTTPException(403, "missing or wrong CSRF token")
            item = mine(session, account, ref)
            key, value, seconds = body_of(raw)
            return store(session, account, item, {key: value}, seconds)
        done = await run_in_threadpool(saved)
        return JSONResponse({"saved": True, "done": done}, headers=HEADERS)

    @router.post("/item/{ref}")
    async def save_form(ref: str, request: Request, session: Session = Depends(web.db)
                        ) -> Response:
        account, login = await run_in_threadpool(web.need_page, request, session)
        form = await web.form(request, login)
        item = await run_in_threadpool(mine, session, account, ref)
        changes = {k: v for k, v in form.items() if isinstance(v, str) and v != ""}
        await run_in_threadpool(store, session, account, item, changes, None)
        return RedirectResponse(f"{base}/item/{item.ref}", status_code=303)

    organizer_routes(router, web)
    return router


def mount(app: FastAPI, database: str, prefix: str = "/workbench", sync: str = "normal",
          settings: Settings | None = None) -> sessionmaker[Any]:
    """Add the workbench's routes, under `prefix`, to an app (its session factory)."""
    factory = sessions(make_engine(database, sync))
    router = workbench_router(factory, prefix, settings or default_settings(database))
    app.include_router(router)

    async def to_login(request: Request, exc: Exception) -> Response:
        back = exc.back if isinstance(exc, LoginFirst) else f"{prefix}/"
        return Web(factory, prefix).to_login(back)
    app.add_exception_handler(LoginFirst, to_login)
    return factory


def default_settings(database: str, allow: tuple[Path, ...] = (),
                     uploads: Path | None = None, max_upload: int | None = None) -> Settings:
    """The server's settings: uploads beside a SQLite database unless told where (a
    database URL has none unless told), the allowed folders as given."""
    if uploads is None and "://" not in database:
        uploads = Path(database).absolute().with_name(Path(database).name + ".uploads")
    return Settings(tuple(p.absolute() for p in allow), uploads,
                    max_upload if max_upload is not None else Settings().max_upload)


def create_app(database: str, sync: str = "normal", settings: Settings | None = None
               ) -> FastAPI:
    """The workbench on its own (`nuggetizer workbench serve`)."""
    app = FastAPI(title="nuggetizer workbench", docs_url=None, redoc_url=None,
                  openapi_url=None)
    mount(app, database, "", sync, settings)
    return app
