"""Disk faults while `assign` writes, against the emulating server on real TREC RAG 2024 runs
cut down to 2 runs x 5 topics: a full disk and a read-only output folder end in one line that
names the file, exit code 1, no traceback and no half-written output; what was journalled stays,
and the same command run again finishes with the assessments of a fault-free run.

Tests run as root in CI, where permissions do not stop a write: the full disk is the process's
file-size limit (RLIMIT_FSIZE binds root too: a write past it fails with EFBIG, as a full disk
fails with ENOSPC); the read-only folder is a folder under a file (ENOTDIR, real for root), the
errors a read-only mount gives (EROFS, raised by os.open and os.mkdir for paths in the folder,
in-process) and, where the tests are not root, a folder without write permission."""

from __future__ import annotations

import errno
import math
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from emulated import assessments, emulator, run_assign, small_track

from nuggetizer.cli import cli

SEED = "7"
QUIET = {"NUGGETIZER_PROGRESS_INTERVAL": "0", "NUGGETIZER_RETRY_WAIT": "0.01"}


@pytest.fixture
def track(tmp_path: Path) -> tuple[list[Path], Path]:
    return small_track(tmp_path)


@pytest.fixture
def reference(tmp_path: Path, track: tuple[list[Path], Path]) -> dict:
    with emulator(tmp_path, "--seed", SEED, name="reference") as server:
        summary, _ = run_assign(server.url, track, tmp_path / "reference")
        assert summary.unjudged == 0
    return assessments(tmp_path / "reference")


def args(track: tuple[list[Path], Path], out: Path, url: str) -> list[str]:
    runs = [a for run in track[0] for a in ("--run", str(run))]
    return ["assign", *runs, "--nuggets", str(track[1]), "-o", str(out), "--assessor",
            "openai:emulated", "--base-url", url, "--no-cache", "--concurrency", "2"]


def assign(track: tuple[list[Path], Path], out: Path, name: str, tmp: Path,
           limit: Callable[[], None] | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                            list[dict[str, Any]]]:
    """`nuggetizer assign` in a child process (`limit` run in it first); with the requests."""
    with emulator(tmp, "--seed", SEED, name=name) as server:
        done = subprocess.run([sys.executable, "-m", "nuggetizer", *args(track, out, server.url)],
                              capture_output=True, text=True, timeout=180,
                              env={**os.environ, **QUIET}, preexec_fn=limit)
        return done, server.requests()


def one_line(stderr: str, path: Path | str) -> str:
    """The error line: the only line, no traceback, naming `path`."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith(f"error: cannot write {path}"), lines[0]
    assert "rerun the same command to resume" in lines[0]
    return lines[0]


def journalled(out: Path) -> dict[str, int]:
    """Whole lines in each journal of `out`."""
    return {p.name: p.read_bytes().count(b"\n") for p in out.glob("*.partial")}


def test_a_full_disk_stops_in_one_line_and_the_rerun_resumes(tmp_path: Path, track,
                                                             reference) -> None:
    out = tmp_path / "out"
    sizes = [p.stat().st_size for p in (tmp_path / "reference").glob("*.jsonl")]
    room = min(sizes) // 2  # each journal fills up about halfway

    def full() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))

    failed, first = assign(track, out, "first", tmp_path, full)
    assert failed.returncode == 1, failed.stderr
    line = one_line(failed.stderr, out / "")
    assert ".jsonl.partial" in line and "File too large" in line
    assert not list(out.glob("*.jsonl"))  # no final file, whole or half
    kept = journalled(out)
    assert sum(kept.values()) >= 1  # what was finished before the disk filled stays
    assert all(p.stat().st_size <= room for p in out.glob("*.partial"))
    done, second = assign(track, out, "second", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "resumed" in done.stderr
    total = sum(math.ceil(len(v) / 10) for v in reference.values())
    assert len(second) < total  # the journalled units are not asked again
    assert len(first) >= total - len(second)
    assert assessments(out) == reference
    assert not list(out.glob("*.partial"))


def test_an_output_folder_under_a_file_is_one_line(tmp_path: Path, track, reference) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    out = blocker / "out"
    failed, first = assign(track, out, "first", tmp_path)
    assert failed.returncode == 1, failed.stderr
    assert "Not a directory" in one_line(failed.stderr, out)
    assert blocker.read_text() == "not a folder\n"
    elsewhere = tmp_path / "out"
    done, _ = assign(track, elsewhere, "second", tmp_path)
    assert done.returncode == 0, done.stderr
    assert assessments(elsewhere) == reference


@pytest.mark.parametrize("how", ["erofs", "chmod"])
def test_a_read_only_output_folder_is_one_line(tmp_path: Path, track, reference, how: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    out = folder / "out"
    if how == "chmod":
        if os.geteuid() == 0:
            pytest.skip("permissions do not stop root: the erofs case stands in")
        folder.chmod(0o555)
    else:
        read_only_mount(monkeypatch, folder)
    for name, value in QUIET.items():
        monkeypatch.setenv(name, value)
    with emulator(tmp_path, "--seed", SEED, name="first") as server:
        result = CliRunner().invoke(cli, args(track, out, server.url))
    assert result.exit_code == 1, result.output
    line = one_line(result.stderr, out)
    assert ("Read-only file system" if how == "erofs" else "Permission denied") in line
    assert not out.exists() and list(folder.iterdir()) == []
    monkeypatch.undo()
    folder.chmod(0o755)
    with emulator(tmp_path, "--seed", SEED, name="second") as server:
        again = CliRunner().invoke(cli, args(track, out, server.url))
    assert again.exit_code == 0, again.output
    assert assessments(out) == reference


def read_only_mount(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make creating anything under `folder` fail as on a read-only mount (EROFS)."""
    real_open, real_mkdir = os.open, os.mkdir

    def refuse(path: Any) -> None:
        if str(os.fspath(path)).startswith(str(folder) + os.sep):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    def fake_open(path: Any, flags: int, *rest: Any, **kw: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse(path)
        return real_open(path, flags, *rest, **kw)

    def fake_mkdir(path: Any, *rest: Any, **kw: Any) -> None:
        refuse(path)
        real_mkdir(path, *rest, **kw)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)


def test_no_space_left_is_one_line_and_the_rerun_resumes(tmp_path: Path, track, reference,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC itself, as a full disk answers a write (in-process: os.write fails once three
    journal lines are in), half a line written first, as a disk that fills mid-write does."""
    out = tmp_path / "out"
    real_write = os.write
    lines = []

    def filling(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".partial"):
            if len(lines) == 3:
                real_write(fd, bytes(data)[: len(data) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            lines.append(fd)
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", filling)
    for name, value in QUIET.items():
        monkeypatch.setenv(name, value)
    with emulator(tmp_path, "--seed", SEED, name="first") as server:
        result = CliRunner().invoke(cli, args(track, out, server.url))
    assert result.exit_code == 1, result.output
    assert "No space left on device (the disk is full" in one_line(result.stderr, out)
    assert not list(out.glob("*.jsonl")) and sum(journalled(out).values()) == 3
    monkeypatch.undo()
    done, second = assign(track, out, "second", tmp_path)
    assert done.returncode == 0, done.stderr
    total = sum(math.ceil(len(v) / 10) for v in reference.values())
    assert len(second) <= total - 3  # the three journalled units are not asked again
    assert assessments(out) == reference


def test_a_full_disk_under_the_llm_cache_names_the_cache(tmp_path: Path) -> None:
    """SQLite's write errors when the disk fills (here the file-size limit: a disk I/O error
    on writing) name the cache file and a full disk, not a damaged cache to move aside."""
    cache = tmp_path / "cache.sqlite"
    script = (
        "import resource, sys\n"
        "from nuggetizer.cache import Cache\n"
        "from nuggetizer.errors import OutputError\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))\n"
        f"cache = Cache({str(cache)!r})\n"
        "try:\n"
        "    for i in range(1000):\n"
        "        cache.put(str(i), {'answer': 'x' * 2000})\n"
        "except OutputError as exc:\n"
        "    print(i, exc.exit_code, exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    stored, code, message = done.stdout.split(" ", 2)
    assert 10 < int(stored) < 1000 and code == "1"
    assert message.startswith(f"cannot write {cache}: disk I/O error (the disk refused the "
                              "write: free some space")
    from nuggetizer.cache import Cache

    with_room = Cache(cache)  # what was stored before the disk filled is still there
    assert with_room.get("0") == {"answer": "x" * 2000} and len(with_room) == int(stored)
    with_room.close()
