"""The Batch API through the openai SDK (assessors/batch_api.py): its own retries off, every
call goes through the assessor's one retry policy and the one classifier, as a chat
completion does, against the emulator's files and batches endpoints."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from emulated import emulator, small_track
from test_spend import assign, environment, run

ROOT = Path(__file__).resolve().parents[2]
FAST = {"NUGGETIZER_RETRY_WAIT": "0.05", "NUGGETIZER_RETRY_MAX_WAIT": "0.2"}


def test_a_busy_batch_api_is_retried_by_the_assessor_policy_and_counted(tmp_path: Path) -> None:
    track = small_track(tmp_path, runs=2, topics=3)
    with emulator(tmp_path) as server:
        server.control(batch_busy=3)  # the upload is answered HTTP 429 three times
        done = run(assign(track, tmp_path / "out", server.url, str(tmp_path / "c.sqlite"),
                          "--batch-api", "--batch-poll", "0.2"), **FAST)
        stats = server.stats()["batches"]
    assert stats["busy"] == 3 and stats["files"] == 1 and stats["batches"] == 1
    assert done.stderr.count("transient failure") == 3, done.stderr
    assert "HTTP 429: emulated 429 (batch_busy)" in done.stderr
    assert ", 3 retries," in done.stderr  # the assessor's counter: one policy for every call


def test_a_batch_api_out_of_reach_gives_up_within_the_retry_limits(tmp_path: Path) -> None:
    track = small_track(tmp_path, runs=2, topics=3)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}/v1"  # nothing listens there
    command = assign(track, tmp_path / "out", url, str(tmp_path / "c.sqlite"), "--batch-api")
    done = subprocess.run(command, env=environment(NUGGETIZER_MAX_RETRIES="2", **FAST),
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    assert f"openai:emulated at {url}: gave up after 3 attempts" in done.stderr
    assert "connection failed" in done.stderr and "Traceback" not in done.stderr
