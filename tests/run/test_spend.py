"""What a run spent, counted against the emulator's own log (every request it answered, with
the tokens its `usage` reported): usage.json adds every invocation of a step (an interrupted
one, a resumed one, a cached rerun), Ctrl-C keeps the answers in flight so a resume pays for
none twice, a batched step's answers are spent at the batch price, and the relevance step's
usage reaches the report."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from emulated import Server, assessments, emulator, small_track

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tracks" / "sample"
PRICES = ("--price-in", "2", "--price-out", "8")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, "NUGGETIZER_PROGRESS_INTERVAL": "0.3", **extra}


def assign(track: tuple[list[Path], Path], out: Path, url: str, cache: Path, *extra: str
           ) -> list[str]:
    command = [sys.executable, "-m", "nuggetizer", "assign", "--nuggets", str(track[1]),
               "-o", str(out), "--assessor", "openai:emulated", "--base-url", url,
               "--cache", str(cache), *extra]
    for run in track[0]:
        command += ["--run", str(run)]
    return command


def run(command: list[str], **env: str) -> subprocess.CompletedProcess:
    done = subprocess.run(command, env=environment(**env), capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


def answered(server: Server, via: str | None = None) -> list[dict]:
    """The requests the emulator answered (of one kind: "live" or "batch")."""
    return [r for r in server.requests() if r["outcome"] == "ok"
            and (via is None or r.get("via") == via)]


def totals(requests: list[dict]) -> tuple[int, int, int]:
    """(calls, prompt tokens, completion tokens) of answered requests, as the server saw them."""
    return (len(requests), sum(r["prompt_tokens"] for r in requests),
            sum(r["completion_tokens"] for r in requests))


def usage(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def interrupt_when(command: list[str], ready, **env: str) -> subprocess.CompletedProcess:
    """Start `command`, send it SIGINT (Ctrl-C) once `ready()`, and wait for it to end."""
    proc = subprocess.Popen(command, env=environment(**env), cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the server was never asked enough"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


@pytest.fixture
def track(tmp_path: Path) -> tuple[list[Path], Path]:
    return small_track(tmp_path, runs=4, topics=8)


def test_ctrl_c_then_resume_pays_for_no_call_twice_and_counts_every_one(
        tmp_path: Path, track) -> None:
    """SIGINT mid-step: the calls in flight finish and are kept; the resume sends only the
    calls never answered, and usage.json adds both invocations: the server's own totals."""
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    with emulator(tmp_path, "--latency", "0.4") as server:
        command = assign(track, out, server.url, str(cache), "--concurrency", "8", *PRICES)
        stopped = interrupt_when(command, lambda: server.stats()["answered"] >= 20)
        assert stopped.returncode == 130, stopped.stderr
        assert "interrupted: no new calls; waiting up to 10 s for the" in stopped.stderr
        assert "interrupted: finished work is kept" in stopped.stderr
        first = answered(server)
        partial = usage(out / "usage.json")  # written on the interrupt, with what it spent
        assert (partial["usage"]["calls"], partial["usage"]["prompt_tokens"],
                partial["usage"]["completion_tokens"]) == totals(first), stopped.stderr
        assert partial["invocations"] == 1 and not partial["history"][0]["finished"]
        assert partial["usage"]["abandoned"] == 0
        assert list(out.glob("*.jsonl.partial"))  # the journal of the finished units
        done = run(command)
        every = answered(server)
    answers = sum(len(r.read_text().splitlines()) for r in track[0])
    assert len(assessments(out)) == answers and not list(out.glob("*.partial"))
    # no call answered twice: each request the server answered is a distinct one
    assert len(every) == len({r["digest"] for r in every}) > len(first)
    recorded = usage(out / "usage.json")
    calls, prompt, completion = totals(every)
    assert (recorded["usage"]["calls"], recorded["usage"]["prompt_tokens"],
            recorded["usage"]["completion_tokens"]) == (calls, prompt, completion)
    assert recorded["invocations"] == 2 and recorded["history"][1]["finished"]
    assert recorded["usage"]["cost"] == pytest.approx((prompt * 2 + completion * 8) / 1e6)
    assert re.search(rf"usage: this run {calls - len(first)} calls, .* added to 1 earlier: "
                     rf"all runs {calls} calls, {prompt} prompt \+ {completion} completion "
                     r"tokens, cost [\d.]+ over 2 invocations", done.stderr), done.stderr


def test_ctrl_c_stops_once_the_wait_is_over_and_counts_the_abandoned_calls(
        tmp_path: Path, track) -> None:
    out = tmp_path / "out"
    with emulator(tmp_path, "--latency", "5") as server:
        command = assign(track, out, server.url, str(tmp_path / "c.sqlite"),
                         "--concurrency", "4")
        # the first request goes alone (until the server has answered once, what it refuses
        # is learned from one request: assessors/shaped.py), then 4 at once
        stopped = interrupt_when(command, lambda: server.stats()["requests"] >= 5,
                                 NUGGETIZER_INTERRUPT_WAIT="0.5")
    assert stopped.returncode == 130, stopped.stderr
    assert "interrupted: still waiting after 0.5 s: 4 calls in flight abandoned" \
        in stopped.stderr
    recorded = usage(out / "usage.json")
    assert recorded["usage"]["calls"] == 1 and recorded["usage"]["abandoned"] == 4


def test_a_cached_rerun_keeps_the_earlier_spend(tmp_path: Path, track) -> None:
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    with emulator(tmp_path) as server:
        command = assign(track, out, server.url, str(cache), *PRICES)
        run(command)
        spent = usage(out / "usage.json")["usage"]
        again = run(command)  # every call replayed from the cache
        calls, prompt, completion = totals(answered(server))
    recorded = usage(out / "usage.json")
    assert (recorded["usage"]["calls"], recorded["usage"]["prompt_tokens"],
            recorded["usage"]["completion_tokens"]) == (calls, prompt, completion)
    assert recorded["usage"]["cost"] == spent["cost"] == \
        pytest.approx((prompt * 2 + completion * 8) / 1e6)
    assert recorded["invocations"] == 2
    rerun = recorded["history"][1]["usage"]
    assert rerun["calls"] == 0 and rerun["cache_hits"] == calls and rerun["cost"] == 0
    assert f"0 calls, {calls} cache hits" in again.stderr
    assert "added to 1 earlier" in again.stderr


def test_a_batched_step_spends_its_answers_at_the_batch_price(tmp_path: Path, track) -> None:
    out = tmp_path / "out"
    with emulator(tmp_path) as server:
        command = assign(track, out, server.url, str(tmp_path / "c.sqlite"), *PRICES)
        dry_live = run([*command, "--dry-run"])
        dry_batch = run([*command, "--dry-run", "--batch-api"])
        explicit = run([*command, "--dry-run", "--batch-api", "--batch-price-in", "0.5",
                        "--batch-price-out", "2"])
        done = run([*command, "--batch-api", "--batch-poll", "0.2"])
        lines, prompt, completion = totals(answered(server, "batch"))
        assert not answered(server, "live")
    recorded = usage(out / "usage.json")["usage"]
    assert recorded["calls"] == 0 and recorded["batch_calls"] == lines > 0
    assert (recorded["batch_prompt_tokens"], recorded["batch_completion_tokens"]) == \
        (prompt, completion)
    assert recorded["cost"] == pytest.approx((prompt * 1 + completion * 4) / 1e6)  # half off
    assert f"batch: {lines} answers, {prompt} + {completion} tokens at the batch price" \
        in done.stderr
    assert f"cost {recorded['cost']:.4f}" in done.stderr
    live_cost = float(re.search(r"cost about ([\d.]+)", dry_live.stderr)[1])
    batch_cost = re.search(r"cost about ([\d.]+) \(at most [\d.]+\) at batch prices",
                           dry_batch.stderr)
    assert batch_cost is not None, dry_batch.stderr
    assert float(batch_cost[1]) == pytest.approx(live_cost / 2, abs=1e-4)
    quarter = float(re.search(r"cost about ([\d.]+)", explicit.stderr)[1])
    assert quarter == pytest.approx(live_cost / 4, abs=1e-4)


def test_relevance_writes_its_usage_and_the_report_shows_it(tmp_path: Path) -> None:
    """A track that grades its pool: the grading's usage is kept beside the qrels, carried by
    the key built from them, and shown in the report."""
    config = tmp_path / "track.toml"
    runs = ", ".join(f'"{r}"' for r in sorted((ROOT / "runs" / "sample").glob("*.jsonl")))
    config.write_text(f'name = "graded"\ntopics = "{SAMPLE}/topics.tsv"\ncorpus = '
                      f'"{SAMPLE}/corpus.jsonl"\nruns = [{runs}]\n[relevance]\n\n'
                      "[nuggets]\nmax_nuggets = 12\nkeep = 10\n[prices]\ninput = 2\n"
                      "output = 8\n")
    out = tmp_path / "out"
    with emulator(tmp_path) as server:
        run([sys.executable, "-m", "nuggetizer", "evaluate", "--track", str(config), "-o",
             str(out), "--assessor", "openai:emulated", "--base-url", server.url,
             "--cache", str(tmp_path / "c.sqlite")])
        grades = totals([r for r in answered(server) if r["kind"] == "grade"])
    graded = usage(out / "relevance.qrels.usage.json")
    assert graded["step"] == "relevance"
    assert (graded["usage"]["calls"], graded["usage"]["prompt_tokens"],
            graded["usage"]["completion_tokens"]) == grades
    assert usage(out / "nuggets.jsonl.usage.json")["inputs"]["relevance"] == graded["usage"]
    sidecar = json.loads((out / "leaderboard.tsv.provenance.json").read_text())
    assert sidecar["usage"]["relevance"]["calls"] == grades[0]
    report = tmp_path / "report"
    run([sys.executable, "-m", "nuggetizer", "report", str(out / "assessments"),
         "--nuggets", str(out / "nuggets.jsonl"), "-o", str(report)])
    page = (report / "index.html").read_text()
    row = re.search(r"<tr><td[^>]*>relevance</td>(.*?)</tr>", page)
    assert row is not None, page[page.find("Token usage"):][:2000]
    assert f">{grades[0]}<" in row[1] and f"{graded['usage']['cost']:.4f}" in row[1]
