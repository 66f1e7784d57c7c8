"""One test per fault class the 2026 campaign found, each the way a user meets it: an account
name that would be a path of the export, a save with `seconds: Infinity`, the same assessor
named twice, a database that cannot be opened, and imports whose records do not fit the
project. Each ends in one clear line (exit 2) or a 4xx with a message; nothing is written
outside the chosen folder, nothing is saved in part."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

from sqlalchemy import func, select  # noqa: E402
from workbench_server import ROOT, login, populate, serving, write_key  # noqa: E402

from nuggetizer.errors import ConfigError  # noqa: E402
from nuggetizer.workbench.exports import export_project  # noqa: E402
from nuggetizer.workbench.imports import import_judgments  # noqa: E402
from nuggetizer.workbench.store import (  # noqa: E402
    Account,
    Assignment,
    Item,
    Judgment,
    make_engine,
    sessions,
)


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nuggetizer", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


def test_an_account_name_is_never_a_path_of_the_export(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    refused = _run("workbench", "account", "../../x", "--db", database)
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("error: account name '../../x': 1 to 80 letters")
    # an account of such a name in the database (written there some other way) still
    # exports inside the output folder
    populate(database, tmp_path, double=0.0)
    with sessions(make_engine(database))() as db:
        for k, name in enumerate(("../../x", "..", ".hidden", "a/b\\c")):
            hostile = Account(name=name, role="assessor", disabled=False)
            db.add(hostile)
            db.flush()
            item = db.scalars(select(Item).where(Item.task == "assign")).all()[k]
            db.add(Assignment(item_id=item.id, account_id=hostile.id))
            db.add(Judgment(item_id=item.id, account_id=hostile.id, value={
                q["key"]: q["labels"][0] for q in item.shown["questions"]}))
        db.commit()
        out = tmp_path / "deep" / "er" / "out"
        export_project(db, "sample", out)
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    assert not any("x" == p.name or p.parts[0] == "x" for p in written)
    folders = sorted(p.name for p in (out / "by-assessor").iterdir())
    assert folders == ["%2E.", "%2E.%2F..%2Fx", "%2Ehidden", "a%2Fb%5Cc"]
    assert all(p.is_dir() and p.parent == out / "by-assessor"
               for p in (out / "by-assessor").iterdir())


def test_a_save_with_seconds_that_are_not_a_finite_count_is_refused(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    with serving(database, tmp_path / "server.log") as server:
        client, csrf = login(server.url, "alice")
        ref = next(i["ref"] for i in client.get("/api/items").json() if i["task"] == "assign")
        key = client.get(f"/api/item/{ref}").json()["shown"]["questions"][0]["key"]
        headers = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
        for raw, status in ((f'{{"key": "{key}", "value": "support", "seconds": Infinity}}',
                             400),
                            (f'{{"key": "{key}", "value": "support", "seconds": NaN}}', 400),
                            (f'{{"key": "{key}", "value": "support", "seconds": 1e308}}', 422),
                            (f'{{"key": "{key}", "value": "support", "seconds": -3}}', 422),
                            (f'{{"key": "{key}", "value": "support", "seconds": true}}', 422),
                            (f'{{"key": "{key}", "value": NaN}}', 400)):
            refused = client.post(f"/api/item/{ref}", content=raw, headers=headers)
            assert refused.status_code == status, raw
            assert "seconds" in refused.json()["detail"] or "JSON" in refused.json()["detail"]
        # nothing was stored: the item reads as before, and a good save still works
        assert client.get(f"/api/item/{ref}").json()["value"] == {}
        good = client.post(f"/api/item/{ref}", headers=headers,
                           content=json.dumps({"key": key, "value": "support", "seconds": 4.5}))
        assert good.status_code == 200
        view = client.get(f"/api/item/{ref}")
        assert view.status_code == 200 and view.json()["seconds"] == 4.5
        assert client.get(f"/item/{ref}").status_code == 200


def test_the_same_assessor_named_twice_is_one_clear_line(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    create = _run("workbench", "create", "p", "--organizer", "boss", "--task", "assign",
                  "--assessor", "alice", "--assessor", "alice", "--topics",
                  str(ROOT / "tracks/sample/topics.tsv"), "--run",
                  str(ROOT / "runs/sample/good.jsonl"), "--nuggets",
                  str(write_key(tmp_path / "key.jsonl")), "--db", database)
    assert create.returncode == 2
    assert create.stderr.strip() == ("error: assessor 'alice' is named twice: name each "
                                     "assessor once")
    assign = _run("workbench", "assign", "sample", "--assessor", "bob", "--assessor", "bob",
                  "--db", database)
    assert assign.returncode == 2 and "'bob' is named twice" in assign.stderr
    assert "Traceback" not in create.stderr + assign.stderr
    with serving(database, tmp_path / "server.log") as server:  # the page says so too
        boss, csrf = login(server.url, "boss")
        page = boss.post("/project/1/assign", data={"csrf": csrf, "assessors": ["bob", "bob"],
                                                    "overlap": "0"})
        assert page.status_code == 400 and "named twice" in page.text


def test_a_database_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    missing = str(tmp_path / "no" / "such" / "folder" / "wb.sqlite")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    url = "postgresql://wb:secret@127.0.0.1:9/x"
    for args in (("workbench", "account", "ann", "--db", missing),
                 ("workbench", "account", "ann", "--db", str(blocked / "wb.sqlite")),
                 ("workbench", "assign", "p", "--assessor", "ann", "--db", url),
                 ("workbench", "serve", "--db", missing, "--port", "9"),
                 ("serve", "--workbench", url, "--port", "9", "--assessor", "mock")):
        done = _run(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "error: cannot open the workbench database"), done.stderr
        assert "secret" not in done.stderr  # a URL's password is never printed


def test_imports_that_do_not_fit_the_project_are_refused_at_the_first_difference(
        tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    factory = sessions(make_engine(database))
    with factory() as db:
        alice = db.scalar(select(Account).where(Account.name == "alice"))
        for item in db.scalars(select(Item).join(Assignment).where(
                Assignment.account_id == alice.id, Item.task.in_(("assign", "rubric")))):
            db.add(Judgment(item_id=item.id, account_id=alice.id, value={
                q["key"]: q["labels"][0] for q in item.shown["questions"]}))
        db.commit()
        export_project(db, "sample", tmp_path / "out")
        export_project(db, "rag", tmp_path / "rag")
    good = sorted((tmp_path / "out" / "assign").glob("sample-*.jsonl"))[0]
    lines = [json.loads(line) for line in good.read_text().splitlines()]

    def variant(name: str, change) -> Path:  # noqa: ANN001 - a small edit of one record
        records = json.loads(json.dumps(lines))
        change(records[1])
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path

    run, qid = lines[1]["run_id"], lines[1]["qid"]
    cases = {
        "reworded": (lambda r: r["nuggets"][1].update(text="a reworded fact"),
                     f"{tmp_path}/reworded.jsonl:2: run {run!r} topic {qid!r}: nuggets 2 reads "
                     "'a reworded fact' where the project has 'a second fact about it'"),
        "fewer": (lambda r: r["nuggets"].pop(),
                  f"run {run!r} topic {qid!r}: 2 nuggets where the project has 3"),
        "unknown": (lambda r: r.update(run_id="another-run"),
                    f"run 'another-run' topic {qid!r} is not in the project"),
    }
    with factory() as db:
        before = db.scalar(select(func.count()).select_from(Judgment))
        for name, (change, message) in cases.items():
            with pytest.raises(ConfigError) as refused:
                import_judgments(db, "sample", "assign", "bob", [variant(name, change)])
            assert message in str(refused.value), name
            db.rollback()
        # a rubric whose criteria differ
        rubric = next((tmp_path / "rag" / "rubrics").glob("*.jsonl"))
        records = [json.loads(line) for line in rubric.read_text().splitlines()]
        records[0]["criteria"][0]["criterion"] = "another criterion"
        changed = tmp_path / "rubric.jsonl"
        changed.write_text("".join(json.dumps(r) + "\n" for r in records))
        with pytest.raises(ConfigError, match="criteria 1 reads 'another criterion'"):
            import_judgments(db, "rag", "rubric", "bob", [changed])
        db.rollback()
        assert db.scalar(select(func.count()).select_from(Judgment)) == before  # nothing saved
    # the command line says the same in one line
    done = _run("workbench", "import", "sample", str(variant("fewer", cases["fewer"][0])),
                "--task", "assign", "--assessor", "bob", "--db", database)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "2 nuggets where the project has 3" in done.stderr
