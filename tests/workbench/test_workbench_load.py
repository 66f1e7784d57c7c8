"""Load: 20 simulated assessors save to one server for 60 s; every acknowledged save is in
the database once (nothing lost, nothing duplicated); p50/p99 save latency and the database
size per 10,000 judgments are printed. Then the same while 8 clients, each from an address of
its own, guess passwords as fast as the server answers them: the lockout refuses them before
any hashing, so the assessors' saves stay fast (p99 under 100 ms)."""

from __future__ import annotations

import os
import statistics
import threading
import time
from pathlib import Path

import httpx2 as httpx
import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

from sqlalchemy import func, select  # noqa: E402
from workbench_server import add_assessors, concurrently, login, populate, serving  # noqa: E402

from nuggetizer.workbench import throttle  # noqa: E402
from nuggetizer.workbench.store import (  # noqa: E402
    Account,
    Audit,
    Item,
    Judgment,
    make_engine,
    sessions,
)

PEOPLE = 20
GUESSERS = 8
SECONDS = float(os.environ.get("WB_LOAD_SECONDS", "60"))
# an assessor's pause between saves: 0.25 s is a label every quarter second, faster than any
# person reads; 0 is a closed loop that only measures the server's throughput
PAUSE = float(os.environ.get("WB_LOAD_PAUSE", "0.25"))


def _guess(url: str, k: int, stop: threading.Event, answers: list[int]) -> None:
    """A client of its own address guessing the assessors' passwords in a closed loop."""
    client = httpx.Client(base_url=url, timeout=30,
                          transport=httpx.HTTPTransport(local_address=f"127.0.0.{10 + k}"))
    client.get("/login")
    pre = client.cookies.get("wb_pre")
    n = 0
    while not stop.is_set():
        r = client.post("/login", data={"csrf": pre, "name": f"load{n % PEOPLE}",
                                        "password": f"guess {k} {n}"})
        answers.append(r.status_code)
        n += 1


def _load(tmp_path: Path, guessers: int) -> tuple[list[float], list[int]]:
    """Save latencies of the assessors (seconds) and the guessers' answers (status codes);
    checks that every acknowledged save is stored once."""
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    # every item of the sample project to each of 20 more assessors
    add_assessors(database, [f"load{k}" for k in range(PEOPLE)], ("assign", "support"))
    factory = sessions(make_engine(database))
    latencies: list[float] = []
    guessed: list[int] = []
    acked: dict[tuple[str, str, str], str] = {}
    lock = threading.Lock()
    with serving(database, tmp_path / "server.log") as server:
        clients = [login(server.url, f"load{k}") for k in range(PEOPLE)]
        stop = threading.Event()
        guessing = [threading.Thread(target=_guess, args=(server.url, k, stop, guessed))
                    for k in range(guessers)]
        for t in guessing:
            t.start()
        time.sleep(1.0 if guessers else 0.0)  # the guessers are at it before the first save

        def work(k: int) -> None:
            client, csrf = clients[k]
            mine = [(i["ref"], client.get(f"/api/item/{i['ref']}").json()["shown"])
                    for i in client.get("/api/items").json()
                    if i["task"] in ("assign", "support")]
            questions = [(ref, q) for ref, shown in mine for q in shown["questions"]]
            end, n = time.monotonic() + SECONDS, 0
            while time.monotonic() < end:
                ref, q = questions[n % len(questions)]
                label = q["labels"][n % len(q["labels"])]
                started = time.perf_counter()
                r = client.post(f"/api/item/{ref}", headers={"X-CSRF-Token": csrf},
                                json={"key": q["key"], "value": label, "seconds": n})
                took = time.perf_counter() - started
                assert r.status_code == 200, r.text
                with lock:
                    latencies.append(took)
                    acked[(f"load{k}", ref, q["key"])] = label
                n += 1
                time.sleep(PAUSE)
        try:
            failures = concurrently(PEOPLE, work)
        finally:
            stop.set()
            for t in guessing:
                t.join()
        log = (tmp_path / "server.log").read_text(errors="replace")
    assert not failures, "\n".join(failures) + "\n" + log[-3000:]
    with factory() as db:
        names = {a.id: a.name for a in db.scalars(select(Account))}
        refs = {i.id: i.ref for i in db.scalars(select(Item))}
        stored: dict[tuple[str, str, str], str] = {}
        pairs = set()
        for j in db.scalars(select(Judgment)):
            ids = (names[j.account_id], refs[j.item_id])
            assert ids not in pairs  # one judgment per item and assessor
            pairs.add(ids)
            for key, label in j.value.items():
                stored[(*ids, key)] = label
        saves = db.scalar(select(func.count()).select_from(Audit).where(Audit.action == "save"))
    assert {k: v for k, v in stored.items() if k[0].startswith("load")} == acked
    assert saves == len(latencies)
    size = sum(p.stat().st_size for p in tmp_path.glob("wb.sqlite*"))
    p50, p99 = _percentiles(latencies)
    print(f"load: {PEOPLE} assessors, {guessers} guessing clients, a pause of {PAUSE} s "
          f"between saves, {len(latencies)} saves in {SECONDS:.0f} s, p50 {p50:.1f} ms, p99 "
          f"{p99:.1f} ms; database {size / 1e6:.1f} MB with the audit log "
          f"({size / max(saves, 1) * 1e4 / 1e6:.1f} MB per 10,000 saves); {os.cpu_count()} "
          f"cores, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return latencies, guessed


def _percentiles(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return (statistics.median(ordered) * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000)


@pytest.mark.slow
def test_twenty_assessors_save_for_a_minute(tmp_path: Path) -> None:
    _load(tmp_path, 0)


@pytest.mark.slow
def test_saves_stay_fast_while_eight_clients_guess_passwords(tmp_path: Path) -> None:
    latencies, guessed = _load(tmp_path, GUESSERS)
    refused = guessed.count(429)
    print(f"guessing: {len(guessed)} attempts by {GUESSERS} clients, {refused} refused with "
          f"a wait, {guessed.count(401)} passwords checked; {guessed.count(303)} let in")
    assert guessed.count(303) == 0  # no guess got in
    # each client has its passwords checked CLIENT_LIMIT times a lockout, the rest refused
    # before any hashing (and answered a second late)
    lockouts = 1 + int(SECONDS // throttle.LOCK)
    assert guessed.count(401) <= GUESSERS * throttle.CLIENT_LIMIT * lockouts
    assert refused > 0
    _, p99 = _percentiles(latencies)
    assert p99 < 100, f"a save's p99 is {p99:.0f} ms while {GUESSERS} clients guess"
