"""A database connection is never awaited on the event loop: with a pool of two connections,
eight assessors logging in, saving and reading at once all succeed at once. When a handler
took a connection on the loop, the loop waited out the pool's timeout for connections only the
loop could give back (found in CI, with 20 assessors and the default pool of 15)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the workbench extra is not installed")

import sqlalchemy  # noqa: E402
from workbench_server import add_assessors, concurrently, free_port, login, populate  # noqa: E402

import nuggetizer.workbench.store as store  # noqa: E402
from nuggetizer.workbench.app import create_app  # noqa: E402

PEOPLE, SAVES, POOL_TIMEOUT = 8, 20, 5


def test_a_small_pool_never_stalls_the_server(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    real = sqlalchemy.create_engine

    def small(url: str, **kw: Any) -> sqlalchemy.Engine:
        return real(url, **{**kw, "pool_size": 1, "max_overflow": 1,
                            "pool_timeout": POOL_TIMEOUT})
    monkeypatch.setattr(store, "create_engine", small)
    database = str(tmp_path / "wb.sqlite")
    populate(database, tmp_path, double=0.0)
    add_assessors(database, [f"p{k}" for k in range(PEOPLE)], ("assign",))
    server = uvicorn.Server(uvicorn.Config(create_app(database), host="127.0.0.1",
                                           port=free_port(), log_level="warning"))
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{server.config.port}"
    slowest = [0.0]
    lock = threading.Lock()

    def work(k: int) -> None:
        client, csrf = login(url, f"p{k}")
        refs = [i["ref"] for i in client.get("/api/items").json()]
        for n in range(SAVES):
            ref = refs[n % len(refs)]
            started = time.perf_counter()
            saved = client.post(f"/api/item/{ref}", headers={"X-CSRF-Token": csrf},
                                json={"key": "n0", "value": "support"})
            assert saved.status_code == 200, saved.text
            assert client.get(f"/api/item/{ref}").json()["value"]["n0"] == "support"
            with lock:
                slowest[0] = max(slowest[0], time.perf_counter() - started)

    try:
        failures = concurrently(PEOPLE, work)
    finally:
        server.should_exit = True
        serving.join(10)
    assert not failures, "\n".join(failures)
    # a request that waited out the pool's timeout failed above; this one says it plainly
    assert slowest[0] < POOL_TIMEOUT, f"a save and read took {slowest[0]:.1f} s"
