"""The emulating server (nuggetizer.testing, its emulator and launcher) as a test
helper, and small real inputs for it."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from shared_data import RAG24

from nuggetizer import testing


def load_module(path: Path) -> ModuleType:
    """A module of the repository that is not in the package (benchmarks/), by its path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUN_FILES = sorted((RAG24 / "runs").glob("*.jsonl"))
NUGGETS = RAG24 / "nuggets.mistral.jsonl"


@dataclass
class Server:
    """A running emulator: its base URL and request log."""

    url: str
    log: Path

    def control(self, **changes: Any) -> dict[str, Any]:
        """Change settings at run time (POST /_control); returns the stats."""
        data = json.dumps(changes).encode()
        request = urllib.request.Request(self.url + "/_control", data=data, method="POST")
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + "/_stats", timeout=5) as response:
            return json.loads(response.read())

    def requests(self) -> list[dict[str, Any]]:
        """Every logged request so far."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


@contextmanager
def emulator(tmp: Path, *args: str, name: str = "emulator") -> Iterator[Server]:
    """Start the emulator on 127.0.0.1 (a free port) with `args`; stopped on exit."""
    log = tmp / f"{name}.log.jsonl"
    with testing.emulator(log, *args) as url:
        yield Server(url, log)


def small_track(tmp: Path, runs: int = 2, topics: int = 5) -> tuple[list[Path], Path]:
    """Real inputs cut down: `runs` TREC RAG 2024 runs and `topics` topics (whose nuggets all
    carry valid labels), written to `tmp`; returns (run files, nuggets file)."""
    chosen: list[str] = []
    lines: list[str] = []
    for line in NUGGETS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if all(n.get("importance") in ("vital", "okay") for n in record["nuggets"]):
            chosen.append(str(record["qid"]))
            lines.append(line)
        if len(chosen) == topics:
            break
    nuggets = tmp / "nuggets.jsonl"
    nuggets.write_text("\n".join(lines) + "\n", encoding="utf-8")
    paths = []
    for source in RUN_FILES[:runs]:
        kept = [line for line in source.read_text(encoding="utf-8").splitlines()
                if str(json.loads(line)["topic_id"]) in chosen]
        path = tmp / source.name
        path.write_text("\n".join(kept) + "\n", encoding="utf-8")
        paths.append(path)
    return paths, nuggets


def assessments(folder: Path) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """(run, topic) -> [(nugget, importance, assignment)] of every assessment file in `folder`,
    provenance left out (its timestamps differ between runs)."""
    table = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            table[(record["run_id"], record["qid"])] = [
                (n["text"], n["importance"], n["assignment"]) for n in record["nuggets"]
            ]
    return table


def run_assign(urls: str | list[str], track: tuple[list[Path], Path], out: Path,
               concurrency: int = 8) -> tuple[Any, Any]:
    """`assign` in-process against emulator URL(s), without a cache: (summary, assessor)."""
    import asyncio

    from flows import assign

    from nuggetizer.assessors import make_assessor
    from nuggetizer.formats import read_nuggets, read_runs
    from nuggetizer.methods.nuggets import NuggetConfig

    runs, keys = read_runs(track[0]), read_nuggets(track[1])
    assessor = make_assessor("openai:emulated", base_url=urls, concurrency=concurrency,
                             cache=None)

    async def go() -> Any:
        try:
            return await assign(runs, keys, assessor, NuggetConfig(), out)
        finally:
            await assessor.aclose()

    return asyncio.run(go()), assessor


def kill_after(server: Server, command: list[str], answered: int, *, env: dict[str, str],
               cwd: Path | None = None) -> list[dict[str, Any]]:
    """Start `command`, let `server` (holding every request after `answered` answers, see
    `answer_limit`) answer that many, then SIGKILL it; returns the requests answered."""
    server.control(answer_limit=answered)
    kill_when(command, lambda: server.stats()["answered"] >= answered, env=env, cwd=cwd,
              settle=1.0)  # let the client store what it received
    return [r for r in server.requests() if r["outcome"] == "ok"]


def kill_when(command: list[str], ready: Callable[[], bool], *, env: dict[str, str],
              cwd: Path | None = None, settle: float = 0.0) -> None:
    """Start `command`, wait (60 s at most, the command still running) until `ready()`, then
    `settle` seconds more, and SIGKILL it."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the server was never asked enough"
            time.sleep(0.05)
        time.sleep(settle)
        assert proc.poll() is None, "the command finished before it was killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
