"""The workbench's routes, pages and API on a FastAPI router (`workbench_router`), its own app
(`create_app`) and `mount` onto another app (the `nuggetizer serve` one).

Every state-changing request is a POST carrying the session's CSRF token (a form's `csrf`
field, or the `X-CSRF-Token` header of the script's saves); an assessor reaches only the items
assigned to them (any other is 404, as if it did not exist); the organizer's pages are the
organizer's alone. Items are named by an opaque random ref, so a URL says nothing about a run.

The event loop only reads request bodies: password hashing and database work run in the
thread pool, so one slow login or one save waiting for the database never stalls the others.
"""

from __future__ import annotations

import io
import json
import secrets
import tempfile
import threading
import zipfile
from collections.abc import AsyncIterator
from contextlib import nullcontext
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
from nuggetizer.workbench.exports import export_project
from nuggetizer.workbench.progress import agreement, progress
from nuggetizer.workbench.security import (
    accept_invite,
    check_password,
    open_session,
    same,
    session_of,
)
from nuggetizer.workbench.static import CSS, JS
from nuggetizer.workbench.store import (
    Account,
    Assignment,
    Item,
    Judgment,
    Login,
    Project,
    audit,
    make_engine,
    now,
    sessions,
)
from nuggetizer.workbench.tasks import TITLES, answered, check_value

COOKIE = "wb_session"
PRE = "wb_pre"  # the double-submit token of the login and invitation forms
HEADERS = {"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src "
           "'self'; connect-src 'self'; img-src 'self'; form-action 'self'; "
           "frame-ancestors 'none'; base-uri 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=HEADERS)


def finished(item: Item, judgment: Judgment | None) -> bool:
    """Whether an assessor's judgment answers every question of the item."""
    return answered(item.task, item.shown, judgment.value if judgment else None)


def workbench_router(factory: sessionmaker[Any], prefix: str = "") -> APIRouter:
    """The workbench's routes under `prefix` (the base of every link it writes)."""
    router = APIRouter(prefix=prefix)
    base = prefix
    # SQLite ignores SELECT ... FOR UPDATE: one save at a time keeps a judgment's
    # read-modify-write whole (SQLite has one writer anyway); PostgreSQL locks the row
    sqlite = factory.kw["bind"].dialect.name == "sqlite"
    one_writer = threading.Lock() if sqlite else nullcontext()

    async def db() -> AsyncIterator[Session]:
        # made and closed on the event loop, not in a worker: a session takes its connection
        # only when a worker first queries, and closing it (a rollback at most) gives that
        # connection back at once, never waiting for a free worker
        with factory() as session:
            yield session

    def who(request: Request, session: Session) -> tuple[Account, Login] | None:
        return session_of(session, request.cookies.get(COOKIE))

    def need(request: Request, session: Session) -> tuple[Account, Login]:
        found = who(request, session)
        if found is None:
            raise HTTPException(401, "log in first")
        return found

    async def form_csrf(request: Request, login: Login) -> dict[str, Any]:
        form = dict(await request.form())
        if not same(str(form.pop("csrf", "")), login.csrf):
            raise HTTPException(403, "missing or wrong CSRF token")
        return form

    def mine(session: Session, account: Account, ref: str) -> Item:
        item = session.scalar(select(Item).join(Assignment).where(
            Item.ref == ref, Assignment.account_id == account.id))
        if item is None:
            raise HTTPException(404, "no such item")
        return item

    def organizer(request: Request, session: Session) -> tuple[Account, Login]:
        account, login = need(request, session)
        if account.role != "organizer":
            raise HTTPException(404, "no such page")
        return account, login

    @router.get("/static/workbench.js")
    def script() -> Response:
        return Response(JS, media_type="text/javascript", headers=HEADERS)

    @router.get("/static/workbench.css")
    def style() -> Response:
        return Response(CSS, media_type="text/css", headers=HEADERS)

    def login_page(request: Request, error: str = "", invite: str | None = None,
                   status: int = 200) -> HTMLResponse:
        pre = request.cookies.get(PRE) or secrets.token_urlsafe(24)
        response = _html(pages.page("Log in", pages.login_form(base, pre, error, invite),
                                    base=base), status)
        response.set_cookie(PRE, pre, httponly=True, samesite="strict")
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

    def logged_in(session: Session, account: Account) -> RedirectResponse:
        token = open_session(session, account)
        response = RedirectResponse(f"{base}/", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    @router.post("/login")
    async def login_post(request: Request, session: Session = Depends(db)) -> Response:
        form = await pre_checked(request)

        def checked() -> Response:
            account = session.scalar(select(Account).where(
                Account.name == str(form.get("name"))))
            if not check_password(account, str(form.get("password", ""))) or account is None:
                return login_page(request, "wrong name or password", status=401)
            return logged_in(session, account)
        return await run_in_threadpool(checked)

    @router.get("/invite/{token}", response_class=HTMLResponse)
    def invite_get(request: Request, token: str) -> HTMLResponse:
        return login_page(request, invite=token)

    @router.post("/invite/{token}")
    async def invite_post(request: Request, token: str, session: Session = Depends(db)
                          ) -> Response:
        form = await pre_checked(request)

        def accepted() -> Response:
            try:
                account = accept_invite(session, token, str(form.get("password", "")))
            except ConfigError as exc:
                return login_page(request, str(exc), invite=token, status=400)
            if account is None:
                return login_page(request, "this invitation is spent or unknown", status=404)
            return logged_in(session, account)
        return await run_in_threadpool(accepted)

    @router.post("/logout")
    async def logout(request: Request, session: Session = Depends(db)) -> Response:
        _, login = await run_in_threadpool(need, request, session)
        await form_csrf(request, login)

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
    def home(request: Request, session: Session = Depends(db)) -> Response:
        found = who(request, session)
        if found is None:
            return RedirectResponse(f"{base}/login", status_code=303)
        account, login = found
        if account.role == "organizer":
            projects = session.scalars(select(Project).order_by(Project.id)).all()
            links = "".join(f'<li><a href="{pages.e(base)}/project/{p.id}">{pages.e(p.name)}'
                            "</a></li>" for p in projects)
            body = f"<h1>Projects</h1><ul>{links or '<li>none yet</li>'}</ul>"
        else:
            rows = [(TITLES[i.task], i.qid, "done" if finished(i, j)
                     else "to do", i.ref) for i, j in items_of(session, account)]
            links = "".join(
                f'<tr><td>{pages.e(t)}</td><td>{pages.e(q)}</td><td>{pages.e(s)}</td>'
                f'<td><a href="{pages.e(base)}/item/{pages.e(r)}">open</a></td></tr>'
                for t, q, s, r in rows)
            left = sum(s == "to do" for _, _, s, _ in rows)
            body = (f"<h1>Your items</h1><p>{left} of {len(rows)} left</p>"
                    f"<table><tr><th>task</th><th>topic</th><th>state</th><th></th></tr>"
                    f"{links}</table>")
        return _html(pages.page("Workbench", body, base=base, csrf=login.csrf,
                                who=account.name))

    def next_ref(session: Session, account: Account, item: Item) -> str | None:
        for other, j in items_of(session, account):
            if other.id != item.id and not finished(other, j):
                return other.ref
        return None

    def view(session: Session, account: Account, item: Item) -> dict[str, Any]:
        j = session.scalar(select(Judgment).where(Judgment.item_id == item.id,
                                                  Judgment.account_id == account.id))
        project = session.get(Project, item.project_id)
        shown_llm = bool(project and project.settings.get("show_llm"))
        return {"task": item.task, "qid": item.qid, "shown": item.shown,
                "value": dict(j.value) if j else {}, "seconds": j.seconds if j else 0.0,
                "suggestion": item.suggestion if shown_llm else None}

    @router.get("/item/{ref}", response_class=HTMLResponse)
    def item_page(ref: str, request: Request, session: Session = Depends(db)) -> Response:
        account, login = need(request, session)
        item = mine(session, account, ref)
        v = view(session, account, item)
        following = next_ref(session, account, item)
        data = {"ref": item.ref, "api": f"{base}/api/item/{item.ref}",
                "seconds": v["seconds"], "next": f"{base}/item/{following}" if following
                else f"{base}/", "importance": item.shown.get("importance", []),
                "sub_narratives": item.shown.get("sub_narratives", []),
                "nuggets": v["value"].get("nuggets", item.shown.get("nuggets", []))}
        body = pages.item_page(item.task, item.shown, v["value"], v["suggestion"],
                               f"{base}/item/{item.ref}", login.csrf)
        return _html(pages.page(TITLES[item.task], body, base=base, csrf=login.csrf,
                                who=account.name, data=data))

    @router.get("/api/item/{ref}")
    def item_api(ref: str, request: Request, session: Session = Depends(db)) -> JSONResponse:
        account, _ = need(request, session)
        return JSONResponse(view(session, account, mine(session, account, ref)),
                            headers=HEADERS)

    @router.get("/api/items")
    def items_api(request: Request, session: Session = Depends(db)) -> JSONResponse:
        account, _ = need(request, session)
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
        with one_writer:
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
                if seconds is not None and seconds >= 0:
                    j.seconds = float(seconds)
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

    @router.post("/api/item/{ref}")
    async def save_api(ref: str, request: Request, session: Session = Depends(db)
                       ) -> JSONResponse:
        raw = await request.body()

        def saved() -> bool:  # the checks in their order: who, the token, the item, the body
            account, login = need(request, session)
            if not same(request.headers.get("x-csrf-token", ""), login.csrf):
                raise HTTPException(403, "missing or wrong CSRF token")
            item = mine(session, account, ref)
            try:
                body = json.loads(raw)
            except ValueError:
                raise HTTPException(400, "the body is not JSON") from None
            if not isinstance(body, dict) or not isinstance(body.get("key"), str):
                raise HTTPException(400, 'send {"key": ..., "value": ..., "seconds": ...}')
            seconds = body.get("seconds")
            return store(session, account, item, {body["key"]: body.get("value")},
                         seconds if isinstance(seconds, int | float) else None)
        done = await run_in_threadpool(saved)
        return JSONResponse({"saved": True, "done": done}, headers=HEADERS)

    @router.post("/item/{ref}")
    async def save_form(ref: str, request: Request, session: Session = Depends(db)
                        ) -> Response:
        account, login = await run_in_threadpool(need, request, session)
        form = await form_csrf(request, login)
        item = await run_in_threadpool(mine, session, account, ref)
        changes = {k: v for k, v in form.items() if isinstance(v, str) and v != ""}
        await run_in_threadpool(store, session, account, item, changes, None)
        return RedirectResponse(f"{base}/item/{item.ref}", status_code=303)

    @router.get("/project/{pid}", response_class=HTMLResponse)
    def project_page(pid: int, request: Request, session: Session = Depends(db)) -> Response:
        account, login = organizer(request, session)
        project = session.get(Project, pid)
        if project is None:
            raise HTTPException(404, "no such project")
        done = progress(session, project)
        body = [f"<h1>{pages.e(project.name)}</h1>",
                f'<p><a href="{pages.e(base)}/project/{pid}/export.zip">download the '
                "export (keys, judgments, battles, qrels)</a></p>",
                "<h2>Progress per assessor</h2>",
                pages.table(("assessor", "task", "assigned", "done", "left",
                             "median s per item"),
                            [(*r[:5], "" if r[5] is None else f"{r[5]:.1f}")
                             for r in done.by_assessor]),
                "<h2>Progress per topic</h2>",
                pages.table(("topic", "task", "assigned", "done", "left"), done.by_topic),
                "<h2>Agreement on the items judged twice</h2>"]
        agreed = agreement(session, project)
        if not agreed:
            body.append("<p>no question labelled by two judges yet</p>")
        for task, table in agreed.items():
            rows = [(p.a, p.b, p.items, *(_num(p.measures.get(m)) for m in
                                          ("kappa", "alpha_ordinal"))) for p in table.pairs]
            rows.append(("all", "", table.items, "", _num(table.overall.get("alpha_ordinal"))))
            body += [f"<h3>{pages.e(TITLES[task])}</h3>",
                     pages.table(("judge", "judge", "questions", "Cohen's kappa",
                                  "Krippendorff's alpha (ordinal)"), rows)]
        return _html(pages.page(project.name, "".join(body), base=base, csrf=login.csrf,
                                who=account.name))

    @router.get("/project/{pid}/export.zip")
    def export_zip(pid: int, request: Request, session: Session = Depends(db)) -> Response:
        organizer(request, session)
        project = session.get(Project, pid)
        if project is None:
            raise HTTPException(404, "no such project")
        buffer = io.BytesIO()
        with tempfile.TemporaryDirectory() as tmp:
            export_project(session, project.name, Path(tmp))
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
                for path in sorted(Path(tmp).rglob("*")):
                    if path.is_file():
                        z.write(path, path.relative_to(tmp))
        return Response(buffer.getvalue(), media_type="application/zip", headers={
            **HEADERS, "Content-Disposition": f'attachment; filename="export-{pid}.zip"'})

    return router


def _num(x: float | None) -> str:
    return "" if x is None or x != x else f"{x:.3f}"


def mount(app: FastAPI, database: str, prefix: str = "/workbench", sync: str = "normal"
          ) -> sessionmaker[Any]:
    """Add the workbench's routes, under `prefix`, to an app (its session factory)."""
    factory = sessions(make_engine(database, sync))
    app.include_router(workbench_router(factory, prefix))
    return factory


def create_app(database: str, sync: str = "normal") -> FastAPI:
    """The workbench on its own (`nuggetizer workbench serve`)."""
    app = FastAPI(title="nuggetizer workbench", docs_url=None, redoc_url=None,
                  openapi_url=None)
    mount(app, database, "", sync)
    return app
