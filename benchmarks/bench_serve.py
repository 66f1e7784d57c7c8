"""`nuggetizer serve` against the CLI on the same work, side by side, and the latency of a
cached request.

    .venv/bin/python benchmarks/bench_serve.py [--latency 0.1] [--concurrency 64] [--repeat 2]

The work: the three TREC RAG 2024 baselines judged against nuggets.mistral.jsonl (read
leniently) on the emulating server at `--latency`, at concurrency c, every call reaching it
(no cache). Side by side, alternating (CLI, server, CLI, server ...):
  - CLI `nuggetizer assign` (its process, wall clock; its import time said apart),
  - the server, POST /v1/judgments: one request per run, the three at once (from the request
    to the last answer; the server already running, as a server is),
  - CLI `nuggetizer evaluate --track` and a server job of the same track (assign and score).
Then the cached castorini `POST /v1/assign`: p50 and p99 over sequential requests of one client,
and at 64 clients at once, every request a cache hit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "serve"))

from common import RAG24, ROOT, emulator, machine  # noqa: E402
from served import serve  # noqa: E402

RUNS = sorted((RAG24 / "runs").glob("*.jsonl"))
NUGGETS = RAG24 / "nuggets.mistral.jsonl"
NUGGETIZER = [sys.executable, "-P", "-m", "nuggetizer"]  # -P: the installed package


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def post(url: str, payload: Any, timeout: float = 600) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def llm_options(url: str, concurrency: int) -> list[str]:
    return ["--assessor", "openai:emulated", "--base-url", url, "--api-key", "x",
            "--concurrency", str(concurrency), "--no-cache"]


def import_seconds() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-P", "-c", "import nuggetizer.cli"], check=True, cwd=ROOT)
    return time.perf_counter() - started


def cli_assign(tmp: Path, latency: float, concurrency: int) -> tuple[float, int]:
    with emulator(tmp / "cli.log.jsonl", "--latency", str(latency)) as url:
        args = [a for run in RUNS for a in ("--run", str(run))]
        started = time.perf_counter()
        subprocess.run([*NUGGETIZER, "assign", *args, "--nuggets", str(NUGGETS), "--lenient",
                        "-o", str(tmp / "cli-out"), *llm_options(url, concurrency)],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        took = time.perf_counter() - started
        calls = get(url + "/_stats")["requests"]
    return took, calls


async def _three(url: str, keys: list[dict], runs: list[list[dict]]) -> list[dict]:
    return await asyncio.gather(*(asyncio.to_thread(
        post, url + "/v1/judgments", {"keys": keys, "answers": answers, "lenient": True})
        for answers in runs))


def server_assign(tmp: Path, latency: float, concurrency: int) -> tuple[float, int, int]:
    keys, runs = lines(NUGGETS), [lines(r) for r in RUNS]
    with emulator(tmp / "srv.log.jsonl", "--latency", str(latency)) as url, \
            serve(tmp, *llm_options(url, concurrency), "--max-items", "100000",
                  "--max-body", str(64 * 2**20), name="bench") as served:
        started = time.perf_counter()
        answers = asyncio.run(_three(served.url, keys, runs))
        took = time.perf_counter() - started
        calls = get(url + "/_stats")["requests"]
    reported = sum(a["usage"]["calls"] for a in answers)
    return took, calls, reported


def track(tmp: Path) -> Path:
    path = tmp / "track.toml"
    path.write_text(f'name = "rag24-baselines"\nmethod = "nuggets"\nkey = "{NUGGETS}"\n'
                    f"topics = \"{RAG24 / 'topics.rag24.test.tsv'}\"\n"
                    f"runs = {json.dumps([str(r) for r in RUNS])}\nlenient = true\n",
                    encoding="utf-8")
    return path


def cli_evaluate(tmp: Path, latency: float, concurrency: int) -> float:
    with emulator(tmp / "cli-ev.log.jsonl", "--latency", str(latency)) as url:
        started = time.perf_counter()
        subprocess.run([*NUGGETIZER, "evaluate", "--track", str(track(tmp)), "-o",
                        str(tmp / "cli-ev"), *llm_options(url, concurrency)], check=True,
                       cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started


def server_job(tmp: Path, latency: float, concurrency: int) -> float:
    with emulator(tmp / "srv-ev.log.jsonl", "--latency", str(latency)) as url, \
            serve(tmp, *llm_options(url, concurrency), "--track",
                  f"bench={track(tmp)}", name="bench-job") as served:
        started = time.perf_counter()
        job = post(served.url + "/v1/jobs", {"track": "bench"})
        while job["state"] in ("queued", "running"):
            time.sleep(0.05)
            job = get(f"{served.url}/v1/jobs/{job['id']}")
        assert job["state"] == "done", job
        return time.perf_counter() - started


def cached_latency(tmp: Path, requests: int) -> tuple[list[float], list[float]]:
    keys = {k["qid"]: k for k in lines(NUGGETS)}
    payloads = [{"query": keys[a["topic_id"]]["query"],
                 "context": " ".join(s["text"] for s in a["answer"]),
                 "nuggets": keys[a["topic_id"]]["nuggets"][:10]}
                for a in lines(RUNS[0])[:50] if a["topic_id"] in keys]
    with emulator(tmp / "lat.log.jsonl") as url, \
            serve(tmp, "--assessor", "openai:emulated", "--base-url", url, "--api-key", "x",
                  name="latency") as served:
        for payload in payloads:  # warm: every answer now in the cache
            post(served.url + "/v1/assign", payload)
        calls = get(url + "/_stats")["requests"]
        one = []
        for n in range(requests):
            started = time.perf_counter()
            answer = post(served.url + "/v1/assign", payloads[n % len(payloads)])
            one.append(time.perf_counter() - started)
            assert answer["usage"]["calls"] == 0

        async def many() -> list[float]:
            async def client(k: int) -> list[float]:
                took = []
                for n in range(requests // 64 + 1):
                    started = time.perf_counter()
                    await asyncio.to_thread(post, served.url + "/v1/assign",
                                            payloads[(k + n) % len(payloads)])
                    took.append(time.perf_counter() - started)
                return took
            return [t for ts in await asyncio.gather(*(client(k) for k in range(64)))
                    for t in ts]

        crowd = asyncio.run(many())
        assert get(url + "/_stats")["requests"] == calls  # not one call more
    return one, crowd


def quantiles(values: list[float]) -> str:
    cuts = statistics.quantiles(values, n=100)
    return f"p50 {cuts[49] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    os.environ.setdefault("NUGGETIZER_PROGRESS_INTERVAL", "0")
    print(machine())
    print(f"work: {len(RUNS)} baseline runs x {NUGGETS.name}, emulator at {args.latency:g} s, "
          f"c={args.concurrency}, no cache")
    imported = import_seconds()
    cli, srv, cli_ev, srv_ev = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        for n in range(args.repeat):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            took, calls = cli_assign(folder, args.latency, args.concurrency)
            cli.append(took)
            took, served_calls, reported = server_assign(folder, args.latency, args.concurrency)
            srv.append(took)
            print(f"  round {n + 1}: CLI assign {cli[-1]:.2f} s ({calls} calls), server "
                  f"/v1/judgments {srv[-1]:.2f} s ({served_calls} calls, {reported} reported)")
            cli_ev.append(cli_evaluate(folder, args.latency, args.concurrency))
            srv_ev.append(server_job(folder, args.latency, args.concurrency))
            print(f"  round {n + 1}: CLI evaluate {cli_ev[-1]:.2f} s, server job "
                  f"{srv_ev[-1]:.2f} s")
        best = {name: min(v) for name, v in (("cli", cli), ("srv", srv), ("cli_ev", cli_ev),
                                              ("srv_ev", srv_ev))}
        print(f"CLI import: {imported:.2f} s (paid by each CLI run, once by a server)")
        for what, c, s in (("assign", best["cli"], best["srv"]),
                           ("evaluate", best["cli_ev"], best["srv_ev"])):
            print(f"{what}: CLI {c:.2f} s ({c - imported:.2f} s without the import), server "
                  f"{s:.2f} s: server/CLI {s / c:.3f}, against the CLI without its import "
                  f"{s / (c - imported):.3f}")
        one, crowd = cached_latency(Path(tmp), args.requests)
        print(f"cached POST /v1/assign, one client: {quantiles(one)}")
        print(f"cached POST /v1/assign, 64 clients: {quantiles(crowd)}")


if __name__ == "__main__":
    main()
