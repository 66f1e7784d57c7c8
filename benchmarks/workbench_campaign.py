"""The workbench on the TREC RAG 2026 development campaign (22 narratives, three runs written
in the 2026 format, the passages they cite, a rubric per narrative), served from this checkout
or from another source tree (`--source`, e.g. an earlier commit's `git archive`), so that two
versions are measured the same way on the same machine:

  keys   a scripted assessor in headless Chromium works the first items of every task by keys
         only: each question a digit (a post-edit: each nugget's importance, v then j), then n
         for the next item; keystrokes and seconds per item (a page, from its opening to its
         labels saved), and per battle.
  saves  20 assessors save a label every 0.25 s for a while, with and without 8 clients
         guessing passwords as fast as the server answers (each from an address of its own);
         p50 and p99 of the saves.

    .venv/bin/python benchmarks/workbench_campaign.py keys [--source DIR]
    .venv/bin/python benchmarks/workbench_campaign.py saves [--source DIR] [--seconds 60]

Every figure is printed with the machine and its load: timings on a shared machine are only
comparable between two runs made one after the other.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import httpx2 as httpx
from common import ROOT, machine

sys.path.insert(0, str(ROOT / "tests"))
from campaign_data import NUGGETS, RUNS, TOPICS, write_campaign  # noqa: E402
from workbench_server import concurrently, free_port, login  # noqa: E402

PASSWORD = "correct horse battery"
TASKS = ("postedit", "assign", "support", "battle", "rubric")


def _env(source: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(source), "WB_PW": PASSWORD,
            "PYTHONUNBUFFERED": "1"}


def _cli(source: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "nuggetizer", "workbench", *args], check=True,
                   env=_env(source), capture_output=True, cwd=source)


def setup(source: Path, folder: Path, assessors: list[str]) -> str:
    """A database with the campaign's project, every topic given to the assessors in turn
    (by the version's own commands); its path."""
    track = write_campaign(folder / "track")
    db = str(folder / "wb.sqlite")
    _cli(source, "account", "boss", "--role", "organizer", "--password-env", "WB_PW",
         "--db", db)
    for name in assessors:
        _cli(source, "account", name, "--password-env", "WB_PW", "--db", db)
    people = [a for name in assessors for a in ("--assessor", name)]
    runs = [a for r in RUNS for a in ("--run", str(track[f"run:{r}"]))]
    tasks = [a for t in TASKS for a in ("--task", t)]
    _cli(source, "create", "dev26", "--organizer", "boss", *tasks, *people, "--topics",
         str(TOPICS), "--nuggets", str(NUGGETS), *runs, "--corpus", str(track["corpus"]),
         "--rubrics", str(track["rubrics"]), "--db", db)
    return db


@contextmanager
def server(source: Path, db: str, log: Path) -> Iterator[str]:
    """`nuggetizer workbench serve` of that version; its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nuggetizer", "workbench", "serve", "--db",
                             db, "--port", str(port)], env=_env(source), cwd=source,
                            stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(url + "/login", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def keys(source: Path, per_task: int) -> None:
    """Keystrokes and seconds per item of a scripted assessor, for each task."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = setup(source, Path(tmp), ["ann"])
        with server(source, db, Path(tmp) / "server.log") as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url + "/login")
            page.fill("input[name=name]", "ann")
            page.fill("input[name=password]", PASSWORD)
            page.keyboard.press("Enter")
            page.wait_for_url(url + "/")
            items = page.request.get(url + "/api/items").json()
            print(f"keys: {source}; a scripted assessor, the first items of each task")
            print("task\tpages\tquestions per page\tkeys per page\tkeys per battle\t"
                  "seconds per page")
            for task in TASKS:
                mine = [i for i in items if i["task"] == task]
                _work(page, url, task, mine, per_task * (2 if task == "battle" else 1))
            browser.close()
    print(machine())


def _work(page: object, url: str, task: str, mine: list[dict], count: int) -> None:
    """Work `count` items of a task in queue order: the keys of each page, then n (the page
    after is opened by its address, as n opens it when the assessor works in queue order:
    the first version's n opened the first unfinished item of the whole queue)."""
    count = min(count, len(mine))
    pressed = questions = 0
    started = time.perf_counter()
    for k in range(count):
        page.goto(f"{url}/item/{mine[k]['ref']}")  # type: ignore[attr-defined]
        if task == "postedit":
            rows = page.locator("#nuggets > *").count()  # type: ignore[attr-defined]
            for r in range(rows):
                page.keyboard.press("v")  # type: ignore[attr-defined]
                if r + 1 < rows:
                    page.keyboard.press("j")  # type: ignore[attr-defined]
            pressed += 2 * rows - 1
            questions += rows
        else:
            asked = page.locator(".q").count()  # type: ignore[attr-defined]
            for _ in range(asked):
                page.keyboard.press("1")  # type: ignore[attr-defined]
            pressed += asked
            questions += asked
        page.locator("#status", has_text="all saved").wait_for()  # type: ignore[attr-defined]
        pressed += 1  # n
    seconds = (time.perf_counter() - started) / count
    battles = count / 2 if (task == "battle" and questions == count) else count
    print(f"{task}\t{count}\t{questions / count:.1f}\t{pressed / count:.1f}\t"
          f"{pressed / battles if task == 'battle' else float('nan'):.1f}\t{seconds:.2f}")


def _guess(url: str, k: int, names: list[str], stop: threading.Event,
           answers: list[int]) -> None:
    """A client of its own address guessing the assessors' passwords in a closed loop."""
    client = httpx.Client(base_url=url, timeout=60,
                          transport=httpx.HTTPTransport(local_address=f"127.0.0.{10 + k}"))
    client.get("/login")
    n = 0
    while not stop.is_set():
        r = client.post("/login", data={"csrf": client.cookies.get("wb_pre"),
                                        "name": names[n % len(names)],
                                        "password": f"guess {n}"})
        answers.append(r.status_code)
        n += 1


def _save(client: httpx.Client, csrf: str, seconds: float, latencies: list[float]) -> None:
    """An assessor saving a label every 0.25 s, each save's latency kept."""
    shown = [(i["ref"], client.get(f"/api/item/{i['ref']}").json()["shown"])
             for i in client.get("/api/items").json()
             if i["task"] in ("assign", "support", "rubric")]
    questions = [(ref, q) for ref, s in shown for q in s["questions"]]
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        ref, q = questions[n % len(questions)]
        begun = time.perf_counter()
        r = client.post(f"/api/item/{ref}", headers={"X-CSRF-Token": csrf},
                        json={"key": q["key"], "value": q["labels"][0], "seconds": n})
        latencies.append(time.perf_counter() - begun)
        assert r.status_code == 200, r.text
        n += 1
        time.sleep(0.25)


def _work_of(clients: list[tuple[httpx.Client, str]], seconds: float, latencies: list[float],
             k: int) -> None:
    _save(clients[k][0], clients[k][1], seconds, latencies)


def saves(source: Path, seconds: float, people: int, guessers: int) -> None:
    """p50/p99 of the assessors' saves, without and then with guessing clients."""
    for guessing in (0, guessers):
        with tempfile.TemporaryDirectory() as tmp:
            names = [f"load{k}" for k in range(people)]
            db = setup(source, Path(tmp), names)
            latencies: list[float] = []
            answers: list[int] = []
            with server(source, db, Path(tmp) / "server.log") as url:
                clients = [login(url, n, PASSWORD) for n in names]
                stop = threading.Event()
                threads = [threading.Thread(target=_guess, args=(url, k, names, stop, answers))
                           for k in range(guessing)]
                for t in threads:
                    t.start()
                failures = concurrently(people, partial(_work_of, clients, seconds, latencies))
                stop.set()
                for t in threads:
                    t.join()
            assert not failures, failures
            ordered = sorted(latencies)
            p99 = ordered[int(0.99 * (len(ordered) - 1))]
            print(f"saves: {source}; {people} assessors, {guessing} guessing clients, "
                  f"{len(ordered)} saves in {seconds:.0f} s: p50 "
                  f"{statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms" +
                  (f"; guesses: {len(answers)}, {answers.count(401)} passwords checked, "
                   f"{answers.count(429)} refused with a wait" if guessing else ""))
            print(machine())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("keys", "saves"))
    parser.add_argument("--source", type=Path, default=ROOT,
                        help="the source tree whose workbench is served [this checkout]")
    parser.add_argument("--items", type=int, default=5, help="keys: items of each task")
    parser.add_argument("--seconds", type=float, default=60, help="saves: how long")
    parser.add_argument("--assessors", type=int, default=20)
    parser.add_argument("--guessers", type=int, default=8)
    args = parser.parse_args()
    if args.what == "keys":
        keys(args.source.resolve(), args.items)
    else:
        saves(args.source.resolve(), args.seconds, args.assessors, args.guessers)


if __name__ == "__main__":
    main()
