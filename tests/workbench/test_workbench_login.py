"""The login as a service people trust, on a real server: the 11th wrong password of an
account in a minute is refused with a wait (Retry-After), the right one then waits too; a
client guessing across accounts is locked out as well; every failure is in the audit log and
the organizer is told on the pages; lockouts double; a logged-out page goes to the login and
back (never to another site)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

import httpx2 as httpx  # noqa: E402
from sqlalchemy import select  # noqa: E402
from workbench_server import PASSWORD, login, populate, serving  # noqa: E402

from nuggetizer.workbench import throttle  # noqa: E402
from nuggetizer.workbench.store import (  # noqa: E402
    Audit,
    Item,
    Throttle,
    make_engine,
    now,
    sessions,
)


def _try(client: httpx.Client, name: str, password: str, after: str = "") -> httpx.Response:
    if not client.cookies.get("wb_pre"):
        client.get("/login")
    return client.post("/login", data={"csrf": client.cookies.get("wb_pre"), "name": name,
                                       "password": password, "next": after})


def _client(url: str, address: str = "127.0.0.1") -> httpx.Client:
    """A client of its own address (127.0.0.x: the server sees another client)."""
    return httpx.Client(base_url=url, timeout=30,
                        transport=httpx.HTTPTransport(local_address=address))


def test_the_eleventh_wrong_password_waits_and_so_does_the_right_one(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    with serving(database, tmp_path / "server.log") as server:
        guesser = _client(server.url)
        for k in range(throttle.ACCOUNT_LIMIT - 1):
            assert _try(guesser, "alice", f"guess {k}").status_code == 401
        tenth = _try(guesser, "alice", "guess 10")
        assert tenth.status_code == 401 and "the next login waits" in tenth.text
        eleventh = _try(guesser, "alice", "guess 11")
        assert eleventh.status_code == 429
        assert 50 <= int(eleventh.headers["retry-after"]) <= 60
        assert "too many failed logins: wait" in eleventh.text
        right = _try(guesser, "alice", PASSWORD)
        assert right.status_code == 429 and "wb_session" not in right.cookies
        # from another client too: the account is locked, not the client
        assert _try(_client(server.url, "127.0.0.2"), "alice", PASSWORD).status_code == 429
        # bob is not locked: a client guessing one account keeps its own logins
        assert _try(_client(server.url, "127.0.0.3"), "bob", PASSWORD).status_code == 303

        # a client guessing many accounts is locked after CLIENT_LIMIT failures
        spray = _client(server.url, "127.0.0.4")
        codes = [_try(spray, f"nobody{k}", "guess").status_code
                 for k in range(throttle.CLIENT_LIMIT + 1)]
        assert codes[:throttle.CLIENT_LIMIT - 1] == [401] * (throttle.CLIENT_LIMIT - 1)
        assert codes[-1] == 429
        assert _try(spray, "bob", PASSWORD).status_code == 429  # that client waits

        # the organizer is told: the failures, the lockouts, an unlock button
        boss, csrf = login(server.url, "boss")
        home = boss.get("/").text
        assert "failed logins" in home and "account:alice locked until" in home
        accounts = boss.get("/accounts").text
        assert "client:127.0.0.4 locked until" in accounts
        unlocked = boss.post("/accounts/unlock", data={"csrf": csrf, "key": "account:alice"})
        assert unlocked.status_code == 303
        assert _try(_client(server.url, "127.0.0.5"), "alice", PASSWORD).status_code == 303
    with sessions(make_engine(database))() as db:
        failed = [json.loads(a.detail) for a in db.scalars(
            select(Audit).where(Audit.action == "login-failed"))]
        locked = db.scalars(select(Audit).where(Audit.action == "login-locked")).all()
    # every password checked and refused is in the audit log (with its client); those
    # refused while locked were never checked
    assert len(failed) == throttle.ACCOUNT_LIMIT + throttle.CLIENT_LIMIT
    assert {f["client"] for f in failed} == {"127.0.0.1", "127.0.0.4"}
    assert len(locked) == 2


def test_lockouts_in_a_row_double_and_a_quiet_day_forgets_them(tmp_path: Path) -> None:
    limiter = throttle.Limiter()
    factory = sessions(make_engine(str(tmp_path / "wb.sqlite")))
    keys = (throttle.account_key("alice"),)
    with factory() as db:
        lengths = []
        for _ in range(3):
            for _ in range(throttle.ACCOUNT_LIMIT - 1):
                assert limiter.failed(db, keys, None, "10.0.0.1") is None
            lock = limiter.failed(db, keys, None, "10.0.0.1")
            assert lock is not None and limiter.check(db, keys) is not None
            lengths.append(round((lock.until - now()).total_seconds()))
            row = db.get(Throttle, keys[0])
            row.locked_until = now() - timedelta(seconds=1)  # the lockout has run out
            db.commit()
            limiter = throttle.Limiter()  # a fresh server: its memory is empty
        assert lengths == [60, 120, 240]
        row = db.get(Throttle, keys[0])
        row.locked_until = now() - timedelta(days=2)
        db.commit()
        for _ in range(throttle.ACCOUNT_LIMIT):
            lock = limiter.failed(db, keys, None, "10.0.0.1")
        assert lock is not None and round((lock.until - now()).total_seconds()) == 60


def test_a_logged_out_page_goes_to_the_login_and_back(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    with sessions(make_engine(database))() as db:
        ref = db.scalars(select(Item)).first().ref
    with serving(database, tmp_path / "server.log") as server:
        alice, _ = login(server.url, "alice")
        assert alice.get(f"/item/{ref}").status_code in (200, 404)
        alice.cookies.clear()  # the session has ended (expired, or logged out)
        page = alice.get(f"/item/{ref}")
        assert page.status_code == 303
        assert page.headers["location"] == f"/login?next=/item/{ref}"
        form = alice.get(page.headers["location"])
        assert f'name="next" value="/item/{ref}"' in form.text
        back = _try(alice, "alice", PASSWORD, f"/item/{ref}")
        assert back.status_code == 303 and back.headers["location"] == f"/item/{ref}"
        # the script's API still answers 401 (a save keeps its queue and says so)
        assert httpx.get(f"{server.url}/api/items").status_code == 401
        # never to another site
        for elsewhere in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
            again = httpx.Client(base_url=server.url)
            done = _try(again, "bob", PASSWORD, elsewhere)
            assert done.status_code == 303 and done.headers["location"] == "/", elsewhere
