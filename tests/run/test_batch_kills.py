"""A `--batch-api` evaluation SIGKILLed at exact points (NUGGETIZER_KILL_AT,
nuggetizer/testing/killpoints.py): while polling a batch, while folding a batch's answers into
the cache (some folded, some not), between rounds and between steps. The rerun polls and folds
the batch the killed command left instead of sending its requests again: the server answers
each request once, in as many batches as an evaluation never killed, and the steps' usage.json
count exactly the batch lines the server answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emulated import Server, emulator
from test_spend_after_kill import sample_track  # windows of 3: rounds of batches

ROOT = Path(__file__).resolve().parents[2]
USAGE = {"nuggetize": ("nuggets.jsonl.usage.json",), "assign": ("assessments", "usage.json")}


def evaluate(tmp: Path, url: str, kill_at: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "NUGGETIZER_KILL_AT")}
    env["NUGGETIZER_PROGRESS_INTERVAL"] = "0"
    if kill_at is not None:
        env["NUGGETIZER_KILL_AT"] = kill_at
    command = [sys.executable, "-m", "nuggetizer", "evaluate", "--track", str(sample_track(tmp)),
               "-o", str(tmp / "out"), "--assessor", "openai:emulated", "--base-url", url,
               "--cache", str(tmp / "c.sqlite"), "--batch-api", "--batch-poll", "0.05"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


def batch_lines(server: Server) -> list[dict[str, Any]]:
    return [r for r in server.requests() if r["outcome"] == "ok" and r.get("via") == "batch"]


def batch_usage(out: Path) -> tuple[int, int, int]:
    """(batch calls, prompt, completion tokens) the steps' usage.json record, added up."""
    records = [json.loads(out.joinpath(*USAGE[step]).read_text())["usage"] for step in USAGE]
    assert all(int(r.get("calls", 0)) == 0 for r in records)  # nothing live
    return tuple(sum(int(r.get(f"batch_{name}", 0)) for r in records)  # type: ignore[return-value]
                 for name in ("calls", "prompt_tokens", "completion_tokens"))


def totals(lines: list[dict[str, Any]]) -> tuple[int, int, int]:
    return (len(lines), sum(r["prompt_tokens"] for r in lines),
            sum(r["completion_tokens"] for r in lines))


def outputs(out: Path) -> dict[str, Any]:
    """The evaluation's outputs, provenance (timestamps) left out."""
    kept = {}
    for name in ("nuggets.jsonl", "leaderboard.tsv", "per_topic.tsv"):
        lines = (out / name).read_text(encoding="utf-8").splitlines()
        kept[name] = [{k: v for k, v in json.loads(x).items() if k != "provenance"}
                      for x in lines] if name.endswith(".jsonl") else lines
    return kept


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An evaluation never killed: its batches, its lines per step, its outputs."""
    tmp = tmp_path_factory.mktemp("never-killed")
    with emulator(tmp) as server:
        done = evaluate(tmp, server.url)
        assert done.returncode == 0, done.stderr
        lines = batch_lines(server)
        batches = server.stats()["batches"]["batches"]
    nuggetize = json.loads((tmp / "out" / USAGE["nuggetize"][0]).read_text())["usage"]
    assert batch_usage(tmp / "out") == totals(lines)
    return {"batches": batches, "lines": len(lines), "outputs": outputs(tmp / "out"),
            "nuggetize_lines": int(nuggetize["batch_calls"])}


def points(reference: dict[str, Any]) -> dict[str, str]:
    assign_half = reference["nuggetize_lines"] + (reference["lines"]
                                                 - reference["nuggetize_lines"]) // 2
    return {"polling the first batch": "batch.poll:1",
            "folding the first batch": "batch.fold:2",
            "folding the assign batch": f"batch.fold:{assign_half}",
            "between rounds": "batch.folded:1",
            "between steps": "batch.step:1"}


@pytest.mark.slow
@pytest.mark.parametrize("point", ["polling the first batch", "folding the first batch",
                                   "folding the assign batch", "between rounds",
                                   "between steps"])
def test_a_batched_evaluation_killed_anywhere_pays_each_request_once(
        tmp_path: Path, reference: dict[str, Any], point: str) -> None:
    kill_at = points(reference)[point]
    with emulator(tmp_path) as server:
        server.control(batch_polls=2)  # each batch polled once while it runs
        killed = evaluate(tmp_path, server.url, kill_at)
        assert killed.returncode == -9, killed.stderr  # killed at the point, not before
        at_kill = server.stats()["batches"]
        done = evaluate(tmp_path, server.url)
        assert done.returncode == 0, done.stderr
        lines = batch_lines(server)
        stats = server.stats()["batches"]
        assert not [r for r in server.requests() if r.get("via") == "live"]
    assert at_kill["lines"] > 0 or point == "polling the first batch"
    # no request sent twice: each line's messages once, as many batches and lines as never killed
    assert len(lines) == len({r["digest"] for r in lines}) == reference["lines"]
    assert stats["batches"] == reference["batches"] and stats["files"] == reference["batches"]
    assert batch_usage(tmp_path / "out") == totals(lines), done.stderr
    assert outputs(tmp_path / "out") == reference["outputs"]
    if point.startswith("folding") or point == "polling the first batch":
        assert "resuming batch" in done.stderr, done.stderr
    assert not list((tmp_path / "out").rglob("*.spend"))
    print(f"{point} ({kill_at}): {at_kill['lines']} lines answered at the kill, "
          f"{len(lines)} in all; usage {batch_usage(tmp_path / 'out')[0]} batch calls")


def other_batch(server: Server) -> None:
    """A batch another command of the same account creates (an upload, then the batch)."""
    import urllib.request

    boundary = "b0undary"
    line = json.dumps({"custom_id": "x", "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "emulated", "messages": [
                           {"role": "user", "content": "hello"}]}})
    upload = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
              f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n"
              f"\r\n{line}\n\r\n--{boundary}--\r\n").encode()
    request = urllib.request.Request(server.url + "/files", data=upload, method="POST")
    request.add_header("content-type", f"multipart/form-data; boundary={boundary}")
    with urllib.request.urlopen(request, timeout=10) as answer:
        file_id = json.loads(answer.read())["id"]
    request = urllib.request.Request(server.url + "/batches", method="POST", data=json.dumps(
        {"input_file_id": file_id, "endpoint": "/v1/chat/completions",
         "completion_window": "24h"}).encode())
    with urllib.request.urlopen(request, timeout=10):
        pass


@pytest.mark.slow
def test_a_batch_created_and_not_recorded_is_found_past_newer_batches(
        tmp_path: Path, reference: dict[str, Any]) -> None:
    """Killed between creating the second batch and recording its id; meanwhile the account
    made three more batches, listed a page of one at a time: the rerun pages back to the one
    made from its upload and polls it instead of creating another."""
    with emulator(tmp_path) as server:
        server.control(batch_page=1)
        killed = evaluate(tmp_path, server.url, "batch.created:2")
        assert killed.returncode == -9, killed.stderr
        for _ in range(3):
            other_batch(server)
        done = evaluate(tmp_path, server.url)
        assert done.returncode == 0, done.stderr
        lines = batch_lines(server)
        stats = server.stats()["batches"]
    assert stats["batches"] == reference["batches"] + 3  # not one more of ours
    assert "resuming batch batch_2, made from this upload by an earlier command" in done.stderr
    assert len(lines) == reference["lines"] + 3  # ours once each, and the 3 others
    assert batch_usage(tmp_path / "out")[0] == reference["lines"]
    assert outputs(tmp_path / "out") == reference["outputs"]
