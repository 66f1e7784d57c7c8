"""Test support anyone may use: an OpenAI-compatible server that emulates the LLM on
127.0.0.1 (emulator, with its Batch API endpoints and reasoning persona), and its launcher.
The project's tests and benchmarks start it through `emulator()`; run it by hand with
`python -m nuggetizer.testing.emulator --help`. Standard library only: it imports nothing
of the toolkit, so it stands for a real server."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["emulator", "stop"]


@contextmanager
def emulator(log: Path, *args: str) -> Iterator[str]:
    """Start the emulator (nuggetizer/testing/emulator.py) on 127.0.0.1 (a free port) with
    `args`, logging requests to `log`; yields its base URL and stops it on exit. The one
    launcher of the emulator, for the tests (tests/emulated.py) and the benchmarks alike."""
    port_file = log.with_name(log.name + ".port")
    port_file.unlink(missing_ok=True)  # left by an earlier server of the same name
    command = [sys.executable, "-m", "nuggetizer.testing.emulator", "--port", "0",
               "--port-file", str(port_file), "--log", str(log), *args]
    with open(log.with_name(log.name + ".stderr"), "w+b") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    err.seek(0)
                    raise RuntimeError(f"the emulator did not start: {' '.join(command)}\n"
                                       f"{err.read().decode(errors='replace')}")
                time.sleep(0.02)
            yield f"http://127.0.0.1:{port_file.read_text().strip()}/v1"
        finally:
            stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Terminate a server process, killing it if it does not end within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
