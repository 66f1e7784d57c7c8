"""The AutoNuggetizer as a TREC AutoJudge judge: autojudge-base's own `auto-judge run
--workflow` with the workflow.yml we ship, on the AutoJudge spot-check set. The scripted
backend runs it in-process (fast); the embedded model runs it as the framework's CLI (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from autojudge_offline import import_autojudge_base, nltk_data_dir
from click.testing import CliRunner
from shared_data import SPOT_CHECK
from test_grade_pool import CALLS, RUN_IDS

from nuggetizer.autojudge import AutoNuggetizerJudge, assessor_args, corpus_file, workflow_path

autojudge_base = import_autojudge_base()

MEASURES = {"V_strict", "V", "W_strict", "W", "A_strict", "A", "L"}


def topics(tmp_path: Path) -> Path:
    """The spot-check topics as the framework's Requests (request_id, title)."""
    path = tmp_path / "topics.jsonl"
    rows = [json.loads(line) for line in (SPOT_CHECK / "queries.jsonl").read_text().splitlines()]
    path.write_text("".join(json.dumps({"request_id": r["qid"], "title": r["query"]}) + "\n"
                            for r in rows))
    return path


def run_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["--workflow", str(workflow_path()), "--rag-responses", str(SPOT_CHECK / "runs"),
            "--rag-topics", str(topics(tmp_path)), "--corpus", str(SPOT_CHECK),
            "--out-dir", str(tmp_path / "out"), "--leaderboard-format", "tot", *extra]


def test_the_workflow_names_our_judge() -> None:
    from autojudge_base.workflow import load_workflow

    wf = load_workflow(workflow_path())
    assert wf.judge_class == "nuggetizer.autojudge.AutoNuggetizerJudge"
    assert wf.create_nuggets and wf.create_qrels and wf.judge
    assert not wf.qrels_uses_nuggets
    assert AutoNuggetizerJudge().nugget_banks_type.__name__ == "NuggetizerNuggetBanks"


def test_the_llm_config_maps_to_an_assessor() -> None:
    from autojudge_base import LlmConfigBase

    remote = LlmConfigBase(model="qwen", base_url="http://h:8000/v1", api_key="k")
    assert assessor_args(remote, {}) == ["--assessor", "openai:qwen", "--base-url",
                                         "http://h:8000/v1", "--api-key", "k"]
    assert assessor_args(LlmConfigBase(model="local"), {"cache": "c.sqlite"}) == [
        "--assessor", "local", "--cache", "c.sqlite"]
    assert assessor_args(remote, {"assessor": "local", "no_cache": True}) == [
        "--assessor", "local", "--no-cache"]
    assert corpus_file(str(SPOT_CHECK)) == SPOT_CHECK / "corpus.jsonl.gz"
    # no --corpus (TIRA): not an error any more, the reports' documents are the passages
    assert corpus_file(None) is None


def test_auto_judge_run_with_our_workflow(tmp_path: Path) -> None:
    """create_nuggets (grade, nuggetize), create_qrels (replayed), judge (assign, score): the
    framework writes nuggets, qrels and a leaderboard of the three runs that its readers load."""
    from autojudge_base import Leaderboard
    from autojudge_base._commands._run import run_workflow
    from autojudge_base.nugget_data import NuggetizerNuggetBanks, load_nugget_banks_generic
    from autojudge_base.qrels.qrels import read_qrel_file

    CALLS.clear()
    cache = tmp_path / "cache.sqlite"
    result = CliRunner().invoke(run_workflow, run_args(
        tmp_path, "--set", "assessor=scripted:spot-graded", "--set", f"cache={cache}"))
    assert result.exit_code == 0, (result.output, result.exception)
    out = tmp_path / "out"
    board = Leaderboard.load(out / "default.eval.txt", format="tot")
    assert MEASURES <= set(board.measures)
    means = {e.run_id: e.values for e in board.entries if e.topic_id == "all"}
    assert sorted(means) == RUN_IDS
    # the scripted key: 2 nuggets (vital, okay); each answer supports the first
    assert float(means["my_best_run_01"]["V_strict"]) == pytest.approx(1.0)
    banks = load_nugget_banks_generic(out / "default.nuggets.jsonl", NuggetizerNuggetBanks)
    assert [n.importance for n in banks.banks["28"].nuggets] == ["vital", "okay"]
    qrels = read_qrel_file(out / "default.qrels.txt")
    assert sorted((r.topic_id, r.doc_id, r.grade) for r in qrels.rows) == [
        ("28", "224", 2), ("28", "279", 0)]
    work = out / "default.nuggetizer"
    assert (work / "relevance.qrels.judgments.jsonl").is_file()
    assert sorted(p.stem for p in (work / "assessments").glob("*.jsonl")) == RUN_IDS
    # create_qrels graded nothing anew: its 2 grades came from the cache
    assert sum("##final score" in p for p in CALLS) == 2
    calls = len(CALLS)
    again = CliRunner().invoke(run_workflow, run_args(
        tmp_path, "--set", "assessor=scripted:spot-graded", "--set", f"cache={cache}"))
    assert again.exit_code == 0, (again.output, again.exception)
    assert len(CALLS) == calls  # a rerun replays every call


def test_the_judge_module_does_not_need_the_framework() -> None:
    code = ("import sys; sys.modules['autojudge_base'] = None; import nuggetizer, "
            "nuggetizer.cli, nuggetizer.autojudge; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@pytest.mark.slow
def test_auto_judge_cli_runs_our_judge_with_the_embedded_model(gguf_path: Path,
                                                               tmp_path: Path) -> None:
    """The framework's `auto-judge run --workflow ours` as a process, SmolLM2-135M (it grades
    every passage 0: the min-grade-0 variant still builds nuggets). Structure only."""
    from autojudge_base import Leaderboard

    env = dict(os.environ, NLTK_DATA=str(nltk_data_dir()), LLM_MODEL="local",
               OPENAI_MODEL="local")
    command = [sys.executable, "-c", "from autojudge_base.cli import main; main()", "run",
               *run_args(tmp_path, "--variant", "min-grade-0", "--set",
                         f"cache={tmp_path / 'cache.sqlite'}", "--set", "max_nuggets=10")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3000)
    assert done.returncode == 0, done.stderr[-4000:]
    path = tmp_path / "out" / "min-grade-0.eval.txt"
    board = Leaderboard.load(path, format="tot")
    assert MEASURES <= set(board.measures)
    assert sorted({e.run_id for e in board.entries if e.topic_id == "all"}) == RUN_IDS
    print(f"\nembedded model, auto-judge run: leaderboard {path}\n{path.read_text()}")
