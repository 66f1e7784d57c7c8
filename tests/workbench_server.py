"""The workbench on a real server: a database (SQLite file, or a PostgreSQL server the test
starts), accounts, two projects made from the sample and rag26 tracks, `nuggetizer workbench
serve` on 127.0.0.1, and a logged-in HTTP client."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from nuggetizer.formats.topics import read_topics  # noqa: E402
from nuggetizer.workbench.build import ProjectSpec, create_project  # noqa: E402
from nuggetizer.workbench.security import add_account  # noqa: E402
from nuggetizer.workbench.store import (  # noqa: E402
    Account,
    Assignment,
    Item,
    make_engine,
    sessions,
)

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "correct horse battery"
HOSTILE = ['<script>window.pwned=1</script>', '"><img src=x onerror="window.pwned=2">',
           "[click me](javascript:window.pwned=3)"]


def write_key(path: Path) -> Path:
    """A nuggets key for the sample track's topics (three nuggets each)."""
    topics = read_topics(ROOT / "tracks/sample/topics.tsv")
    with path.open("w") as f:
        for qid, t in topics.items():
            nuggets = [f"{t.text.rstrip('?')}: the main cause", "a second fact about it",
                       "a third, smaller fact"]
            f.write(json.dumps({"qid": qid, "query": t.text, "nuggets": [
                {"text": n, "importance": "vital" if k == 0 else "okay"}
                for k, n in enumerate(nuggets)]}) + "\n")
    return path


def write_hostile_run(path: Path) -> Path:
    """The sample's good run with hostile text in each answer's first sentence."""
    lines = (ROOT / "runs/sample/good.jsonl").read_text().splitlines()
    with path.open("w") as f:
        for line in lines:
            obj = json.loads(line)
            obj["run_id"] = "sample-hostile"
            obj["answer"][0]["text"] = " ".join(HOSTILE) + " " + obj["answer"][0]["text"]
            f.write(json.dumps(obj) + "\n")
    return path


def populate(database: str, tmp: Path, *, double: float = 0.5) -> None:
    """Accounts (boss, alice, bob) and the projects `sample` (post-edit, assignment, support,
    battles over three runs, one hostile) and `rag` (ternary rubric grading)."""
    factory = sessions(make_engine(database))
    runs = [ROOT / "runs/sample/good.jsonl", ROOT / "runs/sample/middling.jsonl",
            write_hostile_run(tmp / "hostile.jsonl")]
    with factory() as db:
        add_account(db, "boss", "organizer", PASSWORD)
        add_account(db, "alice", "assessor", PASSWORD)
        add_account(db, "bob", "assessor", PASSWORD)
        boss = db.query(Account).filter_by(name="boss").one()
        create_project(db, ProjectSpec(
            "sample", ROOT / "tracks/sample/topics.tsv",
            ("postedit", "assign", "support", "battle"), ("alice", "bob"), runs,
            write_key(tmp / "key.jsonl"), ROOT / "tracks/sample/corpus.jsonl",
            double=double), boss)
        create_project(db, ProjectSpec(
            "rag", ROOT / "tracks/rag26/narratives.jsonl", ("rubric",), ("alice", "bob"),
            [ROOT / "tracks/rag26/run-thorough.jsonl", ROOT / "tracks/rag26/run-offtopic.jsonl"],
            rubrics=ROOT / "tracks/rag26/rubrics.jsonl", grading="ternary", double=1.0), boss)


def add_assessors(database: str, names: list[str], tasks: tuple[str, ...]) -> None:
    """More assessor accounts, each assigned every item of `tasks` (of every project)."""
    with sessions(make_engine(database))() as db:
        items = db.query(Item).filter(Item.task.in_(tasks)).all()
        for name in names:
            add_account(db, name, "assessor", PASSWORD)
            who = db.query(Account).filter_by(name=name).one()
            db.add_all(Assignment(item_id=i.id, account_id=who.id) for i in items)
        db.commit()


def concurrently(count: int, work: Callable[[int], None]) -> list[str]:
    """`work(k)` for k < count, each in a thread of its own; what failed, a line each (an
    exception in a thread does not fail a test by itself)."""
    failures: list[str] = []
    lock = threading.Lock()

    def guarded(k: int) -> None:
        try:
            work(k)
        except BaseException as exc:  # noqa: BLE001 - reported, so it fails the test
            with lock:
                failures.append(f"thread {k}: {type(exc).__name__}: {exc}"[:300])

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`nuggetizer workbench serve` in a subprocess."""

    def __init__(self, database: str, log: Path, args: tuple[str, ...] = ()) -> None:
        self.database, self.log, self.port, self.args = database, log, free_port(), args
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nuggetizer", "workbench", "serve", "--db", self.database,
             "--port", str(self.port), *self.args], stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url + "/login", timeout=1)
                return self
            except httpx.HTTPError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the server ended: {self.log.read_text()[-2000:]}"
                                       ) from None
                time.sleep(0.1)
        raise RuntimeError("the server did not start in 30 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@contextmanager
def serving(database: str, log: Path, args: tuple[str, ...] = ()) -> Iterator[Server]:
    server = Server(database, log, args).start()
    try:
        yield server
    finally:
        server.stop()


def login(url: str, name: str, password: str = PASSWORD) -> tuple[httpx.Client, str]:
    """A client logged in as `name`, and its session's CSRF token."""
    client = httpx.Client(base_url=url, timeout=30)
    page = client.get("/login")
    pre = client.cookies.get("wb_pre")
    done = client.post("/login", data={"csrf": pre, "name": name, "password": password})
    assert done.status_code == 303, done.text
    home = client.get("/")
    token = home.text.split('name="csrf" content="', 1)[1].split('"', 1)[0]
    assert page.status_code == 200
    return client, token


@contextmanager
def postgres(tmp: Path) -> Iterator[str]:
    """A PostgreSQL server of its own in `tmp` (Debian's package; as the `postgres` user
    when the test runs as root); its URL."""
    initdb = shutil.which("initdb") or next(iter(sorted(Path("/usr/lib/postgresql").glob(
        "*/bin/initdb"))), None)
    if initdb is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is missing: apt-get install postgresql")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    bindir = Path(str(initdb)).resolve().parent
    data = Path(tempfile.mkdtemp(prefix="wb-pg-", dir=tmp)) / "pg"
    data.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to `postgres`
        for parent in (data.parent, *data.parent.parents):
            if parent == Path("/"):
                break
            os.chmod(parent, os.stat(parent).st_mode | 0o011)
        shutil.chown(data, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U",
                    "wb", "--no-sync"], check=True, capture_output=True)
    subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l",
                    str(data / "log"), "-o", f"-p {port} -k {data} -h 127.0.0.1", "start"],
                   check=True, capture_output=True)
    try:
        subprocess.run([*prefix, str(bindir / "createdb"), "-h", "127.0.0.1", "-p",
                        str(port), "-U", "wb", "workbench"], check=True, capture_output=True)
        yield f"postgresql://wb@127.0.0.1:{port}/workbench"
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)


def chromium() -> str:
    """Debian's chromium for Playwright (`executable_path`); its download is not used."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: apt-get install chromium")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def shots_folder(tmp: Path, name: str) -> Path:
    """Where a test's screenshots go: WORKBENCH_SCREENSHOTS/NAME (a CI artifact), else the
    test's temporary folder."""
    kept = os.environ.get("WORKBENCH_SCREENSHOTS")
    folder = Path(kept) / name if kept else tmp / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def saved(page: Any) -> None:
    """Wait until the page says every change is saved."""
    page.locator("#status", has_text="all saved").wait_for()


def log_in(page: Any, url: str, name: str, password: str = PASSWORD) -> None:
    """Log a browser page in as `name`, by the login form."""
    page.goto(url + "/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.keyboard.press("Enter")
    page.wait_for_url(url + "/")
