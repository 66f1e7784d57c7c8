"""Fault tolerance against the emulating server (benchmarks/emulator.py) on real TREC RAG 2024
runs and nuggets cut down to 2 runs x 5 topics: every transport and content fault at a 20% rate
gives the same final assessments as a fault-free run; output that never parses ends as counted
unjudged items; an item the server refuses (HTTP 400) ends unjudged with the server's reason
while the run finishes, and a server that refuses everything, a wrong key or an unknown model
stops the run; a run killed with SIGKILL and started again finishes with the same output and
re-sends no completed call."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from emulated import assessments, emulator, kill_after, run_assign, small_track
from flows import score_folder

from nuggetizer.assessors import DEFAULT_REASKS, inline
from nuggetizer.formats import Journal, read_runs

SEED = "7"
FAST_RETRIES = {"NUGGETIZER_RETRY_WAIT": "0.01", "NUGGETIZER_RETRY_MAX_WAIT": "0.05",
                "NUGGETIZER_MAX_RETRIES": "10", "NUGGETIZER_RETRY_BUDGET": "60",
                "NUGGETIZER_TIMEOUT": "0.5"}


@pytest.fixture
def track(tmp_path: Path) -> tuple[list[Path], Path]:
    return small_track(tmp_path)


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAST_RETRIES.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def reference(tmp_path: Path, track: tuple[list[Path], Path]) -> dict:
    with emulator(tmp_path, "--seed", SEED, name="reference") as server:
        summary, assessor = run_assign(server.url, track, tmp_path / "reference")
        stats = assessor.stats
        assert stats.retries == 0 and stats.reasks == 0 and summary.unjudged == 0
        assert all(r["outcome"] == "ok" for r in server.requests())
    table = assessments(tmp_path / "reference")
    assert len(table) == 10
    return table


@pytest.mark.parametrize("mix", ["429", "500", "timeout", "drop", "truncated", "offmenu",
                                 "count", "garbage", ",".join(
                                     ["429", "500", "timeout", "drop", "truncated", "offmenu",
                                      "count", "garbage"])])
def test_faults_at_20_percent_change_nothing(tmp_path: Path, track, reference, mix: str) -> None:
    args = ["--seed", SEED, "--fault-rate", "0.2", "--fault-mix", mix, "--retry-after", "0.02",
            "--hang", "3", "--latency", "0.002"]
    with emulator(tmp_path, *args) as server:
        summary, assessor = run_assign(server.url, track, tmp_path / "faulty")
        stats = assessor.stats
        log = server.requests()
    faults = [r for r in log if r["outcome"] != "ok"]
    kinds = set(mix.split(","))
    assert faults and {r["outcome"] for r in faults} <= kinds
    assert assessments(tmp_path / "faulty") == reference
    assert summary.unjudged == 0
    transport = sum(1 for r in faults if r["outcome"] in ("429", "500", "timeout", "drop"))
    content = len(faults) - transport
    assert stats.retries == transport and stats.reasks == content
    if "429" in kinds and mix == "429":  # Retry-After honoured: no retry before 20 ms
        by_digest: dict[str, list[float]] = {}
        for r in log:
            by_digest.setdefault(r["digest"], []).append(r["t"])
        gaps = [b - a for times in by_digest.values() for a, b in zip(times, times[1:])]
        assert gaps and min(gaps) >= 0.015


def test_output_that_never_parses_is_unjudged_and_counted(tmp_path: Path, track,
                                                         reference) -> None:
    runs = read_runs(track[0])
    run_id = sorted(runs)[0]
    qid = sorted(runs[run_id])[0]
    poison = runs[run_id][qid].text[:80]
    with emulator(tmp_path, "--seed", SEED, "--poison", poison) as server:
        summary, assessor = run_assign(server.url, track, tmp_path / "poisoned")
        stats = assessor.stats
        garbage = sum(1 for r in server.requests() if r["outcome"] == "garbage")
    table = assessments(tmp_path / "poisoned")
    poisoned = {key for key in table if any(a == "unjudged" for _, _, a in table[key])}
    assert (run_id, qid) in poisoned
    for key in poisoned:  # every label of a poisoned answer is unjudged, never a guess
        assert all(a == "unjudged" for _, _, a in table[key])
    for key in set(table) - poisoned:
        assert table[key] == reference[key]
    count = sum(len(table[key]) for key in poisoned)
    assert summary.unjudged == count
    calls = sum(math.ceil(len(table[key]) / 10) for key in poisoned)
    # the first try and every re-ask came back garbage
    assert garbage == (1 + DEFAULT_REASKS) * calls and stats.unparsed == calls
    raw = [json.loads(line) for line in
           (tmp_path / "poisoned" / f"{run_id}.jsonl").read_text().splitlines()]
    record = next(r for r in raw if r["qid"] == qid)
    assert all(n.get("raw") for n in record["nuggets"])
    table_scores = score_folder([tmp_path / "poisoned"])
    assert sum(table_scores.unjudged.values()) == count


# --- requests the server refuses ------------------------------------------------------------

def run_cli(track, out: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run(cli(track, out, url, *extra), env={**env, **FAST_RETRIES},
                          capture_output=True, text=True, timeout=120)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_a_refused_item_is_unjudged_and_the_run_finishes(tmp_path: Path, track,
                                                         reference) -> None:
    runs = read_runs(track[0])
    run_id = sorted(runs)[0]
    qid = sorted(runs[run_id])[0]
    marker = inline(runs[run_id][qid].text)[:60]
    assert sum(marker in inline(a.text) for answers in runs.values()
               for a in answers.values()) == 1
    out, cache = tmp_path / "out", str(tmp_path / "cache.sqlite")
    with emulator(tmp_path, "--seed", SEED, "--refuse", marker) as server:
        done = run_cli(track, out, server.url, "--cache", cache)
        refused = [r for r in server.requests() if r["outcome"] == "refused"]
    assert done.returncode == 0, done.stderr
    assert not error_lines(done.stderr)
    table = assessments(out)  # the final files, written
    assert not list(out.glob("*.partial")) and len(table) == len(reference)
    assert all(a == "unjudged" for _, _, a in table[(run_id, qid)])
    for key in set(table) - {(run_id, qid)}:
        assert table[key] == reference[key]
    assert len(refused) == math.ceil(len(reference[(run_id, qid)]) / 10)  # never retried
    record = next(json.loads(line) for line in (out / f"{run_id}.jsonl").read_text().splitlines()
                  if json.loads(line)["qid"] == qid)
    for nugget in record["nuggets"]:  # the server's reason, kept in the record
        assert "refused by the server" in nugget["raw"]
        assert "maximum context length is 8192 tokens" in nugget["raw"]
    # a refusal is never cached: the same command against a server that takes the item asks
    # for it again, and only for it
    with emulator(tmp_path, "--seed", SEED, name="again") as server:
        again = run_cli(track, tmp_path / "again", server.url, "--cache", cache)
        asked = server.requests()
    assert again.returncode == 0, again.stderr
    assert {r["digest"] for r in asked} == {r["digest"] for r in refused}
    assert assessments(tmp_path / "again") == reference
    summary = [line for line in done.stderr.splitlines()
               if line.startswith("assign") and " calls, " in line]
    assert summary and f"{len(reference[(run_id, qid)])} unjudged" in summary[-1]
    assert "refused" in summary[-1], done.stderr  # counted, and the reason named
    assert "maximum context length" in summary[-1], done.stderr


def test_every_request_refused_stops_the_run(tmp_path: Path, track) -> None:
    """A server that refuses every request is misconfigured: stop, do not write all unjudged."""
    with emulator(tmp_path, "--refuse", "nuggets") as server:
        done = run_cli(track, tmp_path / "out", server.url, "--no-cache")
        asked = len(server.requests())
    assert done.returncode == 1
    errors = error_lines(done.stderr)
    assert len(errors) == 1 and "every request is being refused" in errors[0], done.stderr
    assert "maximum context length" in errors[0]
    assert asked < 8 + 4 * 2  # stopped soon after the eighth refusal (4 in flight)
    assert not list((tmp_path / "out").glob("*.jsonl"))


@pytest.mark.parametrize(("server_args", "words"), [
    (("--api-key", "the-right-key"), "HTTP 401: Incorrect API key"),
    (("--model", "another-model"), "HTTP 404: The model `emulated` does not exist"),
])
def test_auth_and_unknown_model_stop_the_run(tmp_path: Path, track, server_args: tuple,
                                             words: str) -> None:
    with emulator(tmp_path, *server_args) as server:
        done = run_cli(track, tmp_path / "out", server.url, "--no-cache")
        asked = server.requests()
    assert done.returncode == 1
    errors = error_lines(done.stderr)
    assert len(errors) == 1 and words in errors[0], done.stderr
    assert len(asked) <= 2 * 4  # at once, not retried: what was in flight, and about as many
    # that had their slot before the error reached them (concurrency 4)
    assert not list((tmp_path / "out").glob("*.jsonl"))


# --- SIGKILL and resume ----------------------------------------------------------------------

def cli(track, out: Path, url: str, *extra: str) -> list[str]:
    command = [str(Path(sys.executable).parent / "nuggetizer"), "assign",
               "--nuggets", str(track[1]), "-o", str(out), "--assessor", "openai:emulated",
               "--base-url", url,
               "--concurrency", "4", *extra]
    for run in track[0]:
        command += ["--run", str(run)]
    return command


def kill_midway(tmp: Path, track, out: Path, extra: tuple[str, ...], answered: int) -> list[dict]:
    """Start the CLI, let the server answer `answered` calls then hold the rest, SIGKILL it;
    returns the requests the server answered."""
    env = {**os.environ, **FAST_RETRIES, "NUGGETIZER_TIMEOUT": "60"}
    with emulator(tmp, "--seed", SEED, "--latency", "0.01", name="first") as server:
        return kill_after(server, cli(track, out, server.url, *extra), answered, env=env)


def resume(tmp: Path, track, out: Path, extra: tuple[str, ...]) -> list[dict]:
    env = {**os.environ, **FAST_RETRIES, "NUGGETIZER_TIMEOUT": "60"}
    with emulator(tmp, "--seed", SEED, "--latency", "0.01", name="second") as server:
        done = subprocess.run(cli(track, out, server.url, *extra), env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "resumed" in done.stderr
        return server.requests()


def test_sigkill_then_resume_resends_no_completed_call(tmp_path: Path, track, reference) -> None:
    out = tmp_path / "out"
    extra = ("--cache", str(tmp_path / "cache.sqlite"))
    first = kill_midway(tmp_path, track, out, extra, answered=7)
    assert len(first) == 7 and not list(out.glob("*.jsonl"))  # no final file half-written
    second = resume(tmp_path, track, out, extra)
    assert {r["digest"] for r in first}.isdisjoint(r["digest"] for r in second)
    total = sum(math.ceil(len(v) / 10) for v in reference.values())
    assert len(first) + len(second) == total
    assert assessments(out) == reference
    assert not list(out.glob("*.partial"))


def test_sigkill_journal_keeps_finished_units_without_cache(tmp_path: Path, track,
                                                            reference) -> None:
    out = tmp_path / "out"
    first = kill_midway(tmp_path, track, out, ("--no-cache",), answered=7)
    journalled = set()
    for partial in out.glob("*.partial"):
        for record in Journal(partial).load():  # loads cleanly: no torn line
            journalled.add((record["run_id"], record["qid"]))
    assert journalled and len(first) == 7
    second = resume(tmp_path, track, out, ("--no-cache",))
    expected = sum(math.ceil(len(v) / 10) for k, v in reference.items() if k not in journalled)
    assert len(second) == expected  # nothing journalled is asked again
    assert assessments(out) == reference


def test_journal_killed_while_appending_keeps_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl.partial"
    writer = (
        "import sys\n"
        "from nuggetizer.formats.writing import Journal\n"
        "journal = Journal(sys.argv[1])\n"
        "i = 0\n"
        "while True:\n"
        "    journal.append({'i': i, 'pad': 'x' * (i % 7 * 50000)})\n"
        "    i += 1\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", writer, str(path)])
    deadline = time.monotonic() + 30
    while (not path.exists() or path.stat().st_size < 2_000_000) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    records = Journal(path).load()
    assert len(records) > 5
    assert [r["i"] for r in records] == list(range(len(records)))  # whole, in order, no gap
    assert all(r["pad"] == "x" * (r["i"] % 7 * 50000) for r in records)
    data = path.read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == len(records)


def test_journal_line_is_in_the_file_when_append_returns(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.partial")
    for i in range(50):
        journal.append({"i": i})
        assert (tmp_path / "j.partial").read_bytes().count(b"\n") == i + 1
    journal.close()
    journal.append({"i": 50})  # appending after close reopens
    journal.remove()
    assert not (tmp_path / "j.partial").exists()
