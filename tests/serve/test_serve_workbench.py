"""The assessors' workbench in the same server as the API (`serve --workbench DB`): its pages
under /workbench authenticate people themselves (accounts, sessions, CSRF), so a server with a
bearer token still lets a browser in there, and nowhere else."""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx
import pytest
from served import serve

pytest.importorskip("sqlalchemy", reason="the workbench extra is not installed")
from workbench_server import login, populate  # noqa: E402

TOKEN = "t0ken-for-the-workbench-test"


def test_the_workbench_runs_in_the_api_server(tmp_path: Path) -> None:
    database = str(tmp_path / "workbench.sqlite")
    populate(database, tmp_path)
    with serve(tmp_path, "--assessor", "mock", "--workbench", database, token=TOKEN) as server:
        assert server.get("/v1/methods", token=None)[0] == 401  # the API wants its token
        assert server.get("/v1/methods")[0] == 200  # and answers with it
        # without a session, the workbench sends a browser to its own login, not a 401
        stranger = httpx.get(server.url + "/workbench/", timeout=30)
        assert stranger.status_code in (200, 303) and "login" in (
            stranger.headers.get("location", "") + stranger.text).lower()
        client, _ = login(server.url + "/workbench", "alice")
        home = client.get("/")
        assert home.status_code == 200 and "sample" in home.text
