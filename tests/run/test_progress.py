"""Life signs of long work off a terminal, and damaged state named without a traceback: progress
lines on stderr every few seconds, what a resumed step already had, a cache file that is not a
database or is locked by another program."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from emulated import emulator, small_track

from nuggetizer.cache import Cache, CacheError

PROGRESS = re.compile(r"^assign: (\d+)/10 answers \(\d+%\)(, [\d.]+/(s|min), ETA [^,]+)?, "
                      r"[^,]+ elapsed$")


def assign_command(track: tuple[list[Path], Path], out: Path, url: str, *extra: str
                   ) -> list[str]:
    command = [sys.executable, "-m", "nuggetizer", "assign", "--nuggets", str(track[1]),
               "-o", str(out), "--assessor", "openai:emulated", "--base-url", url,
               "--concurrency", "1", *extra]
    for run in track[0]:
        command += ["--run", str(run)]
    return command


def environment(interval: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, "NUGGETIZER_PROGRESS_INTERVAL": str(interval)}


def test_progress_lines_without_a_terminal(tmp_path: Path) -> None:
    track = small_track(tmp_path)  # 2 runs x 5 topics: 10 targets, 20 calls at 0.1 s
    with emulator(tmp_path, "--latency", "0.1") as server:
        done = subprocess.run(assign_command(track, tmp_path / "out", server.url, "--no-cache"),
                              env=environment(0.3), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if PROGRESS.match(line)]
    assert len(lines) >= 3, done.stderr  # the step took over 2 s at one line per 0.3 s
    counts = [int(PROGRESS.match(line).group(1)) for line in lines]
    assert counts == sorted(counts) and counts[-1] > 0
    assert any("ETA" in line for line in lines)
    assert done.stderr.splitlines()[-1].startswith("assign --method nuggets: 10 answers")


def test_a_resumed_step_says_what_was_done(tmp_path: Path) -> None:
    track = small_track(tmp_path)
    out = tmp_path / "out"
    journal = out / f"{track[0][0].stem}.jsonl.partial"
    with emulator(tmp_path, "--latency", "0.2") as server:
        command = assign_command(track, out, server.url, "--no-cache")
        proc = subprocess.Popen(command, env=environment(60), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not (journal.exists() and journal.read_text().count("\n") >= 2):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        kept = sum(p.read_text().count("\n") for p in out.glob("*.partial"))
        again = subprocess.run(command, env=environment(60), capture_output=True, text=True,
                               timeout=120)
    assert again.returncode == 0, again.stderr
    expected = f"assign: resuming: {kept} of 10 answers already done; {10 - kept} to go"
    assert expected in again.stderr.splitlines(), again.stderr
    assert f"10 answers ({kept} resumed)" in again.stderr


def test_a_damaged_cache_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    track = small_track(tmp_path, runs=1, topics=1)
    damaged = tmp_path / "cache.sqlite"
    damaged.write_bytes(b"this is not an SQLite database\n" * 200)
    done = subprocess.run(assign_command(track, tmp_path / "out", "http://127.0.0.1:9/v1",
                                         "--cache", str(damaged)),
                          env=environment(60), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: LLM cache {damaged} cannot be used (file is not a database)")
    assert "move it aside" in line and "--no-cache" in line
    assert not (tmp_path / "out").exists()


def test_another_table_of_that_name_is_not_a_cache(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE calls (id INTEGER)")
    with pytest.raises(CacheError, match="not a nuggetizer cache"):
        Cache(path)


def test_a_cache_locked_for_too_long_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    Cache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CacheError) as raised:
            cache = Cache(path, lock_timeout=0.2)
            cache.put("k", {"v": 1})
        assert str(raised.value).startswith(f"LLM cache {path} is locked by another program")
        assert "--cache PATH" in str(raised.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
