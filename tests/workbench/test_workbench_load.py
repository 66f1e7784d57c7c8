"""Load: 20 simulated assessors save to one server for 60 s; every acknowledged save is in
the database once (nothing lost, nothing duplicated); p50/p99 save latency and the database
size per 10,000 judgments are printed."""

from __future__ import annotations

import os
import statistics
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")

from sqlalchemy import func, select  # noqa: E402
from workbench_server import add_assessors, concurrently, login, populate, serving  # noqa: E402

from nuggetizer.workbench.store import (  # noqa: E402
    Account,
    Audit,
    Item,
    Judgment,
    make_engine,
    sessions,
)

PEOPLE = 20
SECONDS = float(os.environ.get("WB_LOAD_SECONDS", "60"))
# an assessor's pause between saves: 0.25 s is a label every quarter second, faster than any
# person reads; 0 is a closed loop that only measures the server's throughput
PAUSE = float(os.environ.get("WB_LOAD_PAUSE", "0.25"))


@pytest.mark.slow
def test_twenty_assessors_save_for_a_minute(tmp_path: Path) -> None:
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    # every item of the sample project to each of 20 more assessors
    add_assessors(database, [f"load{k}" for k in range(PEOPLE)], ("assign", "support"))
    factory = sessions(make_engine(database))
    latencies: list[float] = []
    acked: dict[tuple[str, str, str], str] = {}
    lock = threading.Lock()
    with serving(database, tmp_path / "server.log") as server:
        def work(k: int) -> None:
            client, csrf = login(server.url, f"load{k}")
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
        failures = concurrently(PEOPLE, work)
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
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[int(0.99 * (len(ordered) - 1))] * 1000
    size = sum(p.stat().st_size for p in tmp_path.glob("wb.sqlite*"))
    print(f"load: {PEOPLE} assessors, a pause of {PAUSE} s between saves, {len(latencies)} "
          f"saves in {SECONDS:.0f} s, p50 "
          f"{p50:.1f} ms, p99 {p99:.1f} ms; {len(stored)} labels stored, database "
          f"{size / 1e6:.1f} MB with the audit log ({size / max(saves, 1) * 1e4 / 1e6:.1f} MB "
          f"per 10,000 saves); {os.cpu_count()} cores")
