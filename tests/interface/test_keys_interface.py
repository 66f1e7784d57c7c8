"""The answer-key interface: every method plugs in the same way; the AutoNuggetizer adapter
writes what the classic path writes; the generic flow journals, resumes, records provenance and
scores; the CLI's --method branches fail cleanly on bad input."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from scripted import SCRIPTS, ScriptedBackend, by_prompt
from shared_data import CRUX_DUC, UDCG_SAMPLE

from nuggetizer.assessors import Assessor, make_assessor
from nuggetizer.errors import ConfigError
from nuggetizer.formats import assessment_record, nuggets_record
from nuggetizer.interface import (
    AnswerKeyMethod,
    KeyInput,
    Target,
    make_method,
    method_class,
    method_names,
)
from nuggetizer.methods.nuggets import NuggetConfig, assign_nuggets, create_nuggets
from nuggetizer.plan import answer_targets, load_track
from nuggetizer.run import build_keys, judge_targets
from nuggetizer.scoring import leaderboard_tsv, score_paths
from nuggetizer.templates import available_prompts
from nuggetizer.types import Answer, Assessment, NuggetList, Segment, Sentence

REPO = Path(__file__).resolve().parents[2]


def nugget_answers(prompt: str) -> str:
    if "Updated Nugget List" in prompt:
        return '["violence at clinics", "Slepian was killed", "Kopp is sought"]'
    if "vital or okay" in prompt:
        return '["vital", "okay", "vital"]'
    return '["support", "not_support", "partial_support"]'


SCRIPTS["nuggets"] = by_prompt(nugget_answers)


@pytest.mark.parametrize("name", method_names())
def test_every_method_implements_the_interface(name: str) -> None:
    cls = method_class(name)
    assert issubclass(cls, AnswerKeyMethod) and cls.name == name
    assert set(cls.prompts) <= set(available_prompts())
    assert cls.primary in cls.measures and set(cls.targets) <= {"answer", "context"}
    assert dataclasses.is_dataclass(cls.config_type)
    method = make_method(name)
    assert isinstance(method.config, cls.config_type)
    assert json.dumps(method.settings())  # provenance-ready


def test_unknown_method_and_setting() -> None:
    with pytest.raises(ConfigError,
                       match="known: nuggets, battles, crux, kpr, rubrics, support, udcg"):
        method_class("bleu")
    with pytest.raises(ConfigError, match="no setting gama"):
        make_method("udcg", {"gama": 0.3})
    assert make_method("crux", {"n_questions": 4, "eta": None}).config.eta == 3


def test_nuggets_adapter_writes_the_classic_records() -> None:
    segments = [Segment(id="s1", text="Dr. Slepian was shot."), Segment(id="s2", text="Kopp.")]
    config = NuggetConfig(window=1)
    method = make_method("nuggets", {"window": 1})

    async def both() -> tuple[dict, dict, dict, dict]:
        assessor = make_assessor("scripted:nuggets", cache=None)
        classic = await create_nuggets(assessor, "t", "q?", segments, config)
        adapted = await method.build_key(assessor, KeyInput("t", "q?", documents=segments))
        answer = Answer(run_id="r", topic_id="t", sentences=[Sentence(text="He was shot.")])
        judged = await assign_nuggets(assessor, classic.nuggets, answer, 3, config)
        via = await method.judge(assessor, NuggetList.model_validate(adapted.record),
                                 Target(run_id="r", qid="t", answer="He was shot.", length=3))
        return nuggets_record(classic.nuggets), adapted.record, assessment_record(judged), \
            via.record

    classic_key, adapted_key, classic_judged, adapted_judged = asyncio.run(both())
    assert adapted_key == classic_key
    assert adapted_judged == classic_judged
    assessment = Assessment.model_validate(adapted_judged)
    scores = method.score(None, assessment, [assessment])
    assert scores["V_strict"] == 0.5 and scores["A"] == 0.5 and scores["L"] == 3.0


def kpr_answers(prompt: str) -> str:
    if "identify key points" in prompt:
        return " Point 1: <point_start>Kopp is sought.<point_end><span_start>Kopp<span_end>"
    if "remove any duplicate" in prompt:
        return "Point 1: Kopp is sought. [1, 2]"
    return "[yes] it says so" if "Kopp" in prompt.split("Claim:")[0] else "[no]"


def answers(texts: dict[str, dict[str, str]]) -> dict[str, dict[str, Answer]]:
    """Plain answer texts {run: {topic: text}} as the runs a file would give."""
    return {r: {q: Answer(run_id=r, topic_id=q, sentences=[Sentence(text=t)])
                for q, t in by_topic.items()} for r, by_topic in texts.items()}


def test_generic_flow_journals_resumes_and_scores(tmp_path: Path) -> None:
    method = make_method("kpr")
    backend = ScriptedBackend(by_prompt(kpr_answers))
    assessor = Assessor(backend, None)
    docs = [Segment(id="d1", text="Kopp fled."), Segment(id="d2", text="Kopp is wanted.")]
    inputs = [KeyInput("t1", "Who is sought?", documents=docs),
              KeyInput("t2", "Who fled?", documents=docs[:1])]
    key = tmp_path / "key.jsonl"
    made = asyncio.run(build_keys(method, inputs, assessor, key, track="unit"))
    assert made.done == 2 and made.unjudged == 0
    keys = method.read_keys(key)
    assert keys["t1"]["key_points"] == [{"text": "Kopp is sought.",
                                         "sources": [["d1", 1], ["d2", 1]]}]
    assert keys["t1"]["provenance"]["config"]["method"] == "kpr"
    assert keys["t1"]["provenance"]["track"] == "unit"
    assert set(keys["t1"]["provenance"]["templates"]) == set(method.prompts)
    targets = answer_targets(answers({"good": {"t1": "Kopp ran.", "t2": "Kopp ran."},
                                      "poor": {"t1": "Nobody.", "t9": "?"}}))
    out = tmp_path / "judged"
    judged = asyncio.run(judge_targets(method, keys, targets, assessor, out))
    assert judged.done == 3 and judged.skipped == 1
    calls = backend.calls
    again = asyncio.run(judge_targets(method, keys, targets, assessor, tmp_path / "judged2"))
    assert again.done == 3 and backend.calls == calls + 3  # no cache: asked again
    table = score_paths(method, [out / "good.jsonl", out / "poor.jsonl"], keys)
    assert table.means["good"]["KPR"] == 1.0
    assert table.means["poor"]["KPR"] == 0.0 and table.missing["poor"] == 1
    board = leaderboard_tsv(table, table.measures)
    assert board.splitlines() == ["run_id\tKPR", "good\t1.0000", "poor\t0.0000"]


def test_interrupted_flow_resumes_from_the_journal(tmp_path: Path) -> None:
    method = make_method("kpr")
    backend = ScriptedBackend(by_prompt(kpr_answers))
    assessor = Assessor(backend, None)
    docs = [Segment(id="d1", text="Kopp fled.")]
    inputs = [KeyInput(f"t{i}", "q", documents=docs) for i in range(3)]
    key = tmp_path / "key.jsonl"
    asyncio.run(build_keys(method, inputs[:2], assessor, key))
    # a journal left by an interrupted run that had finished t0 and t1
    key.rename(tmp_path / "key.jsonl.partial")
    before = backend.calls
    summary = asyncio.run(build_keys(method, inputs, assessor, key))
    assert summary.resumed == 2 and summary.done == 1 and backend.calls == before + 1
    assert [json.loads(x)["qid"] for x in key.read_text().splitlines()] == ["t0", "t1", "t2"]


def test_track_config_names_the_method(tmp_path: Path) -> None:
    track = tmp_path / "track.toml"
    track.write_text(
        'name = "duc"\nmethod = "crux"\n'
        f'topics = "{CRUX_DUC / "topics.jsonl"}"\ncorpus = "{CRUX_DUC / "passages.jsonl"}"\n'
        f'retrieval_runs = ["{CRUX_DUC / "runs" / "oracle.run"}"]\n'
        '[crux]\nn_questions = 5\nk = 3\n'
    )
    config = load_track(str(track))
    assert config.method == "crux" and config.qrels is None
    assert make_method(config.method, config.settings()).config.n_questions == 5
    track.write_text(track.read_text().replace('"crux"', '"rouge"'))
    with pytest.raises(ConfigError, match="method 'rouge' is not known"):
        load_track(str(track))
    assert load_track("sample").method == "nuggets"


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nuggetizer", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def one_line_error(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and what in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_method_errors(tmp_path: Path) -> None:
    unreachable = ["--assessor", "openai:none", "--base-url", "http://127.0.0.1:9/v1",
                   "--no-cache"]
    topics = tmp_path / "topics.jsonl"
    topics.write_text('{"topic_id": "t1", "request": "q", "summary": "s"}\n'
                      '{"topic_id": "t2", "request": "q"}\n')
    out = tmp_path / "key.jsonl"
    result = cli("nuggetize", "--method", "crux", "--topics", topics, "-o", out, *unreachable)
    one_line_error(result, f"{topics}:2: topic 't2' has no 'summary'")
    assert not out.exists()
    result = cli("nuggetize", "--method", "crux", "--set", "n_questions=many", "--topics",
                 topics, "-o", out, *unreachable)
    one_line_error(result, "n_questions must be an integer")
    key = tmp_path / "udcg.jsonl"
    key.write_text('{"qid": "t1", "query": "q", "passages": []}\n')
    result = cli("assign", "--method", "udcg", "--key", key, "--run",
                 CRUX_DUC / "runs" / "bm25.jsonl", "-o", tmp_path / "j", *unreachable)
    one_line_error(result, "method udcg judges retrieval contexts")
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("t1 Q0 d1 1 0.5 tag\nt1 Q0 d2 x 0.4 tag\n")
    result = cli("assign", "--method", "udcg", "--key", key, "--retrieval-run", bad_run,
                 "--corpus", CRUX_DUC / "passages.jsonl", "-o", tmp_path / "j", *unreachable)
    one_line_error(result, f"{bad_run}:2: rank must be an integer")
    result = cli("score", "--method", "kpr", tmp_path)
    one_line_error(result, "--method kpr needs --key")
    result = cli("score", "--method", "udcg", "--key", UDCG_SAMPLE / "sample_dataset.json",
                 tmp_path)
    one_line_error(result, "sample_dataset.json:1:")
    assert not (tmp_path / "j").exists()
