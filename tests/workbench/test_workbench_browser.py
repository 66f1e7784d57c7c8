"""An assessor works each task of the workbench in headless Chromium (Debian's, driven by
Playwright) with the keyboard, on SQLite and on a PostgreSQL server the test starts; the
organizer exports and `score` reads the export. Screenshots of each page are kept."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from workbench_server import (
    HOSTILE,
    PASSWORD,
    chromium,
    login,
    populate,
    postgres,
    saved,
    serving,
    shots_folder,
)

playwright = pytest.importorskip("playwright.sync_api")
RUN_IDS = ("sample-good", "sample-middling", "sample-hostile")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_assessor_works_every_task_and_score_reads_the_export(backend: str, tmp_path: Path
                                                              ) -> None:
    browser_path = chromium()
    shots = shots_folder(tmp_path, backend)
    with (postgres(tmp_path) if backend == "postgres" else _sqlite(tmp_path)) as database:
        populate(database, tmp_path)
        with serving(database, tmp_path / "server.log") as server:
            api, _ = login(server.url, "alice")
            items = api.get("/api/items").json()
            by_task: dict[str, list[dict]] = {}
            for it in items:
                by_task.setdefault(it["task"], []).append(it)
            keys = 0
            requests: list[str] = []
            with playwright.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=browser_path,
                                            args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1200, "height": 900})
                page.on("request", lambda r: requests.append(r.url + (r.post_data or "")))
                page.goto(server.url + "/login")
                page.fill("input[name=name]", "alice")
                page.fill("input[name=password]", PASSWORD)
                page.keyboard.press("Enter")
                page.wait_for_url(server.url + "/")
                page.screenshot(path=str(shots / "home.png"), full_page=True)

                # post-editing: vital/okay, edit, merge, add, delete
                ref = by_task["postedit"][0]["ref"]
                page.goto(f"{server.url}/item/{ref}")
                for key in ("v", "j", "o", "e"):
                    page.keyboard.press(key)
                page.keyboard.press("Control+a")
                page.keyboard.type("an edited second nugget")
                page.keyboard.press("Enter")
                page.keyboard.press("j")
                page.keyboard.press("o")
                page.keyboard.press("a")
                page.keyboard.type("a nugget the LLM missed")
                page.keyboard.press("Enter")
                page.keyboard.press("v")
                saved(page)
                value = api.get(f"/api/item/{ref}").json()["value"]["nuggets"]
                assert [n["text"] for n in value][1:] == ["an edited second nugget",
                                                         "a third, smaller fact",
                                                         "a nugget the LLM missed"]
                assert [n["source"] for n in value] == ["original", "post-edit", "original",
                                                        "post-edit"]
                assert [n["importance"] for n in value] == ["vital", "okay", "okay", "vital"]
                # merge the last two, split them again at the cursor, add one and delete it
                for key in ("k", "m", "e", "Home"):
                    page.keyboard.press(key)
                for _ in range(len("a third, smaller fact")):
                    page.keyboard.press("ArrowRight")
                page.keyboard.press("Control+Enter")
                page.keyboard.press("a")
                page.keyboard.type("a nugget to delete")
                page.keyboard.press("Enter")
                page.keyboard.press("d")
                saved(page)
                page.screenshot(path=str(shots / "postedit.png"), full_page=True)
                value = api.get(f"/api/item/{ref}").json()["value"]["nuggets"]
                assert [n["text"] for n in value][1:] == ["an edited second nugget",
                                                         "a third, smaller fact",
                                                         "a nugget the LLM missed"]
                assert [n["source"] for n in value] == ["original", "post-edit", "post-edit",
                                                        "post-edit"]
                assert [n["importance"] for n in value] == ["vital", "okay", "vital", "vital"]

                # assignment: three answers of one topic, a digit per nugget, one span each
                qid = by_task["assign"][0]["qid"]
                answers = [it for it in by_task["assign"] if it["qid"] == qid]
                assert len(answers) == 3
                nuggets = 0
                texts: list[str] = []
                for k, it in enumerate(answers):
                    page.goto(f"{server.url}/item/{it['ref']}")
                    assert page.evaluate("window.pwned") is None
                    texts.append(page.inner_text("#answer"))
                    assert page.locator("#answer a, #answer img, #answer script").count() == 0
                    page.evaluate("""() => { const n = document.querySelector('#answer p')
                        .firstChild; const r = document.createRange(); r.setStart(n, 0);
                        r.setEnd(n, 20); getSelection().removeAllRanges();
                        getSelection().addRange(r); }""")
                    page.keyboard.press("s")
                    keys += 1
                    for digit in ("1", "2", "3"):
                        page.keyboard.press(str((int(digit) + k - 1) % 3 + 1))
                        keys += 1
                        nuggets += 1
                    saved(page)
                    page.screenshot(path=str(shots / f"assign-{k}.png"), full_page=True)
                    value = api.get(f"/api/item/{it['ref']}").json()["value"]
                    assert len([v for v in value if not v.startswith("span:")]) == 3
                    assert value["span:n0"]
                # the hostile answer shows its markup as text, and none of it ran
                assert any(all(h in t for h in HOSTILE) for t in texts)
                print(f"keystrokes per nugget assignment: {keys / nuggets:.2f} "
                      f"({keys} keys, {nuggets} nuggets, a span for each answer's first)")

                # citation support: each pair a digit
                it = by_task["support"][0]
                page.goto(f"{server.url}/item/{it['ref']}")
                count = page.locator(".q").count()
                for _ in range(count):
                    page.keyboard.press("1")
                saved(page)
                page.screenshot(path=str(shots / "support.png"), full_page=True)
                assert len(api.get(f"/api/item/{it['ref']}").json()["value"]) == count

                # blind battles, one order a page, judged by keys down the queue: no run id
                # in any page or request
                before = len(requests)
                battles = by_task["battle"]
                page.goto(f"{server.url}/item/{battles[0]['ref']}")
                for k in range(len(battles)):
                    page.keyboard.press(str(k % 3 + 1))  # then n at once: n waits for the save
                    html = page.content()
                    assert not any(r in html for r in RUN_IDS)
                    if k == 0:
                        page.screenshot(path=str(shots / "battle.png"), full_page=True)
                    if k + 1 < len(battles):
                        with page.expect_navigation():
                            page.keyboard.press("n")
                saved(page)
                assert not any(r in u for u in requests[before:] for r in RUN_IDS)
                for it in battles:
                    assert not any(r in api.get(f"/api/item/{it['ref']}").text for r in RUN_IDS)
                    assert api.get(f"/api/item/{it['ref']}").json()["value"]["o"]

                # rubric grading (ternary)
                rubric = [i for i in items if i["task"] == "rubric"][0]
                page.goto(f"{server.url}/item/{rubric['ref']}")
                for k in range(page.locator(".q").count()):
                    page.keyboard.press(str(k % 3 + 1))
                saved(page)
                page.screenshot(path=str(shots / "rubric.png"), full_page=True)
                browser.close()

            # the organizer's view and export; score reads it
            boss, _ = login(server.url, "boss")
            view = boss.get("/project/1")
            assert view.status_code == 200 and "alice" in view.text
            (shots / "organizer.html").write_text(view.text)
            download = boss.get("/project/1/export.zip")
            names = zipfile.ZipFile(io.BytesIO(download.content)).namelist()
            assert "nuggets.jsonl" in names and "battles/battles.jsonl" in names
        out = tmp_path / "export"
        subprocess.run([sys.executable, "-m", "nuggetizer", "workbench", "export", "sample",
                        "--db", database, "-o", str(out)], check=True)
        subprocess.run([sys.executable, "-m", "nuggetizer", "workbench", "export", "rag",
                        "--db", database, "-o", str(out / "rag")], check=True)
    key = out / "nuggets.jsonl"
    edited = [json.loads(line) for line in key.read_text().splitlines()]
    assert edited[0]["provenance"]["assessors"] == ["alice"]
    board = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "score", str(out / "assign"), "--nuggets",
         str(tmp_path / "key.jsonl"), "-o", str(tmp_path / "board.tsv")],
        check=True, capture_output=True, text=True)
    rows = (tmp_path / "board.tsv").read_text()
    assert all(r in rows for r in RUN_IDS), board.stderr
    rubrics = Path(__file__).resolve().parents[2] / "tracks/rag26/rubrics.jsonl"
    for method, folder, extra in (("support", out / "support", []),
                                  ("battles", out / "battles", []),
                                  ("rubrics", out / "rag" / "rubrics", ["--key", str(rubrics)])):
        done = subprocess.run([sys.executable, "-m", "nuggetizer", "score", str(folder),
                               "--method", method, *extra, "-o", str(tmp_path / f"{method}.tsv")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    for shot in sorted(shots.iterdir()):
        print(f"screenshot: {shot}")


class _sqlite:
    def __init__(self, tmp: Path) -> None:
        self.path = str(tmp / "workbench.sqlite")

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: object) -> None:
        return None
