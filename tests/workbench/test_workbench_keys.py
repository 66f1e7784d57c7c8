"""The keyboard on long pages, in headless Chromium: the post-edit page of the 2026 topic with
90 nuggets keeps the focused row inside the window after every key, its sub-narratives are
chosen by digit (the drop-down shows them), and its topic shows the narrative."""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign_data import NUGGETS, TOPICS, narratives, nuggets
from workbench_server import PASSWORD, chromium, log_in, saved, serving, shots_folder

from nuggetizer.workbench.build import ProjectSpec, create_project
from nuggetizer.workbench.security import add_account
from nuggetizer.workbench.store import Account, make_engine, sessions

playwright = pytest.importorskip("playwright.sync_api")
LONGEST = "72"  # the development topic with 90 nuggets

IN_VIEW = """() => { const row = document.querySelector('#nuggets .focus');
  const r = row.getBoundingClientRect();
  return [r.top >= 0 && r.bottom <= window.innerHeight, Array.from(row.parentNode.children)
    .indexOf(row)]; }"""


@pytest.mark.slow
def test_the_focused_nugget_stays_in_view_on_the_90_nugget_page(tmp_path: Path) -> None:
    browser_path = chromium()
    assert len(nuggets()[LONGEST]) == 90
    database = str(tmp_path / "wb.sqlite")
    with sessions(make_engine(database))() as db:
        add_account(db, "boss", "organizer", PASSWORD)
        add_account(db, "ann", "assessor", PASSWORD)
        boss = db.query(Account).filter_by(name="boss").one()
        create_project(db, ProjectSpec("post-edit", TOPICS, ("postedit",), ("ann",),
                                       nuggets=NUGGETS), boss)
    shots = shots_folder(tmp_path, "keys")
    with serving(database, tmp_path / "server.log") as server, \
            playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        log_in(page, server.url, "ann")
        ref = page.request.get(server.url + "/api/items").json()
        ref = next(i["ref"] for i in ref if i["qid"] == LONGEST)
        page.goto(f"{server.url}/item/{ref}")
        assert narratives()[LONGEST][:60] in page.inner_text("#topic")
        keys = ["j"] * 89 + ["k"] * 30 + ["ArrowDown"] * 10 + ["v", "o", "2", "0", "3"] + \
            ["ArrowUp"] * 69 + ["j"] * 45
        wanted = 0
        for key in keys:
            page.keyboard.press(key)
            wanted = min(89, wanted + 1) if key in ("j", "ArrowDown") else \
                max(0, wanted - 1) if key in ("k", "ArrowUp") else wanted
            visible, at = page.evaluate(IN_VIEW)
            assert at == wanted, key
            assert visible, f"row {at + 1} out of the window after {key!r}"
            if at == 89 and key == "j":
                page.screenshot(path=str(shots / "postedit-90-last-row.png"))
        saved(page)
        value = page.request.get(f"{server.url}/api/item/{ref}").json()["value"]["nuggets"]
        subs = page.evaluate("JSON.parse(document.getElementById('wb-data').textContent)"
                             ".sub_narratives")
        row = value[69]  # v, o, 2, 0, 3 on row 70: okay, then the third sub-narrative
        assert row["importance"] == "okay" and row["set"] is True
        assert row["mapped_sub_narrative"] == subs[2]
        # each nugget's sub-narrative is one of the drop-down's choices, never a blank
        shown = page.evaluate("""() => Array.from(document.querySelectorAll(
            '#nuggets select[aria-label^="sub-narrative"]')).map(s => s.value)""")
        assert len(shown) == 90 and all(shown), "a nugget's sub-narrative shows blank"
        page.screenshot(path=str(shots / "postedit-90.png"), full_page=False)
        browser.close()
    print(f"screenshot: {shots / 'postedit-90.png'}")


@pytest.mark.slow
def test_a_label_given_after_the_session_ended_is_kept_and_sent_after_the_login(
        tmp_path: Path) -> None:
    """The organizer ends Ann's sessions while she works: her next label is kept in the
    browser and the page says so; once she logs in again it reaches the server."""
    from campaign_data import RUNS, write_campaign

    from nuggetizer.workbench.campaign import revoke

    browser_path = chromium()
    database = str(tmp_path / "wb.sqlite")
    track = write_campaign(tmp_path / "track")
    factory = sessions(make_engine(database))
    with factory() as db:
        add_account(db, "boss", "organizer", PASSWORD)
        add_account(db, "ann", "assessor", PASSWORD)
        boss = db.query(Account).filter_by(name="boss").one()
        create_project(db, ProjectSpec("support", TOPICS, ("support",), ("ann",),
                                       [track[f"run:{r}"] for r in RUNS],
                                       corpus=track["corpus"]), boss)
    with serving(database, tmp_path / "server.log") as server, \
            playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        log_in(page, server.url, "ann")
        ref = page.request.get(server.url + "/api/items").json()[0]["ref"]
        page.goto(f"{server.url}/item/{ref}")
        with factory() as db:
            revoke(db, "ann")
        page.keyboard.press("2")
        page.locator("#status", has_text="your session has ended").wait_for()
        assert "1 change kept in this browser" in page.inner_text("#status")
        page.click("#status a")
        page.fill("input[name=name]", "ann")
        page.fill("input[name=password]", PASSWORD)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server.url}/item/{ref}")
        saved(page)
        value = page.request.get(f"{server.url}/api/item/{ref}").json()["value"]
        assert list(value.values()) == ["partial_support"]
        browser.close()
