"""The organizer's pages on a real server keep the workbench's security: each is the
organizer's alone (an assessor gets 404, nobody logged in is sent to the login), each change
wants the session's CSRF token, every text is escaped, battles stay blind on the adjudication
page, project files come only from the allowed folders or from uploads within the size limit
(kept under a random name); and each page is a form over the same operation the command line
calls."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

import httpx2 as httpx  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from sqlalchemy import select  # noqa: E402
from workbench_server import HOSTILE, PASSWORD, ROOT, login, populate, serving  # noqa: E402

from nuggetizer.cli import cli  # noqa: E402
from nuggetizer.workbench.store import (  # noqa: E402
    Account,
    Adjudication,
    Assignment,
    Item,
    Judgment,
    Project,
    make_engine,
    sessions,
)

RUN_IDS = ("sample-good", "sample-middling", "sample-hostile")
PAGES = ("/accounts", "/projects/new", "/project/1", "/project/1/assign", "/project/1/board",
         "/project/1/adjudicate", "/project/1/import", "/project/1/export.zip")
POSTS = ("/accounts/invite", "/accounts/reinvite", "/accounts/disable", "/accounts/enable",
         "/accounts/revoke", "/accounts/unlock", "/projects/new", "/project/1/assign",
         "/project/1/reassign", "/project/1/adjudicate", "/project/1/import")


def _disagree(database: str) -> None:
    """Alice and Bob finish every item of the sample project they share, differing on
    every question with more than one label."""
    with sessions(make_engine(database))() as db:
        people = {a.name: a for a in db.scalars(select(Account))}
        for item in db.scalars(select(Item).where(Item.task.in_(("assign", "battle")))):
            db.add(Assignment(item_id=item.id, account_id=people["bob"].id)) \
                if not db.scalar(select(Assignment).where(
                    Assignment.item_id == item.id,
                    Assignment.account_id == people["bob"].id)) else None
            db.add(Assignment(item_id=item.id, account_id=people["alice"].id)) \
                if not db.scalar(select(Assignment).where(
                    Assignment.item_id == item.id,
                    Assignment.account_id == people["alice"].id)) else None
            for k, who in enumerate(("alice", "bob")):
                db.add(Judgment(item_id=item.id, account_id=people[who].id, value={
                    q["key"]: q["labels"][k] for q in item.shown["questions"]}))
        db.commit()


def test_the_organizers_pages_are_the_organizers_alone_and_want_csrf(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    with serving(database, tmp_path / "server.log") as server:
        alice, alice_csrf = login(server.url, "alice")
        boss, csrf = login(server.url, "boss")
        stranger = httpx.Client(base_url=server.url)
        for path in PAGES:
            assert boss.get(path).status_code == 200, path
            assert alice.get(path).status_code == 404, path
            gone = stranger.get(path)
            assert gone.status_code == 303 and gone.headers["location"].startswith(
                "/login?next="), path
        for path in POSTS:
            assert alice.post(path, data={"csrf": alice_csrf, "name": "bob"}
                              ).status_code == 404, path
            assert boss.post(path, data={"name": "bob"}).status_code == 403, path
            assert boss.post(path, data={"csrf": alice_csrf, "name": "bob"}
                             ).status_code == 403, path
        with sessions(make_engine(database))() as db:  # nothing changed
            bob = db.scalar(select(Account).where(Account.name == "bob"))
            assert not bob.disabled and bob.password_hash
        # the same forms with the token do their work, and say so on the page they return to
        done = boss.post("/accounts/disable", data={"csrf": csrf, "name": "bob"})
        assert done.status_code == 303
        assert "bob disabled" in boss.get("/accounts").text
        assert login_fails(server.url, "bob")
        boss.post("/accounts/enable", data={"csrf": csrf, "name": "bob"})
        invited = boss.post("/accounts/reinvite", data={"csrf": csrf, "name": "bob"})
        assert invited.status_code == 200 and "/invite/" in invited.text
        assert login_fails(server.url, "bob")  # the old password ended
        mine = boss.post("/accounts/disable", data={"csrf": csrf, "name": "boss"})
        assert "cannot disable their own account" in boss.get(mine.headers["location"]).text


def login_fails(url: str, name: str) -> bool:
    client = httpx.Client(base_url=url)
    client.get("/login")
    done = client.post("/login", data={"csrf": client.cookies.get("wb_pre"), "name": name,
                                       "password": PASSWORD})
    return done.status_code == 401


def test_every_text_is_escaped_and_battles_stay_blind_when_adjudicated(tmp_path: Path
                                                                        ) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    _disagree(database)
    with sessions(make_engine(database))() as db:  # a hostile project name too
        db.scalar(select(Project).where(Project.name == "sample")).name = HOSTILE[0]
        db.commit()
    with serving(database, tmp_path / "server.log") as server:
        boss, _ = login(server.url, "boss")
        for path in ("/", "/project/1", "/project/1/assign", "/project/1/board",
                     "/project/1/adjudicate", "/project/1/import"):
            text = boss.get(path).text
            assert "<script>window" not in text and "<img src=x" not in text, path
            assert "javascript:" not in text.replace("[click me](javascript:", ""), path
        page = boss.get("/project/1/adjudicate").text
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page
        battles = page[page.index("Blind battle"):]
        assert not any(r in battles for r in RUN_IDS)
        board = boss.get("/project/1/board").text  # the board names the runs: it ranks them
        assert "sample-good" in board


def test_project_files_come_from_allowed_folders_or_uploads_within_the_limit(
        tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    allowed = ROOT / "tracks" / "sample"
    args = ("--allow-dir", str(allowed), "--upload-dir", str(tmp_path / "uploads"),
            "--max-upload-mb", "1")
    with serving(database, tmp_path / "server.log", args) as server:
        boss, csrf = login(server.url, "boss")
        form = {"csrf": csrf, "name": "outside", "tasks": "support",
                "runs": str(ROOT / "runs/sample/good.jsonl")}
        outside = boss.post("/projects/new", data={**form, "topics": str(allowed / "topics.tsv"),
                                                   "corpus": str(allowed / "corpus.jsonl")})
        assert outside.status_code == 400 and "is not inside the folders this server may read" \
            in outside.text
        sneaky = boss.post("/projects/new", data={
            **form, "runs": [], "topics": f"{allowed}/../../../../etc/passwd"})
        assert sneaky.status_code == 400 and "not inside the folders" in sneaky.text
        run = (ROOT / "runs/sample/good.jsonl").read_bytes()
        made = boss.post("/projects/new", data={
            "csrf": csrf, "name": "uploaded", "tasks": "support",
            "topics": str(allowed / "topics.tsv"), "corpus": str(allowed / "corpus.jsonl")},
            files={"upload:runs": ("../../evil.jsonl", io.BytesIO(run), "text/plain")})
        assert made.status_code == 303, made.text
        kept = [p for p in (tmp_path / "uploads").rglob("*") if p.is_file()]
        assert len(kept) == 1 and kept[0].read_bytes() == run
        assert "evil" not in kept[0].name and kept[0].is_relative_to(tmp_path / "uploads")
        big = boss.post("/projects/new", data={"csrf": csrf, "name": "big"},
                        files={"upload:topics": ("t.tsv", io.BytesIO(b"x" * (2 << 20)))})
        assert big.status_code == 413
        wrong = boss.post("/projects/new", data={"csrf": csrf, "name": "w", "tasks": "support"},
                          files={"upload:topics": ("t.exe", io.BytesIO(b"1\tq\n"))})
        assert wrong.status_code == 400 and "upload a .jsonl.gz" in wrong.text


def test_the_command_line_is_the_pages_twin(tmp_path: Path) -> None:
    """The campaign from commands: accounts, assignment, progress, board, disagreements,
    settling, export; each does what its page does."""
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    _disagree(database)
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> str:
        done = runner.invoke(cli, ["workbench", *args, "--db", database])
        assert done.exit_code == code, done.output
        return done.output

    assert "ann" in run("account", "ann")
    run("assign", "sample", "--assessor", "alice", "--assessor", "ann", "--task", "support",
        "--overlap", "0.5")
    moved = run("reassign", "sample", "--from", "ann", "--to", "bob")
    assert "unfinished items moved from ann to bob" in moved
    rows = run("progress", "sample").splitlines()
    assert rows[0].startswith("assessor\ttask\tassigned") and any("bob\tsupport" in r
                                                                 for r in rows)
    assert "# assign:" in run("board", "sample")
    listed = [line.split("\t") for line in run("disagreements", "sample").splitlines()[1:]]
    assert listed and {row[1] for row in listed} == {"assign", "battle"}
    ref, key = listed[0][0], listed[0][3]
    label = "support" if listed[0][1] == "assign" else "tie"
    run("settle", "sample", ref, key, label, "--organizer", "boss")
    with sessions(make_engine(database))() as db:
        settled = db.scalar(select(Adjudication))
        assert (settled.key, settled.label) == (key, label)
    for command in (("disable", "ann"), ("enable", "ann"), ("revoke", "alice"),
                    ("unlock", "alice"), ("reinvite", "ann"), ("accounts",)):
        run(*command)
    refused = run("settle", "sample", ref, key, "no-such-label", "--organizer", "boss", code=2)
    assert "error: label must be one of" in refused
    run("export", "sample", "-o", str(tmp_path / "out"))
    assert (tmp_path / "out" / "workbench-export.json").is_file()
