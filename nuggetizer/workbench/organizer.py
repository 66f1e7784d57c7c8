"""The organizer's pages: thin forms over the campaign's operations (campaign.py), which
the `nuggetizer workbench` commands call too. A page is the organizer's alone (anyone else:
404); every POST carries the session's CSRF token; a message after a change travels in a
short-lived cookie to the page the browser is sent back to."""

from __future__ import annotations

import io
import re
import secrets
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from nuggetizer.errors import NuggetizerError
from nuggetizer.workbench import campaign
from nuggetizer.workbench import organizer_pages as op
from nuggetizer.workbench.build import ProjectSpec
from nuggetizer.workbench.store import Account, Assignment, Item, Login, Project
from nuggetizer.workbench.uploads import allowed_files, allowed_path, save_upload
from nuggetizer.workbench.web import HEADERS, Web

SAID = "wb_said"


def _list(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    return value if isinstance(value, list) else [value]


def _ids(text: Any) -> list[str]:
    return [t for t in re.split(r"[\s,]+", str(text or "")) if t]


def _share(text: Any) -> float:
    try:
        return float(str(text or "0"))
    except ValueError:
        raise NuggetizerError("the overlap is a share of topics, from 0 to 1") from None


def _assigned(db: Session, project: Project, by: Account, fields: dict[str, Any]) -> str:
    made = campaign.assign_topics(db, project.name, [str(a) for a in _list(fields.get(
        "assessors"))], tasks=[str(t) for t in _list(fields.get("tasks"))],
        topics=_ids(fields.get("topics")), overlap=_share(fields.get("overlap")), by=by)
    return (f"{made.added} assignments added, {made.dropped} dropped, {made.kept} kept (work "
            f"saved on them); {len(made.twice)} topics judged twice")


def _reassigned(db: Session, project: Project, by: Account, fields: dict[str, Any]) -> str:
    moved = campaign.reassign_items(db, project.name, str(fields.get("source", "")),
                                    str(fields.get("target", "")),
                                    tasks=[str(t) for t in _list(fields.get("tasks"))],
                                    topics=_ids(fields.get("topics")), by=by)
    return f"{moved} unfinished items moved from {fields.get('source')} to " \
           f"{fields.get('target')}"


def _settled(db: Session, project: Project, by: Account, fields: dict[str, Any]) -> str:
    campaign.settle_question(db, project.name, str(fields.get("ref", "")),
                             str(fields.get("key", "")), str(fields.get("label", "")), by)
    return "settled"


def home_body(session: Session, web: Web, csrf: str) -> str:
    """The organizer's home page body: the projects and their progress, the logins' news."""
    found = [(p, campaign.progress_of(session, p.name)) for p in campaign.projects(session)]
    return op.home(web.base, csrf, found, campaign.logins(session, web.limiter))


def organizer_routes(router: APIRouter, web: Web) -> None:
    """Add the organizer's pages to the router."""
    base = web.base

    def back(where: str, message: str) -> RedirectResponse:
        response = RedirectResponse(f"{base}{where}", status_code=303)
        response.set_cookie(SAID, quote(message[:300]), max_age=60, httponly=True,
                            samesite="strict")
        return response

    def heard(request: Request) -> str:
        return unquote(request.cookies.get(SAID, ""))

    def shown(response: Response, request: Request) -> Response:
        if request.cookies.get(SAID):
            response.delete_cookie(SAID)
        return response

    def boss(request: Request, session: Session) -> tuple[Account, Login]:
        return web.organizer(request, session)

    def project_of(session: Session, pid: int) -> Project:
        project = session.get(Project, pid)
        if project is None:
            raise HTTPException(404, "no such project")
        return project

    def assessors(session: Session) -> list[str]:
        return [a.name for a in session.scalars(select(Account).where(
            Account.role == "assessor", Account.disabled.is_(False)).order_by(Account.name))]

    async def posted(request: Request, session: Session, max_size: int = 1 << 20
                     ) -> tuple[Account, Login, dict[str, Any]]:
        """The organizer and the fields of a form (its size checked before it is read)."""
        size = request.headers.get("content-length")
        if size is None or not size.isdigit():
            raise HTTPException(411, "send the form with its length")
        if int(size) > max_size:
            raise HTTPException(413, f"the request is over {max_size // 2**20} MB")
        account, login = await run_in_threadpool(boss, request, session)
        return account, login, await web.form(request, login)

    async def act(request: Request, session: Session, pid: int, account: Account,
                  fields: dict[str, Any],
                  work: Callable[[Session, Project, Account, dict[str, Any]], str],
                  where: str, view: Callable[..., Response]) -> Response:
        """Do a campaign operation on the project: back to `where` with what it said, or its
        page again with why not (nothing of it saved)."""
        def done() -> Response:
            project = project_of(session, pid)
            try:
                said = work(session, project, account, fields)
            except NuggetizerError as exc:
                session.rollback()
                return view(request, session, pid, str(exc), 400)
            return back(f"/project/{pid}{where}", said)
        return await run_in_threadpool(done)

    # --- the home page and accounts ---

    @router.get("/accounts")
    def accounts_get(request: Request, session: Session = Depends(web.db)) -> Response:
        account, login = boss(request, session)
        body = op.accounts_page(base, login.csrf, campaign.accounts(session),
                                campaign.logins(session, web.limiter), heard(request),
                                me=account.name)
        return shown(web.page("Accounts", body, account, login), request)

    def account_action(path: str, act: Callable[[Session, str, Account], str]) -> None:
        @router.post(f"/accounts/{path}", name=f"accounts_{path}")
        async def action(request: Request, session: Session = Depends(web.db)) -> Response:
            account, _, fields = await posted(request, session)

            def done() -> Response:
                try:
                    return back("/accounts", act(session, str(fields.get("name", "")),
                                                 account))
                except NuggetizerError as exc:
                    session.rollback()
                    return back("/accounts", f"not done: {exc}")
            return await run_in_threadpool(done)

    account_action("disable", lambda s, n, a: f"{n} disabled; "
                   f"{campaign.disable(s, n, a)} sessions ended")
    def enabled(s: Session, name: str, by: Account) -> str:
        campaign.enable(s, name, by)
        return f"{name} enabled"

    account_action("enable", enabled)
    account_action("revoke", lambda s, n, a: f"{campaign.revoke(s, n, a)} sessions of {n} "
                   "ended")

    def invitation_page(request: Request, session: Session, account: Account, login: Login,
                        name: str, make: Callable[[], str | None]) -> Response:
        try:
            token = make()
        except NuggetizerError as exc:
            session.rollback()
            body = op.accounts_page(base, login.csrf, campaign.accounts(session),
                                    campaign.logins(session, web.limiter), f"not done: {exc}",
                                    me=account.name)
            return web.page("Accounts", body, account, login, status=400)
        link = f"{str(request.base_url).rstrip('/')}{base}/invite/{token}"
        body = op.accounts_page(base, login.csrf, campaign.accounts(session),
                                campaign.logins(session, web.limiter),
                                f"{name}: invitation made", link, me=account.name)
        return web.page("Accounts", body, account, login)

    @router.post("/accounts/invite")
    async def invite(request: Request, session: Session = Depends(web.db)) -> Response:
        account, login, fields = await posted(request, session)
        name, role = str(fields.get("name", "")), str(fields.get("role", "assessor"))
        return await run_in_threadpool(invitation_page, request, session, account, login,
                                       name, lambda: campaign.invite(session, name, role,
                                                                     account))

    @router.post("/accounts/reinvite")
    async def reinvite(request: Request, session: Session = Depends(web.db)) -> Response:
        account, login, fields = await posted(request, session)
        name = str(fields.get("name", ""))
        return await run_in_threadpool(invitation_page, request, session, account, login,
                                       name, lambda: campaign.reinvite(session, name, account))

    @router.post("/accounts/unlock")
    async def unlock(request: Request, session: Session = Depends(web.db)) -> Response:
        account, _, fields = await posted(request, session)
        key = str(fields.get("key", ""))

        def done() -> Response:
            was = campaign.unlock(session, key, web.limiter, account)
            return back("/accounts", f"{key} unlocked" if was else f"{key} was not locked")
        return await run_in_threadpool(done)

    # --- a new project ---

    def new_form(session: Session, account: Account, login: Login, values: dict[str, Any],
                 error: str = "", status: int = 200) -> Response:
        body = op.new_project(base, login.csrf, allowed_files(web.settings.allow),
                              assessors(session), values, web.settings.uploads is not None,
                              error)
        return web.page("New project", body, account, login, status=status)

    @router.get("/projects/new")
    def new_get(request: Request, session: Session = Depends(web.db)) -> Response:
        account, login = boss(request, session)
        return new_form(session, account, login, {})

    async def files_of(fields: dict[str, Any], folder: Path) -> dict[str, Any]:
        """Each file field as a path: the uploaded file if one came, else the allowed path
        typed (runs: every one chosen and uploaded)."""
        found: dict[str, Any] = {}
        limit = web.settings.max_upload
        for name, _, _ in op.FILE_FIELDS:
            upload = fields.get(f"upload:{name}")
            if isinstance(upload, UploadFile) and upload.filename:
                found[name] = await save_upload(upload, folder, name, limit)
            elif str(fields.get(name, "")).strip():
                found[name] = allowed_path(str(fields[name]), web.settings.allow)
        runs = [allowed_path(str(p), web.settings.allow) for p in _list(fields.get("runs"))]
        for k, upload in enumerate(_list(fields.get("upload:runs"))):
            if isinstance(upload, UploadFile) and upload.filename:
                runs.append(await save_upload(upload, folder, f"run{k}", limit))
        found["runs"] = runs
        return found

    def llm_files(text: str) -> dict[str, list[Path]]:
        judged: dict[str, list[Path]] = {}
        for line in str(text).splitlines():
            if line.strip():
                task, _, path = line.strip().partition(" ")
                judged.setdefault(task, []).append(allowed_path(path, web.settings.allow))
        return judged

    @router.post("/projects/new")
    async def new_post(request: Request, session: Session = Depends(web.db)) -> Response:
        account, login, fields = await posted(request, session, web.settings.max_upload)
        values = {k: v for k, v in fields.items() if not k.startswith("upload:")}
        try:
            if web.settings.uploads is None and any(
                    isinstance(u, UploadFile) and u.filename for k, v in fields.items()
                    if k.startswith("upload:") for u in _list(v)):
                raise NuggetizerError("this server takes no uploads: give paths it may read")
            files = await files_of(fields, (web.settings.uploads or Path(".")) /
                                   secrets.token_hex(8))
            spec = ProjectSpec(
                str(fields.get("name", "")), files.get("topics") or Path(""),
                [str(t) for t in _list(fields.get("tasks"))],
                [str(a) for a in _list(fields.get("assessors"))], files["runs"],
                files.get("nuggets"), files.get("corpus"), files.get("rubrics"),
                str(fields.get("grading", "binary")), _share(fields.get("overlap")),
                bool(fields.get("show_llm")), llm_files(str(fields.get("llm", ""))),
                files.get("narratives"), int(str(fields.get("seed") or 0)))
            if not files.get("topics"):
                raise NuggetizerError("give the topics file (a path, or an upload)")
            project = await run_in_threadpool(campaign.make_project, session, spec, account)
        except (NuggetizerError, ValueError) as exc:
            session.rollback()
            return await run_in_threadpool(new_form, session, account, login, values,
                                           str(exc), 400)
        return back(f"/project/{project.id}/assign", f"project {project.name} made")

    # --- a project ---

    @router.get("/project/{pid}")
    def project_get(pid: int, request: Request, session: Session = Depends(web.db)
                    ) -> Response:
        account, login = boss(request, session)
        project = project_of(session, pid)
        body = op.project_page(base, project, campaign.progress_of(session, project.name),
                               campaign.agreement_of(session, project.name))
        return web.page(project.name, body, account, login)

    def current(session: Session, project: Project) -> list[tuple[str, str, str]]:
        names = {a.id: a.name for a in session.scalars(select(Account))}
        who: dict[tuple[str, str], set[str]] = {}
        for a, item in session.execute(select(Assignment, Item).join(
                Item, Item.id == Assignment.item_id).where(Item.project_id == project.id)):
            who.setdefault((item.qid, item.task), set()).add(names[a.account_id])
        order = {q: k for k, q in enumerate(project.settings.get("topics", []))}
        return [(q, t, ", ".join(sorted(w))) for (q, t), w in
                sorted(who.items(), key=lambda r: (order.get(r[0][0], 0), r[0][1]))]

    def assign_view(request: Request, session: Session, pid: int, error: str = "",
                    status: int = 200) -> Response:
        account, login = boss(request, session)
        project = project_of(session, pid)
        body = op.assign_page(base, login.csrf, project, assessors(session),
                              current(session, project), heard(request), error)
        return shown(web.page(f"{project.name}: assignment", body, account, login,
                              status=status), request)

    @router.get("/project/{pid}/assign")
    def assign_get(pid: int, request: Request, session: Session = Depends(web.db)
                   ) -> Response:
        return assign_view(request, session, pid)

    @router.post("/project/{pid}/assign")
    async def assign_post(pid: int, request: Request, session: Session = Depends(web.db)
                          ) -> Response:
        account, _, fields = await posted(request, session)
        return await act(request, session, pid, account, fields, _assigned, "/assign",
                         assign_view)

    @router.post("/project/{pid}/reassign")
    async def reassign_post(pid: int, request: Request, session: Session = Depends(web.db)
                            ) -> Response:
        account, _, fields = await posted(request, session)
        return await act(request, session, pid, account, fields, _reassigned, "/assign",
                         assign_view)

    @router.get("/project/{pid}/board")
    def board_get(pid: int, request: Request, session: Session = Depends(web.db)
                  ) -> Response:
        account, login = boss(request, session)
        project = project_of(session, pid)
        body = op.board_page(base, project, campaign.board_of(session, project.name))
        return web.page(f"{project.name}: board", body, account, login, {"reload": 30})

    def adjudicate_view(request: Request, session: Session, pid: int, message: str = "",
                        status: int = 200) -> Response:
        account, login = boss(request, session)
        project = project_of(session, pid)
        body = op.adjudicate_page(base, login.csrf, project,
                                  campaign.disagreements_of(session, project.name),
                                  message or heard(request))
        return shown(web.page(f"{project.name}: adjudication", body, account, login,
                              {"adjudicate": True}, status), request)

    @router.get("/project/{pid}/adjudicate")
    def adjudicate_get(pid: int, request: Request, session: Session = Depends(web.db)
                       ) -> Response:
        return adjudicate_view(request, session, pid)

    @router.post("/project/{pid}/adjudicate")
    async def adjudicate_post(pid: int, request: Request, session: Session = Depends(web.db)
                              ) -> Response:
        account, _, fields = await posted(request, session)
        return await act(request, session, pid, account, fields, _settled, "/adjudicate",
                         adjudicate_view)

    def import_view(request: Request, session: Session, pid: int, error: str = "",
                    status: int = 200) -> Response:
        account, login = boss(request, session)
        project = project_of(session, pid)
        people = [a.name for a in session.scalars(select(Account).order_by(Account.name))]
        body = op.import_page(base, login.csrf, project, people,
                              allowed_files(web.settings.allow),
                              web.settings.uploads is not None, heard(request), error)
        return shown(web.page(f"{project.name}: import", body, account, login,
                              status=status), request)

    @router.get("/project/{pid}/import")
    def import_get(pid: int, request: Request, session: Session = Depends(web.db)
                   ) -> Response:
        return import_view(request, session, pid)

    @router.post("/project/{pid}/import")
    async def import_post(pid: int, request: Request, session: Session = Depends(web.db)
                          ) -> Response:
        account, _, fields = await posted(request, session, web.settings.max_upload)
        try:
            paths = [allowed_path(p, web.settings.allow)
                     for p in str(fields.get("paths", "")).splitlines() if p.strip()]
            uploads = [u for u in _list(fields.get("upload:paths"))
                       if isinstance(u, UploadFile) and u.filename]
            if uploads and web.settings.uploads is None:
                raise NuggetizerError("this server takes no uploads: give paths it may read")
            folder = (web.settings.uploads or Path(".")) / f"import-{secrets.token_hex(8)}"
            for k, upload in enumerate(uploads):
                paths.append(await save_upload(upload, folder, f"judgments{k}",
                                               web.settings.max_upload))
            mapping = allowed_path(str(fields["mapping"]), web.settings.allow) \
                if str(fields.get("mapping", "")).strip() else None
            if not paths:
                raise NuggetizerError("give the files to import (paths, or uploads)")
        except NuggetizerError as exc:
            return await run_in_threadpool(import_view, request, session, pid, str(exc), 400)

        def imported(db: Session, project: Project, by: Account, given: dict[str, Any]) -> str:
            filled = campaign.import_files(db, project.name, str(given.get("task")),
                                           str(given.get("assessor")), paths, mapping, by)
            return f"{filled} items of {given.get('task')} imported as " \
                   f"{given.get('assessor')}'s judgments"
        return await act(request, session, pid, account, fields, imported, "/import",
                         import_view)

    @router.get("/project/{pid}/export.zip")
    def export_zip(pid: int, request: Request, session: Session = Depends(web.db)) -> Response:
        boss(request, session)
        project = project_of(session, pid)
        buffer = io.BytesIO()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "export"
            campaign.export(session, project.name, out)
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
                for path in sorted(out.rglob("*")):
                    if path.is_file():
                        z.write(path, path.relative_to(out))
        return Response(buffer.getvalue(), media_type="application/zip", headers={
            **HEADERS, "Content-Disposition": f'attachment; filename="export-{pid}.zip"'})
