"""Helpers shared by the benchmark scripts: the machine they ran on, and the emulating server."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
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


def baseline_inputs() -> tuple[dict, dict, str]:
    """The three TREC RAG 2024 baseline runs and nuggets.mistral.jsonl (read leniently: some of
    its importance labels are off the menu), and a line that describes them."""
    from nuggetizer.formats.answers import read_runs
    from nuggetizer.formats.nuggets import read_nuggets

    runs = read_runs(sorted((RAG24 / "runs").glob("*.jsonl")))
    keys = read_nuggets(RAG24 / "nuggets.mistral.jsonl", lenient=True)
    answers = sum(len(a) for a in runs.values())
    return runs, keys, (f"input: {len(runs)} runs, {answers} answers, {len(keys)} topics "
                        "with nuggets")


@contextmanager
def emulator(log: Path, *args: str) -> Iterator[str]:
    """Start benchmarks/emulator.py on 127.0.0.1 (a free port) with `args`, logging requests to
    `log`; yields its base URL and stops it on exit. The one launcher of the emulator: the tests
    start it through this function too (tests/emulated.py)."""
    port_file = log.with_name(log.name + ".port")
    port_file.unlink(missing_ok=True)  # left by an earlier server of the same name
    command = [sys.executable, str(HERE / "emulator.py"), "--port", "0",
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
