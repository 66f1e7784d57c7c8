"""`nuggetizer workbench` from the command line: accounts by password or invitation (the
invitation works once, in the browser's forms), one-line errors with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
from workbench_server import ROOT, serving, write_key


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os
    return subprocess.run([sys.executable, "-m", "nuggetizer", "workbench", *args],
                          capture_output=True, text=True, env={**os.environ, **(env or {})})


def test_accounts_invitations_and_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "wb.sqlite")
    made = _run("account", "boss", "--role", "organizer", "--password-env", "WB_PW", "--db", db,
                env={"WB_PW": "a long enough password"})
    assert made.returncode == 0, made.stderr
    invited = _run("account", "carol", "--db", db)
    token = invited.stdout.strip()
    assert invited.returncode == 0 and len(token) > 20
    bad = _run("create", "p", "--organizer", "boss", "--task", "assign", "--assessor", "nobody",
               "--topics", str(ROOT / "tracks/sample/topics.tsv"), "--run",
               str(ROOT / "runs/sample/good.jsonl"), "--nuggets",
               str(write_key(tmp_path / "key.jsonl")), "--db", db)
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("error: no assessor 'nobody': add one with `nuggetizer "
                                  "workbench account NAME`")
    assert _run("account", "carol", "--db", db).stderr.strip() == \
        "error: account 'carol' exists already"
    with serving(db, tmp_path / "server.log") as server:
        browser = httpx2.Client(base_url=server.url)
        browser.get(f"/invite/{token}")
        pre = browser.cookies.get("wb_pre")
        short = browser.post(f"/invite/{token}", data={"csrf": pre, "password": "short"})
        assert short.status_code == 400 and "at least 8" in short.text
        differ = browser.post(f"/invite/{token}", data={"csrf": pre, "password": "carols pass",
                                                         "again": "carols pas"})
        assert differ.status_code == 400 and "the two passwords differ" in differ.text
        done = browser.post(f"/invite/{token}", data={"csrf": pre, "password": "carols pass",
                                                       "again": "carols pass"})
        assert done.status_code == 303
        assert browser.get("/api/items").status_code == 200  # logged in
        again = httpx2.Client(base_url=server.url)
        again.get(f"/invite/{token}")
        spent = again.post(f"/invite/{token}", data={"csrf": again.cookies.get("wb_pre"),
                                                      "password": "another password"})
        assert spent.status_code == 404
        wrong = again.post("/login", data={"csrf": again.cookies.get("wb_pre"),
                                           "name": "carol", "password": "another password"})
        assert wrong.status_code == 401
        # a week later the session has ended
        from datetime import timedelta

        from nuggetizer.workbench.store import Login, make_engine, sessions
        with sessions(make_engine(db))() as session:
            for login in session.query(Login):
                login.created = login.created - timedelta(days=8)
            session.commit()
        assert browser.get("/api/items").status_code == 401
