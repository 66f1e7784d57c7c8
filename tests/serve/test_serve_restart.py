"""What a restarted server finds in its state folder, and a server that cannot start: a
job.json cut short is listed as damaged with the file and the fix (and said on stderr), never
skipped in silence; a job naming a track the server does not know (5) fails with a line that
says so, not `KeyError: 5`; a job whose plan.json is cut short fails naming it; `serve` on a
port another process listens on exits with code 2 (bad usage, errors.EXIT_CODES) and a line
naming the address."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from served import Served, command, serve


def wait_for(served: Served, job_id: str, state: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        status, job = served.get(f"/v1/jobs/{job_id}")
        assert status == 200, job
        if job["state"] == state:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def kept_job(state: Path, job_id: str, text: str) -> Path:
    folder = state / "jobs" / job_id
    folder.mkdir(parents=True)
    (folder / "job.json").write_text(text, encoding="utf-8")
    return folder


def test_damaged_and_unknown_jobs_are_reported_at_restart(tmp_path: Path) -> None:
    state = tmp_path / "state"
    whole = {"id": "0123456789abcdef", "track": "sample", "state": "done", "created": "x"}
    text = json.dumps(whole)
    kept_job(state, "cut0123456789abc", text[: len(text) // 2])  # cut short
    kept_job(state, "track5aaaaaaaaaa", json.dumps({"id": "track5aaaaaaaaaa", "track": 5,
                                                    "state": "queued", "created": "x"}))
    plan = kept_job(state, "plancut000000000", json.dumps({
        "id": "plancut000000000", "plan": "nuggets", "state": "running", "created": "x"}))
    (plan / "plan.json").write_text('{"method": "nuggets", "keys": [', encoding="utf-8")
    with serve(tmp_path, "--assessor", "mock", state=state) as served:
        damaged = served.get("/v1/jobs/cut0123456789abc")[1]
        assert damaged["state"] == "damaged", damaged
        assert "cut0123456789abc/job.json: it is not whole JSON" in damaged["error"]
        assert "repair the file or delete the job's folder" in damaged["error"]
        status, body = served.post("/v1/jobs", {"resume": "cut0123456789abc"})
        assert status == 409 and body["error"]["code"] == "job_damaged"
        failed = wait_for(served, "track5aaaaaaaaaa", "failed")
        assert failed["error"].startswith("track 5 (in ") and "KeyError" not in failed["error"]
        assert "is not one this server knows (" in failed["error"]
        assert "--track NAME=FILE" in failed["error"]
        lost = wait_for(served, "plancut000000000", "failed")
        assert "plan.json is not whole JSON" in lost["error"] and "submit it again" \
            in lost["error"]
        listed = {j["id"]: j["state"] for j in served.get("/v1/jobs")[1]["jobs"]}
        assert listed["cut0123456789abc"] == "damaged"
    stderr = served.stderr.read_text()
    assert "cut0123456789abc/job.json: it is not whole JSON" in stderr
    assert (state / "jobs" / "cut0123456789abc" / "job.json").read_text() == \
        text[: len(text) // 2]  # left as it was


def test_serve_on_a_port_in_use_exits_2_with_a_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(command(port, tmp_path / "state", "--assessor", "mock",
                                      "--no-cache"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"error: --port {port}: cannot listen on 127.0.0.1:{port}: "
                                   "another process is listening there: stop it, or choose "
                                   "another --port")
