"""The Python API: the guide's examples run as written (on the TREC RAG 2024 files and the
mock assessor), and its score tables are the command's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import RAG24

import nuggetizer
from nuggetizer.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
API_PAGE = REPO / "docs" / "reference" / "python-api.md"
PLANS_PAGE = REPO / "docs" / "how-to" / "python-plans.md"


def guide_example() -> str:
    """The python block of the guide's Python API page (before its generated reference)."""
    text = API_PAGE.read_text(encoding="utf-8")
    section = text.split("\n## Reference", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section holds one python example"
    return blocks[0]


def run_example(out: Path) -> subprocess.CompletedProcess[str]:
    code = guide_example()
    assert 'DATA = Path("../shared/data/trec-rag-2024")' in code
    assert 'OUT = Path("out/api")' in code
    code = code.replace('Path("../shared/data/trec-rag-2024")', f"Path({str(RAG24)!r})")
    code = code.replace('Path("out/api")', f"Path({str(out)!r})")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=300, env={**os.environ, "NO_COLOR": "1"})


def test_the_guide_example_runs(tmp_path: Path) -> None:
    out = tmp_path / "api"
    result = run_example(out)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "4 keys built"  # the sample track's four topics
    keys = [json.loads(line) for line in (out / "nuggets.jsonl").read_text().splitlines()]
    assert [k["qid"] for k in keys] == ["sample-1", "sample-2", "sample-3", "sample-4"]
    assert all(k["provenance"]["assessor"] == "mock" for k in keys)
    runs = sorted(p.stem for p in (RAG24 / "runs").glob("*.jsonl"))
    assert lines[1] == f"15 answers judged, {3 * 301 - 15} outside the five topics"
    judged = sorted((out / "judged").glob("*.jsonl"))
    assert [p.stem for p in judged] == runs
    for path in judged:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(records) == 5 and all(r["provenance"]["assessor"] == "mock" for r in records)
    board = lines[2:5]
    assert sorted(line.split()[0] for line in board) == runs
    values = [float(line.split()[1]) for line in board]
    assert values == sorted(values, reverse=True) and all(0 <= v <= 1 for v in values)
    tsv = lines[5:]
    assert tsv[0].split("\t") == ["run_id", "V_strict", "V", "W_strict", "W", "A_strict", "A",
                                  "L"]
    assert [row.split("\t")[0] for row in tsv[1:]] == [line.split()[0] for line in board]

    again = run_example(out)  # every call answered by the cache: the same outputs
    assert again.returncode == 0, again.stderr
    assert again.stdout == result.stdout


def test_scores_are_the_commands(tmp_path: Path) -> None:
    """`score` of the CLI and `nuggetizer.score` give the same leaderboard, byte for byte."""
    method = nuggetizer.method("nuggets")
    judge = nuggetizer.assessor("mock", cache=tmp_path / "cache.sqlite")
    topics = nuggetizer.load_topics(REPO / "tracks" / "sample" / "topics.tsv")
    nuggetizer.build_keys(method, topics, judge, tmp_path / "key.jsonl",
                          qrels=REPO / "qrels" / "sample.qrels",
                          corpus=REPO / "tracks" / "sample" / "corpus.jsonl")
    runs = sorted((REPO / "runs" / "sample").glob("*.jsonl"))
    summary = nuggetizer.judge(method, tmp_path / "key.jsonl", runs, judge, tmp_path / "judged")
    answers = sum(len(a) for a in nuggetizer.load_runs(*runs).values())
    assert answers == 11 and summary.done == answers and summary.skipped == 0
    scores = nuggetizer.score(method, tmp_path / "judged", tmp_path / "key.jsonl")
    board = tmp_path / "board.tsv"
    done = subprocess.run([sys.executable, "-m", "nuggetizer", "score", "--nuggets",
                           tmp_path / "key.jsonl", tmp_path / "judged", "-o", board,
                           "--per-topic", tmp_path / "pt.tsv"], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert scores.to_tsv() == board.read_text()
    assert scores.to_tsv(per_topic=True) == (tmp_path / "pt.tsv").read_text()
    rows = scores.rows()
    assert {r["run_id"] for r in rows} == {"sample-good", "sample-middling", "sample-poor"}
    written = [line.split("\t") for line in (tmp_path / "pt.tsv").read_text().splitlines()[1:]]
    assert [[r["run_id"], r["topic_id"], r["measure"], f"{r['value']:.4f}"] for r in rows] == \
        [row for row in written if row[1] != "all"]
    assert [r["run_id"] for r in scores.leaderboard()] == scores.ranking()


def test_bad_names_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        nuggetizer.method("nope")
    with pytest.raises(ConfigError, match="has no setting"):
        nuggetizer.method("nuggets", kep=3)
    with pytest.raises(ConfigError, match="unknown assessor"):
        nuggetizer.assessor("nope:x", cache=False)
    with pytest.raises(ConfigError, match="builds its keys from corpus: give corpus="):
        nuggetizer.build_keys(nuggetizer.method("nuggets"), {}, nuggetizer.assessor(
            "mock", cache=False), "unused.jsonl")


def test_retrieval_contexts_as_the_command_judges_them(tmp_path: Path) -> None:
    """UDCG through the API (keys from a TREC run's passages, contexts judged) gives the
    per-topic table the command gives on the same files, the mock's answers from one cache."""
    sample = REPO / "tracks" / "sample"
    qrels = [line.split() for line in (REPO / "qrels" / "sample.qrels").read_text()
             .splitlines() if line.strip()]
    run = tmp_path / "sample.run"
    run.write_text("".join(f"{q} Q0 {d} {k} {100 - k} bm25\n"
                           for k, (q, _, d, _) in enumerate(qrels, 1)))
    udcg = nuggetizer.method("udcg")
    judge = nuggetizer.assessor("mock", cache=tmp_path / "cache.sqlite")
    common = {"corpus": sample / "corpus.jsonl"}
    built = nuggetizer.build_keys(udcg, sample / "topics.tsv", judge, tmp_path / "key.jsonl",
                                  qrels=REPO / "qrels" / "sample.qrels", docs_runs=[run],
                                  **common)
    assert built.done == 4
    judged = nuggetizer.judge(udcg, tmp_path / "key.jsonl", (), judge, tmp_path / "api",
                              retrieval_runs=[run], **common)
    assert judged.done == 4 and judged.unit == "contexts"
    scores = nuggetizer.score(udcg, tmp_path / "api", tmp_path / "key.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "nuggetizer", "assign", "--method", "udcg", "--key",
         tmp_path / "key.jsonl", "--retrieval-run", run, "--corpus", sample / "corpus.jsonl",
         "-o", tmp_path / "cli", "--assessor", "mock", "--cache", tmp_path / "cache.sqlite"],
        capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert " 0 calls" in done.stderr  # the API's calls, answered by the cache
    command = nuggetizer.score(udcg, tmp_path / "cli", tmp_path / "key.jsonl")
    assert scores.to_tsv(per_topic=True) == command.to_tsv(per_topic=True)
    assert scores.measures == ("UDCG",) and len(scores.leaderboard()) == 1
    with pytest.raises(ConfigError, match="retrieval runs need corpus="):
        nuggetizer.api.targets(udcg, retrieval_runs=[run])


def test_a_plan_run_dry_then_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plan built in Python runs dry (counts the calls, makes none, writes nothing), then
    live: the calls the dry run counted are the calls the live run makes."""
    from nuggetizer import api

    method = api.method("nuggets")
    judge = api.assessor("mock", cache=tmp_path / "cache.sqlite")
    api.build_keys(method, api.load_topics(REPO / "tracks" / "sample" / "topics.tsv"), judge,
                   tmp_path / "key.jsonl", qrels=REPO / "qrels" / "sample.qrels",
                   corpus=REPO / "tracks" / "sample" / "corpus.jsonl")
    keys = api.load_keys(method, tmp_path / "key.jsonl")
    made = judge.stats.calls
    runs = sorted((REPO / "runs" / "sample").glob("*.jsonl"))
    plan = api.assign_plan(method, keys, api.targets(method, runs), str(tmp_path / "judged"))
    capsys.readouterr()
    assert len(api.run(plan, judge, mode="dry")) == 1
    said = capsys.readouterr().err
    counted = int(re.search(r"(\d+) calls? to make", said).group(1))
    assert counted > 0 and not (tmp_path / "judged").exists()
    assert judge.stats.calls == made  # the dry run called nothing
    summary = api.run(plan, judge)[0]
    assert summary.done == 11 and judge.stats.calls - made == counted
    api.run(plan, judge, mode="dry")  # every call now in the cache
    assert re.search(r"\b0 calls to make", capsys.readouterr().err)


def test_the_guide_plan_example_runs(tmp_path: Path) -> None:
    """The guide's plan example, as written, in a copy of its working folder."""
    (code,) = re.findall(r"```python\n(.*?)```", PLANS_PAGE.read_text(encoding="utf-8"), re.S)
    for folder in ("tracks/sample", "qrels", "runs/sample"):
        (tmp_path / folder).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(REPO / folder, tmp_path / folder)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "dry run assign --method nuggets:" in result.stderr
    assert result.stdout.strip() == "11 answers judged"
    assert sorted(p.name for p in (tmp_path / "out/plan/judged").glob("*.jsonl")) == \
        ["sample-good.jsonl", "sample-middling.jsonl", "sample-poor.jsonl"]
