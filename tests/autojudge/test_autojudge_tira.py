"""The AutoJudge judge as TIRA runs it: `auto-judge run --workflow ours --rag-responses
--rag-topics --out-dir`, no `--corpus` and no network on the re-run. The reports carry their
cited documents; the LLM is the emulator on 127.0.0.1; the cache lives under $CACHE_DIR, and a
second run with the model's address dead replays it into identical files."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
import scripted
from autojudge_offline import import_autojudge_base
from click.testing import CliRunner
from emulated import emulator
from tira_reports import REPORTS, TOPIC, write_reports, write_topics

from nuggetizer.autojudge import CACHE_FILE, check_settings, workflow_path
from nuggetizer.cli import cli
from nuggetizer.errors import ConfigError

autojudge_base = import_autojudge_base()


CITED = {d for responses in REPORTS.values() for _, ids in responses for d in ids}


def dead_url() -> str:
    """An address where nothing listens: any call fails at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def auto_judge(tmp: Path, responses: Path, out: Path, url: str, monkeypatch, *extra: str):
    """The framework's `run` command as TIRA calls it (no --corpus), LLM and cache from the
    environment."""
    from autojudge_base._commands._run import run_workflow

    monkeypatch.setenv("OPENAI_MODEL", "emulated")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    monkeypatch.setenv("CACHE_DIR", str(tmp / "cache"))
    return CliRunner().invoke(run_workflow, [
        "--workflow", str(workflow_path()), "--rag-responses", str(responses),
        "--rag-topics", str(write_topics(tmp / "topics.jsonl")), "--out-dir", str(out),
        "--leaderboard-format", "tot", *extra])


def test_auto_judge_run_without_a_corpus_then_offline_from_cache_dir(tmp_path, monkeypatch):
    from autojudge_base import Leaderboard
    from autojudge_base.qrels.qrels import read_qrel_file

    responses = write_reports(tmp_path / "responses")
    with emulator(tmp_path) as server:
        first = auto_judge(tmp_path, responses, tmp_path / "out", server.url, monkeypatch,
                           "--variant", "min-grade-0")
        assert first.exit_code == 0, (first.output, first.exception)
        calls = len(server.requests())
    out = tmp_path / "out"
    # the passages are the reports' documents: every cited id graded, its text from there
    qrels = read_qrel_file(out / "min-grade-0.qrels.txt")
    assert {(r.topic_id, r.doc_id) for r in qrels.rows} == {(TOPIC, d) for d in CITED}
    work = out / "min-grade-0.nuggetizer"
    passages = {json.loads(x)["id"]: json.loads(x) for x in
                (work / "passages.jsonl").read_text().splitlines()}
    assert set(passages) == CITED
    assert passages["224"]["text"].startswith("quasi-cylindrical surfaces with prescribed loadings")
    board = Leaderboard.load(out / "min-grade-0.eval.txt", format="tot")
    assert sorted({e.run_id for e in board.entries if e.topic_id == "all"}) == sorted(REPORTS)
    cache = tmp_path / "cache" / CACHE_FILE
    assert cache.is_file() and calls > 0
    # TIRA's re-run: a fresh out-dir, the same $CACHE_DIR, the model's address dead
    again = auto_judge(tmp_path, responses, tmp_path / "again", dead_url(), monkeypatch,
                       "--variant", "min-grade-0")
    assert again.exit_code == 0, (again.output, again.exception)
    # relevance (twice), nuggetize and assign: every step replayed, 0 calls, 0 unjudged
    calls_made = re.findall(r": (?:\d+ \w+, )+(\d+) calls, (\d+) cache hits, (\d+) unjudged",
                            again.stderr)
    assert len(calls_made) == 4 and all(c == "0" and u == "0" and int(h) > 0
                                        for c, h, u in calls_made), again.stderr
    for name in ("min-grade-0.eval.txt", "min-grade-0.nuggets.jsonl", "min-grade-0.qrels.txt"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name


@pytest.mark.parametrize("case", ["missing-document", "wrong-id"])
def test_a_judge_error_is_one_line_and_writes_nothing(tmp_path, monkeypatch, case):
    responses = tmp_path / "responses"
    if case == "missing-document":  # cites 1, no report carries its text, and no corpus
        write_reports(responses, drop={"tira_run_b": ("1",)})
        expected = ("tira_run_b.jsonl:1: run 'tira_run_b' topic '28' cites '1', which is not "
                    "in the report's documents (and no --corpus was given)")
    else:  # a document filed under another id than its own
        write_reports(responses)
        path = responses / "tira_run_c.jsonl"
        record = json.loads(path.read_text())
        record["documents"]["224"]["id"] = "225"
        path.write_text(json.dumps(record) + "\n")
        expected = ("tira_run_c.jsonl:1: documents['224'].id is '225', but the document is "
                    "filed under '224'")
    out = tmp_path / "out"
    result = auto_judge(tmp_path, responses, out, dead_url(), monkeypatch)
    assert result.exit_code == 2, (result.output, result.exception)
    errors = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and expected in errors[0], result.stderr
    assert "Traceback" not in result.output
    assert [p for p in out.rglob("*") if p.is_file()] == []


def test_settings_variants_and_the_cache_dir():
    from autojudge_base import LlmConfigBase
    from autojudge_base.workflow import load_workflow, resolve_variant

    from nuggetizer.autojudge import assessor_args

    wf = load_workflow(workflow_path())
    for name in wf.variants:  # every variant sets only settings we map to an option
        config = resolve_variant(wf, name)
        check_settings(config.nugget_settings)
        check_settings(config.judge_settings)
    with pytest.raises(ConfigError, match="unknown setting 'min_grad'"):
        check_settings({"min_grad": 2})
    config = LlmConfigBase(model="m", base_url="http://h/v1", cache_dir=Path("/c"))
    assert assessor_args(config, {}) == ["--assessor", "openai:m", "--base-url",
                                         "http://h/v1", "--cache", f"/c/{CACHE_FILE}"]
    assert assessor_args(config, {"cache": "x.sqlite", "no_cache": "false"}) == [
        "--assessor", "openai:m", "--base-url", "http://h/v1", "--cache", "x.sqlite"]


# --- support on report runs that carry their documents ----------------------------------

PROMPTS: list[str] = []


def _support(request) -> str:
    PROMPTS.append(request.messages[-1][1])
    return '{"label": "full_support"}'


scripted.SCRIPTS["tira-support"] = _support


def _assign(*args: object):
    return CliRunner().invoke(cli, ["assign", "--method", "support", "--no-cache",
                                    "--assessor", "scripted:tira-support", *map(str, args)])


def test_support_reads_the_reports_documents_without_a_corpus(tmp_path):
    responses = write_reports(tmp_path / "responses")
    runs = [x for p in sorted(responses.glob("*.jsonl")) for x in ("--run", p)]
    PROMPTS.clear()
    result = _assign(*runs, "-o", tmp_path / "support")
    assert result.exit_code == 0, result.output
    # each citing sentence's first citation (support's default)
    assert len(PROMPTS) == sum(bool(ids) for r in REPORTS.values() for _, ids in r) == 5
    text = "quasi-cylindrical surfaces with prescribed loadings"  # 224's, cited 3 times
    assert sum(text in p for p in PROMPTS) == 3
    record = json.loads((tmp_path / "support" / "tira_run_a.jsonl").read_text())
    labels = [p["label"] for s in record["sentences"] for p in s["pairs"]]
    assert labels == ["full_support"] * 2
    score = CliRunner().invoke(cli, ["score", "--method", "support", str(tmp_path / "support")])
    assert score.exit_code == 0 and "0 unjudged" in score.output


def test_support_names_a_cited_id_in_neither_corpus_nor_documents(tmp_path):
    responses = write_reports(tmp_path / "responses", drop={"tira_run_b": ("1",)})
    run = responses / "tira_run_b.jsonl"
    result = _assign("--run", run, "-o", tmp_path / "support")
    assert result.exit_code == 2
    assert ("topic '28', sentence 2, citations[0]: passage 1 is neither in the corpus nor in "
            "the report's documents") in result.output
    assert not (tmp_path / "support").exists()
    result = _assign("--run", run, "-o", tmp_path / "support", "--allow-missing")
    assert result.exit_code == 0 and "1 unjudged" in result.output
    record = json.loads((tmp_path / "support" / "tira_run_b.jsonl").read_text())
    pair = record["sentences"][1]["pairs"][0]
    assert pair["label"] == "unjudged" and "report's documents" in pair["reason"]


def test_allow_missing_judges_the_rest_and_names_the_missing_passage(tmp_path, monkeypatch):
    responses = write_reports(tmp_path / "responses", drop={"tira_run_b": ("1",)})
    with emulator(tmp_path) as server:
        result = auto_judge(tmp_path, responses, tmp_path / "out", server.url, monkeypatch,
                            "--variant", "allow-missing")
    assert result.exit_code == 0, (result.output, result.exception)
    work = tmp_path / "out" / "allow-missing.nuggetizer"
    records = [json.loads(x) for x in
               (work / "relevance.qrels.judgments.jsonl").read_text().splitlines()]
    # passage 1 is in no report's documents (and there is no corpus): unjudged, named
    unjudged = [(r["docid"], r["error"]) for r in records if r["grade"] is None]
    assert unjudged == [("1", "passage not in the corpus")]
    assert {r["docid"] for r in records if r["grade"] is not None} == CITED - {"1"}
    assert "1 unjudged" in result.stderr
    board = (tmp_path / "out" / "allow-missing.eval.txt").read_text()
    assert {line.split()[0] for line in board.splitlines()} == set(REPORTS)
