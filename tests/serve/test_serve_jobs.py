"""Jobs: a track evaluated as the CLI's `evaluate` does it, its status, events (server-sent),
leaderboard and files; a job killed with its server resumes when the server starts again and a
cancelled one keeps what was judged, neither judging anything twice."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from emulated import Server, emulator
from served import Served, serve, stop

CONCURRENCY = 2


def llm_args(llm: Server) -> list[str]:
    return ["--assessor", "openai:emulated", "--base-url", llm.url, "--api-key", "x",
            "--concurrency", str(CONCURRENCY)]


def wait(served: Served, job_id: str, states: tuple[str, ...] = ("done",),
         timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status, job = served.get(f"/v1/jobs/{job_id}")
        assert status == 200, job
        if job["state"] in states:
            return job
        assert job["state"] in ("queued", "running"), job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def until(test: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def answered(llm: Server) -> list[str]:
    return [r["digest"] for r in llm.requests() if r.get("status") == 200 and r.get("digest")]


def whole_run(tmp: Path) -> tuple[list[dict], int]:
    """The sample track's leaderboard and calls, run at once on a fresh server."""
    with emulator(tmp, name="fresh") as llm, serve(tmp, *llm_args(llm), name="fresh") as served:
        status, job = served.post("/v1/jobs", {"track": "sample"})
        assert status == 202 and job["state"] in ("queued", "running")
        done = wait(served, job["id"])
        assert done["usage"]["calls"] == len(answered(llm)) > 0
        return done["leaderboard"], done["usage"]["calls"]


def test_job_files_events_and_board(tmp_path: Path) -> None:
    with emulator(tmp_path) as llm, serve(tmp_path, *llm_args(llm)) as served:
        status, job = served.post("/v1/jobs", {"track": "sample"})
        assert status == 202
        request = urllib.request.Request(f"{served.url}/v1/jobs/{job['id']}/events")
        kinds = []
        with urllib.request.urlopen(request, timeout=60) as stream:
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("event: "):
                    kinds.append(line[7:])
        assert kinds[0] == "started" and kinds[-1] == "job"
        assert {"stage", "stage_done", "scored", "end"} <= set(kinds)
        done = wait(served, job["id"])
        status, board = served.get(f"/v1/jobs/{job['id']}/leaderboard")
        assert status == 200 and board["leaderboard"] == done["leaderboard"]
        assert {r["run_id"] for r in board["leaderboard"]} == {"sample-good", "sample-middling",
                                                               "sample-poor"}
        status, files = served.get(f"/v1/jobs/{job['id']}/files")
        names = {f["name"] for f in files["files"]}
        assert {"leaderboard.tsv", "nuggets.jsonl", "assessments/sample-good.jsonl"} <= names
        with urllib.request.urlopen(f"{served.url}/v1/jobs/{job['id']}/files/leaderboard.tsv",
                                    timeout=10) as got:
            assert got.read().decode().startswith("run_id\tV_strict")


def test_killed_with_the_server_then_resumed(tmp_path: Path) -> None:
    board, calls = whole_run(tmp_path)
    state, cache = tmp_path / "state", ["--cache", str(tmp_path / "cache.sqlite")]
    with emulator(tmp_path, "--latency", "0.2") as llm:  # the server restarted as it was
        with serve(tmp_path, *llm_args(llm), *cache, state=state, name="first") as served:
            status, job = served.post("/v1/jobs", {"track": "sample"})
            until(lambda: len(answered(llm)) >= calls // 3)
            stop(served.proc, kill=True)  # SIGKILL: no goodbye
        before = answered(llm)
        assert len(before) < calls
        kept = json.loads((state / "jobs" / job["id"] / "job.json").read_text())
        assert kept["state"] == "running"
        llm.control(latency=0.0)
        with serve(tmp_path, *llm_args(llm), *cache, state=state, name="second") as again:
            done = wait(again, job["id"])  # resumed at the start: journals, then cache
        assert done["leaderboard"] == board and done["runs"] == 2
    sent = answered(llm)
    # nothing judged twice but what the kill caught on its way: the calls in flight (at most
    # the concurrency), and answers not yet in the cache, whose write waits one turn of the
    # event loop while the calls they free a slot for are sent (at most the concurrency again)
    assert len(sent) - len(set(sent)) <= 2 * CONCURRENCY
    assert len(sent) <= calls + 2 * CONCURRENCY
    # the job's usage is its own records' (the killed run's from its spend journal), and
    # bounds what the LLM answered: calls received, calls + lost sent
    usage = done["usage"]
    assert usage["calls"] == recorded(state / "jobs" / job["id"] / "out", "calls")
    assert usage.get("lost", 0) == recorded(state / "jobs" / job["id"] / "out", "lost")
    assert usage["calls"] <= len(sent) <= usage["calls"] + usage.get("lost", 0), usage


def recorded(out: Path, counter: str) -> int:
    """A counter of every step's usage.json under a job's out/, added up."""
    return sum(int(json.loads(p.read_text())["usage"].get(counter, 0))
               for p in out.rglob("*usage.json"))


def test_cancelled_job_keeps_what_was_judged(tmp_path: Path) -> None:
    board, calls = whole_run(tmp_path)
    with emulator(tmp_path, "--latency", "0.2") as llm, \
            serve(tmp_path, *llm_args(llm)) as served:
        status, job = served.post("/v1/jobs", {"track": "sample"})
        until(lambda: len(answered(llm)) >= calls // 2)
        status, cancelling = served.post(f"/v1/jobs/{job['id']}/cancel", {})
        assert status == 200
        cancelled = wait(served, job["id"], ("cancelled",))
        spent = cancelled["usage"]["calls"]
        assert 0 < spent < calls
        status, files = served.get(f"/v1/jobs/{job['id']}/files")
        assert any(f["name"] == "nuggets.jsonl" or f["name"].endswith(".journal")
                   for f in files["files"]), files
        llm.control(latency=0.0)
        status, resumed = served.post("/v1/jobs", {"resume": job["id"]})
        assert status == 202
        done = wait(served, job["id"])
        assert done["leaderboard"] == board
        assert done["usage"]["calls"] == len(answered(llm))  # over both runs of the job
    sent = answered(llm)
    assert len(sent) == len(set(sent))  # a cancel lets the calls in flight finish: no repeat
    assert len(sent) == calls


def test_plan_job_matches_the_routes_and_shares_their_cache(tmp_path: Path) -> None:
    from test_serve_routes import keyed_answers

    keys, answers = keyed_answers(3)
    with emulator(tmp_path) as llm, serve(tmp_path, *llm_args(llm)) as served:
        status, judged = served.post("/v1/judgments", {"keys": keys, "answers": answers})
        assert status == 200
        status, scored = served.post("/v1/scores", {"keys": keys,
                                                    "judgments": judged["judgments"]})
        assert status == 200
        status, refused = served.post("/v1/jobs", {"plan": {"keys": keys, "answers": [{}]}})
        assert status == 422 and "answers[0]" in refused["error"]["message"]
        status, job = served.post("/v1/jobs", {"plan": {"method": "nuggets", "keys": keys,
                                                        "answers": answers}})
        assert status == 202 and job["plan"] == "nuggets"
        done = wait(served, job["id"])
        assert done["leaderboard"] == scored["leaderboard"]
        assert done["usage"]["calls"] == 0  # the routes' answers, from the one cache
        status, files = served.get(f"/v1/jobs/{job['id']}/files")
        assert {"leaderboard.tsv", "per_topic.tsv"} <= {f["name"] for f in files["files"]}
        assert len([p for p in (served_state(tmp_path)).iterdir()]) == 1  # the refused: none


def served_state(tmp: Path) -> Path:
    return tmp / "serve-state" / "jobs"
