"""Helpers shared by the benchmark scripts: the machine they ran on, and the emulating server."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
RAG24 = SHARED_DATA / "trec-rag-2024"


def machine() -> str:
    """One line describing where a benchmark ran: CPU, cores, memory, load, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f", {int(line.split()[1]) / 2**20:.0f} GiB"
                break
    except OSError:
        pass
    load = ", load " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"machine: {platform.node()} {platform.system()} {platform.release()}, {cpu}, "
            f"{os.cpu_count()} cores{memory}{load}, Python {platform.python_version()}")


@contextmanager
def emulator(log: Path, *args: str) -> Iterator[str]:
    """Start benchmarks/emulator.py on 127.0.0.1 with `args`; yields its base URL."""
    port_file = log.with_name(log.name + ".port")
    port_file.unlink(missing_ok=True)
    command = [sys.executable, str(HERE / "emulator.py"), "--port", "0",
               "--port-file", str(port_file), "--log", str(log), *args]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the emulator did not start: {' '.join(command)}")
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text().strip()}/v1"
        urllib.request.urlopen(url + "/models", timeout=5).close()
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
