"""Spend after a SIGKILL: every answer paid for is journalled as it arrives, so usage.json after
a kill and a resume counts exactly what the emulator answered (its own log), live and batched,
killed early, midway or late, after a checkpoint, twice in a row; the resume says what the
killed invocation had spent."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emulated import Server, emulator, kill_after, kill_when, small_track

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tracks" / "sample"
PRICES = ("--price-in", "2", "--price-out", "8")
# One server per invocation: the requests a killed command left waiting are never answered
# (one server, lifting its hold, would answer them to no one: spend no client could count).
SERVER = ("--seed", "5", "--latency", "0.01")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, "NUGGETIZER_PROGRESS_INTERVAL": "0", "NUGGETIZER_TIMEOUT": "60", **extra}


def run(command: list[str], **env: str) -> subprocess.CompletedProcess:
    done = subprocess.run(command, env=environment(**env), capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


def answered(server: Server, via: str) -> list[dict[str, Any]]:
    return [r for r in server.requests() if r["outcome"] == "ok" and r.get("via") == via]


def totals(requests: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(answers, prompt tokens, completion tokens), as the server counted them."""
    return (len(requests), sum(r["prompt_tokens"] for r in requests),
            sum(r["completion_tokens"] for r in requests))


def usage(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def spent(record: dict[str, Any], batch: bool = False) -> tuple[int, int, int]:
    """(calls, prompt, completion) of a usage block, live or batch."""
    prefix = "batch_" if batch else ""
    return tuple(int(record.get(prefix + name, 0))  # type: ignore[return-value]
                 for name in ("calls", "prompt_tokens", "completion_tokens"))


def cost(calls: tuple[int, int, int], batch: bool = False) -> float:
    """At PRICES (batch: half off)."""
    return (calls[1] * 2 + calls[2] * 8) / 1e6 / (2 if batch else 1)


# --- live --------------------------------------------------------------------------------------

@pytest.fixture
def track(tmp_path: Path) -> tuple[list[Path], Path]:
    return small_track(tmp_path, runs=3, topics=6)


def calls_needed(track: tuple[list[Path], Path]) -> int:
    """The calls `assign` makes on the track: a window of 10 nuggets per call."""
    nuggets = {}
    for line in track[1].read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        nuggets[str(record["qid"])] = len(record["nuggets"])
    return sum(math.ceil(nuggets[str(json.loads(x)["topic_id"])] / 10)
               for run in track[0] for x in run.read_text(encoding="utf-8").splitlines())


def assign(track: tuple[list[Path], Path], out: Path, url: str, cache: Path) -> list[str]:
    command = [str(Path(sys.executable).parent / "nuggetizer"), "assign", "--nuggets",
               str(track[1]), "-o", str(out), "--assessor", "openai:emulated", "--base-url",
               url, "--cache", str(cache), "--concurrency", "4", *PRICES]
    for path in track[0]:
        command += ["--run", str(path)]
    return command


def said(stderr: str, label: str) -> list[tuple[int, int, int]]:
    """What the resume says each killed invocation had spent: (calls, prompt, completion)."""
    return [(int(m[1]), int(m[2]), int(m[3])) for m in re.finditer(
        rf"{label}: the invocation started \S+ was killed; it had spent (\d+) calls, (\d+) "
        r"prompt \+ (\d+) completion tokens", stderr)]


@pytest.mark.parametrize("point", ["early", "midway, after checkpoints", "late"])
def test_live_usage_equals_the_server_after_a_sigkill_and_a_resume(
        tmp_path: Path, track, point: str) -> None:
    """Killed with answers in flight (the emulator holds every request after N answers): the
    answers of unfinished units are in the cache, so the resume replays them for free; the
    killed invocation's journal still counts them, and usage.json adds both invocations."""
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    needed = calls_needed(track)
    at = {"early": 1, "midway, after checkpoints": needed // 2, "late": needed - 1}[point]
    checkpoints = {"NUGGETIZER_USAGE_CHECKPOINT": "0"} if "checkpoint" in point else {}
    with emulator(tmp_path, *SERVER, name="first") as server:
        first = kill_after(server, assign(track, out, server.url, cache), at,
                           env=environment(**checkpoints))
    assert len(first) == at
    assert (out / "usage.json.spend").is_file()  # what the killed invocation paid for
    if checkpoints:  # a checkpoint counts less than (or as much as) the server answered
        before = usage(out / "usage.json")
        assert before["history"][0]["open"] and before["usage"]["calls"] <= at
    else:  # killed before its first checkpoint: nothing in usage.json
        assert not (out / "usage.json").exists()
    with emulator(tmp_path, *SERVER, name="second") as server:
        done = run(assign(track, out, server.url, cache))
        every = first + answered(server, "live")
    assert len(every) == needed == len({r["digest"] for r in every})  # none paid twice
    recorded = usage(out / "usage.json")
    assert spent(recorded["usage"]) == totals(every), done.stderr
    assert recorded["usage"]["cost"] == pytest.approx(cost(totals(every)))
    assert recorded["invocations"] == 2
    killed, resumed = recorded["history"]
    assert killed["killed"] and not killed["finished"] and "open" not in killed
    assert spent(killed["usage"]) == totals(first)
    assert killed["usage"]["cost"] == pytest.approx(cost(totals(first)))
    if checkpoints:  # what only the checkpoint knew is kept: its other counters, its time
        assert set(before["history"][0]["usage"]) <= set(killed["usage"])  # retries, ...
        assert killed["ended"] == before["history"][0]["ended"] is not None
        assert killed["id"] == before["history"][0]["id"]
    assert resumed["finished"] and spent(resumed["usage"])[0] == needed - at
    assert said(done.stderr, "assign") == [totals(first)]
    assert not (out / "usage.json.spend").exists()


def test_killed_twice_then_resumed_counts_both_killed_invocations(tmp_path: Path,
                                                                  track) -> None:
    """The second invocation recovers the first's spend in memory and is killed before it
    writes it: the journal keeps both, and the third counts both, once each."""
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    needed = calls_needed(track)
    with emulator(tmp_path, *SERVER, name="first") as server:
        first = kill_after(server, assign(track, out, server.url, cache), 3, env=environment())
    with emulator(tmp_path, *SERVER, name="second") as server:
        second = kill_after(server, assign(track, out, server.url, cache), needed // 3,
                            env=environment())
    with emulator(tmp_path, *SERVER, name="third") as server:
        done = run(assign(track, out, server.url, cache))
        every = first + second + answered(server, "live")
    assert len(every) == needed == len({r["digest"] for r in every})
    recorded = usage(out / "usage.json")
    assert spent(recorded["usage"]) == totals(every)
    assert recorded["invocations"] == 3
    assert [spent(e["usage"]) for e in recorded["history"][:2]] == [totals(first),
                                                                   totals(second)]
    assert said(done.stderr, "assign") == [totals(first), totals(second)]


def test_a_damaged_spend_journal_stops_the_resume_with_the_line_to_fix(tmp_path: Path,
                                                                       track) -> None:
    """A line damaged before the last (not a torn write): the resume names the file, the line
    and the fix, writes nothing, and leaves the journal as it was."""
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    with emulator(tmp_path, *SERVER, name="first") as server:
        kill_after(server, assign(track, out, server.url, cache), 3, env=environment())
    journal = out / "usage.json.spend"
    lines = journal.read_text(encoding="utf-8").splitlines()
    answers = [x for x in lines if "calls" in json.loads(x)]  # beside each attempt's "sent"
    assert len(answers) == 3 and all(json.loads(x)["calls"] == 1 for x in answers)
    assert sum("sent" in json.loads(x) for x in lines) >= 3
    damaged = "\n".join(["{not json", *lines[1:]]) + "\n"
    journal.write_text(damaged, encoding="utf-8")
    with emulator(tmp_path, *SERVER, name="second") as server:
        done = subprocess.run(assign(track, out, server.url, cache), env=environment(),
                              capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert not answered(server, "live")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{journal}:1: corrupt journal line (not the last one) in the spend journal of a " \
        "killed invocation: repair the line, or delete the file" in done.stderr
    assert journal.read_text(encoding="utf-8") == damaged
    assert not (out / "usage.json").exists() and not list(out.glob("*.jsonl"))


def test_battles_killed_midway_count_what_the_server_answered(tmp_path: Path) -> None:
    """The issue's case: battles killed after some answers, then resumed."""
    from test_battles import TOPICS, baselines, battles_args

    paths = baselines(tmp_path, topics=5)
    out = tmp_path / "out"
    command = [str(Path(sys.executable).parent / "nuggetizer"),
               *battles_args(paths, out, "--cache", str(tmp_path / "c.sqlite"),
                             "--concurrency", "3", "--assessor", "openai:emulated", *PRICES)]
    assert TOPICS.is_file()
    with emulator(tmp_path, *SERVER, name="first") as server:
        first = kill_after(server, [*command, "--base-url", server.url], 14, env=environment())
    with emulator(tmp_path, *SERVER, name="second") as server:
        done = run([*command, "--base-url", server.url])
        every = first + answered(server, "live")
    assert len(every) == 30 == len({r["digest"] for r in every})  # 15 battles, both orders
    recorded = usage(out / "usage.json")
    assert spent(recorded["usage"]) == totals(every), done.stderr
    assert recorded["invocations"] == 2 and spent(recorded["history"][0]["usage"]) == \
        totals(first)
    assert said(done.stderr, "battles") == [totals(first)]


# --- batched -----------------------------------------------------------------------------------

def sample_track(tmp: Path) -> Path:
    """The sample track, nugget creation in windows of 3 passages: rounds of batches."""
    toml = tmp / "track.toml"
    toml.write_text(
        (SAMPLE / "track.toml").read_text().replace('"topics.tsv"', f'"{SAMPLE}/topics.tsv"')
        .replace('"corpus.jsonl"', f'"{SAMPLE}/corpus.jsonl"').replace('"../../', f'"{ROOT}/')
        .replace("window = 10", "window = 3") + "\n[prices]\ninput = 2\noutput = 8\n")
    return toml


def evaluate(toml: Path, out: Path, url: str, cache: Path) -> list[str]:
    return [str(Path(sys.executable).parent / "nuggetizer"), "evaluate", "--track", str(toml),
            "-o", str(out), "--assessor", "openai:emulated", "--base-url", url, "--cache",
            str(cache), "--batch-api", "--batch-poll", "0.1"]


STEPS = {"nuggetize": ("nuggets.jsonl.usage.json",), "assign": ("assessments", "usage.json")}


@pytest.fixture(scope="module")
def nuggetize_batches(tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many batches the nuggetize step of the batched sample evaluation sends (each
    leaves its request file)."""
    tmp = tmp_path_factory.mktemp("batched")
    with emulator(tmp) as server:
        run(evaluate(sample_track(tmp), tmp / "out", server.url, tmp / "c.sqlite"))
    return len(list((tmp / "out" / ".batches").glob("*nuggetize-*.requests.jsonl")))


@pytest.mark.parametrize("point", ["polling the first batch", "between rounds",
                                   "in the second step"])
def test_batched_usage_equals_the_server_after_a_sigkill_and_a_resume(
        tmp_path: Path, nuggetize_batches: int, point: str) -> None:
    """Killed while a batch is held (batch_hold_from): before any answer came back, after the
    first round's answers were folded into the cache (the resume replays them: they count as
    batch answers, not cache hits), and once the first step is done and the second's batch is
    held. The steps' usage adds up to the lines the server answered, at the batch price."""
    assert nuggetize_batches >= 2  # windows of 3 passages, then importance
    hold_from = {"polling the first batch": 1, "between rounds": 2,
                 "in the second step": nuggetize_batches + 1}[point]
    toml, out, cache = sample_track(tmp_path), tmp_path / "out", tmp_path / "c.sqlite"
    with emulator(tmp_path) as server:
        server.control(batch_hold_from=hold_from)
        command = evaluate(toml, out, server.url, cache)
        kill_when(command, lambda: server.stats()["batches"]["batches"] >= hold_from,
                  env=environment(), cwd=ROOT, settle=0.5)
        at_kill = server.stats()["batches"]["lines"]
        server.control(batch_hold_from=None)
        done = run(command)
        lines = answered(server, "batch")
        assert not answered(server, "live") and server.stats()["batches"]["batches"] == \
            nuggetize_batches + 1
    assert len(lines) == len({r["digest"] for r in lines}) >= at_kill > 0
    recorded = [usage(out.joinpath(*STEPS[step]))["usage"] for step in STEPS]
    assert [spent(r) for r in recorded] == [(0, 0, 0)] * 2  # nothing live
    batch = tuple(map(sum, zip(*(spent(r, batch=True) for r in recorded))))
    assert batch == totals(lines), done.stderr
    assert sum(r["cost"] for r in recorded) == pytest.approx(cost(totals(lines), batch=True))
    if point == "between rounds":  # the first round's answers, folded before the kill
        assert re.search(r"[1-9]\d* answers folded by an earlier command", done.stderr), \
            done.stderr
    assert not list(out.rglob("*.spend"))


def test_calls_in_flight_at_the_kill_are_reported_and_bound_the_spend(tmp_path: Path,
                                                                       track) -> None:
    """Killed with 4 calls at the server (held there, never answered): each attempt was
    journalled as sent before it went out, so the resume says 4 calls were lost and usage.json
    bounds the spend: `calls` answered and received, `calls + lost` sent, which is what the
    server received."""
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    at = 5
    with emulator(tmp_path, *SERVER, name="first") as server:
        server.control(answer_limit=at)
        kill_when(assign(track, out, server.url, cache),  # --concurrency 4: 4 held at once
                  lambda: server.stats()["requests"] >= at + 4, env=environment(), cwd=ROOT)
        received = server.stats()["requests"]
        first = answered(server, "live")
    assert (len(first), received) == (at, at + 4)
    with emulator(tmp_path, *SERVER, name="second") as server:
        done = run(assign(track, out, server.url, cache))
    assert "4 calls sent, answers lost: the provider may bill them" in done.stderr, done.stderr
    killed = usage(out / "usage.json")["history"][0]
    assert killed["killed"] and spent(killed["usage"]) == totals(first)
    assert killed["usage"]["lost"] == 4
    assert killed["usage"]["calls"] + killed["usage"]["lost"] == received  # the upper bound
    assert usage(out / "usage.json")["usage"]["lost"] == 4
