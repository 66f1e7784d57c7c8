"""The whole AutoNuggetizer flow through the CLI: embedded model, cache, resume, openai: server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tracks" / "sample"
RUNS = REPO / "runs" / "sample"

pytestmark = pytest.mark.slow


def nuggetizer(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nuggetizer", *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def without_timestamps(path: Path) -> list[dict]:
    """The records of a JSONL output with the provenance time removed."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        record["provenance"].pop("created")
    return records


def calls(stderr: str, step: str = "evaluate") -> int:
    line = next(line for line in stderr.splitlines() if line.startswith(f"{step}:"))
    return int(re.search(r"(\d+) (?:LLM )?calls", line).group(1))


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory, gguf_path: Path) -> dict:
    """The sample track evaluated once on the embedded model, with its own cache."""
    root = tmp_path_factory.mktemp("evaluate")
    cache = root / "cache.sqlite"
    result = nuggetizer("evaluate", "--track", "sample", "-o", root / "first", "--cache", cache)
    assert result.returncode == 0, result.stderr
    return {"root": root, "cache": cache, "out": root / "first", "result": result}


def test_the_sample_track_end_to_end_on_the_embedded_model(evaluated: dict) -> None:
    out, result = evaluated["out"], evaluated["result"]
    rows = (out / "leaderboard.tsv").read_text().splitlines()
    assert rows[0].split("\t") == ["run_id", "V_strict", "V", "W_strict", "W", "A_strict", "A", "L"]
    assert sorted(r.split("\t")[0] for r in rows[1:]) == ["sample-good", "sample-middling",
                                                          "sample-poor"]
    assert rows[1:] == sorted(rows[1:], key=lambda r: -float(r.split("\t")[1]))
    assert result.stdout.splitlines()[0].split() == rows[0].split("\t")
    nuggets = without_timestamps(out / "nuggets.jsonl")
    assert [n["qid"] for n in nuggets] == ["sample-1", "sample-2", "sample-3", "sample-4"]
    for record in nuggets:
        assert 1 <= len(record["nuggets"]) <= 10  # the sample track keeps 10
        order = [{"vital": 0, "okay": 1, "unjudged": 2}[n["importance"]] for n in record["nuggets"]]
        assert order == sorted(order)
        assert record["provenance"]["model"].endswith(".gguf")
        assert set(record["provenance"]["templates"]) == {
            "nuggets_create", "nuggets_importance", "nuggets_assign"}
    assessed = {p.name: without_timestamps(p) for p in (out / "assessments").glob("*.jsonl")}
    assert sorted(assessed) == ["sample-good.jsonl", "sample-middling.jsonl", "sample-poor.jsonl"]
    assert len(assessed["sample-poor.jsonl"]) == 3  # the poor run skips sample-4
    for records in assessed.values():
        for record in records:
            key = next(n for n in nuggets if n["qid"] == record["qid"])["nuggets"]
            assert [n["text"] for n in record["nuggets"]] == [n["text"] for n in key]
    per_topic = (out / "per_topic.tsv").read_text().splitlines()
    assert "sample-poor\tsample-4\tV_strict\t0.0000" in per_topic
    sidecar = json.loads((out / "leaderboard.tsv.provenance.json").read_text())
    assert len(sidecar["inputs"]) == 4 and all(len(i["blake3"]) == 64 for i in sidecar["inputs"])
    assert not list(out.rglob("*.partial"))
    assert calls(result.stderr) > 0


def test_a_second_run_makes_no_call_and_writes_the_same_outputs(evaluated: dict) -> None:
    second = evaluated["root"] / "second"
    cache = evaluated["cache"]
    result = nuggetizer("evaluate", "--track", "sample", "-o", second, "--cache", cache)
    assert result.returncode == 0, result.stderr
    assert calls(result.stderr) == 0
    first = evaluated["out"]
    for path in [Path("nuggets.jsonl"), *(Path("assessments") / p.name
                                          for p in (first / "assessments").glob("*.jsonl"))]:
        assert without_timestamps(second / path) == without_timestamps(first / path)
    for name in ("leaderboard.tsv", "per_topic.tsv"):
        assert (second / name).read_bytes() == (first / name).read_bytes()


def test_an_interrupted_run_resumes_where_it_stopped(evaluated: dict) -> None:
    """What a killed run leaves: a journal of finished topics and a torn last line."""
    reference = evaluated["out"] / "nuggets.jsonl"
    lines = reference.read_text().splitlines(keepends=True)
    out = evaluated["root"] / "resumed" / "nuggets.jsonl"
    out.parent.mkdir()
    journal = out.with_name("nuggets.jsonl.partial")
    journal.write_text(lines[2] + lines[0] + lines[1][: len(lines[1]) // 2])
    result = nuggetizer(
        "nuggetize", "--topics", SAMPLE / "topics.tsv", "--qrels", REPO / "qrels" / "sample.qrels",
        "--corpus", SAMPLE / "corpus.jsonl", "--max-nuggets", "12", "--keep", "10",
        "-o", out, "--cache", evaluated["cache"],
    )
    assert result.returncode == 0, result.stderr
    assert "4 topics (2 resumed)" in result.stderr
    assert not journal.exists()
    resumed = without_timestamps(out)
    expected = without_timestamps(reference)
    for record in resumed + expected:
        record["provenance"].pop("track", None)
    assert resumed == expected
    # the two journalled topics were taken as they were, not asked again
    assert out.read_text().splitlines(keepends=True)[0] == lines[0]


def test_a_journal_made_with_other_settings_is_not_mixed_in(evaluated: dict) -> None:
    out = evaluated["root"] / "mixed" / "nuggets.jsonl"
    out.parent.mkdir()
    line = (evaluated["out"] / "nuggets.jsonl").read_text().splitlines(keepends=True)[0]
    out.with_name("nuggets.jsonl.partial").write_text(line)
    result = nuggetizer(
        "nuggetize", "--topics", SAMPLE / "topics.tsv", "--qrels", REPO / "qrels" / "sample.qrels",
        "--corpus", SAMPLE / "corpus.jsonl", "-o", out, "--cache", evaluated["cache"],
    )
    assert result.returncode == 2
    assert "nuggets.jsonl.partial" in result.stderr and "same options" in result.stderr
    assert not out.exists()


def test_the_whole_flow_through_an_openai_compatible_server(
    tmp_path: Path, llama_server: str
) -> None:
    """`openai:` against a real llama.cpp server on 127.0.0.1, on two sample topics."""
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join((SAMPLE / "topics.tsv").read_text().splitlines(keepends=True)[:2]))
    track = tmp_path / "track.toml"
    track.write_text(
        'name = "two-topics"\n'
        f'topics = "{topics}"\ncorpus = "{SAMPLE / "corpus.jsonl"}"\n'
        f'qrels = "{REPO / "qrels" / "sample.qrels"}"\n'
        f'runs = ["{RUNS / "good.jsonl"}", "{RUNS / "poor.jsonl"}"]\n'
        "[nuggets]\nmax_nuggets = 6\nkeep = 5\n"
    )
    result = nuggetizer(
        "evaluate", "--track", track, "-o", tmp_path / "out", "--cache", tmp_path / "c.sqlite",
        "--assessor", "openai:smollm2", "--base-url", llama_server, "--structured", "json_object",
    )
    assert result.returncode == 0, result.stderr
    assert calls(result.stderr) > 0
    rows = (tmp_path / "out" / "leaderboard.tsv").read_text().splitlines()
    assert sorted(r.split("\t")[0] for r in rows[1:]) == ["sample-good", "sample-poor"]
    record = json.loads((tmp_path / "out" / "nuggets.jsonl").read_text().splitlines()[0])
    assert record["provenance"]["assessor"] == "openai:smollm2"
    assert record["provenance"]["options"]["structured"] == "json_object"


def test_a_non_editable_install_ships_templates_and_the_sample_track(tmp_path: Path) -> None:
    target = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stderr
    check = f"TARGET = {str(target)!r}\n" + (
        "import nuggetizer.prompts, nuggetizer.tracks\n"
        "from nuggetizer.templates import available_prompts, load_prompt\n"
        "from nuggetizer.plan.track import load_track\n"
        "assert nuggetizer.prompts.__file__.startswith(TARGET), nuggetizer.prompts.__file__\n"
        "names = available_prompts()\n"
        "assert {'nuggets_create', 'nuggets_importance', 'nuggets_assign'} <= set(names)\n"
        "track = load_track('sample')\n"
        "for path in [track.topics, track.qrels, track.corpus, *track.runs]:\n"
        "    assert path.is_file() and str(path).startswith(TARGET), path\n"
        "from nuggetizer.autojudge import workflow_path\n"
        "assert str(workflow_path()).startswith(TARGET) and workflow_path().is_file()\n"
        "print(len(names), len(track.runs))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                            cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1] == "3"
