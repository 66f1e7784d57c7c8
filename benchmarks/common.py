"""Helpers shared by the benchmark scripts: the machine they ran on, the TREC RAG 2024 inputs, and
the emulating server (nuggetizer.testing, which the tests start too)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from nuggetizer.testing import emulator as emulator
from nuggetizer.testing import stop as stop

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
