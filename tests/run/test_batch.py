"""`--batch-api` against the emulator's files and batches endpoints (emulator_batches.py):
a batched step writes what a live one writes, sends nothing live, resumes the same batch after
a kill, retries the lines of an expired or half-failed batch and leaves the ones that keep
failing unjudged with the reason; vLLM's run_batch output folds in with `batch-import`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from emulated import assessments, emulator, kill_when, small_track

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tracks" / "sample"


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, "NUGGETIZER_PROGRESS_INTERVAL": "0.3"}


def assign(track: tuple[list[Path], Path], out: Path, url: str, cache: Path, *extra: str
           ) -> list[str]:
    command = [sys.executable, "-m", "nuggetizer", "assign", "--nuggets", str(track[1]),
               "-o", str(out), "--assessor", "openai:emulated", "--base-url", url,
               "--cache", str(cache), "--batch-poll", "0.2", *extra]
    for run in track[0]:
        command += ["--run", str(run)]
    return command


def run(command: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, env=environment(), capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done


def live_calls(server) -> int:
    return sum(1 for r in server.requests() if r.get("via") == "live")


@pytest.fixture
def track(tmp_path: Path) -> tuple[list[Path], Path]:
    return small_track(tmp_path, runs=2, topics=3)  # 6 answers, 16 calls


def live_reference(tmp_path: Path, track, url: str) -> dict:
    run(assign(track, tmp_path / "live", url, tmp_path / "live.sqlite"))
    return assessments(tmp_path / "live")


def test_assign_round_trip_equals_live_and_reruns_from_the_cache(tmp_path: Path, track) -> None:
    with emulator(tmp_path) as server:
        reference = live_reference(tmp_path, track, server.url)
        live = live_calls(server)
        server.control(batch_polls=6)  # about 2 s of polling
        started = time.monotonic()
        done = run(assign(track, tmp_path / "out", server.url, tmp_path / "c.sqlite",
                          "--batch-api"))
        took = time.monotonic() - started
        stats = server.stats()["batches"]
        assert live_calls(server) == live  # not one live call from the batched command
        assert stats["batches"] == 1 and stats["files"] == 1 and stats["lines"] == live
        assert assessments(tmp_path / "out") == reference
        assert "0 calls" in done.stderr and f"{live} cache hits" in done.stderr
        assert f"batch: {live} requests in 1 batches over 1 rounds; answers: " in done.stderr
        tokens = re.search(r"replayed from the cache: (\d+) \+ (\d+)", done.stderr)
        assert tokens is not None and f"answers: {tokens[1]} prompt + {tokens[2]} completion" \
            in done.stderr
        assert re.search(rf"batch assign \(.*\): \d+/{live} requests", done.stderr), done.stderr
        again = run(assign(track, tmp_path / "again", server.url, tmp_path / "c.sqlite",
                           "--batch-api"))
        assert server.stats()["batches"]["batches"] == 1 and live_calls(server) == live
        assert "batch: 0 requests in 0 batches over 0 rounds" in again.stderr
    assert not list((tmp_path / "out" / ".batches").glob("*.json"))  # state gone, requests kept
    assert len(list((tmp_path / "out" / ".batches").glob("*.requests.jsonl"))) == 1
    print(f"batched assign of {live} calls: {took:.1f} s")


def test_evaluate_batched_in_rounds_equals_live(tmp_path: Path) -> None:
    """Nugget creation is iterative: a window of 3 passages gives rounds of batches; the keys,
    the judgments and the leaderboard equal a live run's."""
    toml = tmp_path / "track.toml"
    toml.write_text(
        (SAMPLE / "track.toml").read_text().replace('"topics.tsv"', f'"{SAMPLE}/topics.tsv"')
        .replace('"corpus.jsonl"', f'"{SAMPLE}/corpus.jsonl"').replace('"../../', f'"{ROOT}/')
        .replace("window = 10", "window = 3"))
    with emulator(tmp_path) as server:
        common = ["--track", str(toml), "--assessor", "openai:emulated", "--base-url",
                  server.url, "--batch-poll", "0.2"]
        run([sys.executable, "-m", "nuggetizer", "evaluate", "-o", str(tmp_path / "live"),
             "--cache", str(tmp_path / "live.sqlite"), *common])
        live = live_calls(server)
        done = run([sys.executable, "-m", "nuggetizer", "evaluate", "-o",
                    str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"),
                    "--batch-api", *common])
        assert live_calls(server) == live
        stats = server.stats()["batches"]
    assert stats["lines"] == live  # every call the live run made, once, nothing more
    assert stats["batches"] >= 4, done.stderr  # 3 windows, importance, then assign
    for name in ("nuggets.jsonl", "leaderboard.tsv", "per_topic.tsv"):
        assert keyless(tmp_path / "out" / name) == keyless(tmp_path / "live" / name), name
    assert assessments(tmp_path / "out" / "assessments") == \
        assessments(tmp_path / "live" / "assessments")


def keyless(path: Path) -> list:
    """A file's lines, JSON records without their provenance (timestamps)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if path.suffix != ".jsonl":
        return lines
    return [{k: v for k, v in json.loads(x).items() if k != "provenance"} for x in lines]


def test_a_killed_command_resumes_the_same_batch(tmp_path: Path, track) -> None:
    with emulator(tmp_path) as server:
        reference = live_reference(tmp_path, track, server.url)
        live = live_calls(server)
        server.control(batch_hold=True)
        command = assign(track, tmp_path / "out", server.url, tmp_path / "c.sqlite",
                         "--batch-api")
        kill_when(command, lambda: server.stats()["batches"]["polls"] >= 2,
                  env=environment(), cwd=ROOT)
        assert len(list((tmp_path / "out" / ".batches").glob("*.json"))) == 1
        server.control(batch_hold=False)
        done = run(command)
        stats = server.stats()["batches"]
        assert stats["batches"] == 1 and stats["files"] == 1 and stats["lines"] == live
        assert live_calls(server) == live
    assert "resuming batch batch_1 of an earlier command" in done.stderr
    assert "1 resumed from an earlier command" in done.stderr
    assert assessments(tmp_path / "out") == reference


def test_a_batch_created_but_not_recorded_is_found_again(tmp_path: Path, track) -> None:
    """Killed after the batch was created and before its id was written: the rerun finds the
    batch made from its upload instead of paying for a second one."""
    with emulator(tmp_path) as server:
        reference = live_reference(tmp_path, track, server.url)
        server.control(batch_hold=True)
        command = assign(track, tmp_path / "out", server.url, tmp_path / "c.sqlite",
                         "--batch-api")
        kill_when(command, lambda: server.stats()["batches"]["polls"] >= 1,
                  env=environment(), cwd=ROOT)
        (state_path,) = (tmp_path / "out" / ".batches").glob("*.json")
        state = json.loads(state_path.read_text())
        del state["batch_id"]  # as if killed between creating the batch and recording it
        state_path.write_text(json.dumps(state))
        server.control(batch_hold=False)
        done = run(command)
        stats = server.stats()["batches"]
    assert stats["batches"] == 1 and stats["files"] == 1, done.stderr
    assert "resuming batch batch_1, made from this upload by an earlier command" in done.stderr
    assert assessments(tmp_path / "out") == reference


def test_an_expired_batch_sends_the_rest_again(tmp_path: Path, track) -> None:
    with emulator(tmp_path) as server:
        reference = live_reference(tmp_path, track, server.url)
        live = live_calls(server)
        server.control(batch_expire=6)  # 16 requests: 6, then 6 of the 10 left, then 4
        done = run(assign(track, tmp_path / "out", server.url, tmp_path / "c.sqlite",
                          "--batch-api"))
        stats = server.stats()["batches"]
    assert stats["batches"] == 3 and stats["lines"] == 16 == live
    assert "10 requests failed (e.g. the batch ended expired without this request); sent again" \
        in done.stderr
    assert assessments(tmp_path / "out") == reference
    assert " 0 unjudged" in done.stderr


def test_lines_that_keep_failing_end_unjudged_with_the_reason(tmp_path: Path, track) -> None:
    query = json.loads(track[1].read_text().splitlines()[0])["query"]
    with emulator(tmp_path) as server:
        reference = live_reference(tmp_path, track, server.url)
        # half the lines fail at random (retried), those of the first topic every time
        server.control(batch_fail_rate=0.5, batch_fail=[query])
        done = run(assign(track, tmp_path / "out", server.url, tmp_path / "c.sqlite",
                          "--batch-api"))
        stats = server.stats()["batches"]
        assert live_calls(server) == 16  # the live reference's only
    assert stats["batches"] == 3  # the first, and two more for the lines that failed
    first = str(json.loads(track[1].read_text().splitlines()[0])["qid"])
    got = assessments(tmp_path / "out")
    assert got.keys() == reference.keys()
    unjudged = 0
    for unit, nuggets in got.items():  # each nugget as live, or unjudged; the first topic's all
        for mine, theirs in zip(nuggets, reference[unit], strict=True):
            assert mine == theirs or mine[2] == "unjudged", (unit, mine, theirs)
            assert unit[1] != first or mine[2] == "unjudged"
            unjudged += mine[2] == "unjudged"
    assert f" {unjudged} unjudged" in done.stderr
    failed = [int(n) for n in re.findall(r"batch assign: (\d+) requests failed", done.stderr)]
    assert len(failed) == 3 and failed[0] > failed[2] > 0  # retries recovered some, not all
    assert f"{failed[2]} failed every time (left unjudged)" in done.stderr
    assert "refused by the server (batch: HTTP 500: emulated batch line failure)" in done.stderr
    assert "failed every time (left unjudged)" in done.stderr
    records = [json.loads(x) for p in (tmp_path / "out").glob("*.jsonl")
               for x in p.read_text().splitlines()]
    assert any("batch: HTTP 500: emulated batch line failure" in json.dumps(r) for r in records)


def test_run_batch_output_folds_in_with_batch_import(tmp_path: Path, track) -> None:
    """The offline path: write the request file, answer it as vLLM's run_batch would (here the
    emulator's live endpoint, line by line), import, rerun: the same outputs, no batch."""
    with emulator(tmp_path) as server:
        reference = live_reference(tmp_path, track, server.url)
        command = assign(track, tmp_path / "out", server.url, tmp_path / "c.sqlite",
                         "--batch-api", "--batch-write-only")
        written = run(command)
        requests = next((tmp_path / "out" / ".batches").glob("*.requests.jsonl"))
        assert str(requests) in written.stderr and "run_batch" in written.stderr
        assert not list((tmp_path / "out").glob("*.jsonl"))  # nothing judged yet
        results = tmp_path / "results.jsonl"
        with results.open("w") as out:
            for i, line in enumerate(requests.read_text().splitlines()):
                request = json.loads(line)
                post = urllib.request.Request(server.url + "/chat/completions", method="POST",
                                              data=json.dumps(request["body"]).encode())
                with urllib.request.urlopen(post, timeout=10) as answer:
                    body = json.loads(answer.read())
                out.write(json.dumps({"id": f"vllm-{i}", "custom_id": request["custom_id"],
                                      "response": {"status_code": 200, "request_id": str(i),
                                                   "body": body}, "error": None}) + "\n")
        imported = run([sys.executable, "-m", "nuggetizer", "batch-import", str(results),
                        "--requests", str(requests), "--cache", str(tmp_path / "c.sqlite")])
        assert "16 of 16 answers folded" in imported.stderr
        done = run(command)
        assert server.stats()["batches"]["batches"] == 0
    assert "0 calls, 16 cache hits" in done.stderr
    assert assessments(tmp_path / "out") == reference


def test_batch_api_needs_an_openai_assessor_and_the_cache(tmp_path: Path) -> None:
    from scripted import ScriptedBackend

    from nuggetizer.assessors import Assessor
    from nuggetizer.cache import Cache
    from nuggetizer.errors import ConfigError
    from nuggetizer.run import Batcher

    scripted = Assessor(ScriptedBackend([]), Cache(tmp_path / "c.sqlite"))
    with pytest.raises(ConfigError, match="--assessor openai:MODEL, not scripted"):
        Batcher(scripted, tmp_path)
    from nuggetizer.assessors import make_assessor

    uncached = make_assessor("openai:m", base_url="http://127.0.0.1:9/v1", cache=None)
    with pytest.raises(ConfigError, match="leave out --no-cache"):
        Batcher(uncached, tmp_path)


def test_relevance_batched_grades_as_live(tmp_path: Path) -> None:
    """UMBRELA grading of the sample runs' pool: the batched qrels and judgments equal the live
    ones, and nothing is sent live."""
    command = [sys.executable, "-m", "nuggetizer", "relevance", "--topics",
               str(SAMPLE / "topics.tsv"), "--corpus", str(SAMPLE / "corpus.jsonl"),
               *[x for r in sorted((ROOT / "runs" / "sample").glob("*.jsonl"))
                 for x in ("--run", str(r))],
               "--assessor", "openai:emulated", "--batch-poll", "0.2"]
    with emulator(tmp_path) as server:
        command += ["--base-url", server.url]
        run([*command, "-o", str(tmp_path / "live.qrels"), "--cache",
             str(tmp_path / "live.sqlite")])
        live = live_calls(server)
        done = run([*command, "-o", str(tmp_path / "batched.qrels"), "--cache",
                    str(tmp_path / "c.sqlite"), "--batch-api"])
        assert live_calls(server) == live and server.stats()["batches"]["lines"] == live
    qrels = (tmp_path / "live.qrels").read_text()
    assert (tmp_path / "batched.qrels").read_text() == qrels
    assert len({line.split()[3] for line in qrels.splitlines()}) > 1  # grades differ by pair
    assert keyless(tmp_path / "batched.qrels.judgments.jsonl") == \
        keyless(tmp_path / "live.qrels.judgments.jsonl")
    assert f"batch: {live} requests in 1 batches over 1 rounds" in done.stderr
