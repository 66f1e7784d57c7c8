"""A step's summary counts the same whether or not it was resumed: `assign --lenient` on TREC
RAG 2024's nuggets with off-menu importance labels (the key's unjudged items, not the
judge's), killed midway (NUGGETIZER_KILL_AT=call.sent:N) and run again, says what a run never
killed says; and a skip names what it skipped."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from emulated import emulator
from shared_data import RAG24

ROOT = Path(__file__).resolve().parents[2]
OFF_MENU = ("2024-137667", "2024-44329")  # 10 "failed" and 2 "not_relevant" importances


def inputs(tmp: Path) -> tuple[Path, list[Path]]:
    keys = [line for line in (RAG24 / "nuggets.mistral.jsonl").read_text().splitlines()
            if json.loads(line)["qid"] in OFF_MENU]
    nuggets = tmp / "nuggets.jsonl"
    nuggets.write_text("\n".join(keys) + "\n")
    runs = []
    for source in sorted((RAG24 / "runs").glob("*.jsonl"))[:3]:
        kept = [line for line in source.read_text().splitlines()
                if json.loads(line)["topic_id"] in (*OFF_MENU, "2024-105741")]
        runs.append(tmp / source.name)
        runs[-1].write_text("\n".join(kept) + "\n")
    return nuggets, runs


def assign(nuggets: Path, runs: list[Path], out: Path, url: str, kill_at: str | None = None
           ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NUGGETIZER_KILL_AT",
                                                            "OPENAI_API_KEY")}
    if kill_at:
        env["NUGGETIZER_KILL_AT"] = kill_at
    command = [sys.executable, "-m", "nuggetizer", "assign", "--nuggets", str(nuggets),
               "--lenient", "-o", str(out), "--assessor", "openai:emulated", "--base-url", url,
               "--no-cache", "--concurrency", "1",
               *[x for r in runs for x in ("--run", str(r))]]
    return subprocess.run(command, env={**env, "NUGGETIZER_PROGRESS_INTERVAL": "0"},
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def summary(stderr: str) -> str:
    return next(x for x in stderr.splitlines() if x.startswith("assign --method nuggets:"))


def test_counts_do_not_depend_on_a_resume(tmp_path: Path) -> None:
    nuggets, runs = inputs(tmp_path)
    with emulator(tmp_path) as server:
        whole = assign(nuggets, runs, tmp_path / "whole", server.url)
        assert whole.returncode == 0, whole.stderr
        killed = assign(nuggets, runs, tmp_path / "resumed", server.url,
                        kill_at="call.sent:12")  # one call at a time: some answers judged
        assert killed.returncode == -9, killed.stderr
        resumed = assign(nuggets, runs, tmp_path / "resumed", server.url)
        assert resumed.returncode == 0, resumed.stderr
    said = {name: summary(done.stderr) for name, done in (("whole", whole),
                                                          ("resumed", resumed))}
    assert re.search(r"\(\d+ resumed\)", said["resumed"]), said
    counts = {name: re.search(r" (\d+) unjudged", line)[1]  # type: ignore[index]
              for name, line in said.items()}
    assert counts["whole"] == counts["resumed"] == "0", said  # the judge left nothing
    skipped = "3 skipped (topic not in the answer key: topic 2024-105741)"
    assert skipped in said["whole"] and skipped in said["resumed"]


def test_the_score_line_inside_evaluate_gives_the_scoring_time(tmp_path: Path) -> None:
    """evaluate's LLM steps take seconds at an emulator answering in 0.5 s; its score line
    says how long scoring took, not the whole command (the last line says that)."""
    sample = ROOT / "tracks" / "sample"
    toml = tmp_path / "track.toml"
    toml.write_text((sample / "track.toml").read_text()
                    .replace('"topics.tsv"', f'"{sample}/topics.tsv"')
                    .replace('"corpus.jsonl"', f'"{sample}/corpus.jsonl"')
                    .replace('"../../', f'"{ROOT}/'))
    with emulator(tmp_path, "--latency", "0.5") as server:
        done = subprocess.run(
            [sys.executable, "-m", "nuggetizer", "evaluate", "--track", str(toml), "-o",
             str(tmp_path / "out"), "--assessor", "openai:emulated", "--base-url", server.url,
             "--no-cache"], capture_output=True, text=True, timeout=300, cwd=ROOT,
            env={**{k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
                 "NUGGETIZER_PROGRESS_INTERVAL": "0"})
    assert done.returncode == 0, done.stderr
    score = re.search(r"^score --method nuggets: .*, (\d+\.\d) s$", done.stderr, re.MULTILINE)
    total = re.search(r"^evaluate: .*, (\d+\.\d) s; outputs in ", done.stderr, re.MULTILINE)
    assert score is not None and total is not None, done.stderr
    assert float(total[1]) >= 1.5  # at least three rounds of calls, one after another
    assert float(score[1]) < float(total[1]) - 1.0, done.stderr
