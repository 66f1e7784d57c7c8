"""The TREC RAG 2026 development campaign run in the browser (headless Debian Chromium, driven
by Playwright), on SQLite and on a PostgreSQL server the test starts: the organizer makes the
project of the 22 development narratives in the pages (files from a folder the server may read,
the topics uploaded; post-editing, assignment, support, battles, rubrics), invites three
assessors, assigns the topics with an overlap; the assessors work by keyboard; the organizer
settles the disagreements, watches the board and downloads the export; `score` of the export
gives what was entered. Every page is kept as a screenshot (their paths printed)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

from campaign_data import NUGGETS, RAG26_DEV, RUNS, TOPICS, nuggets, write_campaign  # noqa: E402
from sqlalchemy import select  # noqa: E402
from sqlalchemy.orm import undefer  # noqa: E402
from workbench_server import (  # noqa: E402
    PASSWORD,
    chromium,
    postgres,
    saved,
    serving,
    shots_folder,
)

from nuggetizer.workbench.store import Item, make_engine, sessions  # noqa: E402

playwright = pytest.importorskip("playwright.sync_api")
OVERLAP = "0.25"  # 6 of the 22 topics judged by two assessors
ORDINAL = {"assign": ("support", "partial_support", "not_support"),
           "rubric": ("satisfied", "not_satisfied")}


@contextmanager
def database(backend: str, tmp: Path) -> Any:
    with postgres(tmp) if backend == "postgres" else nullcontext(str(tmp / "wb.sqlite")) as db:
        yield db


class Shots:
    """Screenshots of every page, named in the order they were taken."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.count = folder, 0

    def __call__(self, page: Any, name: str) -> None:
        self.count += 1
        path = self.folder / f"{self.count:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")


def api(page: Any, path: str) -> Any:
    """A GET of the workbench's API with the page's session."""
    response = page.request.get(path)
    assert response.ok, response.text()
    return response.json()


def label_item(page: Any, url: str, digits: list[str]) -> dict[str, str]:
    """Open an item and label its questions by keys, in order; the labels saved."""
    page.goto(url)
    for digit in digits:
        page.keyboard.press(digit)
    saved(page)
    return api(page, url.replace("/item/", "/api/item/"))["value"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_2026_development_campaign_in_the_browser(backend: str, tmp_path: Path) -> None:
    browser_path = chromium()
    shot = Shots(shots_folder(tmp_path, f"campaign-{backend}"))
    track = write_campaign(tmp_path / "track")
    with database(backend, tmp_path) as db:
        made = subprocess.run(
            [sys.executable, "-m", "nuggetizer", "workbench", "account", "boss", "--role",
             "organizer", "--password-env", "WB_PW", "--db", db],
            env={**os.environ, "WB_PW": PASSWORD}, capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
        args = ("--allow-dir", str(tmp_path / "track"), "--allow-dir", str(RAG26_DEV),
                "--upload-dir", str(tmp_path / "uploads"))
        with serving(db, tmp_path / "server.log", args) as server, \
                playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=browser_path,
                                        args=["--no-sandbox", "--disable-gpu"])
            entered = _campaign(browser, server.url, shot, track)
            browser.close()
        out = tmp_path / "export"
        with zipfile.ZipFile(io.BytesIO(entered.pop("zip"))) as z:
            z.extractall(out)
        with sessions(make_engine(db))() as session:  # which run each item shows
            runs = {i.ref: (i.task, i.record.get("run_id"), i.qid) for i in
                    session.scalars(select(Item).options(undefer(Item.record)))}
    by_run = {who: {runs[ref]: value for ref, value in labels.items()}
              for who, labels in entered["labels"].items()}
    _scores_are_what_was_entered(out, track, by_run, tmp_path)


def _campaign(browser: Any, url: str, shot: Shots, track: dict[str, Path]) -> dict[str, Any]:
    boss = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = boss.new_page()
    page.goto(url + "/")
    assert page.url.startswith(url + "/login")
    shot(page, "login")
    page.fill("input[name=name]", "boss")
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(url + "/")
    shot(page, "organizer-home")

    # three assessors invited; each chooses a password (twice) on the invitation's page
    people: dict[str, Any] = {}
    for name in ("ann", "ben", "cat"):
        page.goto(url + "/accounts")
        page.fill("form[action$='/accounts/invite'] input[name=name]", name)
        page.click("form[action$='/accounts/invite'] button")
        link = page.input_value("#invitation")
        assert "/invite/" in link
        if name == "ann":
            shot(page, "accounts-invitation")
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        mine = context.new_page()
        mine.goto(link)
        if name == "ann":
            shot(mine, "invitation")
        mine.fill("input[name=password]", PASSWORD)
        mine.fill("input[name=again]", PASSWORD)
        mine.keyboard.press("Enter")
        mine.wait_for_url(url + "/")
        people[name] = mine
    page.goto(url + "/accounts")
    assert page.locator("td", has_text="active").count() == 4
    shot(page, "accounts")

    # the project, from the folders the server may read and one upload
    page.goto(url + "/projects/new")
    shot(page, "new-project")
    page.fill("input[name=name]", "dev26")
    for task in ("postedit", "assign", "support", "battle", "rubric"):
        page.check(f"input[name=tasks][value={task}]")
    page.set_input_files("input[name='upload:topics']", str(TOPICS))
    page.fill("input[name=nuggets]", str(NUGGETS))
    page.fill("input[name=corpus]", str(track["corpus"]))
    page.fill("input[name=rubrics]", str(track["rubrics"]))
    page.select_option("select[name=runs]", [str(track[f"run:{r}"]) for r in RUNS])
    page.click("form[action$='/projects/new'] button")
    page.wait_for_url("**/project/*/assign")
    assert "project dev26 made" in page.content()
    project = page.url.rsplit("/", 1)[0]

    page.check("input[name=assessors][value=ann]")
    page.check("input[name=assessors][value=ben]")
    page.check("input[name=assessors][value=cat]")
    page.fill("form[action$='/assign'] input[name=overlap]", OVERLAP)
    page.click("form[action$='/assign'] button")
    page.wait_for_url(project + "/assign")
    assert "6 topics judged twice" in page.content()
    shot(page, "assignment")

    # the assessors work by keyboard: ann and ben on a topic they share, cat on her own
    items = {name: api(mine, url + "/api/items") for name, mine in people.items()}
    shared = sorted({i["qid"] for i in items["ann"]} & {i["qid"] for i in items["ben"]})
    assert len(shared) >= 2
    qid = min(shared, key=lambda q: len(nuggets()[q]))  # the fewest disagreements to settle
    entered: dict[str, Any] = {"labels": {}}
    for k, name in enumerate(("ann", "ben")):
        entered["labels"][name] = _work(people[name], url, shot if k == 0 else None,
                                        [i for i in items[name] if i["qid"] == qid], k)
    cat_first = items["cat"][0]["qid"]
    assert cat_first not in shared
    entered["labels"]["cat"] = _work(people["cat"], url, None,
                                     [i for i in items["cat"] if i["qid"] == cat_first
                                      and i["task"] in ("assign", "rubric")], 2)
    people["ann"].goto(url + "/")
    shot(people["ann"], "assessor-home")

    # the organizer settles every disagreement by keys: the first label offered each time
    page.goto(project + "/adjudicate")
    shot(page, "adjudication")
    disagreeing = page.locator(".q").count()
    assert disagreeing > 0
    for _ in range(disagreeing):
        with page.expect_navigation():
            page.keyboard.press("1")
    page.goto(project + "/adjudicate")
    assert f"{disagreeing} settled, 0 to settle" in page.content()
    shot(page, "adjudication-settled")

    page.goto(project + "/board")
    assert "not judged yet" in page.content()
    assert all(r in page.content() for r in RUNS)
    shot(page, "board")
    page.goto(project)
    assert "ann" in page.content() and "Agreement" in page.content()
    shot(page, "progress")
    page.goto(project + "/import")
    shot(page, "import")
    with page.expect_download() as download:
        page.click("text=Export (zip)")
    entered["zip"] = Path(download.value.path()).read_bytes()

    # a logged-out item link goes to the login page, and back to the item after it
    ann = people["ann"]
    ref = items["ann"][0]["ref"]
    ann.click("header button")  # log out
    ann.goto(f"{url}/item/{ref}")
    assert "/login?next=" in ann.url
    shot(ann, "login-and-back")
    ann.fill("input[name=name]", "ann")
    ann.fill("input[name=password]", PASSWORD)
    ann.keyboard.press("Enter")
    ann.wait_for_url(f"{url}/item/{ref}")
    return entered


def _work(page: Any, url: str, shot: Shots | None, mine: list[dict], turn: int
          ) -> dict[str, dict[str, Any]]:
    """An assessor's keys on her items of one topic: every task, each question a digit
    (turn shifts the digits, so two assessors differ); {ref: labels saved}."""
    labels: dict[str, dict[str, Any]] = {}
    by_task: dict[str, list[dict]] = {}
    for item in mine:
        by_task.setdefault(item["task"], []).append(item)
    for task, found in by_task.items():
        chosen = found if task == "battle" else found[:2]
        for k, item in enumerate(chosen):
            view = api(page, f"{url}/api/item/{item['ref']}")
            if task == "postedit":
                page.goto(f"{url}/item/{item['ref']}")
                for key in ("v", "j", "o", "2", "j", "1"):
                    page.keyboard.press(key)
                saved(page)
                labels[item["ref"]] = api(page, f"{url}/api/item/{item['ref']}")["value"]
            else:
                count = len(view["shown"]["questions"])
                size = len(view["shown"]["questions"][0]["labels"]) if count else 1
                digits = [str((q + turn * (q % 2)) % size + 1) for q in range(count)]
                labels[item["ref"]] = label_item(page, f"{url}/item/{item['ref']}", digits)
            if shot is not None and k == 0:
                shot(page, f"assessor-{task}")
    return labels


def _scores_are_what_was_entered(out: Path, track: dict[str, Path],
                                 entered: dict[str, dict[tuple, dict[str, Any]]],
                                 tmp: Path) -> None:
    """Each judged answer's scores in `score`'s per-topic table are those of the labels the
    export carries, which are the labels entered (the organizer's where two differed); the
    answers not judged yet are counted, never scored."""
    manifest = json.loads((out / "workbench-export.json").read_text())
    assert manifest["items"]["assign items"] == 66
    records = {(r["run_id"], r["qid"]): r for f in (out / "assign").glob("*.jsonl")
               for r in map(json.loads, f.read_text().splitlines())}
    pending = (out / "assign" / "not-judged-yet.tsv").read_text().splitlines()[1:]
    judged = {k: r for k, r in records.items() if r["provenance"].get("state") is None}
    assert len(judged) + len(pending) == 66 and judged
    for r in judged.values():
        assessors = r["provenance"]["assessors"]
        for k, n in enumerate(r["nuggets"]):
            given = {a: entered[a][("assign", r["run_id"], r["qid"])][f"n{k}"]
                     for a in assessors}
            settled = r["provenance"].get("adjudicated", {}).get(f"n{k}")
            want = settled["label"] if settled else next(iter(given.values()))
            assert settled is None or settled["by"] == "boss"
            if len(set(given.values())) == 1:
                assert n["assignment"] == next(iter(given.values()))
            assert n["assignment"] == want
    assert len(judged) == 4  # two answers of one topic by ann and ben, two by cat
    assert any("adjudicated" in r["provenance"] for r in judged.values())
    per_topic = tmp / "assign-per-topic.tsv"
    done = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "score", str(out / "assign"), "--nuggets",
         str(NUGGETS), "-o", str(tmp / "assign.tsv"), "--per-topic", str(per_topic)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{len(pending)} of 66 answers not judged yet" in done.stderr
    scored = {(r, q, m): float(v) for r, q, m, v in
              (line.split("\t") for line in per_topic.read_text().splitlines()[1:])}
    for (run, qid), r in judged.items():
        vital = [n["assignment"] for n in r["nuggets"] if n["importance"] == "vital"]
        every = [n["assignment"] for n in r["nuggets"]]
        assert scored[(run, qid, "V_strict")] == pytest.approx(
            vital.count("support") / len(vital), abs=1e-4)
        assert scored[(run, qid, "A_strict")] == pytest.approx(
            every.count("support") / len(every), abs=1e-4)
    assert not {tuple(p.split("\t")[:2]) for p in pending} & set(judged)
    for folder, method, extra in (("support", "support", []), ("battles", "battles", []),
                                  ("rubrics", "rubrics", ["--key", str(track["rubrics"])])):
        done = subprocess.run([sys.executable, "-m", "nuggetizer", "score", str(out / folder),
                               "--method", method, *extra], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "not judged yet" in done.stderr
    rubric_rows = [json.loads(line) for f in (out / "rubrics").glob("*.jsonl")
                   for line in f.read_text().splitlines()]
    assert any(r["provenance"].get("state") is None for r in rubric_rows)
    key = nuggets()
    edited = [json.loads(line) for line in (out / "nuggets.jsonl").read_text().splitlines()]
    assert len(edited) == len(key)

